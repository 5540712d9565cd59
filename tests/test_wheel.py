"""macros/wheel.py: the engine wheel the browser installs, and the catalogue it carries."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from engine.numbers.catalog import _data
from macros.solid_archive import stored_zip
from macros.wheel import build_engine_wheel, catalog_json

ROOT = Path(__file__).resolve().parent.parent


def test_the_pre_parsed_catalogue_holds_the_same_values_as_the_toml() -> None:
    files = catalog_json()
    assert sorted(files) == [f"engine/numbers/catalog/data/{n}.json" for n in _data.names()]
    for name in _data.names():
        toml_values = tomllib.loads((ROOT / f"engine/numbers/catalog/data/{name}.toml").read_text())
        assert json.loads(files[f"engine/numbers/catalog/data/{name}.json"]) == toml_values
        # Order too (dict equality ignores it): lists and drills follow the catalogue's order.
        assert list(json.loads(files[f"engine/numbers/catalog/data/{name}.json"])) == list(toml_values)
        assert json.dumps(json.loads(files[f"engine/numbers/catalog/data/{name}.json"])) == json.dumps(
            toml_values
        )
        assert toml_values  # a file that parsed to nothing would pass the line above


def test_each_catalogue_file_has_its_reader_and_ships_only_beside_it() -> None:
    # The browser's wheel carries data/NAME.json only when catalog/NAME.py ships: every file
    # must have a reader of its name, or the browser would miss it.
    for name in _data.names():
        assert (ROOT / f"engine/numbers/catalog/{name}.py").exists(), name
    shipped = {"engine/numbers/catalog/hardware.pyc", "engine/numbers/catalog/models.pyc"}
    assert sorted(catalog_json(shipped)) == [
        "engine/numbers/catalog/data/hardware.json", "engine/numbers/catalog/data/models.json"]


def test_the_wheel_carries_both_and_no_stray_files(tmp_path: Path) -> None:
    wheel = build_engine_wheel(ROOT, tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    for name in _data.names():
        assert f"engine/numbers/catalog/data/{name}.toml" in names
        assert f"engine/numbers/catalog/data/{name}.json" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_the_source_tree_has_no_pre_parsed_copy() -> None:
    # A JSON left in the tree would shadow later TOML edits in CPython.
    assert not list((ROOT / "engine/numbers/catalog/data").glob("*.json"))


def test_the_loader_reads_the_pre_parsed_copy_when_it_is_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "models.toml").write_text('marker = "toml"\n')
    monkeypatch.setattr(_data, "DATA_DIR", str(tmp_path))
    assert _data.load.__wrapped__("models") == {"marker": "toml"}
    (tmp_path / "models.json").write_text('{"marker": "json"}')
    assert _data.load.__wrapped__("models") == {"marker": "json"}


def test_the_engine_imported_from_its_archive_reads_the_catalogue_from_it(tmp_path: Path) -> None:
    # As the reader's browser does (docs/js/engine-worker.js): the archive, members stored, on
    # sys.path; Python imports from it (zipimport) and the catalogue is read from it too.
    archive = tmp_path / "engine.zip"
    archive.write_bytes(stored_zip(build_engine_wheel(ROOT, tmp_path).read_bytes()))
    script = (
        "import json, sys; sys.path.insert(0, sys.argv[1]);"
        "from engine.numbers.catalog import _data;"
        "print(json.dumps([_data.__file__, _data.load('models')]))"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", script, str(archive)],
        capture_output=True, text=True, cwd=tmp_path, check=True,
    )
    where, models = json.loads(done.stdout)
    assert where.startswith(str(archive) + "/")
    assert models == tomllib.loads((ROOT / "engine/numbers/catalog/data/models.toml").read_text())


def test_pyproject_lists_every_engine_package() -> None:
    # `pip install .` installs only the packages listed; the site's wheel takes every file.
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    found = sorted(
        ".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "engine").rglob("__init__.py")
    )
    assert sorted(listed) == found


def test_the_cpython_wheel_installs_into_a_clean_venv_and_plans(tmp_path: Path) -> None:
    # As the "Get the engine" page says: pip install the wheel the build ships into a fresh
    # Python, no index and no dependencies (nothing is fetched), then ask for a plan.
    wheel = build_engine_wheel(ROOT, tmp_path / "dist")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
         "--disable-pip-version-check", str(wheel)],
        check=True, capture_output=True, text=True,
    )
    run = tmp_path / "elsewhere"  # not the project: the engine must come from the venv
    run.mkdir()
    args = ["plan", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--gpus", "1", "--json"]
    done = subprocess.run(
        [str(python), "-I", "-m", "engine", *args],
        check=True, capture_output=True, text=True, cwd=run,
    )
    installed = json.loads(done.stdout)
    assert installed["memory"]["per_gpu_bytes"] > 16e9  # the bf16 weights alone are 16.06 GB
    here = subprocess.run([sys.executable, "-m", "engine", *args],
                          check=True, capture_output=True, text=True, cwd=ROOT)
    assert installed == json.loads(here.stdout)
    where = subprocess.run(
        [str(python), "-I", "-c", "import engine; print(engine.__file__)"],
        check=True, capture_output=True, text=True, cwd=run,
    )
    assert where.stdout.startswith(str(venv))
