"""What the browser tests share: building and addressing the site, a watched browser page, and
the waits and reads every widget test uses. Fixtures live in conftest.py; this module holds
plain functions, so the benchmark (bench/bench_site.py) can use them too.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from playwright.sync_api import Browser, BrowserContext, Locator, Page, Route, expect

from engine.browser import update
from macros.authoring import number_steps
from macros.old_addresses import OLD_STEP_FOLDERS

ROOT = Path(__file__).resolve().parent.parent
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
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
WIDGET_RE = re.compile(r'data-widget="([a-z_]+)"')


# --- The built site -------------------------------------------------------------------------


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


def build_site(site_dir: Path, site_url: str, *, offline: bool = False) -> None:
    """``mkdocs build --strict`` into ``site_dir`` for a site served at ``site_url``."""
    env = {**os.environ, "SITE_URL": site_url, "NO_MKDOCS_2_WARNING": "1"}
    if offline:
        env["OFFLINE"] = "true"
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir"]
    completed = subprocess.run(
        [*command, str(site_dir)], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    if completed.returncode != 0:
        pytest.fail(f"mkdocs build failed:\n{completed.stdout[-3000:]}\n{completed.stderr[-3000:]}")


def pages(site_dir: Path) -> list[str]:
    """Site-relative paths of every lesson page (directory URLs end with '/'); not the pages
    at the steps' old addresses, which only lead on (old_step_addresses)."""
    out = []
    old = set(old_step_addresses())
    for html in sorted(site_dir.rglob("index.html")):
        rel = html.parent.relative_to(site_dir).as_posix()
        if rel.startswith(("pyodide", "wheels", "assets", "download")) or rel == "404":
            continue
        if rel + "/" in old:
            continue
        out.append("" if rel == "." else rel + "/")
    return out


def old_step_addresses() -> dict[str, str]:
    """A step's old address ('steps/16-roofline/') -> its address now ('steps/roofline/')."""
    return {f"steps/{old}/": f"steps/{new}/" for old, new in OLD_STEP_FOLDERS.items()}


def widget_pages(site_dir: Path) -> dict[str, list[str]]:
    """Page path -> widget names on it, for pages that have widgets."""
    found = {}
    for path in pages(site_dir):
        names = WIDGET_RE.findall((site_dir / path / "index.html").read_text())
        if names:
            found[path] = names
    return found


class _NavLoader(yaml.SafeLoader):
    """Reads mkdocs.yml, whose tags (!ENV, !!python/name) the navigation does not need."""


_NavLoader.add_multi_constructor("!", lambda loader, suffix, node: None)
_NavLoader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def _nav_sources(entry: object) -> list[str]:
    """The Markdown sources an entry of mkdocs.yml's nav lists, in order."""
    if isinstance(entry, str):
        return [entry]
    if isinstance(entry, list):
        return [src for item in entry for src in _nav_sources(item)]
    if isinstance(entry, dict):
        return [src for item in entry.values() for src in _nav_sources(item)]
    return []


def lesson_steps() -> tuple[str, ...]:
    """The step pages' addresses ('steps/roofline/') in the navigation's order, numbered by the
    same rule the build uses (macros.authoring.number_steps), so a test that needs a step's
    number asks here instead of typing it, and reordering the nav changes no test."""
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=_NavLoader)
    sources = _nav_sources(config["nav"])
    return number_steps([(src, src.removesuffix(".md") + "/") for src in sources])


def step_number(path: str) -> int:
    """The number the navigation gives the step at ``path`` ('steps/roofline/'), from 1."""
    return lesson_steps().index(path) + 1


# --- What a reader sees ---------------------------------------------------------------------


def visible_text(locator: Locator) -> str:
    """The text a reader sees in ``locator``: as rendered, so a closed <details> gives only its
    summary, and hidden elements nothing."""
    return locator.inner_text()


# A closed <details> keeps its content in the page, out of view; no role or label tells open
# from closed, so the DOM is read.
_HIDDEN_IN_DETAILS_JS = """el => [...(el.matches('details') ? [el] : []), ...el.querySelectorAll('details')]
  .filter(d => !d.open)
  .map(d => [...d.childNodes].filter(n => n.nodeName !== 'SUMMARY').map(n => n.textContent).join(''))
  .join('\\n')"""


