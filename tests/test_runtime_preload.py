"""macros/runtime_preload.py: the runtime files the pages hint at, named as they ship."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from macros.runtime_preload import PreloadMismatchError, check_preloaded, runtime_preload
from macros.shipped_runtime import ShippedRuntime
from macros.wheel import build_engine_wheel

ROOT = Path(__file__).resolve().parent.parent


def test_the_hints_name_the_wheel_the_build_writes(tmp_path: Path) -> None:
    wheel = build_engine_wheel(ROOT, tmp_path, sources=False)
    assert f"wheels/{wheel.name}.gz" in runtime_preload(ROOT)


def test_every_hint_is_a_file_the_runtime_ships() -> None:
    preloaded = runtime_preload(ROOT)
    wheel = next(path for path in preloaded if path.startswith("wheels/"))
    chunk = "wheels/engine-0.1.0-model_size.zip.gz"
    shipped = ShippedRuntime(
        wheel=wheel, stdlib="pyodide/python_stdlib.zip.gz", pyodide_version="0", download_bytes=1,
        chunks={"model_size": chunk}, widget_chunks={"model_size": ("model_size",)},
    ).files
    check_preloaded(preloaded, shipped)
    assert len(set(preloaded)) == len(preloaded)
    # Kept for offline reading, but hinted at by no page: a page fetches the chunks its
    # widgets need (engine-worker.js), while Pyodide starts.
    assert chunk in shipped and chunk not in preloaded
    assert [path for path in preloaded if path.startswith("wheels/")] == [wheel]


def test_a_hint_for_a_file_that_did_not_ship_fails_the_build() -> None:
    with pytest.raises(PreloadMismatchError, match=re.escape("wheels/engine-9.whl.gz")):
        check_preloaded(
            ["pyodide/pyodide.asm.wasm", "wheels/engine-9.whl.gz"], ["pyodide/pyodide.asm.wasm"]
        )
