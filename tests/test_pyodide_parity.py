"""The engine inside Pyodide (under Node, from the npm runtime the site ships, with the trimmed,
precompiled standard library and the sourceless archives the build ships: the core wheel and
every chunk) gives exactly the results CPython gives, for every plan case and every widget's
default render."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from macros import corpus
from macros.runtime_bytecode import RuntimeBytecode, browser_archives, compile_runtime
from macros.solid_archive import solid_gzip, unpacked
from macros.wheel import apart_json, build_engine_wheel

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bytecode(tmp_path_factory: pytest.TempPathFactory) -> RuntimeBytecode:
    plain = build_engine_wheel(ROOT, tmp_path_factory.mktemp("plain-wheel"))
    return compile_runtime(ROOT, plain)


@pytest.fixture(scope="module")
def pyodide_results(
    tmp_path_factory: pytest.TempPathFactory, bytecode: RuntimeBytecode
) -> dict[str, object]:
    if not (ROOT / "node_modules" / "pyodide" / "pyodide.mjs").exists():
        pytest.fail("node_modules/pyodide is missing: run `npm ci` (make test does it).")
    node = shutil.which("node")
    assert node, "Node.js is needed to run Pyodide outside the browser"
    # The wheel and the standard library as the site ships them, compiled at build time.
    out = tmp_path_factory.mktemp("runtime")
    # The site ships each as one gzip stream: these are those streams' contents.
    archives = browser_archives(ROOT, out, bytecode).paths
    for archive in archives:
        archive.write_bytes(unpacked(solid_gzip(archive.read_bytes(), ROOT)))
    # The catalogue files the wheel leaves out, beside it as in the site (run_cases.mjs).
    (out / "data").mkdir()
    for name, data in apart_json().items():
        (out / "data" / name).write_bytes(data)
    stdlib = out / "python_stdlib.zip"
    stdlib.write_bytes(unpacked(solid_gzip(bytecode.stdlib_zip, ROOT)))
    completed = subprocess.run(
        [
            node,
            str(ROOT / "tests/pyodide/run_cases.mjs"),
            str(archives[0]),
            str(ROOT / "macros" / "corpus.py"),
            str(stdlib),
            *map(str, archives[1:]),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    result: dict[str, object] = json.loads(completed.stdout)
    return result


def test_plans_are_identical_in_pyodide(pyodide_results: dict[str, object]) -> None:
    expected = json.loads(corpus.parity_json())
    assert len(expected["plans"]) == len(corpus.PLAN_CASES)
    for case, mine, theirs in zip(
        corpus.PLAN_CASES,
        expected["plans"],
        pyodide_results["plans"],
        strict=True,  # type: ignore[call-overload]
    ):
        assert theirs == mine, f"plan({case}) differs in Pyodide"


def test_widgets_render_identically_in_pyodide(pyodide_results: dict[str, object]) -> None:
    expected = json.loads(corpus.parity_json())
    assert expected["widgets"], "no widget rendered"
    assert pyodide_results["widgets"] == expected["widgets"]


def test_hostile_saved_state_is_a_message_in_pyodide(pyodide_results: dict[str, object]) -> None:
    # 20,000 nested brackets in a saved state once overflowed the WebAssembly stack (a fatal
    # runtime error); bounded before parsing, they are a message on the field at fault.
    replies = pyodide_results["hostile"]
    assert isinstance(replies, list) and len(replies) == len(corpus.HOSTILE_CASES)
    for (name, _), reply in zip(corpus.HOSTILE_CASES, replies, strict=True):
        assert reply.get("field") == "state" and "internal" not in reply, (name, reply)
    assert replies == json.loads(corpus.parity_json())["hostile"]


def test_the_runtime_ran_on_the_precompiled_standard_library(
    pyodide_results: dict[str, object],
) -> None:
    # json is imported at start-up: loaded from bytecode, the build's zip was the one in use.
    assert str(pyodide_results["json_module_file"]).endswith("json/__init__.pyc")


def test_configs_read_identically_in_pyodide(pyodide_results: dict[str, object]) -> None:
    expected = json.loads(corpus.parity_json())
    assert len(expected["configs"]) == len(corpus.CONFIG_CASES)
    assert "nests more than" in expected["configs"][2]["error"]
    assert pyodide_results["configs"] == expected["configs"]
    assert pyodide_results["pasted"] == expected["pasted"]


def test_a_simulated_server_runs_identically_in_pyodide(
    pyodide_results: dict[str, object],
) -> None:
    expected = json.loads(corpus.parity_json())["loads"]
    assert len(expected) == len(corpus.LOAD_CASES)
    assert all("error" not in run for run in expected)
    for case, mine, theirs in zip(
        corpus.LOAD_CASES, expected, pyodide_results["loads"], strict=True  # type: ignore[call-overload]
    ):
        assert theirs == mine, f"the simulation of {case} differs in Pyodide"


def test_dgx1_under_traffic_renders_identically_in_pyodide(
    pyodide_results: dict[str, object],
) -> None:
    expected = json.loads(corpus.parity_json())["deployed"]
    assert len(expected) == len(corpus.DEPLOYED_CASES)
    assert 'data-saturated="true"' in expected[0]["html"]
    assert 'data-curve="fp8"' in expected[1]["html"]
    assert "24 requests/s arriving" in expected[2]["html"]
    for case, mine, theirs in zip(
        corpus.DEPLOYED_CASES, expected, pyodide_results["deployed"], strict=True  # type: ignore[call-overload]
    ):
        assert theirs == mine, f"{case} renders differently in Pyodide"
