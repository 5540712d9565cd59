"""The plotting kit: a plot frame with margins, linear and log scales, axes with ticks and
grid lines, stacked bars, legends and the chart's root element. Shapes come from
:mod:`engine.render.svg`, label placement from :mod:`engine.render.placer`.

Every chart is drawn in user units on a viewBox :data:`WIDTH` wide (the page scales it);
its text is 11 px (docs/css). Every chart has ``role="img"`` and an ``aria-label`` that
gives the same figures as the picture.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from engine.render.html import esc, scroll_box, tag
from engine.render.placer import text_width
from engine.render.svg import group, line, rect, svg, text

WIDTH = 640  # user units across every chart
NARROW_WIDTH = 320  # user units across a chart's narrow drawing: a 390 px phone draws it 1:1
# User units across the narrow drawing of a chart that may sit in a widget's inner panel,
# 277 px wide on a 390 px phone: drawn at least this many px (docs/css/lesson.css), its 11 px
# text stays 11 px or more.
PHONE_WIDTH = 270


@dataclass(frozen=True, slots=True)
class Frame:
    """A chart of ``width`` x ``height`` user units and the plot inside its margins."""

    width: float
    height: float
    left: float = 0.0
    right: float = 0.0
    top: float = 0.0
    bottom: float = 0.0

    @property
    def plot_w(self) -> float:
        return self.width - self.left - self.right

    @property
    def plot_h(self) -> float:
        return self.height - self.top - self.bottom

    @property
    def base(self) -> float:
        """The y of the plot's bottom edge (the x-axis)."""
        return self.top + self.plot_h

    @property
    def end(self) -> float:
        """The x of the plot's right edge."""
        return self.left + self.plot_w


@dataclass(frozen=True, slots=True)
class Scale:
    """Data ``lo``..``hi`` to user units ``start``..``end`` (a y-axis runs from the base up:
    start = base, end = top), linear or, with ``log``, logarithmic (lo and hi above zero).
    With ``clamp`` a value outside is drawn at the nearer edge."""

    lo: float
    hi: float
    start: float
    end: float
    clamp: bool = True
    log: bool = False

    def __call__(self, value: float) -> float:
        if self.log:
            lo, hi = math.log10(self.lo), math.log10(self.hi)
            fraction = (math.log10(value) - lo) / (hi - lo)
        else:
            fraction = (value - self.lo) / ((self.hi - self.lo) or 1.0)
        if self.clamp:
            fraction = min(max(fraction, 0.0), 1.0)
        return self.start + (self.end - self.start) * fraction

    def decades(self) -> list[float]:
        """The powers of ten from lo to hi, lowest first."""
        first = math.ceil(math.log10(self.lo) - 1e-9)
        last = math.floor(math.log10(self.hi) + 1e-9)
        return [10.0**d for d in range(first, last + 1)]


def nice_axis_top(value: float) -> tuple[float, float]:
    """A round top for an axis at or above ``value``, and its tick step: 8.97 -> (10, 2.5)."""
    if not value > 0:
        return 1.0, 0.25
    raw = value / 4.0
    magnitude = 10.0 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * magnitude >= raw)
    return math.ceil(value / step - 1e-9) * step, step


def axes(frame: Frame, **attributes: object) -> str:
    """The y-axis (left edge) and the x-axis (bottom edge) of the plot, class "axis"."""
    return line(frame.left, frame.top, frame.left, frame.base, class_="axis", **attributes) + line(
        frame.left, frame.base, frame.end, frame.base, class_="axis", **attributes
    )


def ticks(
    axis: str,
    scale: Scale,
    marks: Sequence[tuple[float, str]],
    frame: Frame,
    *,
    grid: Mapping[str, object] | None = None,
    offset: float | None = None,
) -> str:
    """Tick labels (value, text) on the "x" axis, centred ``offset`` (14) under it, or on the
    "y" axis, right-aligned ``offset`` (5) left of it; each with a grid line across the plot
    when ``grid`` (the lines' attributes) is given."""
    parts = []
    for value, label in marks:
        at = scale(value)
        if axis == "x":
            across = (at, frame.top, at, frame.base)
            x, y, anchor = at, frame.base + (14 if offset is None else offset), "middle"
        else:
            across = (frame.left, at, frame.end, at)
            x, y, anchor = frame.left - (5 if offset is None else offset), at + 4, "end"
        if grid is not None:
            x1, y1, x2, y2 = across
            parts.append(line(x1, y1, x2, y2, **grid))
        parts.append(text(x, y, label, anchor=anchor))
    return "".join(parts)


def stacked_bar(
    parts: Sequence[tuple[str, float, str]],
    *,
    x: float,
    y: float,
    height: float,
    units_per_value: float,
    limit: float = math.inf,
) -> str:
    """Rectangles side by side from ``x``: (css class, value, title) each ``value x
    units_per_value`` wide, none below zero, the whole no wider than ``limit``."""
    shapes = []
    used = 0.0
    for css, value, title in parts:
        w = min(max(value * units_per_value, 0.0), limit - used)
        shapes.append(rect(x + used, y, w, height, class_=css, title=title))
        used += w
    return "".join(shapes)


def legend(items: Sequence[tuple[str, str]]) -> str:
    """A visible key under a chart: (swatch css class, plain text) per entry."""
    entries = "".join(
        tag("li", tag("span", "", class_=f"swatch {css}", aria_hidden="true") + esc(words))
        for css, words in items
    )
    return tag("ul", entries, class_="legend")


@dataclass(frozen=True, slots=True)
class Narrow:
    """A chart's second drawing for a narrow screen: its own ``content`` on a viewBox of
    ``width`` x ``height`` user units (fewer ticks, labels placed for that width)."""

    content: str
    height: float
    width: float = NARROW_WIDTH


