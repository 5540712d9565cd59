"""SVG charts drawn from engine results, identical at build time and live.

Each chart carries a text alternative (``role="img"`` with an ``aria-label``, plus a visible
legend) so a screen reader gets the same figures as the picture.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.render.html import esc
from engine.words.format import format_GB, format_seconds

# One colour per memory quantity, the same in every bar of the lesson: a part's CSS class
# follows its label (the reader-facing names of engine/words/labels.py and the widgets' own
# groupings), so "orange" means the same thing on every page. docs/css/parts.css colours
# them; a label not listed here falls back to part-N by its position.
PART_CLASSES = {
    "weights": "part-weights",
    "kv cache": "part-kv-cache",
    "activations": "part-activations",
    "runtime overhead": "part-overhead",
    "working space": "part-working-space",
    "gradients": "part-gradients",
    "fp32 gradient copy": "part-fp32-gradients",
    "optimizer states": "part-optimizer",
    "adam first moment": "part-optimizer",
    "adam second moment": "part-optimizer-2",
    "momentum": "part-optimizer",
    "fp32 master weights": "part-master-weights",
    "held by other jobs": "part-other-jobs",
    "other jobs": "part-other-jobs",
}


def part_class(name: str, index: int) -> str:
    """The CSS class of a memory part: by its label when known, else part-N by position."""
    return PART_CLASSES.get(" ".join(name.lower().split()), f"part-{index % 6}")


def memory_bar(
    parts: Sequence[tuple[str, float]],
    capacity_bytes: float,
    *,
    label: str,
    width: int = 640,
    scale_bytes: float = 0.0,
) -> str:
    """A stacked bar of memory parts (bytes) against a capacity line, with its legend.

    The scale stretches to whichever is larger, the capacity or the total (or ``scale_bytes``,
    so several bars can share one scale), so a plan that does not fit is visibly past the red
    capacity line.
    """
    total = sum(b for _, b in parts)
    scale_max = max(capacity_bytes, total, scale_bytes) * 1.04 or 1.0
    bar_y, bar_h, left = 18, 26, 4
    usable = width - 2 * left
    x = float(left)
    rects = [
        f'<rect class="track" x="{left}" y="{bar_y}" width="{usable}" height="{bar_h}" rx="3"/>'
    ]
    for i, (name, n_bytes) in enumerate(parts):
        w = usable * n_bytes / scale_max
        rects.append(
            f'<rect class="{part_class(name, i)}" x="{x:.2f}" y="{bar_y}" width="{w:.2f}" height="{bar_h}">'
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
        f'<li><span class="swatch {part_class(name, i)}" aria-hidden="true"></span>{esc(name)}: '
        f"{esc(format_GB(b))}</li>"
        for i, (name, b) in enumerate(parts)
    )
    return svg + f'<ul class="legend">{legend}</ul>'


_CHAR_W = 6.2  # px per character of the charts' 11 px text, a little generous


def timeline(
    phases: Sequence[tuple[str, str, float, float]],
    *,
    label: str,
    scale_seconds: float = 0.0,
    marker_seconds: float | None = None,
    marker_label: str = "",
    width: int = 640,
) -> str:
    """Phases of a request drawn to scale on one time axis, as an SVG with a text alternative.

    ``phases`` are (name, kind, start_seconds, length_seconds); kind 'prefill' and 'decode'
    get their own colours (decode phases alternate shades so consecutive groups stay
    distinct). ``scale_seconds`` lets several timelines share one scale. ``marker_seconds``
    draws a labelled tick (time to first token).
    """
    end = max((start + length for _, _, start, length in phases), default=0.0)
    scale_max = max(end, scale_seconds) * 1.02 or 1.0
    # Room above the bar only for the marker's label.
    bar_y, bar_h, left = (18 if marker_seconds is not None else 4), 24, 4
    usable = width - 2 * left
    rects = [
        f'<rect class="track" x="{left}" y="{bar_y}" width="{usable}" height="{bar_h}" rx="3"/>'
    ]
    decode_seen = 0
    for name, kind, start, length in phases:
        if kind == "prefill":
            css = "part-2"
        elif kind == "decode":
            css = "part-0" if decode_seen % 2 == 0 else "part-1"
            decode_seen += 1
        else:
            css = "part-5"
        x = left + usable * start / scale_max
        w = usable * length / scale_max
        rects.append(
            f'<rect class="{css}" x="{x:.2f}" y="{bar_y}" width="{w:.2f}" height="{bar_h}">'
            f"<title>{esc(name)}: {esc(format_seconds(length))}</title></rect>"
        )
    # Labels: the first-token marker above the bar (beside its line), the time axis below it
    # ("0 s" at the start, the total right-aligned at the bar's end, or just past the end
    # when the bar is too short for both), so no two labels meet.
    below = bar_y + bar_h + 16
    marker = ""
    if marker_seconds is not None:
        mx = left + usable * marker_seconds / scale_max
        anchor, tx = ("start", mx + 3) if mx < width / 2 else ("end", mx - 3)
        marker = (
            f'<line class="capacity" x1="{mx:.2f}" y1="4" x2="{mx:.2f}" y2="{bar_y + bar_h + 4}"/>'
            f'<text x="{tx:.2f}" y="12" text-anchor="{anchor}">{esc(marker_label)}</text>'
        )
    end_text = format_seconds(end)
    end_x = left + usable * end / scale_max
    zero_right = left + 3 * _CHAR_W + 6  # where the "0 s" label ends, with a gap
    if end_x - len(end_text) * _CHAR_W >= zero_right:
        end_label = f'<text x="{end_x:.2f}" y="{below}" text-anchor="end">{esc(end_text)}</text>'
    else:
        end_label = f'<text x="{max(end_x + 4, zero_right):.2f}" y="{below}">{esc(end_text)}</text>'
    axis = f'<text x="{left}" y="{below}">0 s</text>' + end_label
    prefill = sum(length for _, kind, _, length in phases if kind == "prefill")
    decode = sum(length for _, kind, _, length in phases if kind == "decode")
    description = (
        f"{label}: prefill {format_seconds(prefill)}, decode {format_seconds(decode)}, "
        f"total {format_seconds(end)}."
    )
    return (
        f'<svg class="chart timeline" viewBox="0 0 {width} {bar_y + bar_h + 26}" '
        f'role="img" aria-label="{esc(description)}">{"".join(rects)}{marker}{axis}</svg>'
    )
