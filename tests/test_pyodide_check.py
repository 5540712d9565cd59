"""tools/pyodide_check.py: what a Pyodide upgrade touches, against the installed Pyodide."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

from tools import pyodide_check

ROOT = Path(__file__).resolve().parent.parent
STOCK = ROOT / "node_modules" / "pyodide"


def test_everything_matches_the_current_pin() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "pyodide_check.py")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    for subject in ("version", "pyodide/__init__.py", "pyodide/_package_loader.py",
                    "bytecode magic", "corpus"):
        assert any(line.startswith("[ok]") and subject in line for line in lines), subject
    assert "CHANGED" not in done.stdout and lines[-1] == "All match the installed Pyodide."


def _upgraded_root(root: Path) -> Path:
    """A project whose package.json pins a newer Pyodide than node_modules holds, whose
    stock package loader differs from the reviewed one."""
    (root / "package.json").write_text(json.dumps({"dependencies": {"pyodide": "315.0.0"}}))
    lock = {"packages": {"node_modules/pyodide": {"version": "315.0.0"}}}
    (root / "package-lock.json").write_text(json.dumps(lock))
    installed = root / "node_modules" / "pyodide"
    installed.mkdir(parents=True)
    (installed / "package.json").write_text(json.dumps({"version": "314.0.7"}))
    with zipfile.ZipFile(STOCK / "python_stdlib.zip") as stock, zipfile.ZipFile(
        installed / "python_stdlib.zip", "w"
    ) as target:
        for name in pyodide_check.REVIEWED_STOCK:
            data = stock.read(name)
            if name == "pyodide/_package_loader.py":
                data += b"\nNEW_IN_A_LATER_PYODIDE = 1\n"
            target.writestr(name, data)
    return root


def test_a_changed_pin_and_start_up_module_say_what_to_do(tmp_path: Path) -> None:
    root = _upgraded_root(tmp_path)
    version = pyodide_check.check_version(root)
    assert not version.matches and "node_modules 314.0.7" in version.found
    assert "npm install" in version.todo
    init, loader = pyodide_check.check_lean_modules(root)
    assert init.matches and not loader.matches
    assert "REVIEWED_STOCK" in loader.todo and "pyodide/_package_loader.py" in loader.todo
    text = pyodide_check.report([version, init, loader])
    assert text.count("[CHANGED]") == 2 and "2 of 3 do not match" in text