def hidden_in_details(locator: Locator) -> str:
    """The text in ``locator`` a reader sees only once they open a <details>: the content of
    every closed details in it (``locator`` itself included), less the summaries."""
    return str(locator.evaluate(_HIDDEN_IN_DETAILS_JS))


def is_open(details: Locator) -> bool:
    """Whether the <details> ``details`` is open."""
    return details.get_attribute("open") is not None


def open_details(details: Locator) -> None:
    """Open a closed <details> as a reader does, by its summary (a summary has no ARIA role)."""
    details.locator(":scope > summary").click()
    expect(details).to_have_attribute("open", "")


# --- A watched page -------------------------------------------------------------------------


@dataclass
class Watched:
    """A page and what it did: console errors and requests that left the site's origin."""

    page: Page
    context: BrowserContext
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def outside(self, *origins: str) -> list[str]:
        """Requests to anywhere but ``origins`` (data: and blob: URLs stay in the page)."""
        return [
            u
            for u in self.requests
            if not u.startswith((*origins, "data:", "blob:"))
        ]


def open_watched(browser: Browser, **context_options: object) -> Watched:
    """A page in a new browser context that records console errors and every request."""
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


def run_axe(page: Page) -> list[dict[str, object]]:
    """Serious and critical axe-core violations on the page (axe injected from npm)."""
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate(
        """async () => {
            const result = await axe.run(document, { resultTypes: ["violations"] });
            return result.violations
              .filter(v => v.impact === "serious" || v.impact === "critical")
              .map(v => ({ id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(" ")) }));
        }"""
    )
    return list(violations)


# --- Widgets --------------------------------------------------------------------------------


