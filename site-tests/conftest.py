"""Build the site once and serve it once per test session, at the root and under a sub-path,
and drive Debian's Chromium with Playwright.

Builds go to a temporary folder with SITE_URL set to the address they are served from, so
Material's instant navigation works as it would for a reader.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.serve import make_server  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LIVE_TIMEOUT_MS = 90_000


@dataclass
class Site:
    """A built site and the address it is served from (ends with '/')."""

    directory: Path
    url: str

    @property
    def origin(self) -> str:
        return self.url.split("/", 3)[0] + "//" + self.url.split("/", 3)[2]

    def page_url(self, path: str = "") -> str:
        return self.url + path.lstrip("/")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def build_site(site_dir: Path, site_url: str, *, offline: bool = False) -> None:
    env = {**os.environ, "SITE_URL": site_url, "NO_MKDOCS_2_WARNING": "1"}
    if offline:
        env["OFFLINE"] = "true"
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir"]
    completed = subprocess.run(
        [*command, str(site_dir)], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    if completed.returncode != 0:
        pytest.fail(f"mkdocs build failed:\n{completed.stdout[-3000:]}\n{completed.stderr[-3000:]}")


def _serve(directory: Path, port: int) -> None:
    server = make_server(directory, "127.0.0.1", port)
    threading.Thread(target=server.serve_forever, daemon=True).start()


@pytest.fixture(scope="session")
def root_site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    port = _free_port()
    directory = tmp_path_factory.mktemp("root-site")
    url = f"http://127.0.0.1:{port}/"
    build_site(directory, url)
    _serve(directory, port)
    return Site(directory, url)


@pytest.fixture(scope="session")
def subpath_site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    port = _free_port()
    serve_root = tmp_path_factory.mktemp("subpath-host")
    url = f"http://127.0.0.1:{port}/lesson/"
    build_site(serve_root / "lesson", url)
    _serve(serve_root, port)
    return Site(serve_root / "lesson", url)


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


@dataclass
class Watched:
    """A page and what it did: console errors and requests that left the site's origin."""

    page: Page
    context: BrowserContext
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def outside(self, origin: str) -> list[str]:
        return [
            u
            for u in self.requests
            if not (u.startswith(origin) or u.startswith(("data:", "blob:")))
        ]


def open_watched(browser: Browser, **context_options: object) -> Watched:
    context = browser.new_context(**context_options)  # type: ignore[arg-type]
    page = context.new_page()
    watched = Watched(page, context)
    page.on(
        "console",
        lambda msg: watched.console_errors.append(msg.text) if msg.type == "error" else None,
    )
    page.on("pageerror", lambda exc: watched.console_errors.append(str(exc)))
    context.on("request", lambda request: watched.requests.append(request.url))
    return watched


@pytest.fixture
def watched(browser: Browser) -> Iterator[Watched]:
    w = open_watched(browser)
    yield w
    w.context.close()


def wait_live(page: Page, selector: str = "[data-widget]") -> None:
    """Wait until every widget on the page is live (or fail with the state it is in)."""
    page.wait_for_function(
        """sel => [...document.querySelectorAll(sel)].every(w => w.dataset.state === 'live')""",
        arg=selector,
        timeout=LIVE_TIMEOUT_MS,
    )
