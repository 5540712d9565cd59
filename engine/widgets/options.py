"""Choices offered by widget controls, taken from the catalogue (never typed twice)."""

from __future__ import annotations

from engine.catalog import list_hardware, list_models
from engine.formats import FORMATS

CUSTOM_MODEL = "custom"


def model_options(*, with_custom: bool = True) -> tuple[tuple[str, str], ...]:
    options = [(m.id, m.name) for m in list_models()]
    if with_custom:
        options.append((CUSTOM_MODEL, "A parameter count I type"))
    return tuple(options)


def gpu_options() -> tuple[tuple[str, str], ...]:
    return tuple((h.id, h.name) for h in list_hardware() if h.kind in ("gpu", "tpu"))


def hardware_options() -> tuple[tuple[str, str], ...]:
    return tuple((h.id, h.name) for h in list_hardware())


def format_options(*ids: str) -> tuple[tuple[str, str], ...]:
    chosen = ids or tuple(FORMATS)
    return tuple((f, FORMATS[f].label) for f in chosen)
