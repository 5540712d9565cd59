"""The browser runtime shipped with the site: the Pyodide core, the trimmed standard library
and the engine's wheel, all bytecode, checked by booting Pyodide on exactly what ships.

The standard library and the engine's modules are those the corpus uses, compiled by the
site's own Pyodide (macros/runtime_bytecode.py); the wheel ships as one gzip stream
(macros/solid_archive.py), under ``wheels/``, and the catalogue files it leaves out (the config
library) beside it, under ``wheels/data/``.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from macros.pyodide_core import SHIPPED_PYODIDE_FILES, STDLIB_SHIPPED, checked_version, copy_pyodide
from macros.runtime_bytecode import browser_wheel, check_runtime, compile_runtime
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
    """Where the runtime went in the site: ``wheel`` and ``stdlib`` (site paths),
    ``pyodide_version``, and ``download_bytes``, what a first visit downloads to go live (the
    Pyodide core and the wheel, as shipped)."""

    wheel: str
    stdlib: str
    pyodide_version: str
    download_bytes: int

    @property
    def files(self) -> list[str]:
        """Every site path the runtime needs, the lesson's scripts included."""
        return [f"pyodide/{n}" for n in SHIPPED_PYODIDE_FILES] + [self.wheel, *LESSON_SCRIPTS]


def ship_runtime(root: Path, site: Path) -> ShippedRuntime:
    """Compile (or take from the cache) the runtime, write it into ``site`` and check it
    there (macros/runtime_bytecode.py: TrimmedRuntimeError if anything the site imports was
    left out); RuntimeMissingError unless the pinned Pyodide is installed."""
    pyodide_version = checked_version(root)
    with tempfile.TemporaryDirectory() as tmp:
        bytecode = compile_runtime(root, build_engine_wheel(root, Path(tmp)))
    copy_pyodide(root, site, bytecode.stdlib_zip)
    with tempfile.TemporaryDirectory() as tmp:
        plain = browser_wheel(root, Path(tmp), bytecode)
        wheel = site / "wheels" / (plain.name + SUFFIX)
        wheel.parent.mkdir(parents=True, exist_ok=True)
        wheel.write_bytes(solid_gzip(plain.read_bytes(), root))
    # The catalogue files the wheel leaves out, fetched only when the engine reads one (plain
    # JSON: the host compresses it on the wire).
    apart = site / APART_DIR
    apart.mkdir(parents=True, exist_ok=True)
    for name, data in apart_json().items():
        (apart / name).write_bytes(data)
    check_runtime(root, wheel, site / "pyodide", bytecode, apart)
    download_bytes = sum((site / "pyodide" / n).stat().st_size for n in SHIPPED_PYODIDE_FILES)
    download_bytes += wheel.stat().st_size
    return ShippedRuntime(
        wheel=f"wheels/{wheel.name}",
        stdlib=f"pyodide/{STDLIB_SHIPPED}",
        pyodide_version=pyodide_version,
        download_bytes=download_bytes,
    )
