"""The diagrams a page can place with ``{{ diagram("NAME", ...) }}``: each a function of
keyword text (as an author writes it) returning the SVG, drawn at build time."""

from __future__ import annotations

from collections.abc import Callable

from engine.lesson.diagrams.layer import layer_svg
from engine.numbers.catalog import resolve_model
from engine.numbers.errors import EngineError

Diagram = Callable[..., str]


def transformer_layer(model: str = "llama-3.1-8b") -> str:
    """One layer of ``model`` with its weight matrices' shapes."""
    return layer_svg(resolve_model(model_id=model))


DIAGRAMS: dict[str, Diagram] = {f.__name__: f for f in (transformer_layer,)}


def get_diagram(name: object) -> Diagram:
    if isinstance(name, str) and name in DIAGRAMS:
        return DIAGRAMS[name]
    raise EngineError(f"Unknown diagram {str(name)[:40]!r}; known diagrams: "
                      f"{', '.join(sorted(DIAGRAMS))}.", "diagram")
