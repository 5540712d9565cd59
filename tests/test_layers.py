"""The engine's layers and the one import rule that keeps them apart.

numbers (0) < words (1) < render (2) < lesson (3) < widgets (4) < the entry points (5: the CLI,
the widget registry, the browser's entry and its chunk archives): a module may import its own
layer and the layers below it, never one above. Read from the source files' import statements (every import, also
those inside functions), so an arrow that goes the wrong way fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "engine"

LAYERS = {"numbers": 0, "words": 1, "render": 2, "lesson": 3, "widgets": 4}
TOP = 5  # engine/__init__, __main__, cli, registry, browser

# Arrows that still point the wrong way, each with the reason; this list only shrinks.
KNOWN_EXCEPTIONS: set[tuple[str, str]] = set()


def layer_of(module: str) -> int:
    parts = module.split(".")
    if parts[0] != "engine":
        return -1  # the standard library
    if len(parts) == 1:
        return TOP
    return LAYERS.get(parts[1], TOP)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            # `from engine.lesson import cluster` imports the module engine.lesson.cluster
            found.update(
                f"{node.module}.{alias.name}"
                for alias in node.names
                if is_module(f"{node.module}.{alias.name}")
            )
    return {name for name in found if name.split(".")[0] == "engine"}


def wrong_arrows() -> set[tuple[str, str]]:
    wrong = set()
    for path in sorted(ENGINE.rglob("*.py")):
        source = module_name(path)
        for target in imports_of(path):
            if layer_of(target) > layer_of(source):
                wrong.add((source, target))
    return wrong


def test_every_engine_module_is_in_a_layer() -> None:
    top_level = {module_name(p) for p in ENGINE.glob("*.py")}
    assert top_level == {"engine", "engine.__main__", "engine.cli", "engine.registry",
                         "engine.browser", "engine.browser_archives"}
    packages = {p.name for p in ENGINE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages == set(LAYERS)


def test_imports_point_down_the_layers_only() -> None:
    wrong = wrong_arrows() - KNOWN_EXCEPTIONS
    assert not wrong, "imports that go up the layers: " + ", ".join(
        f"{a} -> {b}" for a, b in sorted(wrong)
    )


def test_known_exceptions_are_still_real() -> None:
    assert wrong_arrows() >= KNOWN_EXCEPTIONS, "remove mended arrows from KNOWN_EXCEPTIONS"


def test_widgets_import_no_other_widget() -> None:
    for path in (ENGINE / "widgets").glob("*.py"):
        others = {t for t in imports_of(path) if t.startswith("engine.widgets.")}
        assert not others, f"{path.name} imports {sorted(others)}"


def test_the_rule_catches_an_upward_arrow(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from engine.render.html import tag\nfrom engine.words import format\n")
    assert imports_of(bad) == {"engine.render.html", "engine.words", "engine.words.format"}
    assert layer_of("engine.render.html") > layer_of("engine.numbers.memory")


def import_cycles(package: str) -> list[list[str]]:
    """Every circle of imports among the modules of ``package`` (all imports, also those
    inside functions or under TYPE_CHECKING), each as the modules it passes through.
    A module that imports a package's submodule also imports the package (its __init__)."""
    root = ROOT.joinpath(*package.split("."))
    graph: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        source = module_name(path)
        targets: set[str] = set()
        for target in imports_of(path):
            parts = target.split(".")
            targets.update(".".join(parts[:n]) for n in range(2, len(parts) + 1))
        graph[source] = {t for t in targets
                         if t != source and (t == package or t.startswith(package + "."))
                         and not source.startswith(t + ".")}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path_: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path_.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*path_[path_.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt)
        path_.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return cycles


# --------------------------------------------------------------------------- private names

# Underscore names still imported across modules, each with the reason; this list only
# shrinks. engine.numbers.serving's per-step arithmetic is private there but shared with
# the expected-serving model and plan(), which sum the same steps.
KNOWN_PRIVATE_IMPORTS: set[tuple[str, str]] = {
    ("engine.numbers.expected_serving", "engine.numbers.serving._Costs"),
    ("engine.numbers.expected_serving", "engine.numbers.serving._costs"),
    ("engine.numbers.expected_serving", "engine.numbers.serving._prefill"),
    ("engine.numbers.expected_serving", "engine.numbers.serving._sum_steps"),
    ("engine.numbers.plan", "engine.numbers.serving._costs"),
    ("engine.numbers.plan", "engine.numbers.serving._prefill"),
    ("engine.numbers.plan", "engine.numbers.serving._step"),
    ("engine.numbers.plan", "engine.numbers.serving._sum_steps"),
}


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports_of(path: Path) -> set[str]:
    """``module.name`` for each underscore name ``path`` takes from an engine module: by
    ``from engine.x import _name`` or as ``alias._name`` of a module it imported."""
    tree = ast.parse(path.read_text(), str(path))
    found: set[str] = set()
    modules: dict[str, str] = {}  # local name -> engine module it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "engine":
                    modules[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] != "engine":
                continue
            for alias in node.names:
                dotted = f"{node.module}.{alias.name}"
                if is_private(alias.name):
                    found.add(dotted)
                elif is_module(dotted):
                    modules[alias.asname or alias.name] = dotted
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and is_private(node.attr)
                and isinstance(node.value, ast.Name) and node.value.id in modules):
            found.add(f"{modules[node.value.id]}.{node.attr}")
    return found


def private_imports() -> set[tuple[str, str]]:
    return {(module_name(path), name) for path in sorted(ENGINE.rglob("*.py"))
            for name in private_imports_of(path)}


def test_no_module_imports_another_modules_private_name() -> None:
    wrong = private_imports() - KNOWN_PRIVATE_IMPORTS
    assert not wrong, "underscore names imported across modules: " + ", ".join(
        f"{a} takes {b}" for a, b in sorted(wrong)
    )


def test_known_private_imports_are_still_real() -> None:
    assert private_imports() >= KNOWN_PRIVATE_IMPORTS, "remove mended names from KNOWN_PRIVATE_IMPORTS"


def test_no_import_circle_anywhere_in_the_engine() -> None:
    # The simulated dgx-1 (engine.lesson.cluster) once had its modules import each other
    # round a loop; every package of the engine is held to one-way arrows.
    cycles = import_cycles("engine")
    assert not cycles, "import circles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_the_cluster_simulation_is_used_through_its_package_only() -> None:
    inside = ENGINE / "lesson" / "cluster"
    for folder in ("engine", "tests", "site-tests", "tools", "macros", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.is_relative_to(inside):
                continue
            deep = {t for t in imports_of(path) if t.startswith("engine.lesson.cluster.")}
            assert not deep, f"{path.relative_to(ROOT)} imports {sorted(deep)}: use engine.lesson.cluster"


def test_the_rule_catches_a_private_name(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from engine.numbers import validate\nfrom engine.words.format import _x\n"
                   "validate._number(1)\nvalidate.__name__\n")
    assert private_imports_of(bad) == {"engine.words.format._x", "engine.numbers.validate._number"}
