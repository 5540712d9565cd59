"""Read the catalogue's TOML files once (lazily, cached) from the package data."""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def load(name: str) -> dict[str, Any]:
    """The parsed ``data/<name>.toml`` of this package."""
    # Imported here, not at module level, so that importing the engine stays fast.
    import tomllib
    from importlib import resources

    text = resources.files("engine.catalog").joinpath("data", f"{name}.toml").read_text("utf-8")
    return tomllib.loads(text)
