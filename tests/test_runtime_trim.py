"""The runtime the site ships holds only what runs (macros/runtime_bytecode.py).

The standard library is trimmed to the modules Pyodide's start-up and the engine import, as
bytecode only; the engine's wheel carries bytecode, not source; the package lock lists no
packages. Pyodide under Node, booted on exactly those files, renders every widget under every
input of macros/corpus.py, every plan and the parity cases as the stock runtime does, and a
module the site imports that was left out fails the build with its name.
"""

from __future__ import annotations

import dataclasses
import io
import json
import zipfile
from pathlib import Path

import pytest

from engine.numbers.catalog import _data
from macros import runtime_bytecode
from macros.corpus import widget_case_count
from macros.pyodide_core import STDLIB_SHIPPED, minimal_lock
from macros.pyodide_lean import StockChangedError, lean_stdlib
from macros.runtime_bytecode import (
    BytecodeMagicError,
    RuntimeBytecode,
    TrimmedRuntimeError,
    browser_archives,
    check_runtime,
    compile_runtime,
)
from macros.solid_archive import solid_gzip, stored_zip, unpacked
from macros.wheel import apart_json, build_engine_wheel

ROOT = Path(__file__).resolve().parent.parent
STOCK = ROOT / "node_modules" / "pyodide"


@pytest.fixture(scope="module")
def bytecode(tmp_path_factory: pytest.TempPathFactory) -> RuntimeBytecode:
    plain = build_engine_wheel(ROOT, tmp_path_factory.mktemp("plain-wheel"))
    return compile_runtime(ROOT, plain)


def _shipped(folder: Path, bytecode: RuntimeBytecode, stdlib_zip: bytes) -> tuple[list[Path], Path]:
    """(engine archives, the core wheel first; pyodide folder) as the build writes them into
    site/: the standard library and each archive as one gzip stream."""
    pyodide = folder / "pyodide"
    pyodide.mkdir(parents=True)
    (pyodide / STDLIB_SHIPPED).write_bytes(solid_gzip(stdlib_zip, ROOT))
    (pyodide / "pyodide-lock.json").write_bytes(
        minimal_lock((STOCK / "pyodide-lock.json").read_bytes())
    )
    shipped = []
    for plain in browser_archives(ROOT, folder / "plain", bytecode).paths:
        shipped.append(folder / (plain.name + ".gz"))
        shipped[-1].write_bytes(solid_gzip(plain.read_bytes(), ROOT))
    apart = folder / "data"
    apart.mkdir()
    for name, data in apart_json().items():
        (apart / name).write_bytes(data)
    return shipped, pyodide


def test_the_standard_library_holds_only_the_used_modules_as_bytecode(
    bytecode: RuntimeBytecode,
) -> None:
    stock = set(zipfile.ZipFile(STOCK / "python_stdlib.zip").namelist())
    shipped = zipfile.ZipFile(io.BytesIO(bytecode.stdlib_zip)).namelist()
    assert all(name.endswith(".pyc") for name in shipped), "source shipped beside bytecode"
    assert {name[:-1] for name in shipped} == set(bytecode.stdlib_compiled)
    assert set(bytecode.stdlib_compiled) <= stock
    # Start-up (asyncio, the pyodide package), the engine's imports (json, dataclasses) and
    # its lazy ones (pkgutil, imported only to list every widget).
    needed = {"asyncio/__init__.py", "pyodide/__init__.py", "json/decoder.py", "dataclasses.py",
              "pkgutil.py"}
    assert needed <= set(bytecode.stdlib_compiled)
    # Nothing the site runs imports these; the package installer's (shutil, tempfile, zipfile
    # and what they import) and the event loop's go with Pyodide's lean start-up modules
    # (macros/pyodide_lean.py).
    for gone in ("email/__init__.py", "unittest/__init__.py", "xml/__init__.py", "argparse.py",
                 "doctest.py", "pydoc.py", "shutil.py", "tempfile.py", "zipfile/__init__.py",
                 "lzma.py", "bz2.py", "pyodide/webloop.py", "pyodide/common.py",
                 "encodings/cp437.py", "tomllib/__init__.py"):
        assert gone in stock and gone[:-3] + ".pyc" not in shipped, gone
    assert len(shipped) < len(stock) / 3


