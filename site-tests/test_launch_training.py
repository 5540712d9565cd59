"""Train it anyway: training Llama 3.1 8B on one GPU of the simulated dgx-1 is refused before it
starts, with the arithmetic; a retry gives the same answer; a way out is accepted and the
dgx-1 panel on the same page shows its memory in use."""

from __future__ import annotations

import json

from playwright.sync_api import Page, expect
from support import (
    Site,
    Watched,
    result,
    settle,
    visible_text,
    wait_for_text,
    wait_live,
    wait_shows,
    widget,
    widget_inputs,
)

from engine.browser import update
from engine.lesson import cluster
from engine.words.format import format_GB

PAGE = "steps/train-it-anyway/"
LAUNCH = "[data-widget=launch_training]"
PANEL = "[data-widget=dgx_panel]"


def press(page: Page, selector: str, action: str, button: str) -> str:
    """Press the widget's button named ``button`` (its action is ``action``); return the HTML
    CPython renders for the same inputs and action (checked against the page once the reply
    lands)."""
    inputs = widget_inputs(page, selector)
    name = page.get_attribute(selector, "data-widget") or ""
    expected = json.loads(update(name, json.dumps({**inputs, "action": action})))
    pressed = widget(page, name).get_by_role("button", name=button, exact=True)
    assert pressed.get_attribute("data-action") == action
    pressed.click()
    return str(expected["html"])


def shown(page: Page, name: str) -> str:
    return visible_text(result(widget(page, name)))


def test_training_is_refused_with_the_arithmetic_retried_then_a_way_out_fills_the_gpus(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGE))
    # Without the engine: the page already describes the job, and the prose has the sum.
    assert "Not submitted yet" in shown(page, "launch_training")
    assert "128.5 GB" in visible_text(page.get_by_role("article"))
    wait_live(page)
    settle(page)
    assert "0 of 8 GPUs hold memory" in shown(page, "dgx_panel")

    # Launch: refused before it starts, the arithmetic shown, as CPython renders it.
    expected = press(page, LAUNCH, "launch", "Launch training")
    wait_for_text(page, LAUNCH, "Refused before it starts")
    wait_shows(page, LAUNCH, expected)
    text = shown(page, "launch_training")
    assert "16 bytes/param × 8.03 billion params = 128.5 GB" in text
    assert "more than the 84.94 GB free on GPU 0" in text  # 79.11 GiB allocatable
    # The refusal lands in the panel's job log (shared state, same page); each entry carries
    # its kind as a data attribute, the thing under test here.
    refusals = widget(page, "dgx_panel").locator(".dgx-log [data-kind=refused]")
    expect(refusals.first).to_be_attached(timeout=15_000)
    assert "0 of 8 GPUs hold memory" in shown(page, "dgx_panel")

    # Retry: the same answer, and the widget says so.
    expected = press(page, LAUNCH, "retry", "Retry")
    wait_for_text(page, LAUNCH, "Same inputs, same arithmetic, same answer.")
    wait_shows(page, LAUNCH, expected)
    assert "128.5 GB" in shown(page, "launch_training")
    expect(refusals).to_have_count(2, timeout=15_000)

    # A way out, applied: accepted, and the panel shows its memory on its GPUs.
    refused = cluster.launch_training(cluster.new_cluster())
    way = refused.ways_out[0]
    gpus = dict(way.action)["gpus"]
    assert isinstance(gpus, tuple)
    expected = press(page, LAUNCH, "way-out-0", "Apply way out 1")
    wait_for_text(page, LAUNCH, "Accepted: the job starts.")
    wait_shows(page, LAUNCH, expected)
    in_use = f"{format_GB(way.per_gpu_bytes)} of 84.94 GB"
    wait_for_text(page, PANEL, in_use)
    for g in range(8):  # GPUs in the same state share a row; each keeps its own bar
        # Rows and bars name their GPUs in data attributes, the layout under test.
        row = visible_text(page.locator(f"{PANEL} tr[data-gpus~='{g}']"))
        assert (in_use in row) == (g in gpus), row
        assert page.locator(f"{PANEL} tr[data-gpus~='{g}'] svg[data-gpu='{g}']").count() == 2
    assert "job-1" in visible_text(page.locator(PANEL + " .dgx-jobs"))

    # The clock moves the training on.
    widget(page, "dgx_panel").get_by_role("button", name="Advance 1 hour").click()
    wait_for_text(page, PANEL, "Simulated time 1:00")
    assert "% done" in visible_text(page.locator(PANEL + " .dgx-jobs"))
