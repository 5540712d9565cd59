"""The roofline in a real browser: moving the batch slider changes throughput and time per
token as the engine says (the live result is what CPython renders for the same inputs), with a
short context the bound turns from memory to compute at a large enough batch, and a phone
gets a drawing made for its width, whole on its screen."""

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


# Each drawing's place on screen, and its texts' drawn sizes (font size x drawn width /
# viewBox width), read in the page: the boxes have no role of their own to find them by.
DRAWINGS = """sel => [...document.querySelectorAll(sel + ' svg.chart')].map(svg => {
  const box = svg.getBoundingClientRect();
  const scale = box.width / svg.viewBox.baseVal.width;
  const edges = [...svg.querySelectorAll('.roof-line, .roof-ridge, text')].map(
    e => e.getBoundingClientRect());
  return {narrow: svg.classList.contains('chart-narrow'), width: box.width,
          left: Math.min(...edges.map(e => e.left)), right: Math.max(...edges.map(e => e.right)),
          smallest: Math.min(...[...svg.querySelectorAll('text')].map(
            t => parseFloat(getComputedStyle(t).fontSize) * scale)),
          texts: [...svg.querySelectorAll('text')].map(t => t.textContent)};
})"""


def test_a_phone_sees_the_whole_roofline_drawn_for_its_width(
    browser: Browser, root_site: Site
) -> None:
    watched = open_watched(browser, viewport={"width": 390, "height": 844})
    try:
        page = watched.page
        page.goto(root_site.page_url(ROOF_PAGE))
        wide, narrow = page.evaluate(DRAWINGS, ROOF)
        assert not wide["narrow"] and narrow["narrow"]
        assert wide["width"] == 0  # the wide drawing is not shown on a phone
        # The narrow drawing: roof, ridge and every label on screen, text 11 px or more,
        # nothing to scroll, in the page or in its box.
        assert narrow["left"] >= 0 and narrow["right"] <= 390, narrow
        assert narrow["smallest"] >= 11 - 0.01
        assert any(t.startswith("ridge ") for t in narrow["texts"])
        box = page.locator(f"{ROOF} .chart-scroll.narrow")
        assert not box.evaluate("div => div.scrollWidth > div.clientWidth")
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
        # A laptop gets the wide drawing only.
        page.set_viewport_size({"width": 1280, "height": 900})
        wide, narrow = page.evaluate(DRAWINGS, ROOF)
        assert wide["width"] >= 640 and narrow["width"] == 0
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
