"""What the service worker (docs/sw.js) keeps for offline reading, and its build version.

The build lists every file a reader of the lesson needs (the pages, the theme's assets, the
search index, the runtime) with a digest of its bytes. The worker stores each file under its
digest, so a file is never taken from another build by mistake, and a new build fetches only
the files that changed. VERSION is a digest of that whole list: it changes whenever any shipped
file changes, and names the worker's cache (``lesson-VERSION``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

# The page shown, offline, for an address the worker has not kept (docs/offline.md), as
# addressed with directory URLs (the served site) and without (the copy that opens from disk).
FALLBACK_PAGES = {True: "offline/", False: "offline.html"}
# Built files no reader's page loads: source maps, the search stemmers of other languages
# (the lesson is in English), the compressed sitemap, the 404 page, the downloadable copy,
# and the worker itself (the browser keeps that one).
_LEFT_OUT_PREFIXES = ("download/", "assets/javascripts/lunr/")
_LEFT_OUT_NAMES = ("404.html", "sitemap.xml.gz", "sw.js")
_EVERY_PAGE_READS = ("search/search_index.json", "sitemap.xml")
DIGEST_HEX_CHARS = 16


@dataclass(frozen=True)
class OfflineFiles:
    """The worker's lists: every file to keep, by site path, with the first
    DIGEST_HEX_CHARS hex digits of its sha256; the paths kept as soon as the worker installs
    (the runtime, the fallback page, the theme's assets, the search index and the
    sitemap: what any page needs to open offline); the fallback page's path; and
    the build's version."""

    digests: dict[str, str]
    install: tuple[str, ...]
    fallback: str
    version: str

    def bytes_by_path(self, site: Path) -> dict[str, int]:
        """The size in bytes of each listed file as built (a page's path names its HTML)."""
        return {path: _built_file(site, path).stat().st_size for path in self.digests}


def _built_file(site: Path, path: str) -> Path:
    return site / (path + "index.html" if path == "" or path.endswith("/") else path)


def _site_path(relative: str) -> str:
    """The address a reader uses for a built file: a page's folder, not its index.html."""
    if relative == "index.html":
        return ""
    if relative.endswith("/index.html"):
        return relative.removesuffix("index.html")
    return relative


def _shipped(relative: str, left_out: frozenset[str]) -> bool:
    return not (
        relative.startswith(_LEFT_OUT_PREFIXES)
        or relative.endswith(".map")
        or relative in _LEFT_OUT_NAMES
        or relative in left_out
    )


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:DIGEST_HEX_CHARS]


def offline_files(
    site: Path, runtime: list[str], left_out: list[str], *, directory_urls: bool = True
) -> OfflineFiles:
    """Every shipped file of the built ``site`` with its digest.

    ``runtime`` lists the paths the worker keeps at install besides the fallback page (the
    Pyodide core, the engine wheel, the lesson's scripts); ``left_out`` names built files no
    page loads (the stylesheets the build bundled into one). ``directory_urls``: the build's
    use_directory_urls.
    """
    fallback = FALLBACK_PAGES[directory_urls]
    skip = frozenset(left_out)
    digests = {}
    for file in sorted(p for p in site.rglob("*") if p.is_file()):
        relative = file.relative_to(site).as_posix()
        if _shipped(relative, skip):
            digests[_site_path(relative)] = _digest(file.read_bytes())
    missing = [p for p in (*runtime, fallback) if p not in digests]
    if missing:
        raise FileNotFoundError(f"the service worker lists files the build did not write: {missing}")
    # Every page loads these too: the theme, and what its search and instant navigation read.
    shell = [p for p in digests if p.startswith("assets/") or p in _EVERY_PAGE_READS]
    install = (*runtime, fallback, *shell)
    listing = json.dumps(digests, sort_keys=True).encode()
    return OfflineFiles(digests, install, fallback, _digest(listing))


def write_service_worker(site: Path, template: str, files: OfflineFiles) -> None:
    """``site/sw.js`` from the worker's source ``template``, with this build's lists."""
    (site / "sw.js").write_text(
        template.replace("__BUILD_VERSION__", files.version)
        .replace("__FILES__", json.dumps(files.digests, sort_keys=True))
        .replace("__INSTALL__", json.dumps(list(files.install)))
        .replace("__FALLBACK__", files.fallback)
        .replace("__DIGEST_HEX_CHARS__", str(DIGEST_HEX_CHARS)),
        "utf-8",
    )


def write_built_service_worker(
    site: Path, runtime: list[str], left_out: list[str], *, directory_urls: bool
) -> None:
    """``site/sw.js`` from the built worker source (docs/sw.js, already in ``site``), listing
    every shipped file (:func:`offline_files`). Runs last: it reads every file the build
    wrote."""
    template = (site / "sw.js").read_text("utf-8")
    files = offline_files(site, runtime, left_out, directory_urls=directory_urls)
    write_service_worker(site, template, files)
