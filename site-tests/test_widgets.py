"""Every widget: build-time result without JavaScript, goes live, follows input, matches CPython."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Browser, expect
from support import (
    HeldRequests,
    Site,
    Watched,
    open_watched,
    result_html_in_browser,
    wait_live,
    widget_inputs,
    widget_pages,
)

from engine.browser import update
from engine.render.options import ADDRESS_MAX_CHARS


def test_every_widget_page_renders_build_time_results_without_javascript(
    browser: Browser, root_site: Site
) -> None:
    found = widget_pages(root_site.directory)
    assert found, "no page has a widget"
    w = open_watched(browser, java_script_enabled=False)
    try:
        for path, names in found.items():
            w.page.goto(root_site.page_url(path))
            # A widget kept one click away (extra practice in a closed details) is read opened.
            w.page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
            results = w.page.locator("[data-widget] .widget-result")
            assert results.count() == len(names)
            for i in range(results.count()):
                text = results.nth(i).inner_text()
                assert "GB" in text or "FLOP" in text or "s" in text, f"{path}: empty widget {i}"
                assert "NaN" not in text and "Infinity" not in text
            states = w.page.eval_on_selector_all(
                "[data-widget]", "ws => ws.map(w => w.dataset.state)"
            )
            assert set(states) == {"static"}
    finally:
        w.context.close()


@pytest.mark.parametrize("path", ["steps/pile-of-numbers/", "steps/serve-the-model/"])
def test_widgets_go_live_and_match_cpython(watched: Watched, root_site: Site, path: str) -> None:
    page = watched.page
    page.goto(root_site.page_url(path))
    # The build-time result is on screen before the engine is live.
    assert page.locator("[data-widget] .widget-result").first.inner_text().strip()
    wait_live(page)
    for widget in page.locator("[data-widget]").all():
        selector = "#" + str(widget.get_attribute("id"))
        name = str(widget.get_attribute("data-widget"))
        expected = json.loads(update(name, json.dumps(widget_inputs(page, selector))))
        live = page.inner_html(selector + " .widget-result")
        assert live == result_html_in_browser(page, selector, expected["html"])


def test_changing_an_input_changes_the_output_as_the_engine_says(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url("steps/pile-of-numbers/"))
    wait_live(page)
    selector = "[data-widget=model_size]"
    before = page.inner_text(selector + " .widget-result")
    assert "16.06 GB" in before
    page.select_option(selector + " select[name=model]", "llama-3.1-70b")
    expect(page.locator(selector + " .widget-result")).not_to_contain_text(
        "16.06 GB", use_inner_text=True, timeout=30_000
    )
    after = page.inner_text(selector + " .widget-result")
    assert "141.11 GB" in after or "141.1 GB" in after
    assert "does not fit" in after
    expected = json.loads(update("model_size", json.dumps(widget_inputs(page, selector))))
    assert page.inner_html(selector + " .widget-result") == result_html_in_browser(
        page, selector, expected["html"]
    )


@pytest.mark.parametrize(
    "typed, message_part",
    [
        ("", "empty"),
        ("-5", "too small"),
        ("abc", "must be a number"),
        ("NaN", "NaN"),
        ("1e400", "too large"),
        ("<img src=x onerror=alert(1)>", "must be a number"),
    ],
)
def test_bad_input_shows_the_engine_message_inline(
    watched: Watched, root_site: Site, typed: str, message_part: str
) -> None:
    page = watched.page
    page.goto(root_site.page_url("steps/pile-of-numbers/"))
    wait_live(page)
    selector = "[data-widget=model_size]"
    page.select_option(selector + " select[name=model]", "custom")
    page.wait_for_function(
        "sel => document.querySelector(sel).dataset.state === 'live'", arg=selector
    )
    page.fill(selector + " input[name=params]", typed)
    error = page.locator(selector + " .widget-error[data-error-for=params]")
    error.wait_for(state="attached")
    page.wait_for_function(
        "sel => document.querySelector(sel + ' .widget-error[data-error-for=params]').textContent.length > 0",
        arg=selector,
    )
    assert message_part.lower() in error.inner_text().lower()
    assert page.get_attribute(selector + " input[name=params]", "aria-invalid") == "true"
    assert "NaN" not in page.inner_text(selector + " .widget-result")
    assert page.locator("img[src=x]").count() == 0


def test_while_the_runtime_loads_the_build_time_result_stays_with_its_size_stated(
    watched: Watched, root_site: Site
) -> None:
    config = (root_site.directory / "js" / "runtime-config.js").read_text()
    runtime = json.loads(config.split("RUNTIME = ", 1)[1].rstrip().rstrip(";"))
    shipped = sum(f.stat().st_size for f in (root_site.directory / "pyodide").iterdir())
    shipped += (root_site.directory / runtime["wheel"]).stat().st_size
    assert runtime["download_MB"] == round(shipped / 1e6)
    assert runtime["max_address_chars"] == ADDRESS_MAX_CHARS  # what docs/js/address.js keeps

    page = watched.page
    # The largest runtime file waits until the loading state has been read.
    wasm = HeldRequests(watched.context, "**/pyodide.asm.wasm")
    page.goto(root_site.page_url("steps/pile-of-numbers/"))
    widget = page.locator("[data-widget=model_size]")
    built = widget.locator(".widget-result").inner_html()
    page.wait_for_function(
        "() => document.querySelector('[data-widget=model_size]').dataset.state === 'loading'"
        " && document.querySelector('[data-widget=model_size] .widget-status')"
        ".textContent.includes('Downloading')"
    )
    status = widget.locator(".widget-status").inner_text()
    assert f"about {runtime['download_MB']} MB, once" in status
    assert widget.locator(".widget-result").inner_html() == built  # the numbers stay readable
    wasm.wait_for_one(page)
    wasm.release()
    wait_live(page)
