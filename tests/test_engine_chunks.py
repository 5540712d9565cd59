"""The engine's browser archives (macros/engine_chunks.py, engine/browser_archives.py): every
widget renders with only the core and the chunks the manifest lists for it, added as the
reader's worker adds them; no module is in two archives; and an import by a computed name the
plan does not know fails the build."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from macros.engine_chunks import ChunkPlan, ComputedImportError, plan_chunks
from macros.runtime_bytecode import write_chunk
from macros.wheel import catalog_json

ROOT = Path(__file__).resolve().parent.parent

# Run in a fresh interpreter, away from the source tree: for each widget, the engine imports
# from the core archive alone, then the widget's chunks are added as the reader's worker adds
# them (engine.browser.add_archive) and the widget renders its defaults through the browser's
# entry point. Last, every chunk added: the registry lists every widget (pkgutil reads the
# packages' folders in every archive).
_IN_ARCHIVES = """
import json, sys

core, chunks, plan = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
sys.path.insert(0, core)
results = {}


def fresh():
    for name in [n for n in sys.modules if n == "engine" or n.startswith("engine.")]:
        del sys.modules[name]
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "_ChunkFolders"]
    import engine.browser
    return engine.browser


for widget, needed in plan.items():
    try:
        browser = fresh()
        for chunk in needed:
            browser.add_archive(chunks[chunk])
        reply = json.loads(browser.update(widget, "{}"))
        results[widget] = "ok" if "html" in reply else repr(reply)[:300]
    except Exception as error:
        results[widget] = repr(error)[:300]
browser = fresh()
for path in chunks.values():
    browser.add_archive(path)
import engine.registry
print(json.dumps({"widgets": results, "names": engine.registry.widget_names()}))
"""


def _source_archives(folder: Path, plan: ChunkPlan) -> tuple[Path, dict[str, str]]:
    """The plan's archives with the engine's sources in place of bytecode (the core with the
    catalogue's JSON, as the browser's)."""

    def members(modules: frozenset[str]) -> dict[str, bytes]:
        files = {}
        for module in modules:
            source = ROOT.joinpath(*module.split("."))
            source = source / "__init__.py" if source.is_dir() else source.with_suffix(".py")
            files[source.relative_to(ROOT).as_posix()] = source.read_bytes()
        return files

    core = folder / "core.zip"
    with zipfile.ZipFile(core, "w") as archive:
        for arc, data in sorted({**members(plan.core), **catalog_json()}.items()):
            archive.writestr(arc, data)
    chunks = {}
    for chunk, modules in plan.chunks.items():
        write_chunk(folder / f"{chunk}.zip", members(modules))
        chunks[chunk] = str(folder / f"{chunk}.zip")
    return core, chunks


def test_every_widget_renders_with_only_its_chunks(tmp_path: Path) -> None:
    plan = plan_chunks(ROOT)
    core, chunks = _source_archives(tmp_path, plan)
    widgets = {widget: list(needed) for widget, needed in plan.widget_chunks.items()}
    done = subprocess.run(
        [sys.executable, "-c", _IN_ARCHIVES, str(core), json.dumps(chunks), json.dumps(widgets)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout)
    assert len(results["widgets"]) >= 30
    assert {w: r for w, r in results["widgets"].items() if r != "ok"} == {}
    assert results["names"] == sorted(plan.widget_chunks)


def test_no_module_is_in_two_archives_and_the_start_is_in_the_core() -> None:
    plan = plan_chunks(ROOT)
    placed = [*plan.core, *(m for modules in plan.chunks.values() for m in modules)]
    assert len(placed) == len(set(placed))
    assert {"engine.browser", "engine.registry", "engine.numbers.catalog._data"} <= plan.core
    # A widget's own module is fetched with it, never with the start.
    assert not [m for m in plan.core if m.startswith("engine.widgets.")]
    assert plan.widget_chunks["model_size"] == ("model_size",)
    # Requests stay few.
    assert max(len(chunks) for chunks in plan.widget_chunks.values()) <= 5


def test_an_import_by_a_computed_name_the_plan_does_not_know_fails(tmp_path: Path) -> None:
    package = tmp_path / "engine"
    (package / "widgets").mkdir(parents=True)
    for name in ("__init__", "browser", "browser_archives", "registry", "widgets/__init__"):
        (package / f"{name}.py").write_text("")
    (package / "widgets" / "sneaky.py").write_text(
        "import importlib\n\ndef render():\n    return importlib.import_module('engine.x')\n"
    )
    with pytest.raises(ComputedImportError, match=r"engine\.widgets\.sneaky"):
        plan_chunks(tmp_path)
