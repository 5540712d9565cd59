"""What the reader's browser may run, as one corpus: run inside Pyodide by the build.

``macros/pyodide_compile.mjs`` copies this file, ``tools/snapshot.py`` and
``tests/parity_cases.py`` into Pyodide's file system and calls :func:`run` there, once on the
stock standard library (to learn which modules the site uses) and once on the trimmed one the
site ships (to prove nothing is missing: the two runs must give the same text). The cases are
the tests' own: every widget at its defaults and with each control moved (every option, numbers
scaled, a bad number, every action), every plan case and the parity cases (saved states,
pasted configs). Only the standard library and the engine are imported here.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import sys
import traceback
from typing import Any


def run() -> str:
    """Every case's result as one JSON text (identical runtimes give identical text)."""
    snapshot: Any = importlib.import_module("snapshot")
    parity_cases: Any = importlib.import_module("parity_cases")
    results = {
        "widgets": snapshot._widgets(),
        "plans": snapshot._plans(),
        "parity": parity_cases.results(),
        "traceback": _a_traceback(),
    }
    return json.dumps(results, sort_keys=True, default=str)


def _a_traceback() -> list[tuple[str, int | None]]:
    """An error raised inside the standard library, as the traceback module extracts it:
    Pyodide formats every Python error it hands to JavaScript this way, so the bytecode must
    keep what tracebacks need (functions and line numbers; the source lines, absent from the
    shipped runtime, are left out of the comparison)."""
    try:
        json.loads("{")
    except ValueError as error:
        frames = traceback.extract_tb(error.__traceback__)
        return [(frame.name, frame.lineno) for frame in frames]
    raise AssertionError("json.loads('{') parsed")


def _is_engine(name: str) -> bool:
    return name == "engine" or name.startswith("engine.")


def _loaded_engine_sources() -> list[tuple[str, str]]:
    """(module name, source path) of each engine module loaded so far."""
    loaded = sorted(sys.modules.items())
    paths = ((name, getattr(module, "__file__", None) or "") for name, module in loaded)
    return [(name, path) for name, path in paths if _is_engine(name) and path.endswith(".py")]


def _named_in(path: str) -> set[str]:
    """Every module an import statement anywhere in the file (functions included) may load:
    ``from package import name`` counts ``package.name`` too (it may be a submodule)."""
    with open(path, encoding="utf-8") as source:
        tree = ast.parse(source.read(), path)
    named: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            named.add(node.module)
            named.update(f"{node.module}.{alias.name}" for alias in node.names)
    return named


def engine_modules_named() -> list[str]:
    """The engine modules loaded so far and, transitively, every engine module an import
    statement in them names (a lazy import on a path the corpus did not take), each imported
    here: the engine's part of the browser's wheel. The rest (the CLI, the build's tables and
    figures) stays out. Needs the engine's sources (the plain wheel)."""
    shipped: set[str] = set()
    todo = [name for name, _ in _loaded_engine_sources()]
    while todo:
        name = todo.pop()
        if name in shipped:
            continue
        shipped.add(name)
        path = getattr(importlib.import_module(name), "__file__", None) or ""
        if path.endswith(".py"):
            todo.extend(n for n in _named_in(path) if _is_engine(n) and _engine_module_exists(n))
    return sorted(shipped)


def _engine_module_exists(name: str) -> bool:
    """Whether ``name`` is an engine module or package, by its file (no import machinery:
    ``from engine.x import function`` names no module)."""
    package_root = os.path.dirname(os.path.dirname(sys.modules["engine"].__file__ or ""))
    base = os.path.join(package_root, *name.split("."))
    return os.path.isfile(base + ".py") or os.path.isfile(os.path.join(base, "__init__.py"))


# Imports on a path the browser cannot take, by construction (module -> where): not shipped.
# If the browser did take one, the build's check (on exactly what ships) would fail naming it.
BUILD_ONLY_IMPORTS = {
    # engine/numbers/catalog/_data.py parses TOML only where a catalogue's JSON is missing;
    # the browser's archive always carries the JSON (macros/wheel.py, tests/test_wheel.py).
    "tomllib": "engine/numbers/catalog/_data.py",
}


def stdlib_imports_of_loaded_engine() -> list[str]:
    """The modules named by an import statement anywhere (functions included) in the engine
    modules loaded so far, other than the engine's own and :data:`BUILD_ONLY_IMPORTS`: a lazy
    import on a path the corpus did not take is still shipped. Needs the engine's sources
    (the plain wheel)."""
    named: set[str] = set()
    for _, path in _loaded_engine_sources():
        named.update(_named_in(path))
    left = ("engine", "__future__", *BUILD_ONLY_IMPORTS)
    return sorted(n for n in named if n.split(".")[0] not in left)
