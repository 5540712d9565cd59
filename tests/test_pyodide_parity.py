"""The engine inside Pyodide (under Node, from the npm runtime the site ships) gives exactly
the results CPython gives, for every plan case and every widget's default render."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import parity_cases  # noqa: E402

from macros.wheel import build_engine_wheel, pyodide_bytecode  # noqa: E402


@pytest.fixture(scope="module")
def pyodide_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    if not (ROOT / "node_modules" / "pyodide" / "pyodide.mjs").exists():
        pytest.fail("node_modules/pyodide is missing: run `npm ci` (make test does it).")
    node = shutil.which("node")
    assert node, "Node.js is needed to run Pyodide outside the browser"
    # The wheel as the site ships it, with the bytecode Pyodide compiled at build time.
    wheel = build_engine_wheel(ROOT, tmp_path_factory.mktemp("wheel"), pyodide_bytecode(ROOT))
    completed = subprocess.run(
        [node, str(ROOT / "tests/pyodide/run_cases.mjs"), str(wheel), parity_cases.__file__],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    result: dict[str, object] = json.loads(completed.stdout)
    return result


def test_plans_are_identical_in_pyodide(pyodide_results: dict[str, object]) -> None:
    expected = json.loads(parity_cases.results_json())
    assert len(expected["plans"]) == len(parity_cases.PLAN_CASES)
    for case, mine, theirs in zip(
        parity_cases.PLAN_CASES,
        expected["plans"],
        pyodide_results["plans"],
        strict=True,  # type: ignore[call-overload]
    ):
        assert theirs == mine, f"plan({case}) differs in Pyodide"


def test_widgets_render_identically_in_pyodide(pyodide_results: dict[str, object]) -> None:
    expected = json.loads(parity_cases.results_json())
    assert expected["widgets"], "no widget rendered"
    assert pyodide_results["widgets"] == expected["widgets"]
