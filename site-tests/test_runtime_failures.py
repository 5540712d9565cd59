"""Never stuck: every way the Python runtime can fail to start or die ends, within 30 s, in an
error state that keeps the build-time numbers, says what failed and offers "Try again"; a
worker that dies in mid-session is restarted on the next input. Also axe on widgets in their
loading, live, error and failed states in both palettes, visible keyboard focus, and the axe
findings of minor impact on the side-by-side and playground pages.

The failures are real ones, made with Playwright's routes (a request aborted, answered with
junk, or never answered) and a real `Worker.terminate()`; nothing stands in for the runtime.
"""

from __future__ import annotations

import json
import time

import pytest
from playwright.sync_api import Page, Route
from support import (
    AXE,
    HeldRequests,
    Site,
    Watched,
    run_axe,
    unfold,
    wait_for_text,
    wait_live,
    widget_inputs,
)

from engine.browser import update

PAGE = "steps/pile-of-numbers/"
WIDGET = "[data-widget=model_size]"
# The engine's chunk that only the page's widget needs (macros/engine_chunks.py), fetched by the
# worker before its first render.
CHUNK = "**/wheels/engine-*-model_size.zip.gz"
# The promise: a reader sees the failure within this many seconds.
FAILED_WITHIN_S = 30


def wait_failed(page: Page, started: float) -> None:
    """Every widget on the page is in the error state, within the promised time."""
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-widget]')].every(w => w.dataset.state === 'error')",
        timeout=FAILED_WITHIN_S * 1000,
    )
    assert time.monotonic() - started < FAILED_WITHIN_S


def assert_failed_with_numbers_kept(page: Page) -> None:
    result = page.inner_text(WIDGET + " .widget-result")
    assert "16.06 GB" in result, "the build-time numbers are kept"
    status = page.inner_text(WIDGET + " .widget-status")
    assert "The live engine stopped" in status and "Try again" in status
    assert page.locator(WIDGET + " button.widget-retry").is_visible()


def open_failing(watched: Watched, site: Site, pattern: str, handler: object) -> float:
    watched.context.route(pattern, handler)  # type: ignore[arg-type]
    started = time.monotonic()
    watched.page.goto(site.page_url(PAGE))
    return started


@pytest.mark.allow_console_errors
def test_blocked_wasm_fails_clearly_and_try_again_goes_live(watched: Watched, root_site: Site) -> None:
    page = watched.page
    started = open_failing(watched, root_site, "**/pyodide/pyodide.asm.wasm", lambda r: r.abort())
    wait_failed(page, started)
    assert_failed_with_numbers_kept(page)
    watched.context.unroute("**/pyodide/pyodide.asm.wasm")
    page.click(WIDGET + " button.widget-retry")
    wait_live(page)
    assert page.locator(WIDGET + " button.widget-retry").count() == 0


@pytest.mark.allow_console_errors
def test_blocked_runtime_script_fails_clearly(watched: Watched, root_site: Site) -> None:
    started = open_failing(watched, root_site, "**/pyodide/pyodide.mjs", lambda r: r.abort())
    wait_failed(watched.page, started)
    assert_failed_with_numbers_kept(watched.page)


@pytest.mark.allow_console_errors
@pytest.mark.parametrize(
    "pattern",
    ["**/wheels/*.whl.gz", "**/pyodide/python_stdlib.zip.gz", CHUNK],
    ids=["wheel", "stdlib", "chunk"],
)
def test_a_runtime_archive_that_fails_to_unpack_fails_clearly(
    watched: Watched, root_site: Site, pattern: str
) -> None:
    # The engine wheel and the standard library ship as one gzip stream each, which the worker
    # decompresses: junk in their place (a host or proxy that mangled them) ends in the error
    # state like any other failure.
    def junk(route: Route) -> None:
        route.fulfill(status=200, body=b"not an archive at all", content_type="application/gzip")

    started = open_failing(watched, root_site, pattern, junk)
    wait_failed(watched.page, started)
    assert_failed_with_numbers_kept(watched.page)


