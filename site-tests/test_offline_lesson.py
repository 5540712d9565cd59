"""Offline readers get the whole lesson after one visit.

One page visited online saves every page, asset and the runtime (docs/sw.js, lists written by
macros/service_worker.py), none of it requested before the first widget is live; offline, the
reader walks every page through the footer's links, by instant navigation, and each page's
widgets go live. A new build with one changed page replaces the cache: the old one goes, only
the changed file is downloaded, the open page's next link loads in full, the new page is
served. An address not saved gets the site's own offline page. A reader who opted out, or
whose browser saves data, gets nothing saved beyond the pages they open.

These tests serve their own build, from a server that logs each request with its time and can
switch to another build at the same address (the worker is per origin).
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page
from support import LIVE_TIMEOUT_MS, Site, Watched, build_site, open_watched, wait_live

from macros.old_addresses import OLD_STEP_FOLDERS
from macros.service_worker import offline_files, write_service_worker
from tools.serve import SiteHandler, SiteServer, address

ROOT = Path(__file__).resolve().parent.parent
START = "steps/pile-of-numbers/"
FALLBACK_TITLE = "Not saved on this device"
SAVE_TIMEOUT_MS = 120_000


@dataclass
class LoggedSite:
    """A built site behind a server that logs (time, path) of each request; ``directory``
    can be switched to another build while it serves."""

    site: Site
    directory: Path
    log: list[tuple[float, str]] = field(default_factory=list)

    def paths_since(self, since: float) -> list[str]:
        return [path for when, path in list(self.log) if when >= since]


def _serve(host: str = "127.0.0.1") -> tuple[SiteServer, list[LoggedSite]]:
    """A server on a free port whose handler serves, and logs to, ``current[0]``."""
    current: list[LoggedSite] = []

    class Logged(SiteHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(current[0].directory), **kwargs)

        def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
            current[0].log.append((time.time(), self.path.split("?")[0]))

    return SiteServer((host, 0), Logged), current


@pytest.fixture(scope="module")
def lesson(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoggedSite]:
    directory = tmp_path_factory.mktemp("offline-lesson")
    server, current = _serve()
    url = address(server)
    logged = LoggedSite(Site(directory, url), directory)
    current.append(logged)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        build_site(directory, url)
        yield logged
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _sw_list(directory: Path, name: str) -> Any:
    match = re.search(rf"^const {name} = (.*);$", (directory / "sw.js").read_text(), re.M)
    assert match, name
    return json.loads(match.group(1))


def _pages_in_files(directory: Path) -> list[str]:
    return [p for p in _sw_list(directory, "FILES") if p == "" or p.endswith("/")]


def _open(browser: Browser, lesson: LoggedSite, init: str = "") -> Watched:
    w = open_watched(browser)
    # On a loaded 2-core machine a step can take longer than Playwright's default 30 s.
    w.page.set_default_timeout(LIVE_TIMEOUT_MS)
    # The moment the first widget goes live, in the server log's clock.
    w.context.add_init_script(
        init
        + """
        new MutationObserver((_, observer) => {
          if (document.querySelector('[data-widget][data-state=live]')) {
            window.__liveAt = Date.now() / 1000; observer.disconnect();
          }
        }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-state'] });
        """
    )
    return w


def _wait_state(page: Page, state: str) -> None:
    page.wait_for_function(
        "s => document.querySelector('[data-lesson-offline]')?.dataset.offlineState === s",
        arg=state,
        timeout=SAVE_TIMEOUT_MS,
    )


def _cache_names(page: Page) -> list[str]:
    return list(page.evaluate("() => caches.keys()"))


def _wait_caches(page: Page, names: list[str]) -> None:
    """Wait until the origin's caches are exactly ``names`` (wait_for_function takes a
    promise for a true value, so this polls)."""
    deadline = time.monotonic() + SAVE_TIMEOUT_MS / 1000
    while _cache_names(page) != names:
        assert time.monotonic() < deadline, _cache_names(page)
        page.wait_for_timeout(250)


# What Chromium logs when instant navigation fetches a page that is not saved, offline:
# Material then loads the address in full, and the worker answers with the offline page.
UNSAVED_PAGE_FETCH = "Failed to load resource: net::ERR_FAILED"


def _assert_clean(w: Watched, lesson: LoggedSite, *, allowed: tuple[str, ...] = ()) -> None:
    assert w.outside(lesson.site.origin) == []
    assert [e for e in w.console_errors if e not in allowed] == []


def test_one_visit_saves_the_lesson_and_every_page_goes_live_offline(
    browser: Browser, lesson: LoggedSite
) -> None:
    w = _open(browser, lesson)
    page = w.page
    try:
        started = time.time()
        page.goto(lesson.site.page_url(START))
        wait_live(page)
        _wait_state(page, "ready")
        assert "Available offline" in page.inner_text("[data-lesson-offline] [role=status]")
        live_at = float(page.evaluate("window.__liveAt"))
        # Nothing of the saved lesson beyond this page's own files came before it was live.
        other_pages = {"/" + p for p in _pages_in_files(lesson.directory) if p != START}
        before_live = [p for when, p in lesson.log if started <= when < live_at]
        assert not other_pages & set(before_live), before_live
        saved_after = set(lesson.paths_since(live_at))
        assert other_pages <= saved_after, other_pages - saved_after
        names = _cache_names(page)
        assert names == [f"lesson-{_sw_list(lesson.directory, 'VERSION')}"], names

        w.context.set_offline(True)
        page.goto(lesson.site.page_url(""))  # a full load, from the cache
        page.evaluate("window.__sameDocument = true")
        walked = [""]
        while page.locator("a.md-footer__link--next").count():
            target = page.evaluate("new URL(document.querySelector('a.md-footer__link--next').href).pathname")
            # Instant navigation changes the address first and swaps the content after: mark
            # this page's content, and wait until the next page's has replaced it.
            page.evaluate("document.querySelector('.md-content').dataset.walked = '1'")
            page.click("a.md-footer__link--next")
            page.wait_for_function(
                "t => location.pathname === t && document.querySelector('.md-content:not([data-walked]) h1')",
                arg=target,
            )
            path = page.evaluate("location.pathname").lstrip("/")
            assert FALLBACK_TITLE not in page.inner_text(".md-content h1"), path
            if page.locator("[data-widget]").count():
                wait_live(page)
            walked.append(path)
        # Every page of the lesson, through instant navigation (one document all along).
        assert page.evaluate("window.__sameDocument") is True
        # Every page is walked but the offline page and the old steps' addresses (saved too,
        # for a reader's old link, but no "next" link leads to them).
        old = {f"steps/{folder}/" for folder in OLD_STEP_FOLDERS}
        assert sorted(walked) == sorted(p for p in _pages_in_files(lesson.directory)
                                        if p != "offline/" and p not in old)
        _assert_clean(w, lesson)
    finally:
        w.context.close()


def _rebuild_with_a_changed_page(old: Path, new: Path, marker: str) -> str:
    """A copy of the build at ``old`` whose glossary page says ``marker``, with its sw.js
    written as the build writes it; returns the new VERSION."""
    shutil.copytree(old, new)
    template = (ROOT / "docs" / "sw.js").read_text()
    install = _sw_list(old, "INSTALL")
    runtime = [p for p in install if p != "offline/" and not p.startswith("assets/")]
    left_out = [p.relative_to(old).as_posix() for p in (old / "css").glob("*.css") if p.name != "lesson-bundle.css"]
    same = offline_files(new, runtime, left_out)
    assert same.version == _sw_list(old, "VERSION"), "the test rewrites sw.js as the build does"
    glossary = new / "glossary" / "index.html"
    glossary.write_text(glossary.read_text().replace("<h1", f"<p>{marker}</p><h1", 1))
    files = offline_files(new, runtime, left_out)
    write_service_worker(new, template, files)
    assert files.version != same.version
    return files.version


def test_a_new_build_replaces_the_cache_and_downloads_only_what_changed(
    browser: Browser, lesson: LoggedSite, tmp_path: Path
) -> None:
    marker = "This glossary comes from the newer build."
    new_version = _rebuild_with_a_changed_page(lesson.directory, tmp_path / "new", marker)
    old_version = _sw_list(lesson.directory, "VERSION")
    w = _open(browser, lesson)
    page = w.page
    old_directory = lesson.directory
    try:
        page.goto(lesson.site.page_url(START))
        wait_live(page)
        _wait_state(page, "ready")
        assert _cache_names(page) == [f"lesson-{old_version}"]
        lesson.directory = tmp_path / "new"
        switched = time.time()
        page.evaluate("navigator.serviceWorker.getRegistration().then(r => r.update())")
        _wait_caches(page, [f"lesson-{new_version}"])
        # The new cache is whole before the old one went; the unchanged files were copied.
        assert set(lesson.paths_since(switched)) == {"/sw.js", "/glossary/"}
        complete = page.evaluate(
            "v => caches.open(v).then(c => c.match(new URL('__lesson-complete', location.origin + '/'))).then(r => Boolean(r))",
            f"lesson-{new_version}",
        )
        assert complete
        # The page still runs the older build's scripts: its next link loads the newer page in
        # full, with the newer scripts, rather than by instant navigation.
        page.evaluate("window.__sameDocument = true")
        page.click("a.md-footer__link--next")
        page.wait_for_url("**/steps/ai-ml-dl/")
        wait_live(page)
        assert page.evaluate("window.__sameDocument") is None
        w.context.set_offline(True)
        page.goto(lesson.site.page_url("glossary/"))
        assert marker in page.inner_text(".md-content")
        _assert_clean(w, lesson)
    finally:
        lesson.directory = old_directory
        w.context.close()


OPT_OUT = "localStorage.setItem('lesson:local:offline', 'off');"
SAVE_DATA = "Object.defineProperty(navigator.connection, 'saveData', { get: () => true });"


@pytest.mark.parametrize(("init", "says"), [(OPT_OUT, "Not saved"), (SAVE_DATA, "Data saver is on")])
def test_no_saving_when_the_reader_opted_out_or_saves_data_and_offline_gets_the_offline_page(
    browser: Browser, lesson: LoggedSite, init: str, says: str
) -> None:
    w = _open(browser, lesson, init)
    page = w.page
    try:
        page.goto(lesson.site.page_url(START))
        wait_live(page)
        page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=LIVE_TIMEOUT_MS)
        _wait_state(page, "off")
        assert says in page.inner_text("[data-lesson-offline] [role=status]")
        assert not page.is_checked("[data-lesson-offline] input[name=save-offline]")
        page.wait_for_timeout(2000)  # time enough for saving to begin, were it to
        live_at = float(page.evaluate("window.__liveAt"))
        fetched = set(lesson.paths_since(live_at))
        other_pages = {"/" + p for p in _pages_in_files(lesson.directory) if p not in (START, "offline/")}
        assert not other_pages & fetched, other_pages & fetched

        w.context.set_offline(True)
        # The next page is not saved: the site's own offline page, not the browser's error.
        page.click("a.md-footer__link--next")
        page.wait_for_url("**/offline/?from=*")
        assert FALLBACK_TITLE in page.inner_text(".md-content h1")
        assert page.locator("nav.md-nav--primary a[href]").count() > 20, "the navigation is there"
        assert page.inner_text("[data-offline-from]") == "/steps/ai-ml-dl/"
        # An address that is no page of the lesson, opened directly.
        page.goto(lesson.site.page_url("steps/no-such-step/"))
        page.wait_for_url("**/offline/?from=*")
        assert FALLBACK_TITLE in page.inner_text(".md-content h1")
        # The page the reader opened is kept, and goes live offline.
        page.goto(lesson.site.page_url(START))
        wait_live(page)
        _assert_clean(w, lesson, allowed=(UNSAVED_PAGE_FETCH,))
    finally:
        w.context.close()
