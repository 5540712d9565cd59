"""The engine's further archives in the reader's browser: the modules beyond the core ship in
chunk archives (macros/engine_chunks.py), fetched by the worker (docs/js/engine-worker.js)
before the first render of a widget that needs them, and made importable here.

The core archive is on ``sys.path``; a chunk cannot simply join it there, because a package
split over two archives imports from the first one only (its ``__path__`` names one archive's
folder). So each package's ``__path__`` gets the package's folder in every chunk that has one:
at once for the packages already imported, and, for those imported later, by a finder first on
``sys.meta_path`` that adds the folders to the package's spec (the standard path finder then
finds each module, and ``pkgutil.iter_modules`` lists them all, as the widget registry needs).
"""

from __future__ import annotations

import sys
import zipimport
from collections.abc import Sequence
from importlib.machinery import ModuleSpec, PathFinder
from types import ModuleType

_ENGINE = "engine"


class _ChunkFolders:
    """Adds the chunks' folders of each engine package to its ``__path__``."""

    def __init__(self) -> None:
        self.archives: list[str] = []
        self._importers: dict[tuple[str, str], zipimport.zipimporter] = {}

    def folders(self, package: str, archives: Sequence[str]) -> list[str]:
        """The folders of ``package`` (a dotted name) in ``archives``, in their order."""
        parent = package.rpartition(".")[0]
        found: list[str] = []
        for archive in archives:
            key = (archive, parent)
            importer = self._importers.get(key)
            if importer is None:
                inside = parent.replace(".", "/")
                importer = zipimport.zipimporter(f"{archive}/{inside}/" if inside else archive)
                self._importers[key] = importer
            # A folder comes as a namespace portion (or as a package, with its __init__).
            spec = importer.find_spec(package)
            if spec is not None and spec.submodule_search_locations:
                found.extend(spec.submodule_search_locations)
        return found

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not fullname.startswith(_ENGINE + ".") or not self.archives:
            return None
        folders = self.folders(fullname, self.archives)
        if not folders:
            return None  # a module, or a package no chunk has part of: the path finder's
        spec = PathFinder.find_spec(fullname, path)
        if spec is None or spec.submodule_search_locations is None:
            return spec
        for folder in folders:
            if folder not in spec.submodule_search_locations:
                spec.submodule_search_locations.append(folder)
        return spec


_FOLDERS = _ChunkFolders()


def add(archive: str) -> None:
    """Make the modules of the chunk ``archive`` (a zip's path, written by the worker)
    importable."""
    if archive in _FOLDERS.archives:
        return
    if _FOLDERS not in sys.meta_path:
        sys.meta_path.insert(0, _FOLDERS)
    _FOLDERS.archives.append(archive)
    packages = sorted(
        (name, module)
        for name, module in list(sys.modules.items())
        if (name == _ENGINE or name.startswith(_ENGINE + ".")) and hasattr(module, "__path__")
    )
    for name, module in packages:
        for folder in _FOLDERS.folders(name, [archive]):
            if folder not in module.__path__:
                module.__path__.append(folder)
