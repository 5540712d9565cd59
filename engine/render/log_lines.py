"""Several named lines on log-log axes (times against a count), with a legend and a text
alternative giving every point's figures."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from engine.render.plot import WIDTH, Frame, Scale, axes, chart_for_both, legend, ticks
from engine.render.svg import polyline, text

Series = tuple[str, str, Sequence[tuple[float, float]]]  # name, css class, (x, y) points
_GRID = {"class_": "roof-grid", "stroke_width": 0.5}


def log_lines(series: Sequence[Series], *, label: str, x_label: str, y_label: str,
              x_text: Callable[[float], str], y_text: Callable[[float], str],
              height: int = 240) -> str:
    """Each series a polyline (class "line <css>") on shared log scales spanning every
    point; ticks at the powers of ten (labels by ``x_text``/``y_text``), every other one on
    the x axis of the narrow drawing when there are more than four."""
    description = f"{label}. " + "; ".join(
        f"{name}: " + ", ".join(f"{x_text(x)} {y_text(y)}" for x, y in pts)
        for name, _, pts in series) + "."
    return chart_for_both(
        lambda width: (_drawing(series, x_label, y_label, x_text, y_text, width, height), height),
        css="log-lines", name=label, label=description) + legend(
        [(css, name) for name, css, _ in series])


def _drawing(series: Sequence[Series], x_label: str, y_label: str,
             x_text: Callable[[float], str], y_text: Callable[[float], str],
             width: int, height: int) -> str:
    # The top leaves room for the y axis's title above the plot, clear of the top tick label.
    f = Frame(width, height, left=58, right=12, top=26, bottom=40)
    xs = [x for _, _, pts in series for x, _ in pts if x > 0]
    ys = [y for _, _, pts in series for _, y in pts if y > 0]
    x_scale = Scale(min(xs), max(xs), f.left, f.end, log=True)
    y_lo, y_hi = min(ys), max(ys)
    y_scale = Scale(10 ** _floor_log(y_lo), 10 ** _ceil_log(y_hi), f.base, f.top, log=True)
    x_marks = x_scale.decades()
    if width < WIDTH and len(x_marks) > 4:
        x_marks = x_marks[::2]
    shapes = [axes(f),
              ticks("x", x_scale, [(v, x_text(v)) for v in x_marks], f, grid=_GRID),
              ticks("y", y_scale, [(v, y_text(v)) for v in y_scale.decades()], f, grid=_GRID)]
    for _, css, pts in series:
        shown = [(x_scale(x), y_scale(y)) for x, y in pts if x > 0 and y > 0]
        shapes.append(polyline(shown, class_=f"line {css}", fill="none", stroke="currentColor",
                               stroke_width=2.5))
    shapes.append(text(f.left + f.plot_w / 2, height - 6, x_label, anchor="middle"))
    shapes.append(text(4, 10, y_label))
    return "".join(shapes)


def _floor_log(value: float) -> int:
    return math.floor(math.log10(value) + 1e-9)


def _ceil_log(value: float) -> int:
    return math.ceil(math.log10(value) - 1e-9)
