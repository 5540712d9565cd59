"""The runtime for the reader's browser: only what runs, compiled at build time by the site's
own Pyodide.

Pyodide (from npm) ships its whole standard library as source (2.5 MB compressed), so every
start compiled the ~130 modules it imports. ``macros/pyodide_compile.mjs`` runs that Pyodide
under Node once per build (its own start-up modules made lean: ``macros/pyodide_lean.py``;
the engine is imported from its archive, no package installer runs), runs the corpus
(``macros/corpus.py``: every widget input, plan and parity case;
``macros/runtime_imports.py`` reads the engine's imports) to learn which modules the site
uses, and returns them compiled: the engine's modules for a sourceless wheel, and a
``python_stdlib.zip`` holding only the used modules, as bytecode. The build then boots Pyodide again on what it ships and
runs the same corpus: a module the site imports that was left out fails the build, by name
(:class:`TrimmedRuntimeError`). Results are cached under ``build/`` by the hash of everything
they depend on.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from macros.engine_chunks import ChunkPlan, module_name, plan_chunks
from macros.pyodide_lean import lean_stdlib
from macros.solid_archive import SUFFIX, unpacked
from macros.wheel import FIXED_TIMESTAMP, build_engine_wheel, project_version

COMPILE_SCRIPT = Path("macros") / "pyodide_compile.mjs"
LEAN_MODULES = Path("macros") / "pyodide_lean.py"
# The corpus and the import analysis, copied into Pyodide's file system as top-level modules.
CORPUS_FILES = (Path("macros") / "corpus.py", Path("macros") / "runtime_imports.py")
CACHE_DIR = Path("build") / "pyodide-bytecode"
CACHE_DIR_ENV = "LESSON_BYTECODE_CACHE"  # another cache folder (the benchmark starts empty)
CACHE_KEEP = 3  # entries kept: the newest ones (older sources, older Pyodide pins)
STDLIB_ZIP = Path("node_modules") / "pyodide" / "python_stdlib.zip"
# The first four bytes of every .pyc the pinned Pyodide writes and reads (its Python's
# importlib.util.MAGIC_NUMBER: Pyodide 314.0.7 runs Python 3.14). A new Python behind a
# Pyodide upgrade changes it, and with it what this module relies on: the private
# importlib._bootstrap_external._code_to_hash_pyc (macros/pyodide_compile.mjs) and the
# bytecode's layout (tests/test_runtime_trim.py searches it for names). Review those, then
# update this (tools/pyodide_check.py prints the installed Pyodide's).
BYTECODE_MAGIC = bytes.fromhex("2b0e0d0a")


class TrimmedRuntimeError(RuntimeError):
    """The runtime the site ships misses a module the site imports, or renders differently."""


class BytecodeMagicError(RuntimeError):
    """The installed Pyodide compiles bytecode for another Python than BYTECODE_MAGIC's."""


@dataclass(frozen=True)
class RuntimeBytecode:
    """What the build ships in place of source.

    ``engine_pyc``: wheel arcname (``engine/x.pyc``, beside where the source was) -> .pyc bytes.
    ``stdlib_zip``: the trimmed ``python_stdlib.zip``: used modules only, as unchecked-hash .pyc.
    ``stdlib_compiled``: the stock zip's entries (``json/__init__.py``...) shipped as bytecode.
    ``record``: what the compile run saw (``named``: the modules imported by name for the
    engine's import statements; ``missed``: imports no finder satisfied on the stock runtime;
    ``digest``: sha256 of the corpus's results; ``widget_cases``).
    ``cache_entry``: the folder it was cached in (the check's result is kept there too).
    """

    engine_pyc: Mapping[str, bytes]
    stdlib_zip: bytes
    stdlib_compiled: tuple[str, ...]
    record: Mapping[str, Any]
    cache_entry: Path


def cache_entry(project_root: Path, plain_wheel: Path) -> Path:
    """The cache folder of the bytecode for ``plain_wheel``: named by the hash of everything
    the compile reads (the wheel, the stock standard library, the compile script, the lean
    modules and the corpus)."""
    inputs = [plain_wheel, project_root / STDLIB_ZIP, project_root / COMPILE_SCRIPT]
    inputs.append(project_root / LEAN_MODULES)
    inputs += [project_root / path for path in CORPUS_FILES]
    digest = hashlib.sha256()
    for path in inputs:
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    cache_dir = Path(os.environ.get(CACHE_DIR_ENV) or project_root / CACHE_DIR)
    return cache_dir / digest.hexdigest()[:24]


