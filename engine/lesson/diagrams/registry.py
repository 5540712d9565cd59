"""The diagrams a page can place with ``{{ diagram("NAME", ...) }}``: each a function of
keyword text (as an author writes it) returning the SVG, drawn at build time."""

from __future__ import annotations

from collections.abc import Callable

from engine.lesson.diagrams.layer import layer_svg
from engine.lesson.diagrams.topology import topology_svg
from engine.numbers.catalog import get_system, resolve_model
from engine.numbers.errors import EngineError

Diagram = Callable[..., str]


def transformer_layer(model: str = "llama-3.1-8b") -> str:
    """One layer of ``model`` with its weight matrices' shapes."""
    return layer_svg(resolve_model(model_id=model))


def server_topology(system: str = "dgx-1") -> str:
    """A server's GPUs, network cards, scale-up fabric, PCIe, CPUs and RAM."""
    return topology_svg(get_system(system))


DIAGRAMS: dict[str, Diagram] = {f.__name__: f for f in (transformer_layer, server_topology)}


def get_diagram(name: object) -> Diagram:
    if isinstance(name, str) and name in DIAGRAMS:
        return DIAGRAMS[name]
    raise EngineError(f"Unknown diagram {str(name)[:40]!r}; known diagrams: "
                      f"{', '.join(sorted(DIAGRAMS))}.", "diagram")