@pytest.mark.allow_console_errors
def test_a_refused_engine_chunk_fails_clearly_and_try_again_goes_live(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    started = open_failing(watched, root_site, CHUNK, lambda r: r.abort())
    wait_failed(page, started)
    assert_failed_with_numbers_kept(page)
    status = page.inner_text(WIDGET + " .widget-status")
    assert "model_size.zip.gz was aborted" in status, status
    watched.context.unroute(CHUNK)
    page.click(WIDGET + " button.widget-retry")
    wait_live(page)


@pytest.mark.allow_console_errors
def test_an_engine_chunk_the_host_does_not_have_fails_clearly(
    watched: Watched, root_site: Site
) -> None:
    started = open_failing(watched, root_site, CHUNK, lambda r: r.fulfill(status=404, body="gone"))
    wait_failed(watched.page, started)
    assert_failed_with_numbers_kept(watched.page)
    status = watched.page.inner_text(WIDGET + " .widget-status")
    assert "engine chunk model_size: HTTP 404" in status, status


@pytest.mark.allow_console_errors
def test_a_download_that_never_answers_stalls_into_the_error_state(
    watched: Watched, root_site: Site
) -> None:
    held: list[Route] = []
    started = open_failing(watched, root_site, "**/pyodide/pyodide.asm.wasm", lambda r: held.append(r))
    wait_failed(watched.page, started)
    assert held, "the wasm request was made and never answered"
    assert "stopped making progress" in watched.page.inner_text(WIDGET + " .widget-status")
    assert_failed_with_numbers_kept(watched.page)
    # "Try again" drops the stalled worker, and the renders that waited on it go to a fresh one.
    watched.context.unroute("**/pyodide/pyodide.asm.wasm")
    watched.page.click(WIDGET + " button.widget-retry")
    wait_live(watched.page)
    assert watched.page.locator(WIDGET + " button.widget-retry").count() == 0


def test_a_worker_that_dies_mid_session_is_restarted_on_the_next_input(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGE))
    wait_live(page)
    page.evaluate("() => { window.__deadWorker = window.__lessonEngine.worker; window.__deadWorker.terminate(); }")
    # The first input after the death (choosing a custom size) restarts the worker.
    page.select_option(WIDGET + " select[name=model]", "custom")
    page.fill(WIDGET + " input[name=params]", "70e9")
    expected = json.loads(update("model_size", json.dumps(widget_inputs(page, WIDGET))))
    assert "70e9" in json.dumps(widget_inputs(page, WIDGET))
    page.wait_for_function(
        "() => window.__lessonEngine.worker && window.__lessonEngine.worker !== window.__deadWorker",
        timeout=FAILED_WITHIN_S * 1000,
    )
    wait_for_text(page, WIDGET, "140", timeout_ms=FAILED_WITHIN_S * 1000)
    assert "140" in expected["html"]
    assert page.get_attribute(WIDGET, "data-state") == "live"


# --- Contrast in every state (item 3) -------------------------------------------------------


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_widget_states_pass_axe(watched: Watched, root_site: Site, scheme: str) -> None:
    page = watched.page
    page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
    wasm = HeldRequests(watched.context, "**/pyodide/pyodide.asm.wasm")
    page.goto(root_site.page_url(PAGE))
    page.wait_for_function("() => document.querySelector('[data-widget]').dataset.state === 'loading'")
    assert run_axe(page) == [], "loading"
    wasm.wait_for_one(page)
    wasm.release()
    wait_live(page)
    assert run_axe(page) == [], "live"
    page.select_option(WIDGET + " select[name=model]", "custom")
    page.fill(WIDGET + " input[name=params]", "not a number")
    page.wait_for_function(
        "sel => document.querySelector(sel + ' .widget-error[data-error-for=params]').textContent.trim() !== ''", arg=WIDGET
    )
    assert run_axe(page) == [], "a field in error"


@pytest.mark.allow_console_errors
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_failed_state_passes_axe(watched: Watched, root_site: Site, scheme: str) -> None:
    watched.page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
    started = open_failing(watched, root_site, "**/pyodide/pyodide.mjs", lambda r: r.abort())
    wait_failed(watched.page, started)
    assert run_axe(watched.page) == []


