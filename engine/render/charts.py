"""SVG charts drawn from engine results, identical at build time and live.

Each chart carries a text alternative (``role="img"`` with an ``aria-label``, plus a visible
legend) so a screen reader gets the same figures as the picture.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.render.placer import Placer, text_box
from engine.render.plot import chart_for_both, legend, stacked_bar
from engine.render.svg import line, rect, text
from engine.words.format import format_GB, format_seconds
from engine.words.labels import part


def part_class(key: str, index: int) -> str:
    """The CSS class of a memory part: its own colour (engine.words.labels.PARTS, the same on
    every page; docs/css/parts.css) when it has one, else part-N by position."""
    return part(key).css_class or f"part-{index % 6}"


def memory_bar(
    parts: Mapping[str, float] | Sequence[tuple[str, float]],
    capacity_bytes: float,
    *,
    label: str,
    scale_bytes: float = 0.0,
    used_label: bool = True,
) -> str:
    """A stacked bar of memory parts (bytes) against a capacity line, with its legend.

    The scale stretches to whichever is larger, the capacity or the total (or ``scale_bytes``,
    so several bars can share one scale), so a plan that does not fit is visibly past the red
    capacity line. ``parts``: bytes by part id (engine.words.labels.PARTS names and colours
    each). ``used_label=False`` leaves out the "used" total over the bar, for a widget whose
    verdict beside it already states that total.
    """
    items = list(parts.items()) if isinstance(parts, Mapping) else list(parts)
    named = [(part(key).label, key, n_bytes) for key, n_bytes in items]
    total = sum(b for _, _, b in named)
    scale_max = max(capacity_bytes, total, scale_bytes) * 1.04 or 1.0

    def draw(width: int) -> tuple[str, float]:
        bar_y, bar_h, left = 18, 26, 4
        usable = width - 2 * left
        bar = stacked_bar(
            [
                (part_class(key, i), n_bytes, f"{name}: {format_GB(n_bytes)}")
                for i, (name, key, n_bytes) in enumerate(named)
            ],
            x=left,
            y=bar_y,
            height=bar_h,
            units_per_value=usable / scale_max,
        )
        cap_x = left + usable * capacity_bytes / scale_max
        # The capacity figure ends at its line, or starts there when the line is too far
        # left for it; the total used sits top left, or beside the line when the line would
        # cross it.
        height = bar_y + bar_h + 26
        labels = Placer((0, 0, width, height))
        labels.segments.append(((cap_x, 8), (cap_x, bar_y + bar_h + 6)))
        marker = line(cap_x, 8, cap_x, bar_y + bar_h + 6, class_="capacity")
        figures = [
            (
                f"capacity {format_GB(capacity_bytes)}",
                bar_y + bar_h + 20,
                [(min(cap_x, width - 4), "end"), (max(cap_x, left), "start")],
            ),
            (f"used {format_GB(total)}", 12, [(left, "start"), (cap_x + 4, "start")]),
        ]
        for words, baseline, spots in figures if used_label else figures[:1]:
            candidates = [(x, float(baseline), anchor) for x, anchor in spots]
            tx, ty, anchor = labels.place(words, candidates) or candidates[0]
            marker += text(tx, ty, words, anchor=anchor)
        return rect(left, bar_y, usable, bar_h, class_="track", rx=3) + bar + marker, height

    description = f"{label}: " + ", ".join(f"{n} {format_GB(b)}" for n, _, b in named)
    description += f"; total {format_GB(total)} of {format_GB(capacity_bytes)}."
    svg = chart_for_both(draw, css="memory-bar", name=label, label=description)
    return svg + legend(
        [(part_class(key, i), f"{name}: {format_GB(b)}") for i, (name, key, b) in enumerate(named)]
    )


def timeline(
    phases: Sequence[tuple[str, str, float, float]],
    *,
    label: str,
    scale_seconds: float = 0.0,
    marker_seconds: float | None = None,
    marker_label: str = "",
) -> str:
    """Phases of a request drawn to scale on one time axis, as an SVG with a text alternative.

    ``phases`` are (name, kind, start_seconds, length_seconds); kind 'prefill' and 'decode'
    get their own colours (decode phases alternate shades so consecutive groups stay
    distinct). ``scale_seconds`` lets several timelines share one scale. ``marker_seconds``
    draws a labelled tick (time to first token).
    """
    end = max((start + length for _, _, start, length in phases), default=0.0)
    scale_max = max(end, scale_seconds) * 1.02 or 1.0

    def draw(width: int) -> tuple[str, float]:
        # Room above the bar only for the marker's label.
        bar_y, bar_h, left = (18 if marker_seconds is not None else 4), 24, 4
        usable = width - 2 * left
        shapes = [rect(left, bar_y, usable, bar_h, class_="track", rx=3)]
        decode_seen = 0
        for name, kind, start, length in phases:
            if kind == "prefill":
                css = "part-2"
            elif kind == "decode":
                css = "part-0" if decode_seen % 2 == 0 else "part-1"
                decode_seen += 1
            else:
                css = "part-5"
            shapes.append(
                rect(
                    left + usable * start / scale_max,
                    bar_y,
                    usable * length / scale_max,
                    bar_h,
                    class_=css,
                    title=f"{name}: {format_seconds(length)}",
                )
            )
        # Labels: the first-token marker above the bar (beside its line), the time axis below it
        # ("0 s" at the start, the total right-aligned at the bar's end, or just past the end
        # when the bar is too short for both), so no two labels meet.
        below = bar_y + bar_h + 16
        labels = Placer((0, 0, width, below + 4))
        if marker_seconds is not None:
            mx = left + usable * marker_seconds / scale_max
            spot = (mx + 3, 12, "start") if mx < width / 2 else (mx - 3, 12, "end")
            shapes.append(line(mx, 4, mx, bar_y + bar_h + 4, class_="capacity"))
            shapes.append(text(spot[0], spot[1], marker_label, anchor=spot[2]))
        shapes.append(text(left, below, "0 s"))
        zero = text_box(left, below, "0 s", "start")
        labels.take((zero[0], zero[1], zero[2] + 6, zero[3]))  # with a gap after it
        end_text = format_seconds(end)
        end_x = left + usable * end / scale_max
        after = (max(end_x + 4, zero[2] + 6), below, "start")
        x, y, anchor = labels.place(end_text, [(end_x, below, "end")]) or after
        shapes.append(text(x, y, end_text, anchor=anchor))
        return "".join(shapes), bar_y + bar_h + 26

    prefill = sum(length for _, kind, _, length in phases if kind == "prefill")
    decode = sum(length for _, kind, _, length in phases if kind == "decode")
    description = (
        f"{label}: prefill {format_seconds(prefill)}, decode {format_seconds(decode)}, "
        f"total {format_seconds(end)}."
    )
    return chart_for_both(draw, css="timeline", name=label, label=description)
