"""The layer matrices, training-versus-serving memory and one request's timeline: each widget
goes live, matches CPython, and follows its inputs as the engine says."""

from __future__ import annotations

import pytest
from support import (
    Site,
    Watched,
    hidden_in_details,
    result,
    unfold,
    visible_text,
    wait_for_error,
    wait_for_text,
    wait_live,
    wait_matches_cpython,
    widget,
)

from engine.numbers import memory, quantities, serving
from engine.numbers.catalog import get_hardware, get_model
from engine.words.format import format_GB, format_seconds

LLAMA_8B = get_model("llama-3.1-8b")
H100 = get_hardware("h100-sxm")

PAGES = {
    "layer_matrices": "steps/ai-ml-dl/",
    "train_vs_serve": "steps/training-needs-more-memory/",
    "request_timeline": "steps/follow-one-request/",
}


def assert_matches_cpython(watched: Watched, name: str) -> None:
    """The live result equals CPython's render for the inputs on screen."""
    page = watched.page
    match = wait_matches_cpython(page, name)
    assert result(widget(page, name)).inner_html() == match.html


@pytest.mark.parametrize("name", sorted(PAGES))
def test_each_widget_shows_a_result_goes_live_and_matches_cpython(
    watched: Watched, root_site: Site, name: str
) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGES[name]))
    unfold(page)  # a widget kept one click away is read opened
    assert visible_text(result(widget(page, name))).strip()
    wait_live(page)
    assert_matches_cpython(watched, name)


def test_the_layer_matrices_follow_the_model_chosen(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGES["layer_matrices"]))
    wait_live(page)
    matrices = widget(page, "layer_matrices")
    # One layer's matrices are in view (their sum, 218,112,000 for the 8B); the whole model's
    # sums wait in the closed details.
    assert "218,112,000" in visible_text(result(matrices))
    assert "8,030,261,248" in hidden_in_details(result(matrices))
    matrices.get_by_label("Model", exact=True).select_option("llama-3.1-70b")
    wait_for_text(page, "[data-widget=layer_matrices]", "The matrices of one Llama 3.1 70B layer")
    text = visible_text(result(matrices))
    assert "218,112,000" not in text
    # The sums over the model wait in the closed details, updated with the rest.
    tables = hidden_in_details(result(matrices))
    assert "80 × one layer" in tables and "70,553,706,496" in tables
    assert "8,030,261,248" not in tables
    assert "80 × one layer" not in text
    assert_matches_cpython(watched, "layer_matrices")


def test_training_memory_follows_the_convention_and_the_sequence_length(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGES["train_vs_serve"]))
    wait_live(page)
    memory_widget = widget(page, "train_vs_serve")
    assert "8×" in visible_text(result(memory_widget))
    memory_widget.get_by_label("Convention", exact=True).select_option("mixed-20")
    wait_for_text(page, "[data-widget=train_vs_serve]", "10×")
    assert_matches_cpython(watched, "train_vs_serve")
    long = memory.training_memory(LLAMA_8B, H100, convention="mixed-20", seq_len=16384)
    memory_widget.get_by_label("Sequence length", exact=True).fill("16384")
    wait_for_text(page, "[data-widget=train_vs_serve]", format_GB(long.parts["activations"]))
    assert_matches_cpython(watched, "train_vs_serve")


def test_a_request_shows_its_first_token_and_total_and_decoding_dominates(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGES["request_timeline"]))
    wait_live(page)
    timeline = widget(page, "request_timeline")
    timeline.get_by_label("Answer length", exact=True).fill("2000")
    run = serving.request_timeline(
        LLAMA_8B, H100, prompt_tokens=quantities.TYPICAL_PROMPT_TOKENS, output_tokens=2000
    )
    assert run.ttft_seconds < run.total_seconds
    assert run.decode_seconds > 0.9 * run.total_seconds
    wait_for_text(page, "[data-widget=request_timeline]", format_seconds(run.total_seconds))
    text = visible_text(result(timeline))
    assert format_seconds(run.ttft_seconds) in text
    assert_matches_cpython(watched, "request_timeline")
    # The comparison rows (in the closed details): the long answer takes far longer.
    # The rows sit in a closed details, out of the accessibility tree: found by the markup.
    body = result(timeline).locator("details table tbody tr")
    assert body.count() == 2
    long_q = serving.request_timeline(
        LLAMA_8B, H100, prompt_tokens=4000, output_tokens=100
    )
    long_a = serving.request_timeline(
        LLAMA_8B, H100, prompt_tokens=100, output_tokens=4000
    )
    assert long_a.total_seconds > 10 * long_q.total_seconds
    hidden = hidden_in_details(result(timeline))
    assert format_seconds(long_q.total_seconds) in hidden
    assert format_seconds(long_q.total_seconds) in str(body.nth(0).text_content())
    assert format_seconds(long_a.total_seconds) in str(body.nth(1).text_content())
    # ... and shows as the page opens beside the two swapped timelines.
    assert format_seconds(long_a.total_seconds) in text
    # The three timeline charts: labelled SVGs (counted in the markup, open or not), each
    # drawn wide and again narrow.
    assert timeline.locator("svg.chart:not(.chart-narrow)[role=img][aria-label]").count() == 3
    assert timeline.locator("svg.chart-narrow[role=img][aria-label]").count() == 3


def test_a_bad_answer_length_shows_the_engines_message(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGES["request_timeline"]))
    wait_live(page)
    timeline = widget(page, "request_timeline")
    field = timeline.get_by_label("Answer length", exact=True)
    field.fill("<img src=x onerror=alert(1)>")
    assert "answer length" in wait_for_error(field).lower()
    assert page.locator("img[src=x]").count() == 0