def chart(
    content: str,
    *,
    css: str,
    name: str,
    label: str,
    height: float,
    width: float = WIDTH,
    data: Mapping[str, str] | None = None,
    narrow: Narrow | None = None,
) -> str:
    """A chart: its <svg> (class "chart <css>", ``data`` attributes, the text alternative
    ``label``, a viewBox of width x height user units) in a keyboard-reachable scroll box
    named after ``name``, a few words. The page never draws a chart narrower than its
    width in px (docs/css/lesson.css), so its 11 px text never shrinks: on a phone the box
    scrolls sideways instead. With ``narrow``, the chart is drawn twice, the narrow drawing
    (class "chart chart-narrow <css>-narrow") shown instead where the wide one would not fit
    (a container query in docs/css/lesson.css): a phone sees all of it without scrolling."""
    picture = svg(content, css=f"chart {css}", width=width, height=height, label=label, data=data)
    if narrow is None:
        return scroll_box(
            picture, label=f"Chart: {name} (scrolls sideways on narrow screens)", kind="chart"
        )
    # Paired, the wide drawing is shown only where it fits: its box never scrolls.
    wide = scroll_box(picture, label=f"Chart: {name}", kind="chart")
    small = svg(
        narrow.content,
        css=f"chart chart-narrow {css}-narrow" + (" chart-phone" if narrow.width <= PHONE_WIDTH else ""),
        width=narrow.width,
        height=narrow.height,
        label=label,
        data=data,
    )
    return tag(
        "div",
        wide + scroll_box(small, label=f"Chart: {name}", kind="chart", extra_class="narrow"),
        class_="chart-pair",
    )


def chart_for_both(
    draw: Callable[[int], tuple[str, float]],
    *,
    css: str,
    name: str,
    label: str,
    data: Mapping[str, str] | None = None,
) -> str:
    """A :func:`chart` drawn twice by ``draw(width) -> (content, height in user units)``:
    :data:`WIDTH` wide for a wide screen and :data:`PHONE_WIDTH` wide for a narrow one (the
    same figures; ``draw`` places its labels for the width it is given)."""
    content, height = draw(WIDTH)
    small, small_height = draw(PHONE_WIDTH)
    return chart(content, css=css, name=name, label=label, height=height, data=data,
                 narrow=Narrow(small, small_height, PHONE_WIDTH))


@dataclass(frozen=True, slots=True)
class Bar:
    """One horizontal bar of :func:`bar_rows`: its caption (written above it), value, fill
    class, tooltip, attributes of the fill and of the row's group (data-*), and whether its
    caption is bold (the reader's choice)."""

    caption: str
    value: float
    css: str
    title: str = ""
    fill: Mapping[str, object] = field(default_factory=dict)
    row: Mapping[str, object] | None = None
    bold: bool = False


CAPTION_LINE_H = 13  # user units between the lines of a wrapped caption (11 px text)


def caption_lines(caption: str, wrap_w: float | None) -> list[str]:
    """``caption`` in lines no wider than ``wrap_w`` user units (estimated, at word breaks;
    a word wider than that keeps a line of its own); one line when ``wrap_w`` is None."""
    if wrap_w is None:
        return [caption]
    lines: list[str] = []
    for word in caption.split(" "):
        if lines and text_width(f"{lines[-1]} {word}") <= wrap_w:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return lines


def narrow_wrap(width: float, usable: float) -> float | None:
    """Where a chart drawn ``width`` units wide wraps its bars' captions: at ``usable`` units
    in a narrow drawing, nowhere in the wide one (its captions fit on one line)."""
    return usable if width < WIDTH else None


def extra_caption_height(bars: Sequence[Bar], wrap_w: float | None) -> float:
    """The user units the captions of ``bars`` take beyond one line each, wrapped at
    ``wrap_w``: :func:`bar_rows` moves the bars down as much, so the chart is that much taller."""
    return CAPTION_LINE_H * sum(len(caption_lines(bar.caption, wrap_w)) - 1 for bar in bars)


def bar_rows(
    bars: Sequence[Bar],
    *,
    x: float,
    first_y: float,
    bar_h: float,
    pitch: float,
    units_per_value: float,
    track_w: float | None = None,
    caption_gap: float = 3,
    rx: float = 3,
    wrap_w: float | None = None,
) -> str:
    """Horizontal bars one under another, ``pitch`` apart, the first bar's top at
    ``first_y``, each captioned above; a bar is never thinner than 1 unit, so a tiny value
    still shows. With ``track_w`` each bar lies on a track that wide. With ``wrap_w`` a
    caption wider than that is wrapped (:func:`caption_lines`) and the bars below move down."""
    rows = []
    moved = 0.0
    for i, bar in enumerate(bars):
        lines = caption_lines(bar.caption, wrap_w)
        moved += (len(lines) - 1) * CAPTION_LINE_H
        y = first_y + i * pitch + moved
        weight = "700" if bar.bold else None
        shapes = "".join(
            text(x, y - caption_gap - (len(lines) - 1 - j) * CAPTION_LINE_H, words,
                 font_weight=weight)
            for j, words in enumerate(lines)
        )
        if track_w is not None:
            shapes += rect(x, y, track_w, bar_h, class_="track", rx=rx)
        w = max(bar.value * units_per_value, 1.0)
        shapes += rect(x, y, w, bar_h, title=bar.title, class_=bar.css, rx=rx, **bar.fill)
        rows.append(shapes if bar.row is None else group(shapes, **bar.row))
    return "".join(rows)
