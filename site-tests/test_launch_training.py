"""Step 4: training Llama 3.1 8B on one GPU of the simulated dgx-1 is refused before it
starts, with the arithmetic; a retry gives the same answer; a way out is accepted and the
dgx-1 panel on the same page shows its memory in use."""

from __future__ import annotations

import json

from playwright.sync_api import Page
from support import Site, Watched, settle, wait_for_text, wait_live, wait_shows, widget_inputs

from engine.browser import update
from engine.lesson import cluster
from engine.words.format import format_GB

PAGE = "steps/train-it-anyway/"
LAUNCH = "[data-widget=launch_training]"
PANEL = "[data-widget=dgx_panel]"


def press(page: Page, selector: str, action: str) -> str:
    """Press a widget's button; return the HTML CPython renders for the same inputs and
    button (checked against the page once the reply lands)."""
    inputs = widget_inputs(page, selector)
    expected = json.loads(
        update(
            page.get_attribute(selector, "data-widget") or "",
            json.dumps({**inputs, "action": action}),
        )
    )
    page.click(f"{selector} [data-action='{action}']")
    return str(expected["html"])


def test_refused_with_the_arithmetic_retried_then_a_way_out_fills_the_gpus(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGE))
    # Without the engine: the page already describes the job, and the prose has the sum.
    assert "Not submitted yet" in page.inner_text(LAUNCH + " .widget-result")
    assert "128.5 GB" in page.inner_text("article")
    wait_live(page)
    settle(page)
    assert "0 of 8 GPUs hold memory" in page.inner_text(PANEL + " .widget-result")

    # Launch: refused before it starts, the arithmetic shown, as CPython renders it.
    expected = press(page, LAUNCH, "launch")
    wait_for_text(page, LAUNCH, "Refused before it starts")
    wait_shows(page, LAUNCH, expected)
    text = page.inner_text(LAUNCH + " .widget-result")
    assert "16 bytes/param × 8.03 billion params = 128.5 GB" in text
    assert "more than the 84.94 GB free on GPU 0" in text  # 79.11 GiB allocatable
    # The refusal lands in the panel's job log (shared state, same page).
    page.wait_for_function(
        "sel => document.querySelector(sel + ' .dgx-log [data-kind=refused]') !== null",
        arg=PANEL,
        timeout=15_000,
    )
    assert "0 of 8 GPUs hold memory" in page.inner_text(PANEL + " .widget-result")

    # Retry: the same answer, and the widget says so.
    expected = press(page, LAUNCH, "retry")
    wait_for_text(page, LAUNCH, "Same inputs, same arithmetic, same answer.")
    wait_shows(page, LAUNCH, expected)
    assert "128.5 GB" in page.inner_text(LAUNCH + " .widget-result")
    page.wait_for_function(
        "sel => document.querySelectorAll(sel + ' .dgx-log [data-kind=refused]').length === 2",
        arg=PANEL,
        timeout=15_000,
    )

    # A way out, applied: accepted, and the panel shows its memory on its GPUs.
    refused = cluster.launch_training(cluster.new_cluster())
    way = refused.ways_out[0]
    gpus = dict(way.action)["gpus"]
    assert isinstance(gpus, tuple)
    expected = press(page, LAUNCH, "way-out-0")
    wait_for_text(page, LAUNCH, "Accepted: the job starts.")
    wait_shows(page, LAUNCH, expected)
    in_use = f"{format_GB(way.per_gpu_bytes)} of 84.94 GB"
    wait_for_text(page, PANEL, in_use)
    for g in range(8):  # GPUs in the same state share a row; each keeps its own bar
        row = page.inner_text(f"{PANEL} tr[data-gpus~='{g}']")
        assert (in_use in row) == (g in gpus), row
        assert page.locator(f"{PANEL} tr[data-gpus~='{g}'] svg[data-gpu='{g}']").count() == 2
    assert "job-1" in page.inner_text(PANEL + " .dgx-jobs")

    # The clock moves the training on.
    page.click(f"{PANEL} [data-action='advance']")
    wait_for_text(page, PANEL, "Simulated time 1:00")
    assert "% done" in page.inner_text(PANEL + " .dgx-jobs")
