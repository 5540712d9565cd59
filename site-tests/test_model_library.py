"""The config library in widgets' model selects, in a real browser: gpt-oss-20b picked in two
widgets of two pages is sized from its published config.json (the page fetches the library
once, from the site, only then), its copied link opened again keeps it, and a link naming a model
the list lacks is refused by name. On dgx-1, gpt-oss-20b is deployed, sent traffic and kept
across a reload, and a link naming a hostile model is refused by name, its other input and
dgx-1's state kept."""

from __future__ import annotations

import json
from urllib.parse import quote

from playwright.sync_api import Browser, Page
from support import (
    Site,
    Watched,
    open_watched,
    settle,
    status,
    visible_text,
    wait_for_text,
    wait_live,
    wait_matches_cpython,
    widget,
)

GPT_OSS = "openai/gpt-oss-20b"
LIBRARY_FILE = "wheels/data/config_library.json"
PICKS = (("steps/pile-of-numbers/", "model_size"), ("steps/capacity/", "capacity_gate"))


def copy_link(page: Page, selector: str) -> str:
    """Press the widget's "Copy link"; the clipboard's text once it says so."""
    row = f"{selector} .widget-copy-link"
    page.click(f"{row} [data-copy=link]")
    page.wait_for_function(
        "row => document.querySelector(row + ' .widget-copy-status').textContent.startsWith('Copied.')",
        arg=row,
    )
    return str(page.evaluate("navigator.clipboard.readText()"))


def test_gpt_oss_20b_is_sized_in_two_widgets_and_its_link_keeps_it(
    browser: Browser, root_site: Site
) -> None:
    watched = open_watched(browser, permissions=["clipboard-read", "clipboard-write"])
    page = watched.page
    try:
        for path, name in PICKS:
            selector = f"[data-widget={name}]"
            page.goto(root_site.page_url(path))
            wait_live(page)
            fetched = [u for u in watched.requests if u.endswith(LIBRARY_FILE)]
            assert path != PICKS[0][0] or not fetched, "the library was fetched before it was chosen"
            group = page.locator(f'{selector} select[name=model] optgroup[label="Library: openai"]')
            assert group.locator("option").all_inner_texts() == [GPT_OSS]
            page.select_option(f"{selector} select[name=model]", GPT_OSS)
            wait_matches_cpython(page, name, selector, timeout_ms=30_000)
            shown = page.inner_text(f"{selector} .widget-result")
            assert "20.9 billion parameters" in shown and GPT_OSS in shown
            assert any(u.endswith(LIBRARY_FILE) for u in watched.requests)
            link = copy_link(page, selector)
            assert f"{name}.model={quote(GPT_OSS, safe='')}" in link or f"{name}.model={GPT_OSS}" in link
            page.goto(link)
            page.reload()  # the link's address, opened again
            wait_live(page)
            assert page.input_value(f"{selector} select[name=model]") == GPT_OSS
            wait_matches_cpython(page, name, selector, timeout_ms=30_000)
            assert "20.9 billion parameters" in page.inner_text(f"{selector} .widget-result")
        assert not watched.console_errors
        assert not watched.outside(root_site.origin)
    finally:
        watched.context.close()


def test_a_link_naming_a_model_the_list_lacks_is_refused_by_name(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url("steps/pile-of-numbers/") + "?model_size.model=openai/gpt-oss-21b")
    wait_live(page)
    assert page.input_value("[data-widget=model_size] select[name=model]") == "llama-3.1-8b"
    said = visible_text(status(widget(page, "model_size")))
    assert "Ignored" in said and '"openai/gpt-oss-21b"' in said


SERVE_THE_MODEL = "steps/serve-the-model/"
DEPLOY = "[data-widget=deploy_model]"
TRAFFIC = "[data-widget=dgx_traffic]"
PANEL = "[data-widget=dgx_panel]"
STORE_KEY = "lesson:session:dgx-1"
HOSTILE = "<img src=x onerror=window.pwned=1>"


def kept_models(page: Page) -> list[str]:
    kept = json.loads(page.evaluate(f"sessionStorage.getItem({STORE_KEY!r})"))
    return [job["model_id"] for job in kept["jobs"]]


def test_gpt_oss_20b_is_deployed_on_dgx_1_sent_traffic_and_kept_across_a_reload(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(SERVE_THE_MODEL))
    wait_live(page)
    settle(page)
    group = page.locator(f'{DEPLOY} select[name=model] optgroup[label="Library: openai"]')
    assert group.locator("option").all_inner_texts() == [GPT_OSS]
    page.select_option(f"{DEPLOY} select[name=model]", GPT_OSS)
    wait_for_text(page, DEPLOY, f"Figures for {GPT_OSS}", timeout_ms=30_000)
    page.click(DEPLOY + " [data-action=deploy]")
    wait_for_text(page, DEPLOY, "Deployed.")
    assert f"serving {GPT_OSS} (bf16) on GPU 0" in page.inner_text(DEPLOY + " .widget-result")
    wait_for_text(page, TRAFFIC, "Traffic off")
    page.click(TRAFFIC + " [data-action=start]")
    wait_for_text(page, TRAFFIC, "Time to first token", timeout_ms=60_000)
    assert kept_models(page) == [GPT_OSS]

    page.reload()
    wait_live(page)
    settle(page)
    wait_for_text(page, TRAFFIC, "Time to first token", timeout_ms=60_000)
    assert GPT_OSS in page.inner_text(PANEL + " .widget-result")
    assert kept_models(page) == [GPT_OSS]

    # A link naming a model the list lacks: that value alone is refused, by name.
    linked = f"?deploy_model.model={quote(HOSTILE, safe='')}&deploy_model.gpu=3"
    page.goto(root_site.page_url(SERVE_THE_MODEL) + linked)
    wait_live(page)
    settle(page)
    said = visible_text(status(widget(page, "deploy_model")))
    assert "Ignored" in said and f'"{HOSTILE}"' in said, said
    assert page.input_value(f"{DEPLOY} select[name=model]") == "llama-3.1-8b"
    assert page.input_value(f"{DEPLOY} select[name=gpu]") == "3"
    assert kept_models(page) == [GPT_OSS]
    assert GPT_OSS in page.inner_text(PANEL + " .widget-result")
    assert page.evaluate("window.pwned") is None
    assert not watched.console_errors
