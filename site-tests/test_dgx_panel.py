"""The dgx-1 panel keeps one simulated server per tab: a deployment made on "Serve the model"
is still on the panel on "Break it: train it anyway", reset clears it, and a corrupted stored
state gives a readable message while the panel keeps working."""

from __future__ import annotations

import json

from support import (
    Site,
    Watched,
    result_html_in_browser,
    settle,
    wait_for_text,
    wait_live,
    widget_inputs,
)

from engine.browser import update
from engine.lesson import cluster
from engine.words.format import format_GB

TRAIN_IT_ANYWAY = "steps/train-it-anyway/"
SERVE_THE_MODEL = "steps/serve-the-model/"
DEPLOY = "[data-widget=deploy_model]"
PANEL = "[data-widget=dgx_panel]"
STORE_KEY = "lesson:session:dgx-1"


def test_a_deployment_stays_on_the_panel_across_pages_until_reset(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(SERVE_THE_MODEL))
    wait_live(page)
    settle(page)
    page.fill(DEPLOY + " input[name=context]", "32768")
    page.select_option(DEPLOY + " select[name=gpu]", "5")
    wait_for_text(page, DEPLOY, "32,768 tokens each")
    page.click(DEPLOY + " [data-action=deploy]")
    wait_for_text(page, DEPLOY, "Deployed.")
    accepted = cluster.deploy(cluster.new_cluster(), "llama-3.1-8b", (5,), "bf16", 32768, 1)
    assert accepted.accepted and accepted.job is not None
    assert accepted.message in page.inner_text(DEPLOY + " .widget-result")
    in_use = f"{format_GB(accepted.job.bytes_per_gpu)} of 84.94 GB"  # 79.11 GiB allocatable
    wait_for_text(page, PANEL, in_use)  # the panel on the same page follows
    # GPU 5 has a row of its own; the seven idle GPUs share one, each with its own bars.
    assert in_use in page.inner_text(PANEL + " tr[data-gpus='5']")
    idle = PANEL + " tr[data-gpus='0 1 2 3 4 6 7']"
    assert "0 GB of 84.94 GB" in page.inner_text(idle)
    assert page.locator(idle + " svg[data-gpu]").count() == 14  # memory and utilisation

    # Another page, same tab: the panel there shows the same dgx-1.
    page.goto(root_site.page_url(TRAIN_IT_ANYWAY))
    wait_live(page)
    settle(page)
    wait_for_text(page, PANEL, in_use)
    assert in_use in page.inner_text(PANEL + " tr[data-gpus='5']")
    assert "serving Llama 3.1 8B" in page.inner_text(PANEL + " .dgx-jobs")
    # It matches CPython for the state kept in the tab.
    expected = json.loads(update("dgx_panel", json.dumps(widget_inputs(page, PANEL))))
    assert page.inner_html(PANEL + " .widget-result") == result_html_in_browser(
        page, PANEL, expected["html"]
    )

    # Reset clears it, here and for the next page.
    page.click(PANEL + " [data-action=reset]")
    wait_for_text(page, PANEL, "No job is running")
    assert "0 of 8 GPUs hold memory" in page.inner_text(PANEL + " .widget-result")
    page.goto(root_site.page_url(SERVE_THE_MODEL))
    wait_live(page)
    settle(page)
    wait_for_text(page, PANEL, "No job is running")


def test_a_corrupted_stored_state_shows_a_message_and_the_panel_still_works(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.add_init_script(f"sessionStorage.setItem({STORE_KEY!r}, '{{not json');")
    page.goto(root_site.page_url(TRAIN_IT_ANYWAY))
    wait_live(page)
    settle(page)
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-widget] .widget-status')]
                 .some(s => s.textContent.includes('Ignored a saved or linked value'))""",
        timeout=15_000,
    )
    statuses = " ".join(page.locator("[data-widget] .widget-status").all_inner_texts())
    assert "not valid JSON" in statuses
    text = page.inner_text(PANEL + " .widget-result")
    assert "0 of 8 GPUs hold memory" in text and "dgx-1 ready" in text
    # The panel works from the fresh state, and the tab now keeps a good one.
    page.click(PANEL + " [data-action=advance]")
    wait_for_text(page, PANEL, "Simulated time 1:00")
    kept = page.evaluate(f"sessionStorage.getItem({STORE_KEY!r})")
    assert json.loads(kept)["clock_seconds"] == 3600
