"""The service worker's lists (macros/service_worker.py): which built files it keeps, under
which address, with which digest, and the build version that changes with any of them."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from macros.service_worker import DIGEST_HEX_CHARS, offline_files, write_service_worker

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ["pyodide/pyodide.mjs", "js/lesson.js"]
BUILT = {
    "index.html": "home",
    "steps/compute/index.html": "step",
    "offline/index.html": "offline",
    "404.html": "not found",
    "sw.js": "the worker itself",
    "sitemap.xml": "<urlset/>",
    "sitemap.xml.gz": "gz",
    "search/search_index.json": "{}",
    "assets/javascripts/bundle.1.min.js": "theme",
    "assets/javascripts/bundle.1.min.js.map": "map",
    "assets/javascripts/lunr/min/lunr.de.min.js": "german",
    "download/copy.zip": "zip",
    "css/lesson.css": "source of the bundle",
    "css/lesson-bundle.css": "bundle",
    "pyodide/pyodide.mjs": "runtime",
    "js/lesson.js": "script",
}


def _site(tmp_path: Path, files: dict[str, str] = BUILT) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_every_page_and_asset_is_listed_by_its_address_and_nothing_no_page_loads(tmp_path: Path) -> None:
    files = offline_files(_site(tmp_path), RUNTIME, ["css/lesson.css"])
    assert sorted(files.digests) == [
        "",
        "assets/javascripts/bundle.1.min.js",
        "css/lesson-bundle.css",
        "js/lesson.js",
        "offline/",
        "pyodide/pyodide.mjs",
        "search/search_index.json",
        "sitemap.xml",
        "steps/compute/",
    ]
    assert files.install == (
        *RUNTIME,
        "offline/",
        "assets/javascripts/bundle.1.min.js",
        "search/search_index.json",
        "sitemap.xml",
    )
    assert files.fallback == "offline/"
    assert files.digests["steps/compute/"] == hashlib.sha256(b"step").hexdigest()[:DIGEST_HEX_CHARS]
    assert files.bytes_by_path(tmp_path)["steps/compute/"] == len("step")


def test_the_version_changes_with_any_shipped_file_and_only_then(tmp_path: Path) -> None:
    site = _site(tmp_path)
    before = offline_files(site, RUNTIME, ["css/lesson.css"]).version
    (site / "css" / "lesson.css").write_text("an edit the bundle does not ship")
    (site / "download" / "copy.zip").write_text("a new zip")
    assert offline_files(site, RUNTIME, ["css/lesson.css"]).version == before
    (site / "steps" / "compute" / "index.html").write_text("step, edited")
    assert offline_files(site, RUNTIME, ["css/lesson.css"]).version != before


def test_a_build_without_directory_urls_falls_back_to_its_html_page(tmp_path: Path) -> None:
    site = _site(tmp_path, {"index.html": "home", "offline.html": "offline", "js/lesson.js": "s"})
    files = offline_files(site, ["js/lesson.js"], [], directory_urls=False)
    assert files.fallback == "offline.html" and "offline.html" in files.install


def test_a_listed_runtime_file_the_build_did_not_write_fails_the_build(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=re.escape("pyodide/missing.wasm")):
        offline_files(_site(tmp_path), ["pyodide/missing.wasm"], [])


def test_the_worker_gets_every_list_and_no_placeholder_is_left(tmp_path: Path) -> None:
    site = _site(tmp_path)
    files = offline_files(site, RUNTIME, ["css/lesson.css"])
    write_service_worker(site, (ROOT / "docs" / "sw.js").read_text(), files)
    worker = (site / "sw.js").read_text()
    assert not re.search(r"__[A-Z_]+__", worker)

    def constant(name: str) -> object:
        match = re.search(rf"^const {name} = (.*);$", worker, re.M)
        assert match, name
        return json.loads(match.group(1))

    assert constant("VERSION") == files.version
    assert constant("FILES") == files.digests
    assert constant("INSTALL") == list(files.install)
    assert constant("FALLBACK") == "offline/"
    assert constant("DIGEST_HEX_CHARS") == DIGEST_HEX_CHARS
