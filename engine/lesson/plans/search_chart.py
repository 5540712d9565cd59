"""A search's frontier drawn: throughput per GPU against latency for the set-ups it timed.

Serving puts p90 TPOT (ms) across and output tokens/s per GPU up; training the expected days
across and training tokens/s per GPU up. The frontier (the set-ups no other beats on both) is
a line through its points; the plan found is ringed and named, the runners-up drawn hollow.
Drawn twice: :data:`~engine.render.plot.WIDTH` units wide, and
:data:`~engine.render.plot.NARROW_WIDTH` for a phone, with fewer ticks.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.numbers.search.results import Outcome, SearchResult
from engine.render.plot import (
    NARROW_WIDTH,
    WIDTH,
    Frame,
    Narrow,
    Scale,
    axes,
    chart,
    nice_axis_top,
    ticks,
)
from engine.render.svg import circle, group, polyline, text

_AXIS = {"stroke": "currentColor", "stroke_opacity": "0.6"}
_GRID = {"class_": "search-grid", "stroke": "currentColor", "stroke_opacity": "0.15"}
_FRONT = {"class_": "search-front", "fill": "none", "stroke": "currentColor",
          "stroke_width": "2"}
_HEIGHT = 250.0
_NARROW_HEIGHT = 230.0


def latency(o: Outcome) -> float:
    """The outcome's latency as the chart puts it across: p90 TPOT in ms, or expected days."""
    if o.tpot_p90_seconds is not None:
        return o.tpot_p90_seconds * 1e3
    assert o.days is not None
    return o.days


def _axis_marks(top: float, step: float, every: int) -> list[tuple[float, str]]:
    """Tick values 0, step, ... top, every ``every``-th kept, each labelled."""
    count = round(top / step)
    return [(i * step, f"{i * step:,.4g}") for i in range(0, count + 1, every)]


def _drawing(r: SearchResult, width: float, height: float, *, narrow: bool) -> str:
    frame = Frame(width, height, left=52 if narrow else 62, right=14, top=14, bottom=42)
    shown: Sequence[Outcome] = (*r.frontier, *((r.best,) if r.best else ()), *r.next)
    x_top, x_step = nice_axis_top(max(latency(o) for o in shown) * 1.08)
    y_top, y_step = nice_axis_top(max(o.tokens_per_s_per_gpu for o in shown) * 1.08)
    x = Scale(0.0, x_top, frame.left, frame.end)
    y = Scale(0.0, y_top, frame.base, frame.top)
    every = 2 if narrow else 1
    marks = (ticks("x", x, _axis_marks(x_top, x_step, every), frame, grid=_GRID)
             + ticks("y", y, _axis_marks(y_top, y_step, every), frame, grid=_GRID))
    across = "TPOT at p90 (ms)" if r.task == "serve" else "expected days"
    up = "output tokens/s per GPU" if r.task == "serve" else "training tokens/s per GPU"
    labels = (text(frame.left + frame.plot_w / 2, height - 6, across, anchor="middle")
              + text(frame.left, frame.top - 4, up, class_="search-axis-up"))
    front = sorted(r.frontier, key=latency)
    drawn = polyline([(x(latency(o)), y(o.tokens_per_s_per_gpu)) for o in front], **_FRONT)
    drawn += "".join(circle(x(latency(o)), y(o.tokens_per_s_per_gpu), 4, class_="search-front-point",
                            fill="currentColor", title=o.setup.setup) for o in front)
    drawn += "".join(circle(x(latency(o)), y(o.tokens_per_s_per_gpu), 5, class_="search-next",
                            fill="none", stroke="currentColor", stroke_width="1.5",
                            title=o.setup.setup) for o in r.next)
    if r.best is not None:
        bx, by = x(latency(r.best)), y(r.best.tokens_per_s_per_gpu)
        to_left = bx > frame.left + frame.plot_w * 0.7
        drawn += circle(bx, by, 8, class_="search-best", fill="none", stroke="currentColor",
                        stroke_width="3", title=r.best.setup.setup)
        drawn += text(bx + (-12 if to_left else 12), by + 4, "cheapest",
                      anchor="end" if to_left else "start", class_="search-best-label",
                      font_weight="700")
    return (group(marks, class_="search-ticks") + axes(frame, **_AXIS) + labels + drawn)


def chart_words(r: SearchResult) -> str:
    """The chart's text alternative: the frontier's points and the plan found, in figures."""
    def said(o: Outcome) -> str:
        at = (f"TPOT p90 {latency(o):,.3g} ms" if r.task == "serve"
              else f"{latency(o):,.3g} days")
        return f"{o.setup.setup}: {o.tokens_per_s_per_gpu:,.0f} tokens/s per GPU at {at}"

    best = f" The plan found: {said(r.best)}." if r.best else ""
    return ("Throughput per GPU against latency, the frontier: "
            + "; ".join(said(o) for o in sorted(r.frontier, key=latency)) + "." + best)


def frontier_chart(r: SearchResult) -> str:
    """The chart of ``r``'s frontier, its plan found ringed; '' when nothing was timed."""
    if not r.frontier and r.best is None:
        return ""
    return chart(_drawing(r, WIDTH, _HEIGHT, narrow=False), css="search-frontier",
                 name="the frontier of the set-ups searched", label=chart_words(r),
                 height=_HEIGHT,
                 narrow=Narrow(_drawing(r, NARROW_WIDTH, _NARROW_HEIGHT, narrow=True),
                               _NARROW_HEIGHT))
