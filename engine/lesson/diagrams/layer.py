"""One transformer layer as a picture: the token's path through its norms, its attention and
its MLP, each weight matrix labelled with its shape as the engine's architecture components
give it (:func:`engine.numbers.architecture.layer_components`), and the residual additions.

Drawn for a dense model with grouped-query attention and a gated MLP (Llama's layer); a model
whose layer has other matrices is refused, naming the field."""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers.architecture import Component, layer_components
from engine.numbers.catalog import ModelSpec
from engine.numbers.errors import EngineError
from engine.render.svg import group, line, polygon, polyline, rect, svg, text

WIDTH = 300  # user units: a 390 px phone's text column draws it at its own size
BOX_H = 26  # a box of one line of text, user units
LINE_H = 14  # each further line
ARROW = 12  # the gap between rows, where the arrow is
GAP = 6
LEFT = 22  # room on the left for the residual path
RESIDUAL_X = 8
MATRICES = ("attention.q", "attention.k", "attention.v", "attention.o", "mlp.gate",
            "mlp.up", "mlp.down")


@dataclass(frozen=True, slots=True)
class Box:
    """One box of the diagram: its label, its kind ('matrix', 'step', 'vector', 'add') and,
    for a weight matrix, the component it draws."""

    label: str
    kind: str
    component: str = ""


def _shape(c: Component) -> str:
    return f"{c.rows:,} × {c.cols:,}"


def rows(model: ModelSpec) -> tuple[tuple[Box, ...], ...]:
    """The diagram's rows, top to bottom, each one box or several side by side."""
    by_name = {c.name: c for c in layer_components(model) if c.kind == "matmul"}
    missing = [name for name in MATRICES if name not in by_name]
    if missing or len(by_name) != len(MATRICES) or model.experts > 1:
        raise EngineError(f"The layer diagram draws a dense layer with attention.q/k/v/o and a "
                          f"gated MLP; {model.name}'s layer is another kind.", "model")

    def matrix(name: str, label: str, lines: int = 1) -> Box:
        # Three side by side on a phone: the name above the shape.
        joint = "\n" if lines == 2 else " "
        return Box(f"{label}{joint}{_shape(by_name[name])}", "matrix", name)

    return (
        (Box(f"token in: {model.hidden:,} numbers", "vector"),),
        (Box("RMSNorm: rescale to a common size", "step"),),
        (matrix("attention.q", "Q", 2), matrix("attention.k", "K", 2),
         matrix("attention.v", "V", 2)),
        (Box(f"attention: {model.heads:,} heads of {model.head_dim:,}, "
             f"{model.kv_heads:,} K/V heads", "step"),),
        (matrix("attention.o", "O"),),
        (Box("+ the token in (residual)", "add"),),
        (Box("RMSNorm: rescale to a common size", "step"),),
        (matrix("mlp.gate", "gate"), matrix("mlp.up", "up")),
        (Box("SiLU(gate) × up, number by number", "step"),),
        (matrix("mlp.down", "down"),),
        (Box(f"+ residual: to the next of {model.layers:,} layers", "add"),),
    )


def _box(x: float, y: float, w: float, h: float, box: Box) -> str:
    shape = rect(x, y, w, h, rx=4, class_=f"diagram-{box.kind}")
    lines = box.label.split("\n")
    first = y + h / 2 + 4.5 - (len(lines) - 1) * LINE_H / 2
    labels = "".join(text(x + w / 2, first + i * LINE_H, words, anchor="middle")
                     for i, words in enumerate(lines))
    return group(shape + labels, data_component=box.component or None)


def _arrow(x: float, y1: float, y2: float) -> str:
    head = polygon(((x - 4, y2 - 6), (x + 4, y2 - 6), (x, y2)), class_="diagram-arrow")
    return line(x, y1, x, y2 - 5, class_="diagram-line") + head


def layer_svg(model: ModelSpec) -> str:
    """The layer of ``model`` as an SVG: boxes top to bottom, arrows between them, and the
    two residual paths on the left."""
    parts: list[str] = []
    lanes = rows(model)
    inner = WIDTH - LEFT - 2
    centre = LEFT + inner / 2
    middles: list[float] = []  # each row's middle, for the residual paths
    adds: list[int] = []
    y = 4.0
    for i, lane in enumerate(lanes):
        h = BOX_H + LINE_H * max(b.label.count("\n") for b in lane)
        w = (inner - GAP * (len(lane) - 1)) / len(lane)
        for j, box in enumerate(lane):
            parts.append(_box(LEFT + j * (w + GAP), y, w, h, box))
        middles.append(y + h / 2)
        if lane[0].kind == "add":
            adds.append(i)
        if i + 1 < len(lanes):
            parts.append(_arrow(centre, y + h, y + h + ARROW))
        y += h + ARROW
    # Each residual path leaves the row above a norm and joins at its addition.
    start = 0
    for add in adds:
        top, bottom = middles[start], middles[add]
        parts.append(polyline(((LEFT, top), (RESIDUAL_X, top), (RESIDUAL_X, bottom),
                               (LEFT - 5, bottom)), class_="diagram-line")
                     + polygon(((LEFT - 6, bottom - 4), (LEFT - 6, bottom + 4), (LEFT, bottom)),
                               class_="diagram-arrow"))
        start = add
    height = y - ARROW + 4
    label = (f"One layer of {model.name}: "
             + "; ".join(b.label.replace("\n", " ") for lane in lanes for b in lane) + ".")
    return svg("".join(parts), css="diagram", width=WIDTH, height=height, label=label,
               data={"diagram": "transformer-layer"})
