"""Bytecode for the reader's browser, compiled at build time by the site's own Pyodide.

Pyodide (from npm) ships its standard library as source, so every start compiles the ~130
modules it imports: in our measurements about two thirds of the time from loading the runtime
to Python being ready. ``macros/pyodide_compile.mjs`` runs that Pyodide under Node once per
build, renders every widget to learn which modules the site uses, and returns them compiled:
the engine's modules for its wheel, and ``python_stdlib.zip`` with the used modules as
bytecode. Results are cached under ``build/`` by the hash of everything they depend on.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

COMPILE_SCRIPT = Path("macros") / "pyodide_compile.mjs"
CACHE_DIR = Path("build") / "pyodide-bytecode"
CACHE_DIR_ENV = "LESSON_BYTECODE_CACHE"  # another cache folder (the benchmark starts empty)
CACHE_KEEP = 3  # entries kept: the newest ones (older sources, older Pyodide pins)
STDLIB_ZIP = Path("node_modules") / "pyodide" / "python_stdlib.zip"


@dataclass(frozen=True)
class RuntimeBytecode:
    """What the build ships in place of source.

    ``engine_pyc``: wheel arcname (``engine/__pycache__/x.cpython-314.pyc``) -> .pyc bytes.
    ``stdlib_zip``: the whole ``python_stdlib.zip``, used modules as unchecked-hash .pyc.
    ``stdlib_compiled``: the zip entries (``json/__init__.py``...) that became bytecode.
    """

    engine_pyc: Mapping[str, bytes]
    stdlib_zip: bytes
    stdlib_compiled: tuple[str, ...]


def compile_runtime(project_root: Path, plain_wheel: Path) -> RuntimeBytecode:
    """Compile (or take from the cache) the bytecode for ``plain_wheel``, a source-only wheel."""
    inputs = [plain_wheel, project_root / STDLIB_ZIP, project_root / COMPILE_SCRIPT]
    digest = hashlib.sha256()
    for path in inputs:
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    cache_dir = Path(os.environ.get(CACHE_DIR_ENV) or project_root / CACHE_DIR)
    cached = cache_dir / digest.hexdigest()[:24]
    if not (cached / "modules.json").exists():
        _compile_into(project_root, plain_wheel, cached)
        _prune(cached.parent)
    engine: dict[str, str] = json.loads((cached / "engine.json").read_text())
    return RuntimeBytecode(
        engine_pyc={arc: base64.b64decode(data) for arc, data in engine.items()},
        stdlib_zip=(cached / "python_stdlib.zip").read_bytes(),
        stdlib_compiled=tuple(json.loads((cached / "modules.json").read_text())),
    )


def _prune(cache_dir: Path) -> None:
    entries = sorted(
        (p for p in cache_dir.iterdir() if (p / "modules.json").exists()),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    for stale in entries[CACHE_KEEP:]:
        shutil.rmtree(stale, ignore_errors=True)


def _compile_into(project_root: Path, plain_wheel: Path, target: Path) -> None:
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("Node.js is needed to build the site (Pyodide runs under it).")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        work = Path(tmp)
        outputs = [work / "engine.json", work / "python_stdlib.zip", work / "modules.json"]
        done = subprocess.run(
            [node, str(project_root / COMPILE_SCRIPT), str(plain_wheel), *map(str, outputs)],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"compiling for Pyodide failed:\n{done.stderr[-2000:]}")
        # Renamed into place last, so an interrupted build never leaves half a cache entry.
        shutil.rmtree(target, ignore_errors=True)
        work.rename(target)
        work.mkdir()  # for TemporaryDirectory's clean-up
