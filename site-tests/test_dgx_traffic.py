"""dgx-1 under load, on "Serve the model": after a deployment the reader starts traffic and
the engine's frames play to the run's figures; the rate is kept with dgx-1 across a reload;
with reduced motion the run's end shows at once, nothing played. The batch and its KV cache
at the run's fullest step open from a closed details, whole on a phone. Once traffic runs, one
button draws the latency-throughput curve, whole on a phone in both schemes, axe clean, kept
across a reload; the panel says the traffic arriving, not "idle"."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Browser, Page
from support import (
    Site,
    Watched,
    open_watched,
    run_axe,
    settle,
    wait_for_text,
    wait_live,
)

from engine.lesson import cluster, dgx_load

SERVE_THE_MODEL = "steps/serve-the-model/"
DEPLOY = "[data-widget=deploy_model]"
TRAFFIC = "[data-widget=dgx_traffic]"
PANEL = "[data-widget=dgx_panel]"
CURVE_BUTTON = TRAFFIC + " [data-action=curve]"
STORE_KEY = "lesson:session:dgx-1"
RATE = cluster.TRAFFIC_RATES.index(4.0)


def deploy_and_start(page: Page, site: Site) -> None:
    page.goto(site.page_url(SERVE_THE_MODEL))
    wait_live(page)
    settle(page)
    wait_for_text(page, TRAFFIC, "No model is serving")
    page.click(DEPLOY + " [data-action=deploy]")
    wait_for_text(page, DEPLOY, "Deployed.")
    wait_for_text(page, TRAFFIC, "Traffic off")
    slider = page.locator(TRAFFIC + " input[name=rate_notch]")
    slider.fill(str(RATE))
    assert slider.get_attribute("aria-valuetext") == "4 requests a second"
    page.click(TRAFFIC + " [data-action=start]")
    wait_for_text(page, TRAFFIC, "Time to first token", timeout_ms=60_000)


def test_traffic_plays_its_frames_and_its_rate_survives_a_reload(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    deploy_and_start(page, root_site)
    frames = page.locator(TRAFFIC + " .dgx-load-frames")
    page.wait_for_function(
        "sel => document.querySelector(sel + ' .dgx-load-frames').dataset.frames === 'done'",
        arg=TRAFFIC, timeout=dgx_load.FRAMES * dgx_load.FRAME_MS + 10_000)
    shown = frames.locator("li:not([hidden])")
    assert shown.count() == 1 and shown.get_attribute("data-frame") == str(dgx_load.FRAMES - 1)
    assert "Keeps up" in page.inner_text(TRAFFIC + " .widget-result")
    kept = json.loads(page.evaluate(f"sessionStorage.getItem({STORE_KEY!r})"))
    assert kept["traffic"] == {"rate_per_s": 4.0, "on": True}

    page.reload()
    wait_live(page)
    settle(page)
    wait_for_text(page, TRAFFIC, "Time to first token", timeout_ms=60_000)
    assert page.input_value(TRAFFIC + " input[name=rate_notch]") == str(RATE)
    assert "4 requests/s to job-1" in page.inner_text(TRAFFIC + " .widget-result")
    assert page.locator(TRAFFIC + " [data-frames-animate]").count() == 0  # nothing replays

    page.click(TRAFFIC + " [data-action=stop]")
    wait_for_text(page, TRAFFIC, "Traffic off")


def test_with_reduced_motion_the_runs_end_shows_at_once(browser: Browser, root_site: Site) -> None:
    w = open_watched(browser, reduced_motion="reduce")
    try:
        page = w.page
        deploy_and_start(page, root_site)
        page.wait_for_function(
            "sel => document.querySelector(sel + ' .dgx-load-frames').dataset.frames === 'done'",
            arg=TRAFFIC, timeout=5_000)
        shown = page.locator(TRAFFIC + " .dgx-load-frames li:not([hidden])")
        assert shown.count() == 1
        assert shown.get_attribute("data-frame") == str(dgx_load.FRAMES - 1)
        assert w.console_errors == []
    finally:
        w.context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_curve_is_one_click_away_whole_on_a_phone_and_kept(
    browser: Browser, root_site: Site, scheme: str
) -> None:
    w = open_watched(browser, viewport={"width": 390, "height": 844}, color_scheme=scheme)
    try:
        page = w.page
        page.goto(root_site.page_url(SERVE_THE_MODEL))
        wait_live(page)
        settle(page)
        assert not page.locator(CURVE_BUTTON).is_visible()  # nothing to draw before traffic
        deploy_and_start(page, root_site)
        # The batch at its fullest step: closed until opened, then whole on the phone.
        batch = page.locator(TRAFFIC + " details.dgx-batch")
        assert batch.evaluate("d => !d.open")
        batch.locator("summary").click()
        picture = batch.locator("svg.dgx-batch-svg")
        picture.wait_for()
        box = picture.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
        assert picture.locator(".kv-decode").count() > 0
        sizes = picture.locator("text").evaluate_all(
            "ts => ts.map(t => t.getBoundingClientRect().height)")
        assert sizes and min(sizes) >= 11 * 0.9
        assert "blocks of 16 tokens used" in batch.inner_text()
        assert run_axe(page) == []
        wait_for_text(page, PANEL, "4 requests/s arriving")
        assert "idle" not in page.inner_text(PANEL + " .widget-result")
        page.select_option(TRAFFIC + " select[name=curve_beside]", "b200")
        page.click(CURVE_BUTTON)
        page.wait_for_selector(TRAFFIC + " .dgx-curve[data-curve=b200] svg", timeout=60_000)
        assert page.locator(TRAFFIC + " [data-marked=true]").count() == 2
        box = page.locator(TRAFFIC + " .dgx-curve .chart-scroll")
        assert box.evaluate("e => e.scrollWidth <= e.clientWidth")  # whole, no scrolling
        sizes = page.locator(TRAFFIC + " .dgx-curve svg text").evaluate_all(
            "ts => ts.map(t => t.getBoundingClientRect().height)")
        assert sizes and min(sizes) >= 11 * 0.9  # drawn at 11 px or more (glyph box)
        assert run_axe(page) == []
        kept = json.loads(page.evaluate(f"sessionStorage.getItem({STORE_KEY!r})"))
        assert kept["traffic"]["curve_beside"] == "b200"
        page.reload()
        wait_live(page)
        settle(page)
        page.wait_for_selector(TRAFFIC + " .dgx-curve[data-curve=b200] svg", timeout=60_000)
        assert page.input_value(TRAFFIC + " select[name=curve_beside]") == "b200"
        assert w.console_errors == []
    finally:
        w.context.close()


def test_the_rate_shows_beside_its_slider_and_hidden_controls_stay_hidden(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(SERVE_THE_MODEL))
    wait_live(page)
    settle(page)
    shown = page.locator(TRAFFIC + " output.widget-value")
    assert shown.inner_text() == "8 requests a second"
    page.locator(TRAFFIC + " input[name=rate_notch]").fill(str(RATE))
    assert shown.inner_text() == "4 requests a second"
    # The theme's button display does not show a button the markup hides, and what is drawn
    # beside the curve is not offered before there is traffic to draw it for.
    assert not page.locator(TRAFFIC + " [data-action=restore]").is_visible()
    assert not page.locator(TRAFFIC + " select[name=curve_beside]").is_visible()

    deploy_and_start(page, root_site)
    assert page.locator(TRAFFIC + " select[name=curve_beside]").is_visible()
    frames = page.locator(TRAFFIC + " .dgx-load-frames")
    # One frame shows at a time: no list number, and its KV cache bar on the light track.
    assert frames.evaluate("e => getComputedStyle(e).listStyleType") == "none"
    track = frames.locator("li:not([hidden]) .track")
    assert track.evaluate("e => getComputedStyle(e).fill") != "rgb(0, 0, 0)"
