"""The Pyodide core the site ships, from node_modules (npm, at the version package.json pins).

The core's files go into ``site/pyodide`` as npm ships them, except two: the standard library
(trimmed to what the site imports and precompiled, macros/runtime_bytecode.py) ships as one
gzip stream (macros/solid_archive.py), and the package lock lists no packages.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from macros.solid_archive import SUFFIX, solid_gzip

PYODIDE_CORE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
# The standard library ships as one gzip stream (macros/solid_archive.py), under this name.
STDLIB_SHIPPED = "python_stdlib.zip" + SUFFIX
SHIPPED_PYODIDE_FILES = tuple(
    STDLIB_SHIPPED if name == "python_stdlib.zip" else name for name in PYODIDE_CORE_FILES
)
INSTALLED = Path("node_modules") / "pyodide"


class RuntimeMissingError(Exception):
    """The Pyodide runtime is not installed where the build expects it."""


def pinned_version(root: Path) -> str:
    """The Pyodide version package.json pins (an exact version, not a range)."""
    return str(json.loads((root / "package.json").read_text())["dependencies"]["pyodide"])


def installed_version(root: Path) -> str | None:
    """The version of node_modules/pyodide, or None where it is not installed."""
    manifest = root / INSTALLED / "package.json"
    if not manifest.exists():
        return None
    return str(json.loads(manifest.read_text())["version"])


def checked_version(root: Path) -> str:
    """The installed Pyodide's version; RuntimeMissingError unless it is the pinned one."""
    pinned, installed = pinned_version(root), installed_version(root)
    if installed is None:
        raise RuntimeMissingError(
            "node_modules/pyodide is missing: run `npm ci` (or `make build`, which does it)."
        )
    if installed != pinned:
        raise RuntimeMissingError(
            f"node_modules has Pyodide {installed} but package.json pins {pinned}: run `npm ci`."
        )
    return installed


def minimal_lock(stock_lock: bytes) -> bytes:
    """Pyodide's package lock without its packages (the site loads none): loadPyodide still
    reads the lock and checks its ``info`` (ABI version), so that part stays as npm ships it."""
    info = json.loads(stock_lock)["info"]
    return json.dumps({"info": info, "packages": {}}, sort_keys=True).encode()


def copy_pyodide(root: Path, site: Path, stdlib_zip: bytes) -> None:
    """The Pyodide core into ``site/pyodide``: the trimmed, precompiled standard library
    ``stdlib_zip`` (as one gzip stream) and a lock without packages in place of the stock
    ones."""
    source = root / INSTALLED
    target = site / "pyodide"
    target.mkdir(parents=True, exist_ok=True)
    for name in PYODIDE_CORE_FILES:
        if name == "python_stdlib.zip":
            (target / STDLIB_SHIPPED).write_bytes(solid_gzip(stdlib_zip, root))
        elif name == "pyodide-lock.json":
            (target / name).write_bytes(minimal_lock((source / name).read_bytes()))
        else:
            shutil.copy2(source / name, target / name)
