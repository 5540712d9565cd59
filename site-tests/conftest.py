"""Build the site once and serve it once per test session, at the root and under a sub-path,
and drive Debian's Chromium with Playwright.

Each server binds a free port first (port 0) and the site is then built with SITE_URL set to
that address, so Material's instant navigation works as it would for a reader. The `watched`
page fails its test at teardown on a console error or a request outside the served sites,
unless the test is marked `allow_console_errors` (it provokes errors on purpose).
Shared helpers are in support.py; the import path is set once in pyproject.toml.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Playwright, expect, sync_playwright
from support import CHROMIUM, CHROMIUM_ARGS, Site, Watched, build_site, open_watched

from tools.serve import serving

# The origins this session serves sites from: the only ones a page may request.
SERVED_ORIGINS: set[str] = set()


def pytest_configure(config: pytest.Config) -> None:
    # The page's own waits give up after 30 s; an `expect` as patient, on a busy machine.
    expect.set_options(timeout=30_000)
    config.addinivalue_line(
        "markers",
        "allow_console_errors: the test provokes console errors on purpose; the `watched` "
        "page does not fail on them (requests outside the site still fail it)",
    )


def _served(site: Site) -> Site:
    SERVED_ORIGINS.add(site.origin)
    return site


@pytest.fixture(scope="session")
def root_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    directory = tmp_path_factory.mktemp("root-site")
    with serving(directory) as url:
        build_site(directory, url)
        yield _served(Site(directory, url))


@pytest.fixture(scope="session")
def subpath_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    serve_root = tmp_path_factory.mktemp("subpath-host")
    with serving(serve_root) as host:
        url = host + "lesson/"
        build_site(serve_root / "lesson", url)
        yield _served(Site(serve_root / "lesson", url))


@pytest.fixture(scope="session")
def offline_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("offline-copy")
    build_site(directory, "http://127.0.0.1:8000/", offline=True)
    return directory


@pytest.fixture(scope="session")
def playwright_instance() -> Iterator[Playwright]:
    if not Path(CHROMIUM).exists():
        pytest.exit("Debian's Chromium is missing at /usr/bin/chromium: run `make chromium`.", 1)
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright_instance: Playwright) -> Iterator[Browser]:
    b = playwright_instance.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield b
    b.close()


@pytest.fixture
def watched(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Watched]:
    """A fresh page; at teardown, its console errors and off-site requests fail the test."""
    w = open_watched(browser)
    yield w
    errors = [] if request.node.get_closest_marker("allow_console_errors") else w.console_errors
    outside = w.outside(*SERVED_ORIGINS)
    w.context.close()
    if errors or outside:
        pytest.fail(f"the page logged errors {errors} and requested outside the site {outside}")
