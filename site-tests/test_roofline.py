"""Steps 16 and 17 in a real browser.

Step 16: moving the batch slider changes throughput and time per token as the engine says
(the live result is what CPython renders for the same inputs), and with a short context the
bound turns from memory to compute at a large enough batch.
Step 17: a linked scenario number loads that scenario; the engine's right answer is accepted
and scored, a typical wrong answer gets the matching feedback, and five correct answers
complete the drill.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Browser, Page
from support import (
    Site,
    Watched,
    open_watched,
    result_html_in_browser,
    run_axe,
    wait_live,
    wait_matches_cpython,
    widget_inputs,
)

from engine.browser import update
from engine.lesson.drills import fit as drill_fit
from engine.lesson.drills import training_memory as training_drill
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.serving import DecodeStep, decode_step
from engine.words.format import format_seconds, format_tokens_per_s

ROOF_PAGE = "steps/roofline/"
ROOF = "[data-widget=roofline_chart]"
DRILL_PAGE = "steps/drill-will-it-fit/"
DRILL_NAME = "drill_will_it_fit"
DRILL = f"[data-widget={DRILL_NAME}]"
STORE_KEY = "lesson:local:drill-will-it-fit"


def figure(page: Page, term: str) -> str:
    return str(
        page.evaluate(
            """([sel, term]) => [...document.querySelectorAll(sel + ' dt')]
                 .find(dt => dt.textContent === term).nextElementSibling.textContent""",
            [ROOF, term],
        )
    )


def engine_step(batch: int, context: int) -> DecodeStep:
    return decode_step(
        get_model("llama-3.1-8b"),
        get_hardware("h100-sxm"),
        batch=batch,
        context_tokens=context,
        weight_format="bf16",
        kv_format="bf16",
    )


def slide_to(page: Page, power: int) -> None:
    """Move the batch slider to notch ``power`` as a reader's drag would (an input event)."""
    page.evaluate(
        """([sel, v]) => { const s = document.querySelector(sel + ' input[name=batch_log2]');
             s.value = v; s.dispatchEvent(new Event('input', { bubbles: true })); }""",
        [ROOF, str(power)],
    )
    page.wait_for_selector(f'{ROOF} .roof-bound[data-batch="{2**power}"]')


def test_step_16_the_batch_slider_moves_throughput_and_latency_as_the_engine_says(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(ROOF_PAGE))
    wait_live(page)
    wait_matches_cpython(page, "roofline_chart", ROOF)
    assert page.locator(f"{ROOF} svg.roofline[role=img]").count() == 1
    one = engine_step(1, 1024)
    assert figure(page, "Throughput, all users") == format_tokens_per_s(one.tokens_per_s)

    # The keyboard moves the slider one notch: batch 2.
    page.focus(f"{ROOF} input[name=batch_log2]")
    page.keyboard.press("ArrowRight")
    page.wait_for_selector(f'{ROOF} .roof-bound[data-batch="2"]')
    wait_matches_cpython(page, "roofline_chart", ROOF)

    shown = []
    for power in (3, 5, 7):
        slide_to(page, power)
        wait_matches_cpython(page, "roofline_chart", ROOF)
        s = engine_step(2**power, 1024)
        assert figure(page, "Throughput, all users") == format_tokens_per_s(s.tokens_per_s)
        assert figure(page, "Time per token, each user").startswith(
            format_seconds(s.seconds) + " at best, "
        )
        assert figure(page, "Speed each user sees") == format_tokens_per_s(s.tokens_per_s_per_user)
        shown.append(s)
    # throughput rises with the batch; each user's time per token grows
    assert shown[0].tokens_per_s < shown[1].tokens_per_s < shown[2].tokens_per_s
    assert shown[0].seconds < shown[1].seconds < shown[2].seconds


def test_step_16_on_a_phone_the_chart_scrolls_instead_of_shrinking_its_labels(
    browser: Browser, root_site: Site
) -> None:
    watched = open_watched(browser, viewport={"width": 390, "height": 844})
    try:
        page = watched.page
        page.goto(root_site.page_url(ROOF_PAGE))
        box = page.locator(f"{ROOF} .chart-scroll")
        chart = box.locator("svg.roofline")
        chart_width = chart.evaluate("svg => svg.getBoundingClientRect().width")
        box_width = box.evaluate("div => div.clientWidth")
        # 640 user units drawn at least 640 px wide: 11 px labels or more, and the box scrolls.
        assert chart_width >= 640 > box_width
        assert box.evaluate("div => div.scrollWidth > div.clientWidth")
        box.focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_function(
            "sel => document.querySelector(sel).scrollLeft > 0", arg=f"{ROOF} .chart-scroll"
        )
        assert watched.console_errors == []
    finally:
        watched.context.close()


def test_step_16_the_bound_turns_from_memory_to_compute_at_a_large_batch(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(ROOF_PAGE))
    wait_live(page)
    page.fill(f"{ROOF} input[name=context]", "128")
    page.wait_for_function(
        "sel => document.querySelector(sel + ' .widget-result').textContent.includes('128 tokens')",
        arg=ROOF,
    )
    bounds = {}
    for power in (0, 6, 9, 11):
        slide_to(page, power)
        wait_matches_cpython(page, "roofline_chart", ROOF)
        bound = page.get_attribute(f"{ROOF} .roof-bound", "data-bound")
        assert bound == engine_step(2**power, 128).bound
        bounds[power] = bound
    assert bounds[0] == "memory"
    assert bounds[11] == "compute"
    assert "compute-bound" in page.inner_text(f"{ROOF} .roof-bound")


