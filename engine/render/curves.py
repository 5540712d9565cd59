"""Line charts and per-GPU meters drawn from engine results (SVG with a text alternative).

Cheap enough to redraw every animation frame: a chart of ~60 points is a few string joins.
Every chart has ``role="img"`` and an ``aria-label`` summing up what it shows; the visible
figures next to it carry the same numbers as text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engine.render.html import esc

Point = tuple[float, float]

# Presentation attributes, so a chart reads even without the stylesheet (which refines the
# colours); currentColor follows the page's light or dark scheme.
_STYLE = {
    "curve-all": 'fill="none" stroke="currentColor" stroke-opacity="0.4" stroke-width="2" stroke-dasharray="5 3"',
    "curve-done": 'fill="none" stroke="currentColor" stroke-width="3"',
    "axis": 'stroke="currentColor" stroke-opacity="0.5"',
}


def _polyline(points: Sequence[Point], css: str) -> str:
    if len(points) < 2:
        return ""
    coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return f'<polyline class="{css}" points="{coords}" {_STYLE[css]}/>'


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
    width: int = 640,
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
    left, right, top, bottom = 46, 10, 24, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    xs = [x for x, _ in points] or [0.0]
    ys = [y for _, y in points] or [0.0]
    x0, x1 = x_range if x_range is not None else (min(xs), max(xs))
    y0, y1 = y_range if y_range is not None else (min(ys), max(ys))
    x_span = (x1 - x0) or 1.0
    y_span = (y1 - y0) or 1.0

    def to_px(p: Point) -> Point:
        fx = min(max((p[0] - x0) / x_span, 0.0), 1.0)
        fy = min(max((p[1] - y0) / y_span, 0.0), 1.0)
        return left + plot_w * fx, top + plot_h * (1.0 - fy)

    all_px = [to_px(p) for p in points]
    shapes = [
        f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" '
        f"{_STYLE['axis']}/>",
        f'<line class="axis" x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" '
        f'y2="{top + plot_h}" {_STYLE["axis"]}/>',
    ]
    if done_x is None:
        shapes.append(_polyline(all_px, "curve-done"))
    else:
        shapes.append(_polyline(all_px, "curve-all"))
        done = [px for p, px in zip(points, all_px, strict=True) if p[0] <= done_x]
        if current is not None and current[0] >= x0:
            done.append(to_px(current))
        shapes.append(_polyline(done, "curve-done"))
    if current is not None:
        cx, cy = to_px(current)
        shapes.append(
            f'<circle class="curve-point" cx="{cx:.1f}" cy="{cy:.1f}" r="4" fill="currentColor"/>'
        )
    base = top + plot_h
    texts = [
        f'<text x="{left - 4}" y="{top + 4}" text-anchor="end">{esc(y_text(y1))}</text>',
        f'<text x="{left - 4}" y="{base}" text-anchor="end">{esc(y_text(y0))}</text>',
        f'<text x="{left}" y="{base + 14}">{esc(x_text(x0))}</text>',
        f'<text x="{left + plot_w}" y="{base + 14}" text-anchor="end">{esc(x_text(x1))}</text>',
        f'<text x="{left + plot_w / 2:.0f}" y="{base + 28}" text-anchor="middle">'
        f"{esc(x_label)}</text>",
        f'<text x="{left - 4}" y="{top - 10}">{esc(y_label)}</text>',
    ]
    if y_cut_note:
        # Two short slanted strokes across the foot of the y-axis: the axis is cut.
        shapes += [
            f'<line class="axis" x1="{left - 5}" y1="{base - 4 + d}" x2="{left + 5}" '
            f'y2="{base - 8 + d}" {_STYLE["axis"]} stroke-width="1.5"/>'
            for d in (-4, 0)
        ]
        texts.append(
            f'<text class="y-cut-note" x="{left + plot_w}" y="{top - 10}" text-anchor="end">'
            f"{esc(y_cut_note)}</text>"
        )
    return (
        f'<svg class="chart line-chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{esc(label)}">{"".join(shapes)}{"".join(texts)}</svg>'
    )


def gpu_meters(
    gpus: Sequence[tuple[str, float, str]], *, label: str, width: int = 640, height: int = 92
) -> str:
    """One small bar per GPU: (name, utilisation 0..1, caption such as its memory).

    The bar's fill is the share of time the GPU is busy; the caption is printed under it.
    """
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
            f'<text x="{cx:.1f}" y="11" text-anchor="middle">{esc(name)}</text>'
            f'<rect class="track" x="{x:.1f}" y="{bar_top}" width="{bar_w:.1f}" '
            f'height="{bar_h}" rx="2"/>'
            f'<rect class="part-1" x="{x:.1f}" y="{bar_top + bar_h - fill_h:.1f}" '
            f'width="{bar_w:.1f}" height="{fill_h:.1f}" rx="2"/>'
            f'<text x="{cx:.1f}" y="{bar_top + bar_h + 13}" text-anchor="middle">'
            f"{esc(f'{share:.0%}')}</text>"
            f'<text class="small" font-size="9" x="{cx:.1f}" y="{bar_top + bar_h + 26}" '
            f'text-anchor="middle">{esc(caption)}</text>'
        )
    return (
        f'<svg class="chart gpu-meters" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{esc(label)}">{"".join(shapes)}</svg>'
    )
