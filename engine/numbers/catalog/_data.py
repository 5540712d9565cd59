"""Read the catalogue's data files once (lazily, cached) from the package.

The source of truth is ``data/<name>.toml``. The wheel the browser installs also carries
``data/<name>.json``, the same values already parsed (:func:`pre_parsed`, put in the wheel by
``macros/wheel.py``):
Pyodide ships the standard library as source, so importing and running ``tomllib`` would
cost the reader's first render tens of milliseconds that ``json`` (already loaded) does not.
The files are read through the package's loader, so the engine also runs imported straight
from its archive (zipimport: the browser's worker puts the archive on ``sys.path``).
"""

from __future__ import annotations

import json
import os
from functools import cache
from typing import Any

DATA_DIR = os.path.join(os.path.dirname(__file__), "data")


@cache
def load(name: str) -> dict[str, Any]:
    """The parsed catalogue file ``name`` (``models``, ``hardware``, ``systems``, ``prices``)."""
    # The module's own loader reads files beside it, whether they are in a folder or in the
    # archive on sys.path (zipimport's loader takes the same path, archive name first).
    loader: Any = __spec__.loader
    try:
        parsed: bytes = loader.get_data(os.path.join(DATA_DIR, f"{name}.json"))
    except OSError:  # a source tree: the TOML only
        return parse_toml(name)
    data: dict[str, Any] = json.loads(parsed)
    return data


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
