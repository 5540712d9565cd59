"""Hostile saved and linked values in the browser: a deeply nested saved dgx-1
state never reaches the worker, a runtime that answers with no JSON settles the render as an
error, the status line describes the latest render, one bad value in a link drops only that
value, and crafted progress or palette values are harmless."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, expect
from support import Site, Watched, settle, wait_live, widget_inputs

from engine.browser import update

TRAIN_IT_ANYWAY = "steps/train-it-anyway/"
SERVE_THE_MODEL = "steps/serve-the-model/"
PLAYGROUND = "steps/playground/"
SELECTOR = "[data-widget=playground]"
STORE_KEY = "lesson:session:dgx-1"
LIVE = "Live: computed in your browser."


def status(page: Page, selector: str) -> str:
    return page.inner_text(selector + " .widget-status")


def test_a_deeply_nested_saved_state_is_ignored_with_a_note_on_every_dgx_widget(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(TRAIN_IT_ANYWAY))
    for path in (TRAIN_IT_ANYWAY, SERVE_THE_MODEL):
        # 20,000 brackets overflow the WebAssembly stack if parsed (about 5,000 are fatal).
        page.evaluate(f"sessionStorage.setItem({STORE_KEY!r}, '['.repeat(20000))")
        page.goto(root_site.page_url(path))
        wait_live(page)
        settle(page)
        widgets = page.locator("[data-store]")
        assert widgets.count() >= 1
        for i in range(widgets.count()):
            text = widgets.nth(i).locator(".widget-status").inner_text()
            assert "Ignored a saved or linked value" in text, (path, text)
            # Refused in the browser, before the worker: the text never reaches Python.
            assert "the saved state: it is nested too deeply" in text, (path, text)
        kept = page.evaluate(f"sessionStorage.getItem({STORE_KEY!r})")
        assert json.loads(kept)["clock_seconds"] == 0
        assert "0 of 8 GPUs hold memory" in page.inner_text("[data-widget=dgx_panel] .widget-result")


def test_a_render_answered_with_no_json_ends_in_the_error_state(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(PLAYGROUND))
    wait_live(page)
    # Stand in for a runtime that failed fatally: its worker answers a render with no JSON.
    result = page.evaluate(
        """async sel => {
             const worker = window.__lessonEarlyEngine.worker;
             worker.postMessage = (m) => queueMicrotask(() =>
               worker.dispatchEvent(new MessageEvent("message", { data: { type: "result", id: m.id } })));
             const root = document.querySelector(sel);
             const settled = await Promise.race([
               root.refresh().then(() => "settled"),
               new Promise(r => setTimeout(() => r("unsettled"), 3000)),
             ]);
             return [settled, root.dataset.state, root.querySelector(".widget-status").textContent];
           }""",
        SELECTOR,
    )
    assert result[0] == "settled"
    assert result[1] == "error"
    assert "The live engine stopped: the Python runtime stopped" in result[2]


def test_one_bad_value_in_a_link_drops_only_that_value_and_the_note_goes_with_the_next_render(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    long_context = "9" * 2001
    page.goto(
        root_site.page_url(
            PLAYGROUND + f"?playground.gpus=4&playground.model=evil&playground.context={long_context}"
        )
    )
    wait_live(page)
    inputs = widget_inputs(page, SELECTOR)
    assert inputs["gpus"] == "4"
    text = status(page, SELECTOR)
    assert "Ignored a saved or linked value" in text
    # A model the select does not offer is named, and the page's own is kept.
    assert ('model: the link names "evil", which is not one of this page\'s choices; the '
            "page's own is kept.") in text
    assert "context: it is too long to be real (2,001 characters" in text
    # The address keeps the good value and drops the bad ones.
    page.wait_for_function("() => location.search.includes('playground.gpus=4')", timeout=15_000)
    query = parse_qs(urlsplit(page.url).query)
    assert query["playground.gpus"] == ["4"]
    assert "evil" not in page.url and long_context not in page.url

    # A later render that succeeds describes itself: the note is gone.
    page.fill(SELECTOR + " [name=gpus]", "2")
    page.wait_for_function(
        "([sel, live]) => document.querySelector(sel + ' .widget-status').textContent === live",
        arg=[SELECTOR, LIVE],
        timeout=15_000,
    )
    # So is an engine's refusal once the inputs are good again.
    page.fill(SELECTOR + " [name=gpus]", "-3")
    page.wait_for_function(
        "sel => document.querySelector(sel + ' [aria-invalid]') !== null", arg=SELECTOR, timeout=15_000
    )
    page.fill(SELECTOR + " [name=gpus]", "8")
    page.wait_for_function(
        """([sel, live]) => document.querySelector(sel + ' .widget-status').textContent === live
             && document.querySelector(sel + ' [aria-invalid]') === null
             && !document.querySelector(sel + ' .widget-result').classList.contains('is-stale')""",
        arg=[SELECTOR, LIVE],
        timeout=15_000,
    )


def test_repeated_steps_in_stored_progress_count_once(watched: Watched, root_site: Site) -> None:
    page = watched.page
    crafted = json.dumps({"version": 1, "steps": [1] * 24 + [2], "drills": [3, 3, 3]})
    page.add_init_script(
        f"if (!localStorage.getItem('seeded')) {{ localStorage.setItem('seeded', '1');"
        f" localStorage.setItem('lesson:progress', {crafted!r}); }}"
    )
    page.goto(root_site.page_url(""))
    total = len(json.loads(page.evaluate("() => document.getElementById('lesson-steps').textContent")))
    text = page.inner_text(".lesson-progress__text")
    assert f"Your progress: 2 of {total} steps visited, 1 drill completed." == text


def test_a_corrupt_stored_palette_neither_throws_nor_stays(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.add_init_script(
        "if (!localStorage.getItem('seeded')) { localStorage.setItem('seeded', '1');"
        " localStorage.setItem(new URL('.', location).pathname + '.__palette', '{not json'); }"
    )
    page.goto(root_site.page_url(""))
    page.wait_for_selector(".md-header")
    # The theme's own palette script would throw here (the watched fixture fails on it); the
    # corrupt value is gone (the theme may write its default in its place).
    kept = page.evaluate("() => localStorage.getItem(new URL('.', location).pathname + '.__palette')")
    assert kept is None or isinstance(json.loads(kept), dict)


def test_an_empty_config_in_a_link_is_dropped_alone_and_said_once(
    watched: Watched, root_site: Site
) -> None:
    # The model "config" needs the config the link left empty: both go back to the page's
    # values, and the link's GPUs and hardware stay.
    page = watched.page
    page.goto(
        root_site.page_url(
            PLAYGROUND
            + "?playground.model=config&playground.config=&playground.gpus=4&playground.hardware=h200"
        )
    )
    wait_live(page)
    inputs = widget_inputs(page, SELECTOR)
    assert (inputs["gpus"], inputs["hardware"]) == ("4", "h200")
    defaults = json.loads(page.get_attribute(SELECTOR, "data-inputs") or "{}")
    assert inputs["model"] == defaults["model"]
    refused = json.loads(update("playground", json.dumps({**inputs, "model": "config", "config": ""})))
    assert refused["field"] == "config"
    text = status(page, SELECTOR)
    assert text.count(refused["error"]) == 1, text
    assert "model: not used without a valid config." in text


@pytest.mark.parametrize(
    "stored",
    ["[]", "5", '"dark"', '{"index": "x"}', '{"index": 0, "color": []}', '{"index": 0, "color": {"scheme": 3}}'],
)
def test_a_stored_palette_of_another_shape_is_dropped_and_the_toggle_stays(
    watched: Watched, root_site: Site, stored: str
) -> None:
    page = watched.page
    page.add_init_script(
        "if (!localStorage.getItem('seeded')) { localStorage.setItem('seeded', '1');"
        f" localStorage.setItem(new URL('.', location).pathname + '.__palette', {stored!r}); }}"
    )
    page.goto(root_site.page_url(""))
    # The theme's scripts would throw (the watched fixture fails on it) and hide both toggles:
    # one shows, and choosing the other palette stores the theme's own shape.
    page.wait_for_load_state("load")
    expect(page.locator("label[for^='__palette_']:not([hidden])")).to_have_count(1)
    page.locator("label[for^='__palette_']:not([hidden])").click()
    kept = page.evaluate("() => localStorage.getItem(new URL('.', location).pathname + '.__palette')")
    assert kept is not None and isinstance(json.loads(kept)["index"], int)


def test_a_good_stored_palette_is_kept(watched: Watched, root_site: Site) -> None:
    page = watched.page
    dark = '{"index": 1, "color": {"media": "(prefers-color-scheme: dark)", "scheme": "slate", "primary": "indigo", "accent": "teal"}}'
    page.add_init_script(
        "if (!localStorage.getItem('seeded')) { localStorage.setItem('seeded', '1');"
        f" localStorage.setItem(new URL('.', location).pathname + '.__palette', {dark!r}); }}"
    )
    page.goto(root_site.page_url(""))
    expect(page.locator("body")).to_have_attribute("data-md-color-scheme", "slate")