class HeldRequests:
    """Requests for ``pattern`` wait until :meth:`release`; then they, and every later one, go
    on. A first visit asks for each runtime file twice when routes are in place: the page's
    preload hint, then the worker (Playwright's routes turn the browser's cache off, which
    otherwise hands the worker the hint's response)."""

    def __init__(self, context: BrowserContext, pattern: str) -> None:
        self.held: list[Route] = []
        self.released = False
        context.route(pattern, self._arrived)

    def _arrived(self, route: Route) -> None:
        if self.released:
            route.continue_()
        else:
            self.held.append(route)

    def wait_for_one(self, page: Page, timeout_ms: int = 30_000) -> None:
        """Until at least one request is held."""
        for _ in range(timeout_ms // 50):
            if self.held:
                return
            page.wait_for_timeout(50)
        raise AssertionError("no request was held")

    def release(self) -> None:
        self.released = True
        for route in self.held:
            route.continue_()
        self.held.clear()


def wait_live(page: Page, selector: str = "[data-widget]") -> None:
    """Wait until every widget on the page is live (or fail with the state it is in), then
    open what a reader opens to use them (:func:`unfold`)."""
    page.wait_for_function(
        """sel => [...document.querySelectorAll(sel)].every(w => w.dataset.state === 'live')""",
        arg=selector,
        timeout=LIVE_TIMEOUT_MS,
    )
    unfold(page)


# What a step keeps one click away: a widget behind a closed <details> (docs/steps, class
# widget-fold) and a look-only widget's inputs (engine/render/widget.py, widget-inputs).
FOLDS = "details.widget-fold:not([open]), details.widget-inputs:not([open])"


def unfold(page: Page) -> None:
    """Open the page's folded widgets and folded inputs, as a reader clicks them open."""
    page.evaluate("sel => { for (const d of document.querySelectorAll(sel)) d.open = true; }", FOLDS)


def result_html_in_browser(page: Page, widget_selector: str, html: str) -> str:
    """``html`` as this browser serialises it, so it can be compared with a live result; a
    link the engine names by page (``a[data-site-page]``) gets the address the page gives it
    (docs/js/lesson.js), as the live result does."""
    return str(
        page.evaluate(
            """([sel, html]) => {
                 const t = document.createElement('output');
                 t.innerHTML = html;
                 for (const a of t.querySelectorAll('a[data-site-page]')) {
                   const built = document.querySelector(`${sel} a[data-site-page="${a.dataset.sitePage}"][href]`);
                   if (built) a.setAttribute('href', built.getAttribute('href'));
                 }
                 return t.innerHTML;
               }""",
            [widget_selector, html],
        )
    )


def widget_inputs(page: Page, selector: str) -> dict[str, str]:
    """The widget's inputs as they are on screen, by name."""
    return dict(
        page.evaluate(
            """sel => Object.fromEntries([...document.querySelectorAll(sel + ' .widget-controls [name]')]
                 .map(f => [f.name, f.value]))""",
            selector,
        )
    )


@dataclass(frozen=True)
class LiveMatch:
    """What a live widget showed: the inputs on screen and the result, as this browser
    serialises it (equal to CPython's render of those inputs)."""

    inputs: dict[str, str]
    html: str


def wait_matches_cpython(
    page: Page, name: str, selector: str | None = None, *, timeout_ms: int = 15_000
) -> LiveMatch:
    """Wait until the widget's live result is exactly what CPython renders for the inputs on
    screen (the build-time result stays until the first live render lands)."""
    selector = selector or f"[data-widget={name}]"
    inputs = widget_inputs(page, selector)
    expected = json.loads(update(name, json.dumps(inputs)))
    assert "html" in expected, expected
    return LiveMatch(inputs, wait_shows(page, selector, expected["html"], timeout_ms=timeout_ms))


def wait_shows(page: Page, selector: str, html: str, *, timeout_ms: int = 15_000) -> str:
    """Wait until the widget's result is ``html`` (as this browser serialises it); return that."""
    wanted = result_html_in_browser(page, selector, html)
    page.wait_for_function(
        "([sel, html]) => document.querySelector(sel + ' .widget-result').innerHTML === html",
        arg=[selector, wanted],
        timeout=timeout_ms,
    )
    return wanted


def widget(page: Page, name: str) -> Locator:
    """The widget ``name`` on the page. A widget as a whole has no role (its form is labelled
    by its title, its result sits beside the form), so its data-widget attribute finds it."""
    return page.locator(f"[data-widget={name}]")


def result(widget_locator: Locator) -> Locator:
    """The widget's result: its <output> (its status line has the same role, so the class)."""
    return widget_locator.locator(".widget-result")


def status(widget_locator: Locator) -> Locator:
    """The widget's status line (role status; the result, an <output>, has that role too, so
    the class tells them apart). Found even while it is empty and hidden."""
    return widget_locator.get_by_role("status", include_hidden=True).and_(
        widget_locator.locator(".widget-status")
    )


def error_at(field: Locator) -> Locator:
    """The message a widget shows at ``field``: the alert among the elements that describe it
    (aria-describedby), as a screen reader announces it with the field."""
    described = (field.get_attribute("aria-describedby") or "").split()
    errors = [i for i in described if i.endswith("-error")]
    assert len(errors) == 1, f"the field is described by {described}, not by one error"
    return field.page.get_by_role("alert", include_hidden=True).and_(field.page.locator(f"[id='{errors[0]}']"))


def wait_for_error(field: Locator, *, timeout_ms: int = 15_000) -> str:
    """Wait until the widget shows a message at ``field``; return what a reader sees of it."""
    error = error_at(field)
    expect(error).not_to_be_empty(timeout=timeout_ms)
    return visible_text(error)


def wait_for_text(page: Page, selector: str, text: str, *, timeout_ms: int = 15_000) -> None:
    """Wait until the widget's result shows ``text`` to a reader."""
    expect(page.locator(selector + " .widget-result")).to_contain_text(
        text, use_inner_text=True, timeout=timeout_ms
    )


def settle(page: Page) -> None:
    """Wait until the widgets sharing the dgx-1 store agree with the tab's stored state and
    their first live renders have landed.

    lesson.js drops a reply that a newer render of the same widget superseded, and a
    widget's first live render saves the state and wakes the others; a button pressed in
    that instant loses its reply (see the report to the lead). Readers are not that quick;
    tests are, so they wait here first.
    """
    page.wait_for_function(
        """() => {
             const kept = sessionStorage.getItem('lesson:session:dgx-1');
             return kept !== null && [...document.querySelectorAll('[data-store]')]
               .every(w => w.querySelector('.widget-controls [name=state]').value === kept);
           }""",
        timeout=15_000,
    )
    page.wait_for_timeout(1000)