def compile_runtime(project_root: Path, plain_wheel: Path) -> RuntimeBytecode:
    """Compile (or take from the cache) the bytecode for ``plain_wheel``, a source-only wheel.
    BytecodeMagicError unless the installed Pyodide writes BYTECODE_MAGIC."""
    cached = cache_entry(project_root, plain_wheel)
    if not (cached / "record.json").exists():
        _compile_into(project_root, plain_wheel, cached)
        _prune(cached.parent)
    engine: dict[str, str] = json.loads((cached / "engine.json").read_text())
    record: dict[str, Any] = json.loads((cached / "record.json").read_text())
    engine_pyc = {arc: base64.b64decode(data) for arc, data in engine.items()}
    magics = sorted({pyc[:4].hex() for pyc in engine_pyc.values()})
    if magics != [BYTECODE_MAGIC.hex()]:
        raise BytecodeMagicError(
            f"the installed Pyodide writes bytecode with magic {', '.join(magics)}, not "
            f"{BYTECODE_MAGIC.hex()}: review macros/runtime_bytecode.py's BYTECODE_MAGIC"
        )
    return RuntimeBytecode(
        engine_pyc=engine_pyc,
        stdlib_zip=(cached / "python_stdlib.zip").read_bytes(),
        stdlib_compiled=tuple(e for e in record["entries"] if e.endswith(".py")),
        record=record,
        cache_entry=cached,
    )


@dataclass(frozen=True)
class BrowserArchives:
    """The engine as the browser gets it, bytecode and the pre-parsed catalogue, no source and
    no TOML (the browser reads the catalogue's JSON): ``core``, the wheel the worker starts on
    (what the start and most widgets need), and ``chunks``, chunk name -> its zip, each
    fetched when a widget that needs it first renders (``plan``: macros/engine_chunks.py)."""

    core: Path
    chunks: Mapping[str, Path]
    plan: ChunkPlan

    @property
    def paths(self) -> list[Path]:
        """Every archive, the core first: what loads the whole engine."""
        return [self.core, *self.chunks.values()]


def chunk_file_name(project_root: Path, chunk: str) -> str:
    """A chunk archive's file name, ``engine-<version>-<chunk>.zip``."""
    name, version = project_version(project_root)
    return f"{name}-{version}-{chunk}.zip"


def browser_archives(project_root: Path, out_dir: Path, bytecode: RuntimeBytecode) -> BrowserArchives:
    """Write the core wheel and the chunk archives of ``bytecode`` into ``out_dir``."""
    by_module = {module_name(Path(arc)): arc for arc in bytecode.engine_pyc}
    plan = plan_chunks(project_root, by_module)
    core = {by_module[m]: bytecode.engine_pyc[by_module[m]] for m in sorted(plan.core)}
    # The catalogue's JSON files are read through the loader of their reader's module
    # (engine/numbers/catalog/_data.py), which the start imports: they go with the core.
    wheel = build_engine_wheel(
        project_root, out_dir, core, sources=False, catalog_readers=set(bytecode.engine_pyc)
    )
    chunks: dict[str, Path] = {}
    for chunk, modules in plan.chunks.items():
        target = out_dir / chunk_file_name(project_root, chunk)
        members = {by_module[m]: bytecode.engine_pyc[by_module[m]] for m in modules}
        write_chunk(target, members)
        chunks[chunk] = target
    return BrowserArchives(wheel, chunks, plan)


def write_chunk(target: Path, members: Mapping[str, bytes]) -> None:
    """A chunk archive: ``members`` (arcname -> bytes), stored, sorted, with an entry for each
    folder: engine/browser_archives.py finds a package's part in a chunk by its folder, and
    Python before 3.13 sees a folder in a zip only by its entry."""
    folders = {arc.rsplit("/", 1)[0] for arc in members}
    for folder in list(folders):
        parts = folder.split("/")
        folders.update("/".join(parts[:end]) for end in range(1, len(parts)))
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_STORED) as archive:
        for folder in sorted(folders):
            info = zipfile.ZipInfo(folder + "/", date_time=FIXED_TIMESTAMP)
            info.external_attr = 0o40755 << 16
            archive.writestr(info, b"")
        for arc, data in sorted(members.items()):
            info = zipfile.ZipInfo(arc, date_time=FIXED_TIMESTAMP)
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)


