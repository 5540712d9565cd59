"""Steps 2, 3 and 9: their widgets go live, match CPython, and follow their inputs as the
engine says."""

from __future__ import annotations

import pytest
from support import Site, Watched, wait_live, wait_matches_cpython

from engine.numbers import memory, quantities, serving
from engine.words.format import format_GB, format_seconds

PAGES = {
    "layer_matrices": "steps/ai-ml-dl/",
    "train_vs_serve": "steps/training-needs-more-memory/",
    "request_timeline": "steps/follow-one-request/",
}


def assert_matches_cpython(watched: Watched, name: str) -> None:
    """The live result equals CPython's render for the inputs on screen."""
    page = watched.page
    match = wait_matches_cpython(page, name)
    assert page.inner_html(f"[data-widget={name}] .widget-result") == match.html


def wait_for_text(watched: Watched, name: str, text: str) -> None:
    watched.page.wait_for_function(
        "([sel, t]) => document.querySelector(sel + ' .widget-result').innerText.includes(t)",
        arg=[f"[data-widget={name}]", text],
    )


@pytest.mark.parametrize("name", sorted(PAGES))
def test_widget_goes_live_and_matches_cpython(watched: Watched, root_site: Site, name: str) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGES[name]))
    assert page.locator(f"[data-widget={name}] .widget-result").inner_text().strip()
    wait_live(page)
    assert_matches_cpython(watched, name)


def test_layer_matrices_follows_the_model(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGES["layer_matrices"]))
    wait_live(page)
    selector = "[data-widget=layer_matrices]"
    assert "8,030,261,248" in page.inner_text(selector + " .widget-result")
    page.select_option(selector + " select[name=model]", "llama-3.1-70b")
    wait_for_text(watched, "layer_matrices", "70,553,706,496")
    text = page.inner_text(selector + " .widget-result")
    assert "8,030,261,248" not in text
    # The per-matrix tables wait in the closed details, updated with the rest.
    tables = page.text_content(selector + " .widget-result details.widget-notes") or ""
    assert "80 × one layer" in tables and "8,030,261,248" not in tables
    assert "80 × one layer" not in text
    assert_matches_cpython(watched, "layer_matrices")


def test_train_vs_serve_follows_the_convention_and_sequence(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGES["train_vs_serve"]))
    wait_live(page)
    selector = "[data-widget=train_vs_serve]"
    assert "8×" in page.inner_text(selector + " .widget-result")
    page.select_option(selector + " select[name=convention]", "mixed-20")
    wait_for_text(watched, "train_vs_serve", "10×")
    assert_matches_cpython(watched, "train_vs_serve")
    long = memory.training_memory("llama-3.1-8b", "h100-sxm", convention="mixed-20", seq_len=16384)
    page.fill(selector + " input[name=seq_len]", "16384")
    wait_for_text(watched, "train_vs_serve", format_GB(long.parts["activations"]))
    assert_matches_cpython(watched, "train_vs_serve")


def test_request_timeline_ttft_total_and_decode_dominates(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGES["request_timeline"]))
    wait_live(page)
    selector = "[data-widget=request_timeline]"
    page.fill(selector + " input[name=output_tokens]", "2000")
    run = serving.request_timeline(
        "llama-3.1-8b", "h100-sxm", prompt_tokens=quantities.TYPICAL_PROMPT_TOKENS, output_tokens=2000
    )
    assert run.ttft_seconds < run.total_seconds
    assert run.decode_seconds > 0.9 * run.total_seconds
    wait_for_text(watched, "request_timeline", format_seconds(run.total_seconds))
    text = page.inner_text(selector + " .widget-result")
    assert format_seconds(run.ttft_seconds) in text
    assert_matches_cpython(watched, "request_timeline")
    # The comparison rows (in the closed details): the long answer takes far longer.
    rows = page.locator(selector + " details table tbody tr")
    assert rows.count() == 2
    long_q = serving.request_timeline(
        "llama-3.1-8b", "h100-sxm", prompt_tokens=4000, output_tokens=100
    )
    long_a = serving.request_timeline(
        "llama-3.1-8b", "h100-sxm", prompt_tokens=100, output_tokens=4000
    )
    assert long_a.total_seconds > 10 * long_q.total_seconds
    assert format_seconds(long_q.total_seconds) in str(rows.nth(0).text_content())
    assert format_seconds(long_a.total_seconds) in str(rows.nth(1).text_content())
    # ... and shows as the page opens beside the two swapped timelines.
    assert format_seconds(long_a.total_seconds) in text
    assert page.locator(selector + " svg[role=img][aria-label]").count() == 3


def test_bad_answer_length_shows_the_engine_message(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGES["request_timeline"]))
    wait_live(page)
    selector = "[data-widget=request_timeline]"
    page.fill(selector + " input[name=output_tokens]", "<img src=x onerror=alert(1)>")
    page.wait_for_function(
        "sel => document.querySelector(sel + ' .widget-error[data-error-for=output_tokens]').textContent.length > 0",
        arg=selector,
    )
    error = page.inner_text(selector + " .widget-error[data-error-for=output_tokens]")
    assert "answer length" in error.lower()
    assert page.locator("img[src=x]").count() == 0
