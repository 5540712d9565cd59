"""tools/serve.py --gzip compresses what GitHub Pages compresses, and nothing else, and lets the
browser cache every response as long as GitHub Pages does."""

from __future__ import annotations

import gzip
import urllib.request
from pathlib import Path

import pytest

from tools.serve import HOST_MAX_AGE_S, serving

FILES = {
    "index.html": b"<!doctype html><p>" + b"numbers " * 500,
    "engine.wasm": b"\x00asm" + bytes(range(256)) * 40,
    "lib.zip": b"PK" + b"z" * 4000,
    "data.json": b'{"a": [' + b"1, " * 1000 + b"1]}",
}


def fetch(url: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), b""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    for name, data in FILES.items():
        (root / name).write_bytes(data)
    return root


@pytest.mark.parametrize("name", ["index.html", "engine.wasm", "data.json"])
def test_text_and_wasm_go_gzipped_when_accepted(site: Path, name: str) -> None:
    with serving(site, compress=True) as url:
        status, headers, body = fetch(url + name, {"Accept-Encoding": "gzip"})
        plain_status, plain_headers, plain = fetch(url + name, {})
    assert status == 200 and headers["Content-Encoding"] == "gzip"
    assert int(headers["Content-Length"]) == len(body) < len(FILES[name])
    assert gzip.decompress(body) == FILES[name]
    assert plain_status == 200 and "Content-Encoding" not in plain_headers
    assert plain == FILES[name]


def test_archives_go_as_they_are_and_nothing_is_compressed_without_the_option(
    site: Path,
) -> None:
    with serving(site, compress=True) as url:
        _, headers, body = fetch(url + "lib.zip", {"Accept-Encoding": "gzip"})
    assert "Content-Encoding" not in headers and body == FILES["lib.zip"]
    with serving(site) as url:
        _, headers, body = fetch(url + "engine.wasm", {"Accept-Encoding": "gzip"})
    assert "Content-Encoding" not in headers and body == FILES["engine.wasm"]


def test_a_directory_serves_its_index_gzipped_and_revalidates(site: Path) -> None:
    with serving(site, compress=True) as url:
        status, headers, body = fetch(url, {"Accept-Encoding": "gzip"})
        again, _, empty = fetch(
            url, {"Accept-Encoding": "gzip", "If-Modified-Since": headers["Last-Modified"]}
        )
    assert status == 200 and gzip.decompress(body) == FILES["index.html"]
    assert again == 304 and empty == b""


@pytest.mark.parametrize("name", ["index.html", "lib.zip"])
def test_responses_are_cached_as_github_pages_caches_them(site: Path, name: str) -> None:
    with serving(site, compress=True) as url:
        _, headers, _ = fetch(url + name, {"Accept-Encoding": "gzip"})
    assert headers["Cache-Control"] == f"max-age={HOST_MAX_AGE_S}"
    with serving(site) as url:
        _, headers, _ = fetch(url + name, {})
    assert "Cache-Control" not in headers
