"""Build the engine's pure-Python wheels with the standard library alone.

Two wheels: the browser's, bytecode compiled by the site's Pyodide (macros/runtime_bytecode.py),
which CPython refuses ("bad magic number"); and the one for any CPython 3.11+, the engine's
sources, that the site offers for download (:func:`ship_cpython_wheel`). Writing them directly
(a wheel is a zip with a dist-info folder) keeps the build fast, reproducible (fixed
timestamps, sorted entries) and free of a build backend in the site's toolchain.
"""

from __future__ import annotations

import base64
import hashlib
import json
import tomllib
import zipfile
from collections.abc import Collection
from pathlib import Path

FIXED_TIMESTAMP = (2024, 1, 1, 0, 0, 0)
INCLUDED_SUFFIXES = (".py", ".toml")


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


# Where the site offers the CPython wheel (beside the lesson's offline copy).
DOWNLOAD_DIR = "download"


def _project(project_root: Path) -> dict[str, object]:
    project: dict[str, object] = tomllib.loads((project_root / "pyproject.toml").read_text())["project"]
    return project


def project_version(project_root: Path) -> tuple[str, str]:
    """(name, version) from pyproject.toml."""
    meta = _project(project_root)
    return str(meta["name"]), str(meta["version"])


def _metadata(project_root: Path) -> bytes:
    meta = _project(project_root)
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {meta['name']}\nVersion: {meta['version']}\n"
        f"Summary: {meta['description']}\nRequires-Python: {meta['requires-python']}\n"
    ).encode()


def _entry_points(project_root: Path) -> bytes:
    scripts = _project(project_root).get("scripts", {})
    assert isinstance(scripts, dict)
    lines = "".join(f"{name} = {target}\n" for name, target in sorted(scripts.items()))
    return f"[console_scripts]\n{lines}".encode()


def wheel_file_name(project_root: Path) -> str:
    """The engine wheel's file name, ``engine-<version>-py3-none-any.whl`` (pyproject.toml)."""
    name, version = project_version(project_root)
    return f"{name}-{version}-py3-none-any.whl"


def catalog_json(shipped: Collection[str] | None = None) -> dict[str, bytes]:
    """The catalogue pre-parsed as JSON, for the wheel: arcname -> bytes.

    engine/numbers/catalog/_data.py writes and reads these files; only the wheel carries them, so the
    reader's browser never imports tomllib. Each file ``data/NAME`` is read by the catalogue
    module of the same name (``catalog/NAME.py``); given the arcnames of the ``shipped``
    modules (the browser's bytecode), a file whose reader does not ship stays out, and one
    shipped apart (``_data.SHIPPED_APART``, :func:`apart_json`) is there as its ids only
    (``data/NAME.ids.json``).
    """
    from engine.numbers.catalog import _data

    files: dict[str, bytes] = {}
    for name in _data.names():
        if shipped is not None and f"engine/numbers/catalog/{name}.pyc" not in shipped:
            continue
        if shipped is not None and name in _data.SHIPPED_APART:
            ids = list(_data.parse_toml(name)[_data.SHIPPED_APART[name]])
            files[f"engine/numbers/catalog/data/{name}.ids.json"] = json.dumps(
                ids, ensure_ascii=False, separators=(",", ":")).encode()
        else:
            files[f"engine/numbers/catalog/data/{name}.json"] = _data.pre_parsed(name)
    return files


# Where the catalogue files shipped apart from the browser's wheel go in the site (the worker
# fetches ``APART_DIR/NAME.json`` the first time the engine reads one: docs/js/engine-worker.js).
APART_DIR = "wheels/data"


def apart_json() -> dict[str, bytes]:
    """The catalogue files the browser's wheel leaves out, pre-parsed: file name -> bytes."""
    from engine.numbers.catalog import _data

    return {f"{name}.json": _data.pre_parsed(name) for name in sorted(_data.SHIPPED_APART)}


def build_engine_wheel(
    project_root: Path,
    out_dir: Path,
    extra_files: dict[str, bytes] | None = None,
    sources: bool = True,
    catalog_readers: Collection[str] | None = None,
) -> Path:
    """Write ``engine-<version>-py3-none-any.whl`` into ``out_dir`` and return its path.

    The catalogue goes in twice, as TOML and pre-parsed (:func:`catalog_json`).
    ``extra_files`` (arcname -> bytes) are added as they are, e.g. the engine's bytecode from
    macros/runtime_bytecode.py. Without ``sources`` the engine's .py and .toml files stay
    out (the browser's wheel: its bytecode and the pre-parsed catalogue stand in for them),
    and so does RECORD. The catalogue's JSON files come for the readers among
    ``catalog_readers`` (arcnames of bytecode), by default among ``extra_files``.
    """
    name, version = project_version(project_root)
    package = project_root / "engine"
    files: list[tuple[str, bytes]] = []
    for path in sorted(package.rglob("*")) if sources else []:
        if path.is_file() and path.suffix in INCLUDED_SUFFIXES and "__pycache__" not in path.parts:
            files.append((path.relative_to(project_root).as_posix(), path.read_bytes()))
    readers = set(extra_files or {}) if catalog_readers is None else set(catalog_readers)
    files.extend(sorted(catalog_json(None if sources else readers).items()))
    files.extend(sorted((extra_files or {}).items()))
    dist_info = f"{name}-{version}.dist-info"
    metadata = _metadata(project_root)
    wheel_meta = (
        b"Wheel-Version: 1.0\nGenerator: macros.wheel\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    files.append((f"{dist_info}/METADATA", metadata))
    files.append((f"{dist_info}/WHEEL", wheel_meta))
    if sources:
        files.append((f"{dist_info}/entry_points.txt", _entry_points(project_root)))
    if sources:
        # pip checks an install against RECORD. The browser's archive is never installed (its
        # worker imports from it, macros/runtime_bytecode.py), so it goes without the hashes.
        record = "".join(f"{arc},{_record_hash(data)},{len(data)}\n" for arc, data in files)
        record += f"{dist_info}/RECORD,,\n"
        files.append((f"{dist_info}/RECORD", record.encode()))
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / wheel_file_name(project_root)
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for arc, data in files:
            info = zipfile.ZipInfo(arc, date_time=FIXED_TIMESTAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return target


def ship_cpython_wheel(project_root: Path, site: Path) -> str:
    """Write the wheel for CPython (the engine's sources, no bytecode) into the site's
    ``download/`` folder and return its site path. It installs with ``pip install`` on any
    Python 3.11+ and needs nothing beyond the standard library."""
    return f"{DOWNLOAD_DIR}/{build_engine_wheel(project_root, site / DOWNLOAD_DIR).name}"
