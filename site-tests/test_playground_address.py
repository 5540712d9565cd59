"""Steps 20 and 21 in a real browser: the cheat sheet's tables are the engine's numbers and
the page prints on at most two A4 pages; the playground's address reproduces its exact
state in a fresh browser, and a hostile or malformed address shows the engine's message and
runs nothing."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Browser, Dialog, Page
from support import Site, Watched, open_watched, wait_live, wait_matches_cpython, widget_inputs

from engine.browser import update
from engine.lesson.figures import prose as figures
from engine.lesson.tables import cheatsheet
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.memory import serving_memory, training_state_bytes_per_param
from engine.numbers.roofline import ridge_point
from engine.widgets.playground import WIDGET
from engine.words.format import format_GB

CHEAT_PAGE = "steps/cheat-sheet/"
PLAYGROUND_PAGE = "steps/playground/"
NAME = "playground"
SELECTOR = f"[data-widget={NAME}]"
PAGE_OBJECT = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


class _Tables(HTMLParser):
    """The built page's cheat tables: name -> {row header -> {column header -> text}}."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, tuple[list[str], list[list[str]]]] = {}
        self._name = ""
        self._cell: list[str] | None = None
        self._head = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "table" and found.get("data-cheat"):
            self._name = str(found["data-cheat"])
            self.tables[self._name] = ([], [])
        elif not self._name:
            return
        elif tag == "thead":
            self._head = True
        elif tag == "tr" and not self._head:
            self.tables[self._name][1].append([])
        elif tag in ("th", "td"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if not self._name:
            return
        headers, rows = self.tables[self._name]
        if tag == "thead":
            self._head = False
        elif tag in ("th", "td") and self._cell is not None:
            (headers if self._head else rows[-1]).append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._name = ""

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def grid(self, name: str) -> dict[str, dict[str, str]]:
        headers, rows = self.tables[name]
        return {row[0]: dict(zip(headers, row, strict=True)) for row in rows}


def built_tables(site: Site) -> _Tables:
    parser = _Tables()
    parser.feed((site.directory / CHEAT_PAGE / "index.html").read_text())
    return parser


# ------------------------------------------------------------------------ step 20


def test_the_built_cheat_sheet_shows_the_engines_numbers(root_site: Site) -> None:
    tables = built_tables(root_site)
    assert set(tables.tables) == set(cheatsheet.CHEAT_TABLES)
    m8, m70 = get_model("llama-3.1-8b"), get_model("llama-3.1-70b")
    h100, h200 = get_hardware("h100-sxm"), get_hardware("h200")

    formats = tables.grid("cheat_formats")
    assert formats["BF16 (bfloat16)"]["Bytes per number"] == "2"
    assert formats["INT4"]["Llama 3.1 8B weights"] == format_GB(m8.params * 0.5)
    assert formats["BF16 (bfloat16)"]["Llama 3.1 70B weights"] == figures.weights("llama-3.1-70b")

    bpp = tables.grid("cheat_bytes_per_param")
    for convention in ("mixed-16", "mixed-18", "mixed-20"):
        total = sum(training_state_bytes_per_param("adam", convention).values())
        assert bpp[f"Train, adam, {convention}"]["Bytes per parameter"] == f"{total:g}"
    assert bpp["Train, adam, mixed-16"]["Llama 3.1 8B"] == figures.train_state("llama-3.1-8b")

    rules = tables.grid("cheat_flops_rules")
    assert rules["Use it (one token in or out)"]["Llama 3.1 8B, per token"] == (
        figures.flops_per_token("llama-3.1-8b")
    )

    hardware = tables.grid("cheat_hardware")
    assert hardware["H100 SXM5 80GB"]["BF16 ridge"] == f"{ridge_point(h100, 'bf16'):,.0f}"
    assert hardware["H100 SXM5 80GB"]["FP8 ridge"] == f"{ridge_point(h100, 'fp8'):,.0f}"
    assert hardware["H200 SXM 141GB"]["Bandwidth"] == figures.bandwidth("h200")

    fits = tables.grid("cheat_fits")
    for model in (m8, m70):
        for hw in (h100, h200):
            mem = serving_memory(model, hw)
            assert fits[model.name]["Needs"] == format_GB(mem.per_gpu_bytes)
            assert fits[model.name][cheatsheet.chip_header(hw)] == ("fits" if mem.fits else "no")
    assert fits["Llama 3.1 70B"][cheatsheet.chip_header(h100)] == "no"

    ceilings = tables.grid("cheat_decode_ceilings")
    assert ceilings["H100 SXM5 80GB"]["Llama 3.1 8B"].startswith(
        figures.decode_ceiling("llama-3.1-8b")
    )
    assert ceilings["H200 SXM 141GB"]["Llama 3.1 8B"].startswith(
        figures.decode_ceiling("llama-3.1-8b", hardware="h200")
    )


def test_the_cheat_sheet_prints_on_at_most_two_a4_pages(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url(CHEAT_PAGE))
    # On screen the tables wait in closed <details>; printing opens them.
    page.wait_for_selector("table[data-cheat=cheat_decode_ceilings]", state="attached")
    pdf = page.pdf(format="A4", print_background=False)
    pages = len(PAGE_OBJECT.findall(pdf))
    assert 1 <= pages <= 2, f"the cheat sheet prints on {pages} A4 pages"
    # Printing hides the site's chrome but keeps every table.
    page.emulate_media(media="print")
    assert not page.is_visible(".md-header")
    assert not page.is_visible(".md-sidebar--primary")
    assert not page.is_visible(".next-step")
    for name in cheatsheet.CHEAT_TABLES:
        assert page.is_visible(f"table[data-cheat={name}]")


# ------------------------------------------------------------------------ step 21


def address_state(url: str) -> dict[str, str]:
    query = parse_qs(urlsplit(url).query, keep_blank_values=True)
    return {k.removeprefix(NAME + "."): v[-1] for k, v in query.items() if k.startswith(NAME)}


STATES = {
    "serve": {
        "model": "llama-3.1-70b",
        "hardware": "h200",
        "gpus": "2",
        "format": "fp8",
        "context": "32768",
        "batch": "4",
        "output": "500",
        "price": "3.25",
    },
    "train": {
        "task": "train",
        "model": "custom",
        "params": "3e10",
        "gpus": "16",
        "sharding": "zero3",
        "tp": "2",
        "optimizer": "adamw",
        "convention": "mixed-18",
        "recompute": "full",
        "tokens": "6e11",
        "mfu": "0.35",
        "target_days": "20",
    },
}


def set_inputs(page: Page, values: dict[str, str]) -> None:
    for name, value in values.items():
        field = f"{SELECTOR} [name={name}]"
        if page.eval_on_selector(field, "f => f.tagName") == "SELECT":
            page.select_option(field, value)
        else:
            page.fill(field, value)


@pytest.mark.parametrize("task", sorted(STATES))
def test_the_address_reproduces_the_exact_state(
    browser: Browser, watched: Watched, root_site: Site, task: str
) -> None:
    page = watched.page
    page.goto(root_site.page_url(PLAYGROUND_PAGE))
    wait_live(page)
    build_time = page.inner_html(SELECTOR + " .widget-result")
    set_inputs(page, STATES[task])
    result = wait_matches_cpython(page, NAME, SELECTOR, timeout_ms=20_000).html
    assert result != build_time
    inputs = widget_inputs(page, SELECTOR)
    assert {k: inputs[k] for k in STATES[task]} == STATES[task]
    # The address holds every visible input, as the page shows it.
    page.wait_for_function(
        "([n, v]) => new URLSearchParams(location.search).get(n) === v",
        arg=[f"{NAME}.{next(reversed(STATES[task]))}", next(reversed(STATES[task].values()))],
    )
    link = page.url
    assert address_state(link) == {name: inputs[name] for name in WIDGET.url_state}

    fresh = open_watched(browser)
    try:
        other = fresh.page
        other.goto(link)
        wait_live(other)
        assert widget_inputs(other, SELECTOR) == inputs
        assert other.inner_html(SELECTOR + " .widget-result") == result
        assert "Ignored" not in other.inner_text(SELECTOR + " .widget-status")
        assert fresh.console_errors == []
    finally:
        fresh.context.close()


HOSTILE = {
    "unknown model": ("model=gpt-9", {"model": ""}),
    "negative GPUs": ("gpus=-4", {"gpus": "-4"}),
    "script in a parameter": (
        "context=%3Cscript%3Ealert(1)%3C%2Fscript%3E",
        {"context": "<script>alert(1)</script>"},
    ),
    "image with a handler": (
        "price=%3Cimg%20src%3Dx%20onerror%3Dalert(2)%3E",
        {"price": "<img src=x onerror=alert(2)>"},
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_address_shows_the_engines_message_and_runs_nothing(
    watched: Watched, root_site: Site, case: str
) -> None:
    query, sent = HOSTILE[case]
    page = watched.page
    dialogs: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.goto(root_site.page_url(PLAYGROUND_PAGE + f"?{NAME}.{query}"))
    wait_live(page)
    # The engine's own message for what the address carried (a select given an unknown value
    # sends an empty one), visible on the page.
    refused = json.loads(update(NAME, json.dumps(sent)))
    assert "error" in refused, refused
    status = page.locator(SELECTOR + " .widget-status")
    assert status.is_visible()
    assert refused["error"] in status.inner_text()
    assert "Ignored a saved or linked value" in status.inner_text()
    # The page fell back to its own defaults, and its result is the engine's for them.
    assert widget_inputs(page, SELECTOR) == WIDGET.defaults()
    wait_matches_cpython(page, NAME, SELECTOR, timeout_ms=20_000)
    # Nothing ran: no dialog, no element made from the address, the address cleaned.
    page.wait_for_timeout(500)
    assert dialogs == []
    assert page.locator(SELECTOR + " script, " + SELECTOR + " img").count() == 0
    assert page.evaluate(
        "() => [...document.scripts].every(s => !s.textContent.includes('alert('))"
    )
    assert "script" not in page.url and "onerror" not in page.url
