"""Which of the engine's browser modules ship in the core archive and which in further chunks,
loaded by the reader's browser only when a widget that needs them first renders.

Read at build time from the engine's source files alone: every ``import`` and
``from ... import`` statement in each module (those inside functions too) names the engine
modules it may load, and importing a module loads its parent packages. The entry points are
the browser's (``engine.browser``, with the registry it calls) and each widget's module,
which the registry imports by its name (``engine/registry.py``). Then:

- the **core** holds what the start needs (the closure of the entry points) and every module
  that at least :data:`CORE_SHARE` of the widgets need (the core is what every page pays for,
  so a module almost every widget needs is fetched once, with it);
- a module only one widget needs goes into that widget's own chunk;
- the others start as one chunk per set of widgets needing them (so no widget fetches a
  module it does not need), then two chunks merge while what the merge saves in requests
  (:data:`REQUEST_SOURCE_BYTES` per request no longer made) outweighs the bytes it makes
  widgets fetch for nothing (sizes of the modules' sources, the bytecode's being close to
  proportional).

A module that imports by a computed name must be listed in :data:`COMPUTED_IMPORTS` (how its
imports are covered), or the plan refuses it (:class:`ComputedImportError`): a chunk missing
from a widget's list would otherwise be found only in a reader's browser.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from macros.runtime_imports import modules_named

# The browser's start: what the worker imports before the first render.
START_MODULES = ("engine.browser", "engine.browser_archives", "engine.registry")
WIDGETS_PACKAGE = "engine.widgets"
# A module needed by at least this share of the widgets ships in the core.
CORE_SHARE = 0.4
# What one request more is worth, in bytes of source the merge may make a widget fetch for
# nothing: about 8 kB gzipped, roughly a round trip's worth of bytes on a slow phone link.
REQUEST_SOURCE_BYTES = 40_000
# Modules that import by a computed name, with how the plan covers those imports.
COMPUTED_IMPORTS = {
    # registry.get_widget imports engine.widgets.NAME: each widget is an entry point of its
    # own, with its chunks in the manifest; the discovery of every widget (an unknown name's
    # message) lists those present.
    "engine.registry": "each widget module is an entry point",
}
_DYNAMIC_CALLS = ("import_module", "__import__")


class ComputedImportError(RuntimeError):
    """An engine module imports by a computed name the plan does not know how to cover."""


@dataclass(frozen=True)
class ChunkPlan:
    """``core``: the modules of the core archive; ``chunks``: chunk name -> its modules (no
    module in two); ``widget_chunks``: widget name -> the chunks its render needs, sorted."""

    core: frozenset[str]
    chunks: Mapping[str, frozenset[str]]
    widget_chunks: Mapping[str, tuple[str, ...]]

    def chunk_of(self, module: str) -> str | None:
        """The chunk holding ``module``; None for the core (or a module that does not ship)."""
        for name, modules in self.chunks.items():
            if module in modules:
                return name
        return None


def module_name(relative: Path) -> str:
    """``engine/x/__init__.py`` -> ``engine.x``; ``engine/x/y.py`` (or ``.pyc``) -> ``engine.x.y``."""
    parts = list(relative.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources(project_root: Path) -> dict[str, Path]:
    package = project_root / "engine"
    return {
        module_name(path.relative_to(project_root)): path
        for path in sorted(package.rglob("*.py"))
        if "__pycache__" not in path.parts
    }


def _named_in(tree: ast.AST, known: Collection[str]) -> set[str]:
    # The same reading as the browser's bytecode (macros/runtime_imports.py): imports under
    # `if TYPE_CHECKING:` never run, and a module only they name is not shipped.
    return {name for name in modules_named(tree) if name in known}


def _computes_imports(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            called = node.func
            name = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", "")
            if name in _DYNAMIC_CALLS:
                return True
    return False


def _parents(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:end]) for end in range(1, len(parts))}


def import_graph(project_root: Path) -> tuple[dict[str, set[str]], dict[str, int]]:
    """(module -> the engine modules its import statements name, with its parent packages;
    module -> its source's size in bytes), for every module of ``engine/``."""
    sources = _sources(project_root)
    graph: dict[str, set[str]] = {}
    sizes: dict[str, int] = {}
    for module, path in sources.items():
        text = path.read_bytes()
        tree = ast.parse(text, str(path))
        graph[module] = _named_in(tree, sources) | _parents(module)
        sizes[module] = len(text)
        if _computes_imports(tree):
            graph[module].add(_COMPUTED)
    return graph, sizes


_COMPUTED = "<computed>"


def _closure(graph: Mapping[str, set[str]], roots: Iterable[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        todo.extend(graph[module])
    return seen


def widget_modules(graph: Mapping[str, set[str]]) -> dict[str, str]:
    """Widget name -> its module: each module of ``engine/widgets/`` the registry may import
    (a name that does not start with an underscore)."""
    prefix = WIDGETS_PACKAGE + "."
    return {
        module.removeprefix(prefix): module
        for module in sorted(graph)
        if module.startswith(prefix)
        and "." not in module.removeprefix(prefix)
        and not module.removeprefix(prefix).startswith("_")
    }


def plan_chunks(project_root: Path, shipped: Collection[str] | None = None) -> ChunkPlan:
    """The chunks of the engine's modules reachable from the browser's entry points (module
    docstring). Given the ``shipped`` module names (the browser's bytecode), only those are
    placed, and a shipped module no entry point reaches goes into a chunk of its own,
    ``rest``, that no widget needs (the build's whole-engine checks load it)."""
    graph, sizes = import_graph(project_root)
    for module, named in graph.items():
        if _COMPUTED in named:
            if module not in COMPUTED_IMPORTS:
                raise ComputedImportError(
                    f"{module} imports a module by a computed name: list it in "
                    "macros/engine_chunks.py COMPUTED_IMPORTS with how its imports are covered"
                )
            named.discard(_COMPUTED)
    keep = set(graph) if shipped is None else set(shipped)
    widgets = widget_modules(graph)
    start = _closure(graph, START_MODULES)
    needs = {name: _closure(graph, [module]) for name, module in widgets.items()}
    users: dict[str, set[str]] = {}
    for name, modules in needs.items():
        for module in modules:
            users.setdefault(module, set()).add(name)
    threshold = math.ceil(CORE_SHARE * len(widgets))
    core = start | {module for module, names in users.items() if len(names) >= threshold}
    own: dict[str, set[str]] = {}
    by_users: dict[frozenset[str], set[str]] = {}
    for module, names in sorted(users.items()):
        if module in core:
            continue
        if len(names) == 1:
            own.setdefault(next(iter(names)), set()).add(module)
        else:
            by_users.setdefault(frozenset(names), set()).add(module)
    shared = _merged([(set(names), modules) for names, modules in by_users.items()], sizes)
    chunks: dict[str, frozenset[str]] = {}
    for _, modules in shared:
        chunks[_shared_name(modules, sizes, [*chunks, *widgets])] = frozenset(modules)
    for name, modules in sorted(own.items()):
        chunks[name] = frozenset(modules)
    placed = core.union(*chunks.values())
    rest = keep - placed
    chunks = {n: frozenset(m & keep) for n, m in chunks.items() if m & keep}
    if rest:
        chunks["rest"] = frozenset(rest)
    widget_chunks = {
        name: tuple(sorted({c for c, members in chunks.items() if members & modules}))
        for name, modules in needs.items()
    }
    return ChunkPlan(frozenset(core & keep), dict(sorted(chunks.items())), widget_chunks)


def _merged(
    groups: list[tuple[set[str], set[str]]], sizes: Mapping[str, int]
) -> list[tuple[set[str], set[str]]]:
    """Merge (users, modules) groups greedily, the most profitable pair first, while a merge
    saves more in requests than it costs in bytes fetched for nothing."""
    groups = sorted(groups, key=lambda group: sorted(group[1]))

    def weight(modules: set[str]) -> int:
        return sum(sizes[module] for module in modules)

    while True:
        best: tuple[int, int, int] | None = None
        for i, (users_a, modules_a) in enumerate(groups):
            for j in range(i + 1, len(groups)):
                users_b, modules_b = groups[j]
                wasted = len(users_b - users_a) * weight(modules_a)
                wasted += len(users_a - users_b) * weight(modules_b)
                cost = wasted - REQUEST_SOURCE_BYTES * len(users_a & users_b)
                if cost < 0 and (best is None or cost < best[0]):
                    best = (cost, i, j)
        if best is None:
            return groups
        _, i, j = best
        users_b, modules_b = groups.pop(j)
        groups[i] = (groups[i][0] | users_b, groups[i][1] | modules_b)


def _shared_name(modules: set[str], sizes: Mapping[str, int], taken: Collection[str]) -> str:
    """A shared chunk's name: the package of its largest module (``lesson-cluster``), numbered
    when that name is taken."""
    largest = max(sorted(modules), key=lambda module: sizes[module])
    parts = largest.split(".")[1:]
    base = "-".join(parts[:2]) if len(parts) > 1 else parts[0]
    name, number = base, 2
    while name in taken:
        name, number = f"{base}-{number}", number + 1
    return name
