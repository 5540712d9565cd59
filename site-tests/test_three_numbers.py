"""The three numbers (compute, capacity, bandwidth) in a real browser: each widget goes live and matches CPython; typing a
throughput changes the MFU as the engine says; 70B on one H100 is refused with a way out that
fits; int4 raises the bandwidth ceiling."""

from __future__ import annotations

import pytest
from support import (
    Site,
    Watched,
    result,
    unfold,
    visible_text,
    wait_for_error,
    wait_live,
    wait_matches_cpython,
    widget,
)

from engine.numbers import compute, serving
from engine.numbers.catalog import get_hardware, get_model
from engine.words.format import format_percent


@pytest.mark.parametrize(
    "path, name",
    [
        ("steps/compute/", "mfu_calculator"),
        ("steps/capacity/", "capacity_gate"),
        ("steps/bandwidth/", "bandwidth_ceiling"),
    ],
)
def test_each_widget_shows_a_result_goes_live_and_matches_cpython(
    watched: Watched, root_site: Site, path: str, name: str
) -> None:
    page = watched.page
    page.goto(root_site.page_url(path))
    unfold(page)  # a widget kept one click away is read opened
    assert visible_text(result(widget(page, name))).strip()
    wait_live(page)
    wait_matches_cpython(page, name)


def test_typing_a_throughput_changes_the_mfu_as_the_engine_says(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url("steps/compute/"))
    selector = "[data-widget=mfu_calculator]"
    mfu_widget = widget(page, "mfu_calculator")
    throughput = mfu_widget.get_by_label("Measured throughput", exact=True)
    wait_live(page)
    per_token = compute.training_flops_per_token(get_model("llama-3.1-8b")).model
    peak = get_hardware("h100-sxm").peak_flops_per_s("bf16")
    throughput.fill("45000")
    mfu = compute.mfu_at(45000, per_token, 8, peak)
    # By hand: 45,000 tokens/s x 48.25e9 FLOPs per token / (8 x 989.4e12 FLOP/s) = 27.4 %.
    assert mfu == pytest.approx(0.2743, rel=1e-3)
    page.wait_for_function(
        "([sel, v]) => document.querySelector(sel + ' [data-mfu]').dataset.mfu === v",
        arg=[selector, f"{mfu:.6f}"],
        timeout=15_000,
    )
    wait_matches_cpython(page, "mfu_calculator")
    text = visible_text(result(mfu_widget))
    assert f"MFU {format_percent(mfu)}" in text
    assert "Below the 35–55 %" in text

    # More than the hardware's peak: the engine's message, at the field.
    throughput.fill("1e9")
    assert "more than the hardware's peak" in wait_for_error(throughput)

    # The other way round: an assumed MFU gives a time.
    throughput.fill("60000")
    mfu_widget.get_by_label("I know", exact=True).select_option("time")
    page.wait_for_selector(selector + " [data-seconds]", timeout=15_000)
    wait_matches_cpython(page, "mfu_calculator")


def test_70b_on_one_h100_is_refused_and_a_way_out_is_admitted(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url("steps/capacity/"))
    selector = "[data-widget=capacity_gate]"
    gate = widget(page, "capacity_gate")
    wait_live(page)
    wait_matches_cpython(page, "capacity_gate")
    verdict = visible_text(gate.locator(".widget-verdict"))
    assert verdict.startswith("Refused: Llama 3.1 70B in bf16")
    assert page.get_attribute(selector + " tr[data-way=gpus]", "data-fits") == "true"
    assert page.get_attribute(selector + " tr[data-way=fp8]", "data-fits") == "true"
    # The ways out mark in data attributes whether each fits (the thing under test).
    # Take a way out: fp8 weights on the same GPU are admitted.
    gate.get_by_label("Weights stored as", exact=True).select_option("fp8")
    page.wait_for_function(
        "sel => document.querySelector(sel + ' .widget-verdict').dataset.fits === 'true'",
        arg=selector,
        timeout=15_000,
    )
    wait_matches_cpython(page, "capacity_gate")
    assert "Admitted" in visible_text(gate.locator(".widget-verdict"))


def test_choosing_int4_raises_the_ceiling(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url("steps/bandwidth/"))
    selector = "[data-widget=bandwidth_ceiling]"
    wait_live(page)
    bf16 = serving.decode_step(get_model("llama-3.1-8b"), get_hardware("h100-sxm")).tokens_per_s_per_user
    int4 = serving.decode_step(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), weight_format="int4")
    before = float(str(page.get_attribute(selector + " [data-tokens-per-s]", "data-tokens-per-s")))
    assert before == pytest.approx(bf16, rel=1e-5)
    widget(page, "bandwidth_ceiling").get_by_label("Weights stored as", exact=True).select_option(
        "int4"
    )
    page.wait_for_function(
        "([sel, v]) => document.querySelector(sel + ' [data-tokens-per-s]').dataset.tokensPerS === v",
        arg=[selector, f"{int4.tokens_per_s_per_user:.6g}"],
        timeout=15_000,
    )
    wait_matches_cpython(page, "bandwidth_ceiling")
    after = float(str(page.get_attribute(selector + " [data-tokens-per-s]", "data-tokens-per-s")))
    assert after > before
