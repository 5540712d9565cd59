"""Zip archives shipped as one gzip stream (``.zip.gz``, ``.whl.gz``).

A zip compresses each member on its own, so redundancy across members (the same imports,
names and bytecode patterns in every module) is never used; and a static host sends a zip as
it is (GitHub Pages gzips text types and wasm, not archives). The build therefore stores the
members uncompressed and gzips the whole archive once: the host sends that file as it is
(application/gzip), and the engine's worker (docs/js/engine-worker.js) decompresses it with
the browser's DecompressionStream before Pyodide reads the zip. Measured on this site's
runtime (2026-11-30): standard library 887 kB per-file deflate -> 821 kB solid; engine wheel
495 kB -> 389 kB.

The stream is deflated by Zopfli where it is installed (requirements/site.txt): the same gzip
format, about 4 % smaller than zlib's best level (2026-12-01: standard library 670,446 ->
644,010 B, engine wheel 322,336 -> 310,261 B), for about 12 s of one core, so each result is
kept under ``build/`` by the digest of its input. Without Zopfli, zlib's level 9.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import zipfile
from pathlib import Path

try:
    from zopfli.gzip import compress as zopfli_gzip
except ImportError:  # a checkout whose environment predates the requirement
    zopfli_gzip = None

SUFFIX = ".gz"
GZIP_LEVEL = 9  # compressed once, at build time; the browser's decompression cost is the same
# Zopfli's default effort; more iterations gain a few hundred bytes for several times the time.
ZOPFLI_ITERATIONS = 15
CACHE_DIR = Path("build") / "solid-gzip"  # under the project root
CACHE_KEEP = 8  # the newest results kept: this build's two and recent ones


def stored_zip(zip_bytes: bytes) -> bytes:
    """The same archive (names, order, times, attributes, bytes) with every member stored."""
    source = zipfile.ZipFile(io.BytesIO(zip_bytes))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            stored = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            stored.compress_type = zipfile.ZIP_STORED
            stored.external_attr = info.external_attr
            target.writestr(stored, source.read(info))
    return buffer.getvalue()


def _deflated(data: bytes) -> bytes:
    """``data`` as one gzip stream, no time in the header (the same input, the same bytes)."""
    if zopfli_gzip is None:
        return gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0)
    compressed: bytes = zopfli_gzip(data, numiterations=ZOPFLI_ITERATIONS)
    return compressed


def solid_gzip(zip_bytes: bytes, project_root: Path | None = None) -> bytes:
    """``zip_bytes`` as shipped: its members stored, the whole gzipped. Given the
    ``project_root``, the result is cached under its ``build/`` (a rebuild of the same files
    gives the same bytes either way)."""
    stored = stored_zip(zip_bytes)
    if project_root is None:
        return _deflated(stored)
    method = "zopfli" if zopfli_gzip is not None else f"zlib{GZIP_LEVEL}"
    cache = project_root / CACHE_DIR
    kept = cache / f"{hashlib.sha256(stored).hexdigest()[:32]}-{method}.gz"
    if kept.exists():
        return kept.read_bytes()
    shipped = _deflated(stored)
    cache.mkdir(parents=True, exist_ok=True)
    partial = kept.with_suffix(".part")
    partial.write_bytes(shipped)
    partial.replace(kept)  # whole or not at all, if a build is interrupted
    for stale in sorted(cache.glob("*.gz"), key=lambda p: p.stat().st_mtime)[:-CACHE_KEEP]:
        stale.unlink(missing_ok=True)
    return shipped


def unpacked(shipped: bytes) -> bytes:
    """The zip inside a shipped ``.gz`` file, as the browser's worker gets it."""
    return gzip.decompress(shipped)
