"""The "will it fit?" drill in a real browser: a linked scenario number loads that scenario;
the engine's right answer is accepted and scored, a typical wrong answer gets the matching
feedback, and three correct answers complete the drill."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Browser, Locator, Page, expect
from support import (
    Site,
    Watched,
    hidden_in_details,
    open_watched,
    result,
    result_html_in_browser,
    run_axe,
    visible_text,
    wait_live,
    wait_matches_cpython,
    widget,
    widget_inputs,
)

from engine.browser import update
from engine.lesson.drills import fit as drill_fit
from engine.lesson.drills import training_memory as training_drill
from engine.widgets.drill_will_it_fit import WIDGET

DRILL_PAGE = "steps/drill-will-it-fit/"
DRILL_NAME = "drill_will_it_fit"
DRILL = f"[data-widget={DRILL_NAME}]"
STORE_KEY = "lesson:" + WIDGET.store  # where lesson.js keeps the widget's store


def shown_question(page: Page) -> drill_fit.FitQuestion:
    seed = page.get_attribute(DRILL + " .drill", "data-seed")
    assert seed is not None
    question = drill_fit.fit_question(int(seed))
    assert question.lead in visible_text(result(drill(page)))
    return question


def drill(page: Page) -> Locator:
    return widget(page, DRILL_NAME)


def feedback(page: Page) -> Locator:
    """The verdict on the last answer, with what it says in data attributes (the thing
    under test: correct or not, the mistake matched)."""
    return drill(page).locator(".drill-feedback")


def score_text(page: Page) -> str:
    """The score, which waits in the drill's closed details until the reader opens it."""
    return hidden_in_details(result(drill(page)))


def answer(page: Page, fits: bool, text: str) -> None:
    """Say whether it fits, type a number (or nothing), press Check and wait for the
    feedback; the live result must be what CPython renders for the same inputs and button."""
    drill(page).get_by_label("Does it fit?", exact=True).select_option("yes" if fits else "no")
    drill(page).get_by_label("Total memory per GPU (optional)", exact=True).fill(text)
    expect(feedback(page)).to_have_count(0)
    inputs = widget_inputs(page, DRILL)
    drill(page).get_by_role("button", name="Check", exact=True).click()
    expect(feedback(page)).to_have_count(1)
    expected = json.loads(update(DRILL_NAME, json.dumps({**inputs, "action": "check"})))
    assert page.inner_html(DRILL + " .widget-result") == result_html_in_browser(
        page, DRILL, expected["html"]
    )


def test_a_linked_scenario_is_checked_and_the_slip_named(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(DRILL_PAGE + "?drill_will_it_fit.seed=7"))
    wait_live(page)
    page.wait_for_selector(DRILL + ' .drill[data-seed="7"]')
    question = shown_question(page)
    assert question.seed == 7
    wait_matches_cpython(page, DRILL_NAME, DRILL)

    # The engine's answer, computed in CPython: accepted and scored.
    answer(page, question.fits, f"{question.answer_GB:.2f}")
    assert feedback(page).get_attribute("data-correct") == "true"
    assert "Correct" in visible_text(feedback(page))
    assert "Score: 1 correct of 1 answered" in score_text(page)
    kept = training_drill.Score.from_text(page.evaluate("k => localStorage.getItem(k)", STORE_KEY))
    assert (kept.correct, kept.scored) == (1, 7)

    # A typical wrong number: the matching slip is named.
    mistake = "forgot_kv" if question.serving is not None else "forgot_optimizer"
    _, wrong_bytes, words = next(c for c in question.typical_wrong_answers() if c[0] == mistake)
    answer(page, question.fits, f"{wrong_bytes / 1e9:.2f}")
    page.wait_for_selector(DRILL + f' .drill-feedback[data-mistake="{mistake}"]')
    text = visible_text(feedback(page))
    assert words in text
    assert drill_fit.MISTAKES[mistake] in text

    # GB and GiB mixed up.
    _, gib_bytes, gib_words = next(c for c in question.typical_wrong_answers() if c[0] == "gib")
    answer(page, question.fits, f"{gib_bytes / 1e9:.2f}")
    page.wait_for_selector(DRILL + ' .drill-feedback[data-mistake="gib"]')
    assert gib_words in visible_text(feedback(page))

    # The wrong verdict alone: matched with a slip that leads to it.
    slip = question.slip_for_verdict(not question.fits)
    assert slip is not None
    answer(page, not question.fits, "")
    page.wait_for_selector(DRILL + f' .drill-feedback[data-mistake="{slip[0]}"]')
    assert feedback(page).get_attribute("data-correct") == "false"
    assert "Score: 1 correct of 1 answered" in score_text(page)

    # New scenario: the next number, in the address too.
    drill(page).get_by_role("button", name="New scenario", exact=True).click()
    page.wait_for_selector(DRILL + ' .drill[data-seed="8"]')
    assert "drill_will_it_fit.seed=8" in page.url
    assert shown_question(page).seed == 8


def test_the_third_correct_answer_completes_the_drill(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(DRILL_PAGE))
    almost = training_drill.Score(answered=2, correct=2, streak=2, scored=None).to_text()
    page.evaluate("([k, v]) => localStorage.setItem(k, v)", [STORE_KEY, almost])
    page.reload()
    wait_live(page)
    expect(drill(page).locator(".drill-score")).to_contain_text("2 correct")
    question = shown_question(page)
    answer(page, question.fits, "")  # the verdict alone is enough
    # The mark sits with the score in the closed details: in the page, not shown.
    page.wait_for_selector(DRILL + f' [data-drill-complete="{DRILL_NAME}"]', state="attached")
    assert "Score: 3 correct of 3 answered" in score_text(page)
    # Kept by the page's address.
    page.wait_for_function(
        "a => JSON.parse(localStorage.getItem('lesson:progress') || '{}').drills?.includes(a)",
        arg=DRILL_PAGE,
    )


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_drill_passes_axe_in_both_colour_schemes(
    browser: Browser, root_site: Site, scheme: str
) -> None:
    w = open_watched(browser, color_scheme=scheme)
    try:
        w.page.goto(root_site.page_url(DRILL_PAGE + "?drill_will_it_fit.seed=7"))
        wait_live(w.page)
        # With the feedback and its chart on screen.
        answer(w.page, True, "1")
        # Leave the button Material's hover colours gave it (not this page's styles).
        w.page.mouse.move(0, 0)
        w.page.evaluate("() => document.activeElement.blur()")
        assert run_axe(w.page) == []
        assert w.console_errors == []
    finally:
        w.context.close()
