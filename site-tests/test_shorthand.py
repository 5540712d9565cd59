"""A number typed as shorthand in a real browser: "32k" in a token field gives the figures of
32,000 and says so beside the field; "8kk" is refused beside it, naming what is read."""

from __future__ import annotations

from support import Site, Watched, wait_live, wait_matches_cpython

PAGE = "steps/playground/"
NAME = "playground"
SELECTOR = f"[data-widget={NAME}]"
FIELD = f"{SELECTOR} [name=context]"
SLOT = f"{SELECTOR} .widget-error[data-error-for=context]"


def test_shorthand_is_read_and_said_and_junk_refused(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url(PAGE))
    wait_live(page)
    page.fill(FIELD, "32k")
    shown = wait_matches_cpython(page, NAME, SELECTOR, timeout_ms=20_000)
    assert shown.inputs["context"] == "32k"
    page.wait_for_function(
        "sel => document.querySelector(sel).textContent === 'Read as 32,000 tokens.'", arg=SLOT)
    page.fill(FIELD, "8kk")
    page.wait_for_function(
        "sel => document.querySelector(sel).textContent.includes(\"not '8kk'\")", arg=SLOT)
    assert "k, M, B or T" in page.inner_text(SLOT)
    assert page.get_attribute(FIELD, "aria-invalid") == "true"
    assert page.input_value(FIELD) == "8kk"  # kept as typed
