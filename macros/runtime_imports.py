"""Which modules the reader's browser may import, learned inside Pyodide by the build.

``macros/pyodide_compile.mjs`` copies this file and ``macros/corpus.py`` into Pyodide's file
system, runs the corpus (:func:`corpus.browser_corpus_json`) and then asks this module what
the engine it loaded names in its import statements: the engine modules the browser's wheel
carries and the standard-library modules the trimmed runtime keeps, lazy imports on a path
the corpus did not take included. Only the standard library is imported here.
"""

from __future__ import annotations

import ast
import importlib
import os
import sys


def _is_engine(name: str) -> bool:
    return name == "engine" or name.startswith("engine.")


def _loaded_engine_sources() -> list[tuple[str, str]]:
    """(module name, source path) of each engine module loaded so far."""
    loaded = sorted(sys.modules.items())
    paths = ((name, getattr(module, "__file__", None) or "") for name, module in loaded)
    return [(name, path) for name, path in paths if _is_engine(name) and path.endswith(".py")]


def _for_type_checking(node: ast.AST) -> bool:
    """Whether ``node`` is an ``if TYPE_CHECKING:`` block (its imports never run)."""
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _run_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` but those inside an ``if TYPE_CHECKING:`` block (its ``else``
    kept)."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        if _for_type_checking(node):
            assert isinstance(node, ast.If)
            todo.extend(node.orelse)
        else:
            todo.extend(ast.iter_child_nodes(node))
    return out


def modules_named(tree: ast.AST) -> set[str]:
    """Every module an import statement anywhere in ``tree`` (functions included) may load:
    ``from package import name`` counts ``package.name`` too (it may be a submodule). Imports
    for annotations only (under ``if TYPE_CHECKING:``) never load."""
    named: set[str] = set()
    for node in _run_nodes(tree):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            named.add(node.module)
            named.update(f"{node.module}.{alias.name}" for alias in node.names)
    return named


def _named_in(path: str) -> set[str]:
    """:func:`modules_named` of the file at ``path``."""
    with open(path, encoding="utf-8") as source:
        return modules_named(ast.parse(source.read(), path))


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