def test_pyodides_start_up_modules_ship_lean(bytecode: RuntimeBytecode) -> None:
    # Names in the bytecode (Pyodide's Python 3.14 marshal format: searched as bytes here).
    shipped = zipfile.ZipFile(io.BytesIO(bytecode.stdlib_zip))
    loader = shipped.read("pyodide/_package_loader.pyc")
    for kept in (b"SITE_PACKAGES", b"DSO_DIR", b"init_loaded_packages", b"getsitepackages"):
        assert kept in loader, kept
    for gone in (b"shutil", b"tempfile", b"zipfile", b"unpack_buffer", b"get_dynlibs"):
        assert gone not in loader, gone
    package = shipped.read("pyodide/__init__.pyc")
    assert b"_state" in package and b"webloop" not in package
    stock = zipfile.ZipFile(STOCK / "python_stdlib.zip")
    assert b"unpack_buffer" in stock.read("pyodide/_package_loader.py")
    assert b"webloop" in stock.read("pyodide/__init__.py")


def test_a_changed_stock_start_up_module_fails_the_build() -> None:
    stock = zipfile.ZipFile(STOCK / "python_stdlib.zip")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as target:
        for info in stock.infolist():
            data = stock.read(info)
            if info.filename == "pyodide/_package_loader.py":
                data += b"\nNEW_IN_A_LATER_PYODIDE = 1\n"
            target.writestr(info, data)
    with pytest.raises(StockChangedError, match=r"pyodide/_package_loader\.py"):
        lean_stdlib(buffer.getvalue())


