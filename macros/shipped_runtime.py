"""The browser runtime shipped with the site: the Pyodide core, the trimmed standard library
and the engine's archives, all bytecode, checked by booting Pyodide on exactly what ships.

The standard library and the engine's modules are those the corpus uses, compiled by the
site's own Pyodide (macros/runtime_bytecode.py). The engine ships as a core wheel and chunk
archives, each fetched when a widget that needs it first renders (macros/engine_chunks.py),
each one gzip stream (macros/solid_archive.py), under ``wheels/``, and the catalogue files the
wheel leaves out (the config library) beside them, under ``wheels/data/``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from macros.pyodide_core import SHIPPED_PYODIDE_FILES, STDLIB_SHIPPED, checked_version, copy_pyodide
from macros.runtime_bytecode import browser_archives, check_runtime, compile_runtime
from macros.solid_archive import SUFFIX, solid_gzip
from macros.style_bundle import STYLE_BUNDLE
from macros.wheel import APART_DIR, apart_json, build_engine_wheel

# The lesson's own files the runtime needs, kept by the service worker as soon as it installs.
LESSON_SCRIPTS = (
    "js/file-notice.js",
    "js/lesson.js",
    "js/engine-client.js",
    "js/engine-worker.js",
    "js/offline.js",
    "js/store.js",
    "js/clock.js",
    "js/address.js",
    "js/share.js",
    "js/bounded.js",
    "js/progress.js",
    "js/runtime-config.js",
    STYLE_BUNDLE,
)


@dataclass(frozen=True)
class ShippedRuntime:
    """Where the runtime went in the site: ``wheel`` (the engine's core) and ``stdlib`` (site
    paths), ``pyodide_version``, ``download_bytes``, what a first visit downloads to start (the
    Pyodide core and the engine's core, as shipped), ``chunks`` (chunk name -> site path) and
    ``widget_chunks`` (widget name -> the chunks its render needs)."""

    wheel: str
    stdlib: str
    pyodide_version: str
    download_bytes: int
    chunks: Mapping[str, str]
    widget_chunks: Mapping[str, tuple[str, ...]]

    @property
    def files(self) -> list[str]:
        """Every site path the runtime needs, the lesson's scripts and every chunk included
        (kept for offline reading)."""
        pyodide = [f"pyodide/{n}" for n in SHIPPED_PYODIDE_FILES]
        return [*pyodide, self.wheel, *self.chunks.values(), *LESSON_SCRIPTS]


def ship_runtime(root: Path, site: Path) -> ShippedRuntime:
    """Compile (or take from the cache) the runtime, write it into ``site`` and check it
    there (macros/runtime_bytecode.py: TrimmedRuntimeError if anything the site imports was
    left out); RuntimeMissingError unless the pinned Pyodide is installed."""
    pyodide_version = checked_version(root)
    with tempfile.TemporaryDirectory() as tmp:
        bytecode = compile_runtime(root, build_engine_wheel(root, Path(tmp)))
    copy_pyodide(root, site, bytecode.stdlib_zip)
    wheels = site / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        archives = browser_archives(root, Path(tmp), bytecode)
        shipped = []
        for plain in archives.paths:
            target = wheels / (plain.name + SUFFIX)
            target.write_bytes(solid_gzip(plain.read_bytes(), root))
            shipped.append(target)
    # The catalogue files the wheel leaves out, fetched only when the engine reads one (plain
    # JSON: the host compresses it on the wire).
    apart = site / APART_DIR
    apart.mkdir(parents=True, exist_ok=True)
    for name, data in apart_json().items():
        (apart / name).write_bytes(data)
    check_runtime(root, shipped, site / "pyodide", bytecode, apart)
    wheel = shipped[0]
    download_bytes = sum((site / "pyodide" / n).stat().st_size for n in SHIPPED_PYODIDE_FILES)
    download_bytes += wheel.stat().st_size
    chunks = {name: f"wheels/{path.name}" for name, path in zip(archives.chunks, shipped[1:], strict=True)}
    return ShippedRuntime(
        wheel=f"wheels/{wheel.name}",
        stdlib=f"pyodide/{STDLIB_SHIPPED}",
        pyodide_version=pyodide_version,
        download_bytes=download_bytes,
        chunks=chunks,
        widget_chunks=dict(archives.plan.widget_chunks),
    )
