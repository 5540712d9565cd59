"""SVG charts drawn from engine results, identical at build time and live.

Each chart carries a text alternative (``role="img"`` with an ``aria-label``, plus a visible
legend) so a screen reader gets the same figures as the picture.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.units import format_GB
from engine.widgets.html import esc


def memory_bar(
    parts: Sequence[tuple[str, float]],
    capacity_bytes: float,
    *,
    label: str,
    width: int = 640,
) -> str:
    """A stacked bar of memory parts (bytes) against a capacity line, with its legend.

    The scale stretches to whichever is larger, the capacity or the total, so a plan that
    does not fit is visibly past the red capacity line.
    """
    total = sum(b for _, b in parts)
    scale_max = max(capacity_bytes, total) * 1.04 or 1.0
    bar_y, bar_h, left = 18, 26, 4
    usable = width - 2 * left
    x = float(left)
    rects = [
        f'<rect class="track" x="{left}" y="{bar_y}" width="{usable}" height="{bar_h}" rx="3"/>'
    ]
    for i, (name, n_bytes) in enumerate(parts):
        w = usable * n_bytes / scale_max
        rects.append(
            f'<rect class="part-{i % 6}" x="{x:.2f}" y="{bar_y}" width="{w:.2f}" height="{bar_h}">'
            f"<title>{esc(name)}: {esc(format_GB(n_bytes))}</title></rect>"
        )
        x += w
    cap_x = left + usable * capacity_bytes / scale_max
    marker = (
        f'<line class="capacity" x1="{cap_x:.2f}" y1="8" x2="{cap_x:.2f}" y2="{bar_y + bar_h + 6}"/>'
        f'<text x="{min(cap_x, width - 4):.2f}" y="{bar_y + bar_h + 20}" text-anchor="end">'
        f"capacity {esc(format_GB(capacity_bytes))}</text>"
        f'<text x="{left}" y="12">used {esc(format_GB(total))}</text>'
    )
    description = f"{label}: " + ", ".join(f"{n} {format_GB(b)}" for n, b in parts)
    description += f"; total {format_GB(total)} of {format_GB(capacity_bytes)}."
    svg = (
        f'<svg class="chart memory-bar" viewBox="0 0 {width} {bar_y + bar_h + 26}" '
        f'role="img" aria-label="{esc(description)}">{"".join(rects)}{marker}</svg>'
    )
    legend = "".join(
        f'<li><span class="swatch part-{i % 6}" aria-hidden="true"></span>{esc(name)}: '
        f"{esc(format_GB(b))}</li>"
        for i, (name, b) in enumerate(parts)
    )
    return svg + f'<ul class="legend">{legend}</ul>'
