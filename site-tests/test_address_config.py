"""A pasted config.json in the page address, in a real browser: a long real config goes
compressed and survives a reload and a copied link opened in a fresh browser; one too large
for any address stays in the tab (a reload there keeps it) and the page says so beside
"Copy link" before anyone copies it; a corrupt or hostile compressed value is refused by
name, runs nothing, and the page carries on with its own inputs."""

from __future__ import annotations

import base64
import json
import secrets
import zlib
from urllib.parse import quote

from playwright.sync_api import Browser, Dialog, Page
from support import (
    ROOT,
    Site,
    Watched,
    open_watched,
    visible_text,
    wait_live,
    wait_matches_cpython,
    widget,
)
from support import status as status_of

from engine.render.options import ADDRESS_MAX_CHARS, ADDRESS_MAX_LINK_CHARS

PAGE = "steps/playground/"
NAME = "playground"
SELECTOR = f"[data-widget={NAME}]"
BOX = f"{SELECTOR} textarea[name=config]"
CLIPBOARD = {"permissions": ["clipboard-read", "clipboard-write"]}
CONFIGS = ROOT / "tests" / "fixtures" / "configs"


def long_real_config() -> str:
    """Llama 4 Scout's config.json (text and vision parts), four spaces deep: over 4,000
    characters, as an editor may save it."""
    text = json.dumps(json.loads(
        (CONFIGS / "Llama-4-Scout-17B-16E.json").read_text(encoding="utf-8")), indent=4)
    assert len(text) > max(4000, ADDRESS_MAX_CHARS)
    return text


def address_value(page: Page) -> str:
    return str(page.evaluate(
        "() => new URLSearchParams(location.search).get('playground.config') || ''"))


def paste(page: Page, text: str) -> None:
    page.select_option(f"{SELECTOR} select[name=model]", "config")
    page.fill(BOX, text)


def test_a_long_config_survives_a_reload_and_a_copied_link(
    browser: Browser, root_site: Site
) -> None:
    text = long_real_config()
    first = open_watched(browser, **CLIPBOARD)
    try:
        page = first.page
        page.goto(root_site.page_url(PAGE))
        wait_live(page)
        paste(page, text)
        shown = wait_matches_cpython(page, NAME, SELECTOR, timeout_ms=20_000)
        page.wait_for_function(
            "() => (new URLSearchParams(location.search).get('playground.config') || '')"
            ".startsWith('deflate.')")
        assert len(page.url) <= ADDRESS_MAX_LINK_CHARS
        assert len(address_value(page)) < len(text) / 3  # compressed, not as typed
        assert page.inner_text(f"{SELECTOR} .widget-copy-link").count("Too large") == 0
        page.reload()
        wait_live(page)
        assert page.input_value(BOX) == text
        assert wait_matches_cpython(page, NAME, SELECTOR, timeout_ms=20_000) == shown
        assert "Ignored" not in visible_text(status_of(widget(page, NAME)))
        page.click(f"{SELECTOR} .widget-copy-link [data-copy=link]")
        page.wait_for_function(
            "sel => document.querySelector(sel).textContent.startsWith('Copied.')",
            arg=f"{SELECTOR} .widget-copy-link .widget-copy-status")
        link = str(page.evaluate("navigator.clipboard.readText()"))
        assert first.console_errors == []
    finally:
        first.context.close()
    fresh = open_watched(browser)
    try:
        other = fresh.page
        other.goto(link)
        wait_live(other)
        assert other.input_value(BOX) == text
        assert wait_matches_cpython(other, NAME, SELECTOR, timeout_ms=20_000) == shown
        assert "Ignored" not in visible_text(status_of(widget(other, NAME)))
        assert fresh.console_errors == []
    finally:
        fresh.context.close()


def test_a_config_too_large_for_any_address_stays_in_the_tab_and_is_said(
    browser: Browser, root_site: Site
) -> None:
    config = json.loads((CONFIGS / "Llama-3.1-8B.json").read_text(encoding="utf-8"))
    # Random text does not compress: no address of 8,000 characters carries this.
    config["_name_or_path"] = secrets.token_hex(6000)
    text = json.dumps(config, indent=2)
    first = open_watched(browser)
    try:
        page = first.page
        page.goto(root_site.page_url(PAGE))
        wait_live(page)
        paste(page, text)
        shown = wait_matches_cpython(page, NAME, SELECTOR, timeout_ms=20_000)
        page.wait_for_function(
            "() => new URLSearchParams(location.search).get('playground.config') === 'tab'")
        note = page.inner_text(f"{SELECTOR} .widget-copy-link .widget-link-note")
        assert "Too large for a link" in note and "config" in note and "does not carry" in note
        page.reload()
        wait_live(page)
        assert page.input_value(BOX) == text  # nothing the reader pasted is lost
        assert wait_matches_cpython(page, NAME, SELECTOR, timeout_ms=20_000) == shown
        link = page.url
        assert first.console_errors == []
    finally:
        first.context.close()
    # Elsewhere the address says the config stayed behind, by name, rather than showing
    # another model as if it were the reader's.
    fresh = open_watched(browser)
    try:
        other = fresh.page
        other.goto(link)
        wait_live(other)
        said = visible_text(status_of(widget(other, NAME)))
        assert "config: the link does not carry it" in said
        assert other.input_value(f"{SELECTOR} select[name=model]") != "config"
        assert fresh.console_errors == []
    finally:
        fresh.context.close()


def _deflated(data: bytes) -> str:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = packer.compress(data) + packer.flush()
    return "deflate." + base64.urlsafe_b64encode(packed).decode().rstrip("=")


CORRUPT = {
    "not base64": "deflate.%%%not-base64!!",
    "cut short": _deflated(b'{"hidden_size": 4096, "num_hidden_layers": 32}')[:-6],
    "not deflate": "deflate." + base64.urlsafe_b64encode(b"plain bytes, never packed").decode(),
    "a bomb": _deflated(b" " * 2_000_000),
    "not UTF-8": _deflated(b"\xff\xfe\xfa{}"),
}


def test_a_corrupt_or_hostile_compressed_value_is_refused_by_name(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    dialogs: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    for case, value in CORRUPT.items():
        page.goto(root_site.page_url(PAGE) + f"?{NAME}.model=config&{NAME}.config="
                  f"{quote(value, safe='')}&{NAME}.gpus=2")
        wait_live(page)
        said = visible_text(status_of(widget(page, NAME)))
        assert "Ignored a saved or linked value" in said and "config: " in said, case
        # The other linked values stay; the page's result is the engine's for them.
        assert page.input_value(f"{SELECTOR} [name=gpus]") == "2", case
        wait_matches_cpython(page, NAME, SELECTOR, timeout_ms=20_000)
    # A script, compressed, is text to the engine: refused as a config, never run.
    page.goto(root_site.page_url(PAGE) + f"?{NAME}.model=config&{NAME}.config="
              + _deflated(b"<img src=x onerror=alert(1)><script>alert(2)</script>"))
    wait_live(page)
    assert "config" in visible_text(status_of(widget(page, NAME)))
    page.wait_for_timeout(300)
    assert dialogs == []
    assert page.locator(f"{SELECTOR} script, {SELECTOR} img").count() == 0
