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


def stdlib_imports_of_loaded_engine() -> list[str]:
    """The modules named by an import statement anywhere (functions included) in the engine
    modules loaded so far, other than the engine's own: a lazy import on a path the corpus did
    not take is still shipped. Needs the engine's sources (the plain wheel)."""
    named: set[str] = set()
    for name, module in sorted(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if not (name == "engine" or name.startswith("engine.")) or not path.endswith(".py"):
            continue
        with open(path, encoding="utf-8") as source:
            tree = ast.parse(source.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                named.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                named.add(node.module)
                # `from package import submodule` loads the submodule too.
                named.update(f"{node.module}.{alias.name}" for alias in node.names)
    return sorted(n for n in named if n.split(".")[0] not in ("engine", "__future__"))
