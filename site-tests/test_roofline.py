"""The roofline in a real browser: moving the batch slider changes throughput and time per
token as the engine says (the live result is what CPython renders for the same inputs), with a
short context the bound turns from memory to compute at a large enough batch, and on a phone
the chart scrolls instead of shrinking."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Locator, Page, expect
from support import (
    Site,
    Watched,
    open_watched,
    result,
    run_axe,
    visible_text,
    wait_live,
    wait_matches_cpython,
    widget,
)

from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.serving import DecodeStep, decode_step
from engine.words.format import format_seconds, format_tokens_per_s

ROOF_PAGE = "steps/roofline/"
ROOF = "[data-widget=roofline_chart]"


def figure(page: Page, term: str) -> str:
    """The value the result's description list gives ``term`` (a term has no accessible name
    to find its value by, so the list is read in the page)."""
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


def batch_slider(page: Page) -> Locator:
    return widget(page, "roofline_chart").get_by_role("slider", name="Batch (powers of two)")


def slide_to(page: Page, power: int) -> None:
    """Move the batch slider to notch ``power`` as a reader's drag would (an input event;
    Playwright cannot fill a range input, so the page sets it)."""
    batch_slider(page).evaluate(
        "(s, v) => { s.value = v; s.dispatchEvent(new Event('input', { bubbles: true })); }",
        str(power),
    )
    page.wait_for_selector(f'{ROOF} .roof-bound[data-batch="{2**power}"]')


def test_the_batch_slider_moves_throughput_and_latency_as_the_engine_says(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(ROOF_PAGE))
    wait_live(page)
    wait_matches_cpython(page, "roofline_chart", ROOF)
    # The chart: one labelled SVG (its class names it among the page's images).
    assert page.locator(f"{ROOF} svg.roofline[role=img]").count() == 1
    one = engine_step(1, 1024)
    assert figure(page, "Throughput, all users") == format_tokens_per_s(one.tokens_per_s)

    # The keyboard moves the slider one notch: batch 2.
    batch_slider(page).focus()
    page.keyboard.press("ArrowRight")
    # The bound names its batch in a data attribute, the state under test.
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


def test_on_a_phone_the_chart_scrolls_instead_of_shrinking_its_labels(
    browser: Browser, root_site: Site
) -> None:
    watched = open_watched(browser, viewport={"width": 390, "height": 844})
    try:
        page = watched.page
        page.goto(root_site.page_url(ROOF_PAGE))
        # The chart's scrolling box and its SVG have no role of their own (the box is focusable
        # for the keyboard), so their classes find them; their sizes are what is under test.
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


def test_the_bound_turns_from_memory_to_compute_at_a_large_batch(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(ROOF_PAGE))
    wait_live(page)
    widget(page, "roofline_chart").get_by_label("Context per request", exact=True).fill("128")
    expect(result(widget(page, "roofline_chart"))).to_contain_text("128 tokens")
    bounds = {}
    for power in (0, 6, 9, 11):
        slide_to(page, power)
        wait_matches_cpython(page, "roofline_chart", ROOF)
        bound = page.get_attribute(f"{ROOF} .roof-bound", "data-bound")
        assert bound == engine_step(2**power, 128).bound
        bounds[power] = bound
    assert bounds[0] == "memory"
    assert bounds[11] == "compute"
    assert "compute-bound" in visible_text(page.locator(f"{ROOF} .roof-bound"))


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_roofline_passes_axe_in_both_colour_schemes(
    browser: Browser, root_site: Site, scheme: str
) -> None:
    w = open_watched(browser, color_scheme=scheme)
    try:
        w.page.goto(root_site.page_url(ROOF_PAGE))
        wait_live(w.page)
        assert run_axe(w.page) == []
        assert w.console_errors == []
    finally:
        w.context.close()


def test_the_batch_slider_announces_its_batch_not_a_bare_notch(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(ROOF_PAGE))
    slider = page.get_by_role("slider", name="Batch (powers of two)")
    expect(slider).to_have_attribute("aria-valuetext", "a batch of 1")
    wait_live(page)
    slider.focus()
    page.keyboard.press("ArrowRight")
    expect(slider).to_have_attribute("aria-valuetext", "a batch of 2")
    slide_to(page, 10)
    expect(slider).to_have_attribute("aria-valuetext", "a batch of 1,024")
