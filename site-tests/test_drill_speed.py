"""The second drill on the "will it fit?" page, on speed, in a real browser: the build-time question is what the
engine renders and the live one the same; a linked question number loads that question; the
engine's answer is accepted and scored; a typical wrong answer gets its slip named; hostile
input gets an inline message, never markup or NaN.
"""

from __future__ import annotations

import json

from playwright.sync_api import Page
from support import (
    Site,
    Watched,
    hidden_in_details,
    result,
    result_html_in_browser,
    wait_live,
    wait_matches_cpython,
    widget_inputs,
)

from engine.browser import update
from engine.lesson.drills import speed as drill_speed
from engine.lesson.drills.core import Score

PAGE = "steps/drill-will-it-fit/"
NAME = "drill_speed"
DRILL = f"[data-widget={NAME}]"
STORE_KEY = "lesson:local:drill-speed"


def shown_question(page: Page) -> drill_speed.SpeedQuestion:
    seed = page.get_attribute(DRILL + " .drill", "data-seed")
    assert seed is not None
    question = drill_speed.speed_question(int(seed))
    assert question.lead in page.inner_text(DRILL + " .widget-result")
    return question


def open_practice(page: Page) -> None:
    """The drill is extra practice on its step, in a closed details: open it, as a reader would."""
    page.click("details.more-practice > summary")


def answer(page: Page, limit: str, text: str) -> None:
    """Choose the limit, type a number, press Check and wait for the feedback; the live
    result must be what CPython renders for the same inputs and button."""
    page.select_option(DRILL + " select[name=limit]", limit)
    page.fill(DRILL + " input[name=answer]", text)
    page.wait_for_selector(DRILL + " .drill-feedback", state="detached")
    inputs = widget_inputs(page, DRILL)
    page.click(DRILL + " button[data-action=check]")
    page.wait_for_selector(DRILL + " .drill-feedback")
    expected = json.loads(update(NAME, json.dumps({**inputs, "action": "check"})))
    assert page.inner_html(DRILL + " .widget-result") == result_html_in_browser(
        page, DRILL, expected["html"]
    )


def test_the_build_time_question_is_the_engines_and_the_live_one_the_same(
    watched: Watched, root_site: Site
) -> None:
    built = (root_site.directory / PAGE / "index.html").read_text(encoding="utf-8")
    defaults = json.loads(update(NAME, "{}"))["html"]
    assert defaults in built
    page = watched.page
    page.goto(root_site.page_url(PAGE))
    wait_live(page)
    open_practice(page)
    live = wait_matches_cpython(page, NAME, DRILL)
    assert live.html == result_html_in_browser(page, DRILL, defaults)
    assert "Drill: will it fit, and how fast?" in page.inner_text("h1")


def test_a_linked_question_is_checked_and_the_slip_named(
    watched: Watched, root_site: Site
) -> None:
    question = next(
        q for q in map(drill_speed.speed_question, range(1, 500))
        if q.kind == "first_token" and "decode_speed" in {m for m, _, _ in q.typical_wrong_answers()}
    )
    seed = question.seed
    page = watched.page
    page.goto(root_site.page_url(PAGE + f"?{NAME}.seed={seed}"))
    wait_live(page)
    open_practice(page)
    page.wait_for_selector(DRILL + f' .drill[data-seed="{seed}"]')
    assert shown_question(page).seed == seed
    wait_matches_cpython(page, NAME, DRILL)

    # The engine's answer, computed in CPython: accepted and scored.
    answer(page, question.limit, f"{question.answer:.3f} ms")
    feedback = page.locator(DRILL + " .drill-feedback")
    assert feedback.get_attribute("data-correct") == "true"
    assert "Correct" in feedback.inner_text()
    assert "is the bound, the best case" in feedback.inner_text()
    assert "Score: 1 correct of 1 answered" in hidden_in_details(result(page.locator(DRILL)))
    kept = Score.from_text(page.evaluate("k => localStorage.getItem(k)", STORE_KEY))
    assert (kept.correct, kept.scored) == (1, seed)

    # The prompt counted at decode speed: the slip is named, the score unchanged.
    _, wrong, words = next(c for c in question.typical_wrong_answers() if c[0] == "decode_speed")
    answer(page, question.limit, f"{wrong:.3f}")
    page.wait_for_selector(DRILL + ' .drill-feedback[data-mistake="decode_speed"]')
    text = page.inner_text(DRILL + " .drill-feedback")
    assert words in text and drill_speed.MISTAKES["decode_speed"] in text
    assert "Score: 1 correct of 1 answered" in hidden_in_details(result(page.locator(DRILL)))

    # The right number with the wrong limit.
    other = "memory" if question.limit == "compute" else "compute"
    answer(page, other, f"{question.answer:.3f}")
    page.wait_for_selector(DRILL + ' .drill-feedback[data-mistake="wrong_limit"]')

    # New question: the next number, in the address too, with the answer and limit cleared.
    page.click(DRILL + " button[data-action=new]")
    page.wait_for_selector(DRILL + f' .drill[data-seed="{seed + 1}"]')
    assert f"{NAME}.seed={seed + 1}" in page.url
    assert page.input_value(DRILL + " input[name=answer]") == ""
    assert page.input_value(DRILL + " select[name=limit]") == ""


def test_hostile_input_gets_an_inline_message(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGE + f"?{NAME}.seed=%3Cimg%20src%3Dx%3E"))
    wait_live(page)
    open_practice(page)
    page.wait_for_function(
        "sel => document.querySelector(sel + ' .widget-status').textContent.includes('Ignored')",
        arg=DRILL,
    )
    assert "Question number" in page.inner_text(DRILL + " .widget-status")
    assert shown_question(page).seed == 1  # back to the page's own question

    error = DRILL + " .widget-error[data-error-for=answer]"
    for typed, words in (("<img src=x onerror=alert(1)>", "must be a number of"),
                         ("NaN", "must be a number of"), ("-4", "more than 0")):
        page.select_option(DRILL + " select[name=limit]", "memory")
        page.fill(DRILL + " input[name=answer]", typed)
        page.click(DRILL + " button[data-action=check]")
        page.wait_for_function(
            "([sel, w]) => document.querySelector(sel).textContent.includes(w)", arg=[error, words]
        )
        assert page.get_attribute(DRILL + " input[name=answer]", "aria-invalid") == "true"
        assert page.locator("img[src=x]").count() == 0
        assert "NaN" not in page.inner_text(DRILL + " .widget-result")

    page.select_option(DRILL + " select[name=limit]", "")
    page.fill(DRILL + " input[name=answer]", "4.8")
    page.click(DRILL + " button[data-action=check]")
    page.wait_for_function(
        "sel => document.querySelector(sel).textContent.includes('choose compute or memory')",
        arg=DRILL + " .widget-error[data-error-for=limit]",
    )
    assert "Score: 0 correct of 0 answered" in hidden_in_details(result(page.locator(DRILL)))
