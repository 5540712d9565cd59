"""Line charts and per-GPU meters drawn from engine results (SVG with a text alternative).

Cheap enough to redraw every animation frame: a chart of ~60 points is a few string joins.
Every chart has ``role="img"`` and an ``aria-label`` summing up what it shows; the visible
figures next to it carry the same numbers as text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine.render.plot import WIDTH, Frame, Scale, axes, chart_for_both
from engine.render.svg import Point, circle, line, polyline, rect, text
from engine.words.format import format_percent

# Presentation attributes, so a chart reads even without the stylesheet (which refines the
# colours); currentColor follows the page's light or dark scheme.
_CURVE_ALL = {"fill": "none", "stroke": "currentColor", "stroke_opacity": "0.4",
              "stroke_width": "2", "stroke_dasharray": "5 3"}  # fmt: skip
_CURVE_DONE = {"fill": "none", "stroke": "currentColor", "stroke_width": "3"}
_AXIS = {"stroke": "currentColor", "stroke_opacity": "0.5"}


def line_chart(
    points: Sequence[Point],
    *,
    label: str,
    x_label: str,
    y_label: str,
    x_text: Callable[[float], str],
    y_text: Callable[[float], str],
    done_x: float | None = None,
    current: Point | None = None,
    x_range: tuple[float, float] | None = None,
    y_range: tuple[float, float] | None = None,
    y_cut_note: str = "",
    height: int = 220,
) -> str:
    """A line through ``points`` (x, y in data units, x ascending).

    With ``done_x`` the whole curve is drawn faint and the part up to ``done_x`` bold (the
    part already run), ending at ``current`` when given (the point reached now). ``x_range``
    and ``y_range`` fix the axes (y values outside the range are drawn at its edge); ``x_text`` and
    ``y_text`` format the axis end labels. ``label`` is the text alternative. ``y_cut_note``
    marks a y-axis that does not start at zero: a break mark at its foot and the note, in
    words, above the plot on the right.
    """

    def draw(width: int) -> tuple[str, float]:
        # The narrow drawing writes the cut note on a line of its own, above the axis's title
        # (side by side they would meet).
        apart = bool(y_cut_note) and width < WIDTH
        f = Frame(width, height, left=46, right=10, top=38 if apart else 24, bottom=34)
        xs = [x for x, _ in points] or [0.0]
        ys = [y for _, y in points] or [0.0]
        x0, x1 = x_range if x_range is not None else (min(xs), max(xs))
        y0, y1 = y_range if y_range is not None else (min(ys), max(ys))
        x_scale = Scale(x0, x1, f.left, f.end)
        y_scale = Scale(y0, y1, f.base, f.top)

        def to_px(p: Point) -> Point:
            return x_scale(p[0]), y_scale(p[1])

        all_px = [to_px(p) for p in points]
        shapes = [axes(f, **_AXIS)]
        if done_x is None:
            shapes.append(polyline(all_px, class_="curve-done", **_CURVE_DONE))
        else:
            shapes.append(polyline(all_px, class_="curve-all", **_CURVE_ALL))
            done = [px for p, px in zip(points, all_px, strict=True) if p[0] <= done_x]
            if current is not None and current[0] >= x0:
                done.append(to_px(current))
            shapes.append(polyline(done, class_="curve-done", **_CURVE_DONE))
        if current is not None:
            cx, cy = to_px(current)
            shapes.append(circle(cx, cy, 4, class_="curve-point", fill="currentColor"))
        texts = [
            text(f.left - 4, f.top + 4, y_text(y1), anchor="end"),
            text(f.left - 4, f.base, y_text(y0), anchor="end"),
            text(f.left, f.base + 14, x_text(x0)),
            text(f.end, f.base + 14, x_text(x1), anchor="end"),
            text(round(f.left + f.plot_w / 2), f.base + 28, x_label, anchor="middle"),
            text(f.left - 4, f.top - 10, y_label),
        ]
        if y_cut_note:
            # Two short slanted strokes across the foot of the y-axis: the axis is cut.
            shapes += [
                line(
                    f.left - 5,
                    f.base - 4 + d,
                    f.left + 5,
                    f.base - 8 + d,
                    class_="axis",
                    **_AXIS,
                    stroke_width="1.5",
                )
                for d in (-4, 0)
            ]
            texts.append(text(f.end, f.top - (24 if apart else 10), y_cut_note, anchor="end",
                              class_="y-cut-note"))
        return "".join(shapes) + "".join(texts), height

    return chart_for_both(draw, css="line-chart", name=f"{y_label} against {x_label}", label=label)


def gpu_meters(
    gpus: Sequence[tuple[str, float, str]], *, label: str, height: int = 92,
    shares: bool = True,
) -> str:
    """One small bar per GPU: (name, utilisation 0..1, caption such as its memory).

    The bar's fill is the share of time the GPU is busy; under it the share as a percentage
    (unless ``shares`` is False: the page states it once elsewhere) and the caption, if any.
    """

    def draw(width: int) -> tuple[str, float]:
        n = max(len(gpus), 1)
        slot = width / n
        bar_w, bar_top, bar_h = min(slot * 0.5, 40.0), 16, 36
        shapes = []
        for i, (name, share, caption) in enumerate(gpus):
            share = min(max(share, 0.0), 1.0)
            cx = slot * i + slot / 2
            x = cx - bar_w / 2
            fill_h = bar_h * share
            shapes.append(
                text(cx, 11, name, anchor="middle")
                + rect(x, bar_top, bar_w, bar_h, class_="track", rx=2)
                + rect(x, bar_top + bar_h - fill_h, bar_w, fill_h, class_="part-1", rx=2)
                + (text(cx, bar_top + bar_h + 13, format_percent(share), anchor="middle") if shares else "")
                + (text(cx, bar_top + bar_h + 26, caption, anchor="middle") if caption else "")
            )
        return "".join(shapes), height

    return chart_for_both(draw, css="gpu-meters", name="how busy each GPU is", label=label)
