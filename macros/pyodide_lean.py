"""Two of Pyodide's own Python modules, replaced in the standard library the site ships.

``loadPyodide`` imports ``pyodide._package_loader`` at every start (pyodide.asm.mjs,
``finalizeBootstrap``), and that module imports ``shutil``, ``tempfile`` and ``zipfile``
(with them ``bz2``, ``lzma``, ``compression.zstd``, ``bisect``...) to install packages. The
site installs none: the engine's worker writes the engine's archive into Pyodide's file system
and Python imports it from there (zipimport, docs/js/engine-worker.js). The stock
``pyodide/__init__.py`` also starts Pyodide's asyncio event loop (``pyodide.webloop``); the
site runs no coroutine. (asyncio itself stays: Pyodide's C core imports it at start.)

So the shipped standard library holds, in their place, the two modules below: the package
loader keeps only what start-up reads (``SITE_PACKAGES``, ``DSO_DIR``,
``init_loaded_packages``); anything else asked of it fails naming this file. Measured
(2026-11-30, Pyodide 314.0.7): 24 modules fewer at start, the standard library's gzip stream
~0.10 MB smaller. The build boots Pyodide on exactly what it ships and runs the whole corpus
(macros/runtime_bytecode.py), so a start-up that needs more fails the build.

The replacements are written for one version of the stock files (their SHA-256 below): a
Pyodide upgrade that changes them fails the build until this module is reviewed.
"""

from __future__ import annotations

import hashlib
import io
import re
import zipfile

# Stock file -> its SHA-256 in the pinned Pyodide (node_modules/pyodide/python_stdlib.zip).
REVIEWED_STOCK = {
    "pyodide/__init__.py": "a02eabaa00ee98a4108082fc751808ff71e7d990fe889852f63d13621934e0ac",
    "pyodide/_package_loader.py": "66bc0d856252e3c3690a9c9cc2f73a4e88d7a9cc5beafa712194cadda4eb2b70",
}

_INIT = '''"""Pyodide's package, as this site ships it: no asyncio event loop is started (see the
lesson's macros/pyodide_lean.py)."""
__version__ = "{version}"

from . import _state  # noqa: F401
'''

_PACKAGE_LOADER = '''"""What Pyodide's start-up reads of its package loader, and nothing else: the site
installs no package (see the lesson's macros/pyodide_lean.py)."""
import os
import sys
from site import getsitepackages


class _Folder:
    # Pyodide's JavaScript reads these with .__str__() (a Python str would reach it already
    # converted to a JavaScript string, which has no such method).
    def __init__(self, path):
        self.path = path

    def __str__(self):
        return self.path

    def __fspath__(self):
        return self.path


SITE_PACKAGES = _Folder(getsitepackages()[0])
if sys.base_prefix == sys.prefix:
    DSO_DIR = _Folder("/usr/lib")
else:
    DSO_DIR = _Folder(os.path.dirname(os.path.dirname(SITE_PACKAGES.path)))


def init_loaded_packages():
    # Stock: lists the *.dist-info folders already in site-packages; the site puts none there.
    pass


def __getattr__(name):
    raise AttributeError(
        f"pyodide._package_loader.{name} is left out of this site's runtime: it installs no "
        "package (macros/pyodide_lean.py)"
    )
'''


class StockChangedError(RuntimeError):
    """The pinned Pyodide's files differ from the ones the replacements were written for."""


def _version(stock_init: bytes) -> str:
    found = re.search(rb'^__version__ = "([^"]+)"$', stock_init, re.M)
    if found is None:
        raise StockChangedError("no __version__ in Pyodide's pyodide/__init__.py")
    return found.group(1).decode()


def replacements(stock_zip: bytes) -> dict[str, bytes]:
    """Zip entry -> the source shipped in its place; StockChangedError if the stock files
    are not the reviewed ones."""
    stock = zipfile.ZipFile(io.BytesIO(stock_zip))
    for name, digest in REVIEWED_STOCK.items():
        if hashlib.sha256(stock.read(name)).hexdigest() != digest:
            raise StockChangedError(
                f"Pyodide's {name} is not the one macros/pyodide_lean.py replaces: review the "
                "replacement against the new file, then update REVIEWED_STOCK"
            )
    version = _version(stock.read("pyodide/__init__.py"))
    return {
        "pyodide/__init__.py": _INIT.format(version=version).encode(),
        "pyodide/_package_loader.py": _PACKAGE_LOADER.encode(),
    }


def lean_stdlib(stock_zip: bytes) -> bytes:
    """The stock ``python_stdlib.zip`` with the two modules replaced (entries, order, times
    and attributes otherwise as they are)."""
    lean = replacements(stock_zip)
    stock = zipfile.ZipFile(io.BytesIO(stock_zip))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as target:
        for info in stock.infolist():
            target.writestr(info, lean.get(info.filename) or stock.read(info))
    return buffer.getvalue()
