"""tools/serve.py answers an unknown path with the site's own 404 page (status 404), the nearest
one above the path, as a static host does; without one, with the standard library's. And a site
built for another address is told what to rebuild with."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tools.serve import address_note, built_for, serving


def status_and_body(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_an_unknown_path_gets_the_nearest_404_page(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("home")
    (tmp_path / "404.html").write_text("the root's own 404")
    (tmp_path / "lesson").mkdir()
    (tmp_path / "lesson" / "404.html").write_text("the lesson's own 404")
    with serving(tmp_path) as url:
        assert status_and_body(url + "nowhere/") == (404, b"the root's own 404")
        assert status_and_body(url + "lesson/steps/01-gone/") == (404, b"the lesson's own 404")
        assert status_and_body(url + "lesson/missing.js") == (404, b"the lesson's own 404")
        assert status_and_body(url) == (200, b"home")


def test_without_a_404_page_the_standard_answer_stays(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("home")
    with serving(tmp_path) as url:
        status, body = status_and_body(url + "nowhere")
    assert status == 404 and b"404" in body


@pytest.mark.parametrize("escape", ["../../etc/passwd", "%2e%2e/%2e%2e/etc/passwd"])
def test_a_path_that_climbs_out_finds_no_page_outside_the_site(tmp_path: Path, escape: str) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (tmp_path / "404.html").write_text("outside the site")
    with serving(site) as url:
        status, body = status_and_body(url + escape)
    assert status == 404 and b"outside the site" not in body


def test_a_site_built_for_another_address_is_told_what_to_rebuild_with(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text(
        '<head><link rel="canonical" href="http://127.0.0.1:8000/"></head>'
    )
    built = built_for(tmp_path)
    assert built == "http://127.0.0.1:8000/"
    assert address_note(built, "http://127.0.0.1:8000/") == ""
    note = address_note(built, "http://127.0.0.1:9000/")
    assert "built for http://127.0.0.1:8000/" in note
    assert note.endswith("SITE_URL=http://127.0.0.1:9000/ make build")