# ---------------------------------------------------------------------------------- 17


def shown_question(page: Page) -> drill_fit.FitQuestion:
    seed = page.get_attribute(DRILL + " .drill", "data-seed")
    assert seed is not None
    question = drill_fit.fit_question(int(seed))
    assert question.lead in page.inner_text(DRILL + " .widget-result")
    return question


def answer(page: Page, fits: bool, text: str) -> None:
    """Say whether it fits, type a number (or nothing), press Check and wait for the
    feedback; the live result must be what CPython renders for the same inputs and button."""
    page.select_option(DRILL + " select[name=fits]", "yes" if fits else "no")
    page.fill(DRILL + " input[name=answer]", text)
    page.wait_for_selector(DRILL + " .drill-feedback", state="detached")
    inputs = widget_inputs(page, DRILL)
    page.click(DRILL + " button[data-action=check]")
    page.wait_for_selector(DRILL + " .drill-feedback")
    expected = json.loads(update(DRILL_NAME, json.dumps({**inputs, "action": "check"})))
    assert page.inner_html(DRILL + " .widget-result") == result_html_in_browser(
        page, DRILL, expected["html"]
    )


def test_step_17_a_linked_scenario_is_checked_and_the_slip_named(
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
    feedback = page.locator(DRILL + " .drill-feedback")
    assert feedback.get_attribute("data-correct") == "true"
    assert "Correct" in feedback.inner_text()
    assert "Score: 1 correct of 1 answered" in str(page.text_content(DRILL + " .drill-score"))
    kept = training_drill.Score.from_text(page.evaluate("k => localStorage.getItem(k)", STORE_KEY))
    assert (kept.correct, kept.scored) == (1, 7)

    # A typical wrong number: the matching slip is named.
    mistake = "forgot_kv" if question.serving is not None else "forgot_optimizer"
    _, wrong_bytes, words = next(c for c in question.typical_wrong_answers() if c[0] == mistake)
    answer(page, question.fits, f"{wrong_bytes / 1e9:.2f}")
    page.wait_for_selector(DRILL + f' .drill-feedback[data-mistake="{mistake}"]')
    text = page.inner_text(DRILL + " .drill-feedback")
    assert words in text
    assert drill_fit.MISTAKES[mistake] in text

    # GB and GiB mixed up.
    _, gib_bytes, gib_words = next(c for c in question.typical_wrong_answers() if c[0] == "gib")
    answer(page, question.fits, f"{gib_bytes / 1e9:.2f}")
    page.wait_for_selector(DRILL + ' .drill-feedback[data-mistake="gib"]')
    assert gib_words in page.inner_text(DRILL + " .drill-feedback")

    # The wrong verdict alone: matched with a slip that leads to it.
    slip = question.slip_for_verdict(not question.fits)
    assert slip is not None
    answer(page, not question.fits, "")
    page.wait_for_selector(DRILL + f' .drill-feedback[data-mistake="{slip[0]}"]')
    assert page.get_attribute(DRILL + " .drill-feedback", "data-correct") == "false"
    assert "Score: 1 correct of 1 answered" in str(page.text_content(DRILL + " .drill-score"))

    # New scenario: the next number, in the address too.
    page.click(DRILL + " button[data-action=new]")
    page.wait_for_selector(DRILL + ' .drill[data-seed="8"]')
    assert "drill_will_it_fit.seed=8" in page.url
    assert shown_question(page).seed == 8


def test_step_17_the_fifth_correct_answer_completes_the_drill(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(DRILL_PAGE))
    almost = training_drill.Score(answered=4, correct=4, streak=4, scored=None).to_text()
    page.evaluate("([k, v]) => localStorage.setItem(k, v)", [STORE_KEY, almost])
    page.reload()
    wait_live(page)
    page.wait_for_function(
        "sel => document.querySelector(sel + ' .drill-score').textContent.includes('4 correct')",
        arg=DRILL,
    )
    question = shown_question(page)
    answer(page, question.fits, "")  # the verdict alone is enough
    # The mark sits with the score in the closed details: in the page, not shown.
    page.wait_for_selector(DRILL + ' [data-drill-complete="drill_will_it_fit"]', state="attached")
    assert "Score: 5 correct of 5 answered" in str(page.text_content(DRILL + " .drill-score"))
    page.wait_for_function(
        "() => JSON.parse(localStorage.getItem('lesson:progress') || '{}').drills?.includes('steps/drill-will-it-fit/')"
    )


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_steps_16_and_17_pass_axe_in_both_colour_schemes(
    browser: Browser, root_site: Site, scheme: str
) -> None:
    w = open_watched(browser, color_scheme=scheme)
    try:
        for path, extra in ((ROOF_PAGE, ""), (DRILL_PAGE, "?drill_will_it_fit.seed=7")):
            w.page.goto(root_site.page_url(path + extra))
            wait_live(w.page)
            if path == DRILL_PAGE:  # with the feedback and its chart on screen
                answer(w.page, True, "1")
                # Leave the button Material's hover colours gave it (not this page's styles).
                w.page.mouse.move(0, 0)
                w.page.evaluate("() => document.activeElement.blur()")
            assert run_axe(w.page) == [], path
        assert w.console_errors == []
    finally:
        w.context.close()
