"""The training-memory drill in a real browser. A linked question number reproduces
the question, the engine's right answer is accepted and scored, a typical slip is named, the
score survives a reload (localStorage), and a corrupted kept score is ignored with a message."""

from __future__ import annotations

import json

from playwright.sync_api import Locator, Page, expect
from support import (
    Site,
    Watched,
    hidden_in_details,
    is_open,
    open_details,
    result,
    result_html_in_browser,
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
from engine.lesson.drills import training_memory as training_drill
from engine.widgets.drill_training_memory import WIDGET

PAGE = "steps/drill-training-memory/"
NAME = "drill_training_memory"
SELECTOR = f"[data-widget={NAME}]"
STORE_KEY = "lesson:" + WIDGET.store  # where lesson.js keeps the widget's store


def shown_question(page: Page) -> training_drill.TrainingMemoryQuestion:
    """The question on screen, rebuilt in CPython from the number the page shows."""
    seed = page.get_attribute(SELECTOR + " .drill", "data-seed")
    assert seed is not None
    question = training_drill.training_memory_question(int(seed))
    assert question.lead in visible_text(result(drill(page)))
    return question


def drill(page: Page) -> Locator:
    return widget(page, NAME)


def feedback(page: Page) -> Locator:
    """The verdict on the last answer, with what it says in data attributes (the thing
    under test: correct or not, the mistake matched)."""
    return drill(page).locator(".drill-feedback")


def answer(page: Page, text: str, fits: bool) -> None:
    """Type an answer, say whether it fits, press Check, and wait for the feedback; the live
    result must be what CPython renders for the same inputs and the same button."""
    drill(page).get_by_label("Your answer", exact=True).fill(text)
    drill(page).get_by_label("Does it fit?", exact=True).select_option("yes" if fits else "no")
    # Typing re-renders without checking, which clears any earlier feedback.
    expect(feedback(page)).to_have_count(0)
    inputs = widget_inputs(page, SELECTOR)
    drill(page).get_by_role("button", name="Check", exact=True).click()
    expect(feedback(page)).to_have_count(1)
    expected = json.loads(update(NAME, json.dumps({**inputs, "action": "check"})))
    # The reader may have opened the score's details; the engine's markup is the same.
    shown = page.inner_html(SELECTOR + " .widget-result").replace(' open=""', "")
    assert shown == result_html_in_browser(page, SELECTOR, expected["html"])


def score_text(page: Page) -> str:
    """The score, which waits in the drill's closed details until the reader opens it."""
    return hidden_in_details(result(drill(page)))


def notes(page: Page) -> Locator:
    """The drill's details: the score, the rules and the assumptions."""
    return result(drill(page)).locator("details.widget-notes")


def test_a_linked_question_is_checked_scored_and_its_score_kept(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGE + "?drill_training_memory.seed=42"))
    wait_live(page)
    page.wait_for_selector(SELECTOR + ' .drill[data-seed="42"]')
    question = shown_question(page)
    assert question.seed == 42
    assert "Score: 0 correct of 0 answered" in score_text(page)
    wait_matches_cpython(page, NAME, SELECTOR)

    # The right answer, computed by the engine in CPython: correct, and scored.
    answer(page, f"{question.answer_GB:.2f}", question.fits)
    assert feedback(page).get_attribute("data-correct") == "true"
    assert "Correct" in visible_text(feedback(page))
    assert "Score: 1 correct of 1 answered, streak 1." in score_text(page)
    kept = training_drill.Score.from_text(page.evaluate("k => localStorage.getItem(k)", STORE_KEY))
    assert (kept.answered, kept.correct, kept.scored) == (1, 1, 42)

    # A typical slip: only weights and gradients. The feedback names it; the score stands.
    slip, wrong_bytes, words = next(
        c for c in question.typical_wrong_answers() if c[0] == "forgot_optimizer"
    )
    answer(page, f"{wrong_bytes / 1e9:.2f}", question.fits)
    page.wait_for_selector(SELECTOR + f' .drill-feedback[data-mistake="{slip}"]')
    text = visible_text(feedback(page))
    assert words in text
    assert "forgot the optimiser states" in text
    assert "Score: 1 correct of 1 answered" in score_text(page)

    # The score waits in the closed details; opened, it shows, and stays open as the drill
    # re-renders on the next answer.
    details = notes(page)
    assert not is_open(details)
    assert "Score:" not in visible_text(result(drill(page)))
    assert not details.locator(".drill-score").is_visible()
    open_details(details)
    assert "Score: 1 correct of 1 answered" in visible_text(details)

    # GB and GiB mixed up: named as such.
    _, gib_bytes, gib_words = next(c for c in question.typical_wrong_answers() if c[0] == "gib")
    answer(page, f"{gib_bytes / 1e9:.2f}", question.fits)
    page.wait_for_selector(SELECTOR + ' .drill-feedback[data-mistake="gib"]')
    assert gib_words in visible_text(feedback(page))
    assert is_open(details)
    assert "Answers within 2 %" in visible_text(details)

    # Reload: the address still carries the question, and the score was kept on the device.
    page.reload()
    wait_live(page)
    page.wait_for_selector(SELECTOR + ' .drill[data-seed="42"]')
    expect(drill(page).locator(".drill-score")).to_contain_text("1 correct of 1")
    assert "1 correct of 1" in score_text(page)  # closed again, as a fresh page opens

    # New question: the next number, the answer cleared, the address follows.
    drill(page).get_by_role("button", name="New question", exact=True).click()
    page.wait_for_selector(SELECTOR + ' .drill[data-seed="43"]')
    assert drill(page).get_by_label("Your answer", exact=True).input_value() == ""
    assert "drill_training_memory.seed=43" in page.url
    assert shown_question(page).seed == 43


