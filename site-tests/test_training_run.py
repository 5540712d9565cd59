"""A training run you can watch: the run plays in accelerated time, pauses, finishes, and still advances
(once a second) for readers who ask for reduced motion."""

from __future__ import annotations

import re
import time

from playwright.sync_api import Browser, Locator, Page
from support import (
    Site,
    Watched,
    is_open,
    open_details,
    open_watched,
    result,
    visible_text,
    wait_live,
    wait_matches_cpython,
    widget,
)

PAGE = "steps/training-run/"
SELECTOR = "[data-widget=training_run]"
SCALE = {"": 1.0, "million": 1e6, "billion": 1e9, "trillion": 1e12}

# The figures are a description list; a term has no accessible name to find its value by, so
# the list is read in the page.
FIGURE_JS = """([sel, term]) => {
  const terms = [...document.querySelectorAll(sel + ' .widget-result dt')];
  const dt = terms.find(t => t.textContent === term);
  return dt ? dt.nextElementSibling.textContent : null;
}"""


def figure(page: Page, term: str) -> str:
    return str(page.evaluate(FIGURE_JS, [SELECTOR, term]))


def tokens_done(page: Page) -> float:
    """The 'Tokens processed' figure as a number ('39.7 billion of 1.00 trillion')."""
    text = figure(page, "Tokens processed")
    match = re.match(r"([\d.,]+)\s*(million|billion|trillion)?\s+of", text)
    assert match, text
    return float(match.group(1).replace(",", "")) * SCALE[match.group(2) or ""]


def wait_tokens_above(page: Page, value: float, timeout: float = 15_000) -> None:
    page.wait_for_function(
        """([sel, v, js]) => {
          const dt = [...document.querySelectorAll(sel + ' .widget-result dt')]
            .find(t => t.textContent === 'Tokens processed');
          if (!dt) return false;
          const m = dt.nextElementSibling.textContent.match(/^([\\d.,]+)\\s*(million|billion|trillion)?\\s+of/);
          if (!m) return false;
          const scale = {million: 1e6, billion: 1e9, trillion: 1e12}[m[2]] || 1;
          return parseFloat(m[1].replace(/,/g, '')) * scale > v;
        }""",
        arg=[SELECTOR, value, ""],
        timeout=timeout,
    )


def press_start(page: Page) -> None:
    """Press Start until the clock runs. The widget is marked live just before its first live
    render, and the clock's buttons are wired after that render, so an early press is lost."""
    for _ in range(100):
        button(page, "Start").click()
        if page.get_attribute(SELECTOR, "data-clock-state") == "playing":
            return
        if page.locator(SELECTOR + " .widget-result [data-clock-done]").count():
            return  # a run so short it finished before we looked
        time.sleep(0.1)
    raise AssertionError("the clock never started")


def button(page: Page, name: str) -> Locator:
    return widget(page, "training_run").get_by_role("button", name=name, exact=True)


def open_run(watched: Watched, root_site: Site) -> Page:
    """The page open, its training run live and showing what CPython renders."""
    page = watched.page
    page.goto(root_site.page_url(PAGE))
    wait_live(page)
    wait_matches_cpython(page, "training_run", SELECTOR)
    return page


def test_start_advances_the_run_pause_stops_it_and_a_short_run_finishes(
    watched: Watched, root_site: Site
) -> None:
    page = open_run(watched, root_site)
    assert tokens_done(page) == 0.0
    assert page.locator(SELECTOR + " .widget-result [data-clock-done]").count() == 0

    press_start(page)
    wait_tokens_above(page, 0.0)
    first = tokens_done(page)
    wait_tokens_above(page, first)
    assert tokens_done(page) > first

    button(page, "Pause").click()
    assert page.get_attribute(SELECTOR, "data-clock-state") == "paused"
    time.sleep(0.3)  # a frame already on its way may still land
    paused = tokens_done(page)
    time.sleep(1.5)
    assert tokens_done(page) == paused
    # paused: the screen is the engine's render for these inputs
    wait_matches_cpython(page, "training_run", SELECTOR)

    # A small budget at the fastest speed finishes within a second or two.
    run = widget(page, "training_run")
    run.get_by_label("Token budget", exact=True).fill("1e9")
    run.get_by_label("Speed", exact=True).select_option(str(30 * 86400))
    wait_matches_cpython(page, "training_run", SELECTOR)
    button(page, "Start").click()
    page.wait_for_selector(SELECTOR + " .widget-result [data-clock-done]", timeout=30_000)
    page.wait_for_function(
        "sel => document.querySelector(sel).dataset.clockState === 'paused'", arg=SELECTOR
    )
    assert "Finished" in visible_text(result(run))
    assert figure(page, "Time left at 40 % MFU") == "0 s"  # the clock's basis, said in view
    assert tokens_done(page) == 1e9
    wait_matches_cpython(page, "training_run", SELECTOR)

    # Restart goes back to the beginning.
    button(page, "Restart").click()
    page.wait_for_function(
        "sel => !document.querySelector(sel + ' .widget-result [data-clock-done]')", arg=SELECTOR
    )
    assert tokens_done(page) == 0.0


def test_with_reduced_motion_the_run_still_advances(browser: Browser, root_site: Site) -> None:
    w = open_watched(browser, reduced_motion="reduce")
    try:
        page = w.page
        page.goto(root_site.page_url(PAGE))
        wait_live(page)
        assert page.evaluate("matchMedia('(prefers-reduced-motion: reduce)').matches")
        assert figure(page, "Elapsed") == "0 s"
        press_start(page)
        # Once a second: the first tick only starts the count, the second moves the run on.
        page.wait_for_function(
            """sel => {
              const dt = [...document.querySelectorAll(sel + ' .widget-result dt')]
                .find(t => t.textContent === 'Elapsed');
              return dt && dt.nextElementSibling.textContent !== '0 s';
            }""",
            arg=SELECTOR,
            timeout=3_000,
        )
        assert w.console_errors == []
    finally:
        w.context.close()


def test_a_block_the_reader_opened_stays_open_while_the_run_plays(
    watched: Watched, root_site: Site
) -> None:
    page = open_run(watched, root_site)
    open_details(result(widget(page, "training_run")).locator("details").first)
    press_start(page)
    wait_tokens_above(page, 0.0)
    first = tokens_done(page)
    wait_tokens_above(page, first)  # at least one render replaced the output meanwhile
    assert is_open(result(widget(page, "training_run")).locator("details").first)
    button(page, "Pause").click()
