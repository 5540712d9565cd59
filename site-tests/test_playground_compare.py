"""The playground's compare in a real browser: "Pin as A", change the plan, A and B side by
side exactly as CPython renders them; the link carries both to a fresh browser; "Unpin A"
clears A. A corrupt A in a link is refused by name and the plan B of that link still shows."""

from __future__ import annotations

from urllib.parse import parse_qs, quote, urlsplit

from playwright.sync_api import Browser, expect
from support import (
    Site,
    Watched,
    open_watched,
    result,
    visible_text,
    wait_live,
    wait_matches_cpython,
    widget,
    widget_inputs,
)
from support import status as status_of

PLAYGROUND_PAGE = "steps/playground/"
NAME = "playground"
SELECTOR = f"[data-widget={NAME}]"
SHOWN = f"{SELECTOR} .widget-result [data-pinned=shown]"
REFUSED = f"{SELECTOR} .widget-result [data-pinned=refused]"


def linked_pinned(url: str) -> str:
    return parse_qs(urlsplit(url).query, keep_blank_values=True).get(f"{NAME}.pinned", [""])[-1]


def test_pin_change_reload_the_link_and_unpin(browser: Browser, watched: Watched,
                                              root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url(PLAYGROUND_PAGE))
    wait_live(page)
    frame = widget(page, NAME)
    unpin = frame.locator("[data-action=unpin]")
    expect(unpin).to_be_hidden()
    frame.locator("[data-action=pin]").click()
    page.wait_for_selector(SHOWN)
    expect(unpin).to_be_visible()
    page.fill(f"{SELECTOR} [name=gpus]", "2")
    page.select_option(f"{SELECTOR} [name=hardware]", "h200")
    shown = wait_matches_cpython(page, NAME, SELECTOR, timeout_ms=20_000)
    compared = visible_text(frame.locator(".playground-compare"))
    assert "A: Llama 3.1 8B on 1 × NVIDIA H100" in compared
    assert "B: Llama 3.1 8B on 2 × NVIDIA H200" in compared
    assert "python -m engine compare --model llama-3.1-8b --hardware h100-sxm --gpus 1" in \
        frame.locator(".widget-command-text").text_content()
    assert "--vs --hardware h200 --gpus 2" in frame.locator(".widget-command-text").text_content()
    # The link carries A and B.
    page.wait_for_function("n => new URLSearchParams(location.search).get(n) === '2'",
                           arg=f"{NAME}.gpus")
    link = page.url
    assert '"gpus":"1"' in linked_pinned(link)
    fresh = open_watched(browser)
    try:
        other = fresh.page
        other.goto(link)
        wait_live(other)
        other.wait_for_selector(SHOWN)
        assert widget_inputs(other, SELECTOR) == shown.inputs
        assert result(widget(other, NAME)).inner_html() == shown.html
        assert fresh.console_errors == []
    finally:
        fresh.context.close()
    # Unpinned: A is gone from the result, the form and the address; B stays.
    unpin.click()
    page.wait_for_function("sel => !document.querySelector(sel)", arg=f"{SELECTOR} [data-pinned]")
    expect(unpin).to_be_hidden()
    assert widget_inputs(page, SELECTOR)["pinned"] == ""
    assert widget_inputs(page, SELECTOR)["gpus"] == "2"
    page.wait_for_function("n => !new URLSearchParams(location.search).get(n)",
                           arg=f"{NAME}.pinned")
    assert "python -m engine plan " in frame.locator(".widget-command-text").text_content()


def test_a_corrupt_a_is_refused_by_name_and_b_stands(watched: Watched, root_site: Site
                                                     ) -> None:
    page = watched.page
    stale = quote('{"gpu_count":"2"}')
    page.goto(root_site.page_url(PLAYGROUND_PAGE + f"?{NAME}.gpus=4&{NAME}.pinned={stale}"))
    wait_live(page)
    page.wait_for_selector(REFUSED)
    words = visible_text(widget(page, NAME).locator(".playground-compare"))
    assert "Plan A is not shown" in words and "'gpu_count'" in words
    assert "on 4 GPUs" in visible_text(widget(page, NAME).locator(".widget-verdict"))
    expect(widget(page, NAME).locator("[data-action=unpin]")).to_be_visible()


def test_a_compressed_a_cut_short_is_refused_by_name(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url(PLAYGROUND_PAGE + f"?{NAME}.gpus=4&{NAME}.pinned=deflate.q"))
    wait_live(page)
    frame = widget(page, NAME)
    expect(frame.locator(".widget-verdict")).to_contain_text("on 4 GPUs")
    expect(status_of(frame)).to_contain_text("pinned")
    assert widget_inputs(page, SELECTOR)["pinned"] == ""
