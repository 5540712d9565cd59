"""Read the catalogue's data files once (lazily, cached) from the package.

The source of truth is ``data/<name>.toml``. The wheel the browser installs also carries
``data/<name>.json``, the same values already parsed (:func:`pre_parsed`, put in the wheel by
``macros/wheel.py``):
Pyodide ships the standard library as source, so importing and running ``tomllib`` would
cost the reader's first render tens of milliseconds that ``json`` (already loaded) does not.
The files are read through the package's loader, so the engine also runs imported straight
from its archive (zipimport: the browser's worker puts the archive on ``sys.path``).

A file in :data:`SHIPPED_APART` (the config library: tens of kilobytes a page needs only once a
reader picks one of its models) is not in the browser's wheel: the wheel carries the ids of its
entries (``data/<name>.ids.json``, :func:`entry_ids`), and the entries are read, the first time
one is needed, through the function the page registers with :func:`read_apart_with` (the
worker fetches ``wheels/data/<name>.json`` beside the wheel).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from functools import cache
from typing import Any

from engine.numbers.errors import EngineError

DATA_DIR = os.path.join(os.path.dirname(__file__), "data")
# Catalogue files shipped beside the browser's wheel, not in it: name -> the table that holds
# its entries (keyed by id).
SHIPPED_APART = {"config_library": "configs"}
# name -> the file's JSON text, or None when it cannot be had (the page is offline); set by the
# browser's entry point.
_read_apart: list[Callable[[str], str | None]] = []


def read_apart_with(read: Callable[[str], str | None]) -> None:
    """Read the files of :data:`SHIPPED_APART` with ``read`` (name -> JSON text, None when it
    cannot be had) where the package does not carry them."""
    _read_apart[:] = [read]


@cache
def load(name: str) -> dict[str, Any]:
    """The parsed catalogue file ``name`` (``models``, ``hardware``, ``systems``, ``prices``)."""
    # The module's own loader reads files beside it, whether they are in a folder or in the
    # archive on sys.path (zipimport's loader takes the same path, archive name first).
    loader: Any = __spec__.loader
    try:
        parsed: bytes = loader.get_data(os.path.join(DATA_DIR, f"{name}.json"))
    except OSError:  # a source tree (the TOML only), or a file shipped apart
        if name in SHIPPED_APART and _read_apart:
            return _apart(name)
        return parse_toml(name)
    data: dict[str, Any] = json.loads(parsed)
    return data


def _apart(name: str) -> dict[str, Any]:
    text = _read_apart[0](name)
    if text is None:
        raise EngineError(f"This page could not download the {name.replace('_', ' ')} (it is "
                          "fetched the first time one of its models is chosen); try again "
                          "online.", "model")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def entry_ids(name: str) -> tuple[str, ...]:
    """The ids of the entries of :data:`SHIPPED_APART` file ``name``, in the file's order,
    without reading the entries where the package carries their ids alone."""
    loader: Any = __spec__.loader
    try:
        parsed: bytes = loader.get_data(os.path.join(DATA_DIR, f"{name}.ids.json"))
    except OSError:
        return tuple(load(name)[SHIPPED_APART[name]])
    ids: list[str] = json.loads(parsed)
    return tuple(ids)


def parse_toml(name: str) -> dict[str, Any]:
    """``data/<name>.toml`` parsed, without the cache or the pre-parsed copy."""
    # Imported here, not at module level, so that importing the engine stays fast.
    import tomllib

    with open(os.path.join(DATA_DIR, f"{name}.toml"), "rb") as source:
        return tomllib.load(source)


def pre_parsed(name: str) -> bytes:
    """The text of ``data/<name>.json`` as the wheel carries it: the TOML's values as JSON.

    Key order is kept (catalogue order is the order readers see, and drills draw from it);
    JSON holds TOML's ints, floats, strings, booleans, arrays and tables exactly (the
    catalogue has no dates).
    """
    return json.dumps(parse_toml(name), ensure_ascii=False, separators=(",", ":")).encode()


def names() -> list[str]:
    """The catalogue files' names, without the extension."""
    return sorted(f[: -len(".toml")] for f in os.listdir(DATA_DIR) if f.endswith(".toml"))
