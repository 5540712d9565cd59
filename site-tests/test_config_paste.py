"""The playground in a real browser: "Your model (paste a config.json)". The text box appears only
when chosen; a real published config pasted there drives every figure (the engine reads it in
the page's own Pyodide, and the page asks nothing of any other origin); junk gets the
engine's message beside the box; a config too long to go as typed goes compressed; a paste
far too long is refused beside the box before the engine is asked, and kept."""

from __future__ import annotations

import json

from support import ROOT, Site, Watched, wait_for_error, wait_live, wait_matches_cpython

from engine.browser import update
from engine.numbers.catalog.hf_config import MAX_CONFIG_CHARS, model_from_config
from engine.words.format import format_count

PAGE = "steps/playground/"
NAME = "playground"
SELECTOR = f"[data-widget={NAME}]"
BOX = f"{SELECTOR} textarea[name=config]"
CONFIGS = ROOT / "tests" / "fixtures" / "configs"


def test_a_pasted_config_drives_the_figures_and_junk_gets_a_message(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGE))
    wait_live(page)
    assert not page.is_visible(BOX)  # hidden until its choice is made
    page.select_option(f"{SELECTOR} select[name=model]", "config")
    assert page.is_visible(BOX)
    assert page.is_visible(f"label[for={page.get_attribute(BOX, 'id')}]")

    text = (CONFIGS / "Qwen3-30B-A3B.json").read_text(encoding="utf-8")
    page.fill(BOX, text)
    shown = wait_matches_cpython(page, NAME, SELECTOR, timeout_ms=20_000)
    read = model_from_config(text)
    result = page.inner_text(SELECTOR + " .widget-result")
    assert "Your model, as read from its config.json" in result
    assert format_count(read.model.params) in result and "Active per token" in result
    assert "Your Qwen3 MoE model" in result  # the verdict and the answers name it
    # Short enough: kept in the address, so a link carries it.
    page.wait_for_function("() => new URLSearchParams(location.search).has('playground.config')")
    assert shown.inputs["config"] == text

    page.fill(BOX, "{ this is not json")
    error = page.locator(f"{SELECTOR} .widget-error[data-error-for=config]")
    refused = json.loads(update(NAME, json.dumps({**shown.inputs, "config": "{ this is not json"})))
    page.wait_for_function(
        "([sel, msg]) => document.querySelector(sel).textContent === msg",
        arg=[f"{SELECTOR} .widget-error[data-error-for=config]", refused["error"]],
    )
    assert "not valid JSON" in error.inner_text()
    assert page.get_attribute(BOX, "aria-invalid") == "true"

    long_text = text + " " * 3000
    page.fill(BOX, long_text)
    wait_matches_cpython(page, NAME, SELECTOR, timeout_ms=20_000)
    # Longer than a value goes as typed: the address carries it compressed.
    page.wait_for_function(
        "() => (new URLSearchParams(location.search).get('playground.config') || '')"
        ".startsWith('deflate.')"
    )

    # Back to a catalogue model: the box hides and its junk blocks nothing.
    page.fill(BOX, "[[[")
    page.select_option(f"{SELECTOR} select[name=model]", "llama-3.1-8b")
    assert not page.is_visible(BOX)
    wait_matches_cpython(page, NAME, SELECTOR, timeout_ms=20_000)


def test_your_model_in_another_calculator(watched: Watched, root_site: Site) -> None:
    """Step 'Break it: number two, capacity': the admission gate offers the same choice; a
    pasted Mixtral config is admitted or refused by the engine, live, with a note on it."""
    page = watched.page
    selector = "[data-widget=capacity_gate]"
    box = f"{selector} textarea[name=config]"
    page.goto(root_site.page_url("steps/capacity/"))
    wait_live(page)
    assert not page.is_visible(box)
    page.select_option(f"{selector} select[name=model]", "config")
    assert page.is_visible(box)
    text = (CONFIGS / "Mixtral-8x7B-v0.1.json").read_text(encoding="utf-8")
    page.fill(box, text)
    wait_matches_cpython(page, "capacity_gate", selector, timeout_ms=20_000)
    note = page.inner_text(f"{selector} .your-model-note")
    assert "your config.json" in note and format_count(model_from_config(text).model.params) in note


def test_a_paste_far_too_long_is_refused_beside_the_box_and_kept(
    watched: Watched, root_site: Site
) -> None:
    # Over the whole render's limit (200,000 characters), which the engine would refuse in the
    # status line: the page refuses it beside the box, against the box's own limit, without
    # asking the engine, and keeps every character the reader pasted.
    page = watched.page
    page.goto(root_site.page_url(PAGE))
    wait_live(page)
    page.select_option(f"{SELECTOR} select[name=model]", "config")
    pasted = '{"hidden_size": 4096, "pad": "' + "x" * 300_000 + '"}'
    page.fill(BOX, pasted)
    said = wait_for_error(page.locator(BOX))
    assert f"{len(pasted):,} characters long" in said and f"at most {MAX_CONFIG_CHARS:,}" in said
    assert page.inner_text(SELECTOR + " .widget-status") == "Live: computed in your browser."
    assert len(page.input_value(BOX)) == len(pasted)
    # A config of a real size goes to the engine again.
    page.fill(BOX, (CONFIGS / "Qwen3-30B-A3B.json").read_text(encoding="utf-8"))
    wait_matches_cpython(page, NAME, SELECTOR, timeout_ms=20_000)
