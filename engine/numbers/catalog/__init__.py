"""The catalogue: models, hardware, systems and prices, as data (TOML) with sources.

Files are read lazily on first use and cached, so ``import engine.numbers.catalog`` stays cheap.
"""

from __future__ import annotations

from engine.numbers.catalog.hardware import HardwareSpec, get_hardware, list_hardware
from engine.numbers.catalog.models import (
    ModelSpec,
    generic_dense_model,
    get_model,
    list_models,
    resolve_model,
)
from engine.numbers.catalog.prices import CloudPrice, Prices, PurchasePrice, prices
from engine.numbers.catalog.systems import SystemSpec, get_system, list_systems

__all__ = [
    "CloudPrice",
    "HardwareSpec",
    "ModelSpec",
    "Prices",
    "PurchasePrice",
    "SystemSpec",
    "as_hardware",
    "as_model",
    "catalog_dict",
    "generic_dense_model",
    "get_hardware",
    "get_model",
    "get_system",
    "list_hardware",
    "list_models",
    "list_systems",
    "prices",
    "resolve_model",
]


def catalog_dict() -> dict[str, object]:
    """The whole catalogue as plain JSON values (for ``python -m engine catalog --json``)."""
    return {
        "models": [m.to_dict() for m in list_models(include_reference=True)],
        "hardware": [h.to_dict() for h in list_hardware()],
        "systems": [s.to_dict() for s in list_systems()],
        "prices": prices().to_dict(),
    }


def as_model(model: object) -> ModelSpec:
    """A ModelSpec given either one or a catalogue id."""
    return model if isinstance(model, ModelSpec) else get_model(model)


def as_hardware(hardware: object) -> HardwareSpec:
    """A HardwareSpec given either one or a catalogue id."""
    return hardware if isinstance(hardware, HardwareSpec) else get_hardware(hardware)
