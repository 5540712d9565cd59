"""The playground in a real browser: its address reproduces its exact state in a fresh
browser, and a hostile or malformed address shows the engine's message and runs nothing."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Browser, Dialog, Page
from support import (
    Site,
    Watched,
    open_watched,
    result,
    visible_text,
    wait_live,
    wait_matches_cpython,
    widget,
    widget_inputs,
)
from support import (
    status as status_of,
)

from engine.browser import update
from engine.widgets.playground import WIDGET

PLAYGROUND_PAGE = "steps/playground/"
NAME = "playground"
SELECTOR = f"[data-widget={NAME}]"


def address_state(url: str) -> dict[str, str]:
    query = parse_qs(urlsplit(url).query, keep_blank_values=True)
    return {k.removeprefix(NAME + "."): v[-1] for k, v in query.items() if k.startswith(NAME)}


STATES = {
    "serve": {
        "model": "llama-3.1-70b",
        "hardware": "h200",
        "gpus": "2",
        "format": "fp8",
        "context": "32768",
        "batch": "4",
        "output": "500",
        "price": "3.25",
    },
    "train": {
        "task": "train",
        "model": "custom",
        "params": "3e10",
        "gpus": "16",
        "sharding": "zero3",
        "tp": "2",
        "optimizer": "adamw",
        "convention": "mixed-18",
        "recompute": "full",
        "tokens": "6e11",
        "mfu": "0.35",
        "target_days": "20",
    },
}


def set_inputs(page: Page, values: dict[str, str]) -> None:
    """Set the fields by their names: the names the address carries, the thing under test."""
    for name, value in values.items():
        field = f"{SELECTOR} [name={name}]"
        if page.eval_on_selector(field, "f => f.tagName") == "SELECT":
            page.select_option(field, value)
        else:
            page.fill(field, value)


@pytest.mark.parametrize("task", sorted(STATES))
def test_the_address_reproduces_the_exact_state_in_a_fresh_browser(
    browser: Browser, watched: Watched, root_site: Site, task: str
) -> None:
    page = watched.page
    page.goto(root_site.page_url(PLAYGROUND_PAGE))
    wait_live(page)
    build_time = result(widget(page, NAME)).inner_html()
    set_inputs(page, STATES[task])
    shown = wait_matches_cpython(page, NAME, SELECTOR, timeout_ms=20_000).html
    assert shown != build_time
    inputs = widget_inputs(page, SELECTOR)
    assert {k: inputs[k] for k in STATES[task]} == STATES[task]
    # The address holds every visible input, as the page shows it.
    page.wait_for_function(
        "([n, v]) => new URLSearchParams(location.search).get(n) === v",
        arg=[f"{NAME}.{next(reversed(STATES[task]))}", next(reversed(STATES[task].values()))],
    )
    link = page.url
    assert address_state(link) == {name: inputs[name] for name in WIDGET.url_state}

    fresh = open_watched(browser)
    try:
        other = fresh.page
        other.goto(link)
        wait_live(other)
        assert widget_inputs(other, SELECTOR) == inputs
        assert result(widget(other, NAME)).inner_html() == shown
        status = status_of(widget(other, NAME))
        assert "Ignored" not in visible_text(status)
        assert fresh.console_errors == []
    finally:
        fresh.context.close()


HOSTILE = {
    # A model the select does not offer is named by the page itself (the engine never sees it).
    "unknown model": ("model=gpt-9", None),
    "negative GPUs": ("gpus=-4", {"gpus": "-4"}),
    "script in a parameter": (
        "context=%3Cscript%3Ealert(1)%3C%2Fscript%3E",
        {"context": "<script>alert(1)</script>"},
    ),
    "image with a handler": (
        "price=%3Cimg%20src%3Dx%20onerror%3Dalert(2)%3E",
        {"price": "<img src=x onerror=alert(2)>"},
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_address_shows_the_engines_message_and_runs_nothing(
    watched: Watched, root_site: Site, case: str
) -> None:
    query, sent = HOSTILE[case]
    page = watched.page
    dialogs: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.goto(root_site.page_url(PLAYGROUND_PAGE + f"?{NAME}.{query}"))
    wait_live(page)
    # The engine's own message for what the address carried (a select given an unknown value
    # sends an empty one), visible on the page.
    if sent is None:
        expected = 'the link names "gpt-9", which is not one of this page\'s choices'
    else:
        refused = json.loads(update(NAME, json.dumps(sent)))
        assert "error" in refused, refused
        expected = refused["error"]
    status = status_of(widget(page, NAME))
    assert status.is_visible()
    assert expected in visible_text(status)
    assert "Ignored a saved or linked value" in visible_text(status)
    # The page fell back to its own defaults, and its result is the engine's for them.
    assert widget_inputs(page, SELECTOR) == WIDGET.defaults()
    wait_matches_cpython(page, NAME, SELECTOR, timeout_ms=20_000)
    # Nothing ran: no dialog, no element made from the address, the address cleaned.
    page.wait_for_timeout(500)
    assert dialogs == []
    assert page.locator(SELECTOR + " script, " + SELECTOR + " img").count() == 0
    assert page.evaluate(
        "() => [...document.scripts].every(s => !s.textContent.includes('alert('))"
    )
    assert "script" not in page.url and "onerror" not in page.url