def check_runtime(
    project_root: Path, archives: Sequence[Path], pyodide_dir: Path, bytecode: RuntimeBytecode,
    apart: Path,
) -> dict[str, Any]:
    """Boot Pyodide under Node on the standard library and package lock in ``pyodide_dir`` and
    on the engine's ``archives``, the core wheel first, then every chunk (what the site ships:
    the standard library and each archive as one gzip stream, decompressed here as the
    reader's browser does, the chunks made importable as its worker does), with the catalogue
    files in ``apart`` read as the worker reads them, run the corpus and the named imports
    again, and return that run's record. TrimmedRuntimeError, naming the modules, if an import
    failed there that succeeded on the stock runtime, or if any result differs. A passed check
    is remembered in the cache (by the hash of the files)."""
    stdlib_gz = pyodide_dir / ("python_stdlib.zip" + SUFFIX)
    lock = pyodide_dir / "pyodide-lock.json"
    apart_files = sorted(apart.glob("*.json"))
    shipped = [stdlib_gz.read_bytes(), lock.read_bytes(), *(a.read_bytes() for a in archives),
               *(f.name.encode() + f.read_bytes() for f in apart_files)]
    digest = hashlib.sha256(b"".join(hashlib.sha256(data).digest() for data in shipped))
    passed = bytecode.cache_entry / f"checked-{digest.hexdigest()[:24]}.json"
    if passed.exists():
        remembered: dict[str, Any] = json.loads(passed.read_text())
        return remembered
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        unpacked_archives = []
        for archive, data in zip(archives, shipped[2:2 + len(archives)], strict=True):
            unpacked_archives.append(str(work / archive.name.removesuffix(SUFFIX)))
            Path(unpacked_archives[-1]).write_bytes(unpacked(data))
        # Beside the core wheel, as in the site: pyodide_compile.mjs reads them from there.
        (work / "data").mkdir()
        for f in apart_files:
            (work / "data" / f.name).write_bytes(f.read_bytes())
        stdlib_zip = work / "python_stdlib.zip"
        stdlib_zip.write_bytes(unpacked(shipped[0]))
        named = work / "named.json"
        named.write_text(json.dumps(bytecode.record["named"]))
        out = work / "record.json"
        corpus = _corpus_dir(project_root, work / "corpus")
        args = [unpacked_archives[0], str(corpus), str(stdlib_zip), str(lock), str(named), str(out)]
        args += unpacked_archives[1:]
        _run_node(project_root, ["check", *args])
        record: dict[str, Any] = json.loads(out.read_text())
    left_out = sorted(set(record["missed"]) - set(bytecode.record["missed"]))
    if left_out:
        raise TrimmedRuntimeError(
            "the site imports modules left out of the runtime it ships: "
            f"{', '.join(left_out)} (macros/runtime_bytecode.py; see macros/runtime_imports.py)"
        )
    if record["digest"] != bytecode.record["digest"]:
        raise TrimmedRuntimeError(
            "the corpus renders differently on the shipped runtime than on stock Pyodide "
            "(macros/corpus.py): something it needs was left out"
        )
    passed.write_text(json.dumps(record))
    return record


def _prune(cache_dir: Path) -> None:
    entries = sorted(
        (p for p in cache_dir.iterdir() if (p / "record.json").exists()),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    for stale in entries[CACHE_KEEP:]:
        shutil.rmtree(stale, ignore_errors=True)


def _compile_into(project_root: Path, plain_wheel: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        work = Path(tmp)
        corpus = _corpus_dir(project_root, work / "corpus")
        engine = work / "engine-src"
        with zipfile.ZipFile(plain_wheel) as wheel:
            wheel.extractall(engine)
        stdlib = work / "lean_stdlib.zip"
        stdlib.write_bytes(lean_stdlib((project_root / STDLIB_ZIP).read_bytes()))
        outputs = [work / "engine.json", work / "python_stdlib.zip", work / "record.json"]
        inputs = [str(engine), str(corpus), str(stdlib)]
        _run_node(project_root, ["compile", *inputs, *map(str, outputs)])
        for folder in (corpus, engine):
            shutil.rmtree(folder)
        stdlib.unlink()
        # Renamed into place last, so an interrupted build never leaves half a cache entry.
        shutil.rmtree(target, ignore_errors=True)
        work.rename(target)
        work.mkdir()  # for TemporaryDirectory's clean-up


def _corpus_dir(project_root: Path, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for path in CORPUS_FILES:
        shutil.copy2(project_root / path, folder / path.name)
    return folder


def _run_node(project_root: Path, args: list[str]) -> None:
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("Node.js is needed to build the site (Pyodide runs under it).")
    done = subprocess.run(
        [node, str(project_root / COMPILE_SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"Pyodide under Node failed ({args[0]}):\n{done.stderr[-2000:]}")
