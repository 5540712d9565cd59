"""The playground in a real browser: "Your own chip (type its figures)". Its small form appears
only when chosen; its figures drive the plan (the engine reads them in the page's own Pyodide
and the result is CPython's); a bad figure gets the engine's message beside its box; the
address carries the form; back to a catalogue chip, the form hides and its junk blocks
nothing."""

from __future__ import annotations

import json

from support import Site, Watched, wait_live, wait_matches_cpython

from engine.browser import update

PAGE = "steps/playground/"
NAME = "playground"
SELECTOR = f"[data-widget={NAME}]"
HARDWARE = f"{SELECTOR} select[name=hardware]"
MEMORY = f"{SELECTOR} input[name=chip_memory]"
BANDWIDTH = f"{SELECTOR} input[name=chip_bandwidth]"


def test_the_own_chip_form_drives_the_plan(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGE))
    wait_live(page)
    assert not page.is_visible(MEMORY)  # hidden until its choice is made
    page.select_option(HARDWARE, "own")
    for box in (MEMORY, BANDWIDTH, f"{SELECTOR} input[name=chip_bf16]",
                f"{SELECTOR} input[name=chip_fp8]"):
        assert page.is_visible(box)
        assert page.is_visible(f"label[for={page.get_attribute(box, 'id')}]")
    page.fill(MEMORY, "48")
    page.fill(BANDWIDTH, "2")
    shown = wait_matches_cpython(page, NAME, SELECTOR, timeout_ms=20_000)
    result = page.inner_text(SELECTOR + " .widget-result")
    assert "(Your chip): it fits." in result
    assert "not the catalogue" in result and "my-chip.json" in result
    assert '"memory_GB": 48.0' in page.inner_text(SELECTOR + " pre.chip-spec")
    assert (shown.inputs["chip_memory"], shown.inputs["hardware"]) == ("48", "own")
    page.wait_for_function(
        "() => new URLSearchParams(location.search).get('playground.chip_memory') === '48'")

    page.fill(BANDWIDTH, "nan")
    refused = json.loads(update(NAME, json.dumps({**shown.inputs, "chip_bandwidth": "nan"})))
    assert refused["field"] == "chip_bandwidth"
    page.wait_for_function(
        "([sel, msg]) => document.querySelector(sel)?.textContent === msg",
        arg=[f"{SELECTOR} .widget-error[data-error-for=chip_bandwidth]", refused["error"]],
    )
    assert page.get_attribute(BANDWIDTH, "aria-invalid") == "true"

    # Back to a catalogue chip: the form hides and its junk blocks nothing.
    page.select_option(HARDWARE, "h100-sxm")
    assert not page.is_visible(BANDWIDTH)
    wait_matches_cpython(page, NAME, SELECTOR, timeout_ms=20_000)
    assert "Your chip" not in page.inner_text(SELECTOR + " .widget-result")