def test_bytecode_for_another_python_fails_the_build(
    tmp_path: Path, bytecode: RuntimeBytecode, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert {pyc[:4] for pyc in bytecode.engine_pyc.values()} == {runtime_bytecode.BYTECODE_MAGIC}
    monkeypatch.setattr(runtime_bytecode, "BYTECODE_MAGIC", bytes.fromhex("00000d0a"))
    plain = build_engine_wheel(ROOT, tmp_path)
    with pytest.raises(BytecodeMagicError, match=r"magic 2b0e0d0a, not 00000d0a"):
        compile_runtime(ROOT, plain)


def test_the_lean_standard_library_differs_from_stock_only_in_the_two_modules() -> None:
    stock_bytes = (STOCK / "python_stdlib.zip").read_bytes()
    stock = zipfile.ZipFile(io.BytesIO(stock_bytes))
    lean = zipfile.ZipFile(io.BytesIO(lean_stdlib(stock_bytes)))
    assert lean.namelist() == stock.namelist()
    changed = [n for n in stock.namelist() if lean.read(n) != stock.read(n)]
    assert sorted(changed) == ["pyodide/__init__.py", "pyodide/_package_loader.py"]
    assert b'__version__ = "' + json.loads((STOCK / "package.json").read_text())[
        "version"
    ].encode() in lean.read("pyodide/__init__.py")


def test_the_corpus_ran_every_widget_input(bytecode: RuntimeBytecode) -> None:
    assert bytecode.record["widget_cases"] == widget_case_count()
    assert {"pkgutil", "json", "dataclasses"} <= set(bytecode.record["named"])
    # Named by the catalogue's loader, on a path the browser never takes (BUILD_ONLY_IMPORTS).
    assert "tomllib" not in bytecode.record["named"]


def test_the_browser_archives_are_bytecode_without_source(
    tmp_path: Path, bytecode: RuntimeBytecode
) -> None:
    archives = browser_archives(ROOT, tmp_path, bytecode)
    listed = [zipfile.ZipFile(path).namelist() for path in archives.paths]
    names = [name for names in listed for name in names if not name.endswith("/")]
    assert len(names) == len(set(names)), "a file in two archives"
    core = set(listed[0])
    assert "engine/browser.pyc" in core and "engine/numbers/catalog/data/models.json" in core
    assert "engine/widgets/model_size.pyc" not in core, "a widget's own module in the core"
    assert not [n for n in names if n.endswith((".py", ".toml"))]
    # The engine modules the corpus loaded, and those their imports name: no others.
    named = {n.replace(".", "/") for n in bytecode.record["named"] if n.split(".")[0] == "engine"}
    shipped = {n.removesuffix(".pyc").removesuffix("/__init__") for n in names if n.endswith(".pyc")}
    assert shipped == named
    assert {"engine/browser", "engine/registry", "engine/widgets/model_size"} <= shipped
    # A catalogue file ships with its reader and not without it (the op-by-op parts' tables,
    # read by no module the browser runs, stay out).
    data = {n.removeprefix("engine/numbers/catalog/data/").removesuffix(".json")
            for n in names if n.startswith("engine/numbers/catalog/data/")}
    assert data == {f"{n}.ids" if n in _data.SHIPPED_APART else n
                    for n in _data.names() if f"engine/numbers/catalog/{n}" in shipped}
    # The config library's configs ship apart (fetched when one is chosen): its ids only here.
    assert "engine/numbers/catalog/config_library" in shipped and "config_library.ids" in data
    assert {"models", "hardware", "efficiency", "kernel_rates"} <= data
    # Only the command line and the build import these.
    for build_only in ("engine/cli", "engine/__main__", "engine/lesson/tables/registry",
                       "engine/lesson/reality/published"):
        assert (ROOT / (build_only + ".py")).exists() and build_only not in shipped, build_only


def test_the_lock_lists_no_packages_and_keeps_pyodides_info() -> None:
    stock = json.loads((STOCK / "pyodide-lock.json").read_bytes())
    lock = json.loads(minimal_lock((STOCK / "pyodide-lock.json").read_bytes()))
    assert lock == {"info": stock["info"], "packages": {}}


def test_the_shipped_runtime_renders_the_corpus_as_stock_pyodide(
    tmp_path: Path, bytecode: RuntimeBytecode
) -> None:
    archives, pyodide = _shipped(tmp_path, bytecode, bytecode.stdlib_zip)
    record = check_runtime(ROOT, archives, pyodide, bytecode, archives[0].parent / "data")
    assert record["digest"] == bytecode.record["digest"]
    assert record["widget_cases"] == bytecode.record["widget_cases"]
    assert set(record["missed"]) <= set(bytecode.record["missed"])


def test_a_module_left_out_fails_the_build_naming_it(
    tmp_path: Path, bytecode: RuntimeBytecode
) -> None:
    source = zipfile.ZipFile(io.BytesIO(bytecode.stdlib_zip))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as target:
        for info in source.infolist():
            if info.filename != "pkgutil.pyc":
                target.writestr(info, source.read(info))
    archives, pyodide = _shipped(tmp_path, bytecode, buffer.getvalue())
    with pytest.raises(TrimmedRuntimeError, match=r"left out of the runtime it ships: pkgutil\b"):
        check_runtime(ROOT, archives, pyodide, bytecode, archives[0].parent / "data")


def test_the_archives_ship_as_one_gzip_stream_of_stored_members(
    tmp_path: Path, bytecode: RuntimeBytecode
) -> None:
    engine = [path.read_bytes() for path in browser_archives(ROOT, tmp_path, bytecode).paths]
    for archive in (bytecode.stdlib_zip, *engine):
        shipped = solid_gzip(archive, ROOT)  # kept under build/, as the build keeps it
        inside = zipfile.ZipFile(io.BytesIO(unpacked(shipped)))
        original = zipfile.ZipFile(io.BytesIO(archive))
        assert inside.namelist() == original.namelist()
        assert {i.compress_type for i in inside.infolist()} == {zipfile.ZIP_STORED}
        assert all(inside.read(name) == original.read(name) for name in original.namelist())
        # One stream compresses across members: smaller than the per-member deflate.
        assert len(shipped) < len(archive) * 0.95, (len(shipped), len(archive))
        assert solid_gzip(archive) == shipped, "the same files give the same bytes, uncached"
    assert stored_zip(bytecode.stdlib_zip) == unpacked(solid_gzip(bytecode.stdlib_zip, ROOT))


def test_an_engine_module_left_out_fails_the_build_naming_it(
    tmp_path: Path, bytecode: RuntimeBytecode
) -> None:
    engine_pyc = dict(bytecode.engine_pyc)
    del engine_pyc["engine/numbers/memory.pyc"]
    fewer = dataclasses.replace(bytecode, engine_pyc=engine_pyc)
    archives, pyodide = _shipped(tmp_path, fewer, bytecode.stdlib_zip)
    with pytest.raises(TrimmedRuntimeError, match=r"left out of the runtime it ships: .*engine\.numbers\.memory\b"):
        check_runtime(ROOT, archives, pyodide, bytecode, archives[0].parent / "data")


def test_a_build_only_import_the_browser_took_fails_the_build(
    tmp_path: Path, bytecode: RuntimeBytecode
) -> None:
    # Without the catalogue's JSON the engine would parse the TOML (with tomllib, left out as
    # build-only): the shipped runtime misses it, and the build fails naming it.
    archives, pyodide = _shipped(tmp_path, bytecode, bytecode.stdlib_zip)
    wheel = archives[0]
    source = zipfile.ZipFile(io.BytesIO(unpacked(wheel.read_bytes())))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as target:
        for info in source.infolist():
            if not info.filename.startswith("engine/numbers/catalog/data/"):
                target.writestr(info, source.read(info))
    wheel.write_bytes(solid_gzip(buffer.getvalue(), ROOT))
    with pytest.raises(TrimmedRuntimeError, match=r"left out of the runtime it ships: tomllib\b"):
        check_runtime(ROOT, archives, pyodide, bytecode, archives[0].parent / "data")
