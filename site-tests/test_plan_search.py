"""The playground's "Find the cheapest plan" in a real browser: typing runs no search; the
button does, says it is working while it runs, and shows the command line's winner for the
same inputs (the search in Pyodide exactly as CPython renders it); bad input is refused
beside the field it names."""

from __future__ import annotations

import contextlib
import io
import json
import shlex

from playwright.sync_api import Page, expect
from support import (
    Site,
    Watched,
    error_at,
    result,
    visible_text,
    wait_for_error,
    wait_live,
    wait_shows,
    widget,
    widget_inputs,
)

from engine.browser import update
from engine.cli import main
from engine.widgets.plan_search import WIDGET

PLAYGROUND_PAGE = "steps/playground/"
NAME = "plan_search"
SELECTOR = f"[data-widget={NAME}]"
SEARCHED = f"{SELECTOR} .widget-result [data-searched]"


def opened(page: Page) -> None:
    """The playground page, live, its closed "Find the cheapest plan" box opened."""
    wait_live(page)
    page.locator("details.plan-search-box > summary").click()
    expect(page.locator(SELECTOR)).to_be_visible()


def cli_winner(line: str) -> str:
    """The set-up the command line's search finds for ``line`` (its --json)."""
    words = shlex.split(line)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*words[3:], "--json"]) == 0
    best = json.loads(out.getvalue())["best"]
    assert best is not None
    return str(best["setup"]["setup"])


def test_press_search_and_see_the_command_lines_winner(watched: Watched,
                                                       root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url(PLAYGROUND_PAGE))
    opened(page)
    frame = widget(page, NAME)
    expect(result(frame).locator(".search-ready")).to_be_visible()
    # Typing changes the command, never runs the search.
    page.fill(f"{SELECTOR} [name=concurrency]", "8")
    page.fill(f"{SELECTOR} [name=tpot_p90]", "0.03")
    expect(frame.locator(".widget-command-text")).to_contain_text("--concurrency 8")
    assert page.locator(SEARCHED).count() == 0
    inputs = widget_inputs(page, SELECTOR)
    expected = json.loads(update(NAME, json.dumps({**inputs, "action": "search"})))
    frame.locator("[data-action=search]").click()
    page.wait_for_selector(SEARCHED, timeout=60_000)
    wait_shows(page, SELECTOR, expected["html"], timeout_ms=10_000)
    line = frame.locator(".widget-command-text").text_content() or ""
    assert line.startswith("python -m engine search --model llama-3.1-8b --task serve")
    winner = cli_winner(line)
    assert f"that meets the target: {winner}." in visible_text(result(frame))
    # The frontier drawn, the plan found ringed.
    assert frame.locator("svg.search-frontier .search-best").count() == 1


def test_the_busy_status_while_it_searches(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url(PLAYGROUND_PAGE))
    opened(page)
    frame = widget(page, NAME)
    page.select_option(f"{SELECTOR} [name=task]", "train")
    frame.locator("[data-action=search]").click()
    # A training search takes long enough in Pyodide to be seen at work, then ends live.
    page.wait_for_function(
        """sel => { const w = document.querySelector(sel);
                    return w.getAttribute('aria-busy') === 'true'
                      && w.querySelector('.widget-status').textContent === 'Working…'; }""",
        arg=SELECTOR, timeout=5_000)
    page.wait_for_selector(SEARCHED, timeout=60_000)
    expect(frame).not_to_have_attribute("aria-busy", "true")
    expect(frame.locator(".widget-status")).to_have_text("Live: computed in your browser.")


def test_bad_input_is_refused_by_name(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url(PLAYGROUND_PAGE))
    opened(page)
    for name, text, said in (("ttft_p90", "0", "TTFT target at p90"),
                             ("prompt_tokens", "lots", "Prompt length"),
                             ("tpot_p90", "1e9", "TPOT target at p90")):
        field = page.locator(f"{SELECTOR} [name={name}]")
        field.fill(text)
        assert said in wait_for_error(field)
        field.fill(WIDGET.defaults()[name])
        expect(error_at(field)).to_be_empty()