# --- Visible keyboard focus (item 4) --------------------------------------------------------

FOCUS_STYLE = """el => { const s = getComputedStyle(el);
  return [s.outlineStyle, s.outlineWidth, s.outlineColor, s.boxShadow].join(' | '); }"""


@pytest.mark.parametrize(
    ("path", "selector"),
    [
        ("steps/roofline/", "[data-widget=roofline_chart] input[name=context]"),
        ("steps/where-ai-runs/", "[data-widget] input[name=context_tokens]"),
        ("steps/playground/", "[data-widget=playground] input[name=gpus]"),
    ],
)
def test_tabbing_to_a_control_shows_where_the_keyboard_is(
    watched: Watched, root_site: Site, path: str, selector: str
) -> None:
    page = watched.page
    page.goto(root_site.page_url(path))
    unfold(page)  # a look-only widget's fields are tabbed to once opened
    control = page.locator(selector).first
    before = control.evaluate(FOCUS_STYLE)
    control.focus()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    assert control.evaluate("el => el === document.activeElement && el.matches(':focus-visible')")
    after = control.evaluate(FOCUS_STYLE)
    assert after != before
    assert not after.startswith("none"), after


# --- Minor axe findings (item 5) ------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "rule"),
    [("steps/side-by-side/", "empty-table-header"), ("steps/playground/", "heading-order")],
)
def test_minor_axe_rules_pass(watched: Watched, root_site: Site, path: str, rule: str) -> None:
    page = watched.page
    page.goto(root_site.page_url(path))
    wait_live(page)
    page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        """async rule => (await axe.run(document, { runOnly: [rule] })).violations
             .map(v => v.nodes.map(n => n.target.join(' ')))""",
        rule,
    )
    assert found == []


# --- A page script that never loads ---------------------------------------------------------


@pytest.mark.allow_console_errors
@pytest.mark.parametrize("script", ["lesson.js", "engine-client.js", "runtime-config.js"])
def test_a_page_script_that_fails_to_load_is_told_within_30_s(
    watched: Watched, root_site: Site, script: str
) -> None:
    # Without the page's scripts nothing mounts the widgets; the inline watchdog says so.
    started = open_failing(watched, root_site, f"**/js/{script}", lambda r: r.abort())
    wait_failed(watched.page, started)
    result = watched.page.inner_text(WIDGET + " .widget-result")
    assert "16.06 GB" in result, "the build-time numbers are kept"
    status = watched.page.inner_text(WIDGET + " .widget-status")
    assert "The page's scripts did not load" in status and "Reload the page" in status


def test_the_script_watchdog_stays_quiet_when_the_page_goes_live(
    watched: Watched, root_site: Site
) -> None:
    watched.page.goto(root_site.page_url(PAGE))
    wait_live(watched.page)
    # Past the watchdog's last check (25 s from the start at the latest).
    watched.page.wait_for_timeout(26_000)
    assert watched.page.get_attribute(WIDGET, "data-state") == "live"
    assert "did not load" not in watched.page.inner_text(WIDGET + " .widget-status")


@pytest.mark.allow_console_errors
def test_a_runtime_download_cut_off_mid_way_is_called_that(
    watched: Watched, root_site: Site
) -> None:
    # The wasm's bytes stop a third of the way in: Pyodide itself would wait on forever; the
    # reader hears at once that the download was aborted.
    wasm = (root_site.directory / "pyodide" / "pyodide.asm.wasm").read_bytes()

    def cut_off(route: Route) -> None:
        route.fulfill(
            status=200,
            body=wasm[: len(wasm) // 3],
            headers={"content-type": "application/wasm", "content-length": str(len(wasm))},
        )

    started = open_failing(watched, root_site, "**/pyodide/pyodide.asm.wasm", cut_off)
    wait_failed(watched.page, started)
    assert time.monotonic() - started < 15, "told at once, not after the stall timer"
    status = watched.page.inner_text(WIDGET + " .widget-status")
    assert "pyodide.asm.wasm would not start" in status and "cut off" in status, status
    assert "stopped making progress" not in status
    assert_failed_with_numbers_kept(watched.page)