def test_a_corrupted_kept_score_is_ignored_and_the_drill_still_works(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGE))
    page.evaluate('k => localStorage.setItem(k, \'{"answered": "<b>lots</b>"\')', STORE_KEY)
    page.reload()
    wait_live(page)
    status = status_of(drill(page))
    expect(status).to_contain_text("Ignored")
    assert "starting a new score" in visible_text(status)
    assert page.locator(SELECTOR + " b").count() == 0
    assert "Score: 0 correct of 0 answered" in score_text(page)

    question = shown_question(page)
    answer(page, f"{question.answer_GB:.2f} GB", question.fits)
    assert feedback(page).get_attribute("data-correct") == "true"
    assert "Score: 1 correct of 1 answered" in score_text(page)
    kept = training_drill.Score.from_text(page.evaluate("k => localStorage.getItem(k)", STORE_KEY))
    assert kept.correct == 1


def test_a_hostile_linked_question_number_is_refused_readably(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGE + "?drill_training_memory.seed=%3Cimg%20src%3Dx%3E"))
    wait_live(page)
    status = status_of(drill(page))
    expect(status).to_contain_text("Ignored")
    assert "Question number" in visible_text(status)
    assert page.locator("img[src=x]").count() == 0
    assert shown_question(page).seed == 1  # back to the page's own question


def test_the_third_correct_answer_completes_the_drill(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGE))
    almost = training_drill.Score(answered=2, correct=2, streak=2, scored=None).to_text()
    page.evaluate("([k, v]) => localStorage.setItem(k, v)", [STORE_KEY, almost])
    page.reload()
    wait_live(page)
    expect(drill(page).locator(".drill-score")).to_contain_text("2 correct")
    question = shown_question(page)
    answer(page, f"{question.answer_GB:.3f}", question.fits)
    # The mark sits with the score in the closed details: in the page, not shown.
    page.wait_for_selector(SELECTOR + f' [data-drill-complete="{NAME}"]', state="attached")
    assert "Score: 3 correct of 3 answered" in score_text(page)
    expect(page.locator(".lesson-progress__text")).to_contain_text("1 drill completed")
    progress = json.loads(page.evaluate("() => localStorage.getItem('lesson:progress')"))
    assert PAGE in progress["drills"]  # kept by the page's address
