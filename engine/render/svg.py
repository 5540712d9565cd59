"""SVG shapes on :func:`engine.render.html.tag`: every chart draws with these, so every
attribute and every text is escaped in one place and every coordinate is written one way.

Coordinates are in the chart's user units (its viewBox); :func:`num` writes them with at
most two decimals. Extra keyword arguments become attributes as in ``tag`` (``class_`` ->
class, ``stroke_width`` -> stroke-width, ``data_side`` -> data-side); None leaves one out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.render.html import closed_tag, esc, tag

Point = tuple[float, float]


def num(value: float) -> str:
    """A coordinate as an SVG attribute: two decimals at most, no trailing zeros: 4, 12.5, 3.14."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def points(coords: Sequence[Point]) -> str:
    """A points attribute: 'x,y x,y ...'."""
    return " ".join(f"{num(x)},{num(y)}" for x, y in coords)


def _ordered(geometry: Mapping[str, object], attributes: dict[str, object]) -> dict[str, object]:
    """Attributes in one order: class, data-*, the geometry, then presentation."""
    cls = attributes.pop("class_", None)
    data = {k: v for k, v in attributes.items() if k.startswith("data_")}
    rest = {k: v for k, v in attributes.items() if k not in data}
    return {"class_": cls, **data, **geometry, **rest}


def _shape(element: str, title: str, attributes: dict[str, object]) -> str:
    """An element closed by itself, or holding a <title> (its tooltip and accessible name)."""
    if title:
        return tag(element, tag("title", esc(title)), **attributes)
    return closed_tag(element, **attributes)


def line(x1: float, y1: float, x2: float, y2: float, **attributes: object) -> str:
    """A straight line from (x1, y1) to (x2, y2)."""
    geometry = {"x1": num(x1), "y1": num(y1), "x2": num(x2), "y2": num(y2)}
    return closed_tag("line", **_ordered(geometry, attributes))


def polyline(coords: Sequence[Point], **attributes: object) -> str:
    """A line through ``coords``; nothing when there are fewer than two."""
    if len(coords) < 2:
        return ""
    return closed_tag("polyline", **_ordered({"points": points(coords)}, attributes))


def polygon(coords: Sequence[Point], *, title: str = "", **attributes: object) -> str:
    """A closed shape through ``coords``."""
    return _shape("polygon", title, _ordered({"points": points(coords)}, attributes))


def rect(
    x: float, y: float, width: float, height: float, *, title: str = "", **attributes: object
) -> str:
    """A rectangle; ``title`` (plain text) is its tooltip."""
    geometry = {"x": num(x), "y": num(y), "width": num(width), "height": num(height)}
    return _shape("rect", title, _ordered(geometry, attributes))


def boxes(boxes: Sequence[tuple[float, float, float, float]], **attributes: object) -> str:
    """Rectangles (x, y, width, height) drawn as one path: many shapes of one class for the
    cost of one element; nothing when there are none."""
    if not boxes:
        return ""
    d = "".join(f"M{num(x)} {num(y)}h{num(w)}v{num(h)}h{num(-w)}z" for x, y, w, h in boxes)
    return closed_tag("path", **_ordered({"d": d}, attributes))


def circle(cx: float, cy: float, r: float, *, title: str = "", **attributes: object) -> str:
    """A circle of radius ``r`` centred on (cx, cy)."""
    geometry = {"cx": num(cx), "cy": num(cy), "r": num(r)}
    return _shape("circle", title, _ordered(geometry, attributes))


def text(x: float, y: float, content: str, *, anchor: str = "start", **attributes: object) -> str:
    """Plain text (escaped here) at (x, y): ``anchor`` start, middle or end of the text."""
    geometry = {"x": num(x), "y": num(y), "text_anchor": None if anchor == "start" else anchor}
    return tag("text", esc(content), **_ordered(geometry, attributes))


def group(content: str, **attributes: object) -> str:
    """Shapes kept together (<g>), e.g. to carry one data attribute for all of them."""
    return tag("g", content, **attributes)


def svg(
    content: str,
    *,
    css: str,
    width: float,
    height: float,
    label: str,
    data: Mapping[str, str] | None = None,
    fixed_size: bool = False,
) -> str:
    """A picture's root of class ``css``: a viewBox of width x height and ``role="img"`` named
    by ``label`` (the text alternative, with the same figures); ``data`` gives data-*
    attributes (``{"metric": "peak"}`` -> data-metric="peak"). With ``fixed_size`` it is
    drawn that many px, not scaled to the page."""
    data_attributes = {f"data_{key}": value for key, value in (data or {}).items()}
    size = {"width": num(width), "height": num(height)} if fixed_size else {}
    return tag(
        "svg",
        content,
        class_=css,
        **data_attributes,
        **size,
        viewBox=f"0 0 {num(width)} {num(height)}",
        role="img",
        aria_label=label,
    )
