"""One step's time split into parts (compute, communication, bubble...) as a stacked bar
drawn to scale, with its legend and a text alternative giving the same figures."""

from __future__ import annotations

from collections.abc import Sequence

from engine.render.plot import chart_for_both, legend, stacked_bar
from engine.render.svg import rect, text
from engine.words.format import format_percent, format_seconds


def step_bar(parts: Sequence[tuple[str, str, float]], *, label: str,
             scale_seconds: float = 0.0) -> str:
    """``parts``: (name, css class, seconds) left to right; the scale stretches to their sum
    or ``scale_seconds`` (so several bars share one scale). The total is written under the
    bar's end, each part's time and share in the legend ('none' for a part of no time)."""
    total = sum(max(s, 0.0) for _, _, s in parts)

    def amount(s: float) -> str:
        """'1.49 s (55%)', or 'none' for a part that takes no time."""
        return f"{format_seconds(s)} ({format_percent(s / total)})" if s > 0 and total > 0 else "none"

    scale_max = max(total, scale_seconds) * 1.02 or 1.0

    def draw(width: int) -> tuple[str, float]:
        bar_y, bar_h, left = 4, 24, 4
        usable = width - 2 * left
        shapes = rect(left, bar_y, usable, bar_h, class_="track", rx=3) + stacked_bar(
            [(css, s, f"{name}: {amount(s)}") for name, css, s in parts],
            x=left, y=bar_y, height=bar_h, units_per_value=usable / scale_max)
        below = bar_y + bar_h + 16
        shapes += text(left, below, "0 s")
        end_x = left + usable * total / scale_max
        shapes += text(max(end_x, 60.0), below, format_seconds(total), anchor="end")
        return shapes, below + 6

    description = f"{label}: " + ", ".join(
        f"{name} {amount(s)}" for name, _, s in parts) + f"; total {format_seconds(total)}."
    picture = chart_for_both(draw, css="step-bar", name=label, label=description)
    return picture + legend(
        [(css, f"{name}: {amount(s)}") for name, css, s in parts])
