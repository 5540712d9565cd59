"""The cheat sheet: its tables are the engine's numbers, and the page prints on one A4 page
(as the offline zip's README says) with every table and none of the site's chrome."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from support import Site, Watched

from engine.lesson.figures import prose as figures
from engine.lesson.tables import cheatsheet
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.memory import serving_memory, training_state_bytes_per_param
from engine.numbers.roofline import ridge_point
from engine.words.format import format_GB

CHEAT_PAGE = "steps/cheat-sheet/"
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


def test_the_built_cheat_sheet_shows_the_engines_numbers(root_site: Site) -> None:
    tables = built_tables(root_site)
    assert set(tables.tables) == set(cheatsheet.CHEAT_TABLES)
    m8, m70 = get_model("llama-3.1-8b"), get_model("llama-3.1-70b")
    h100, h200 = get_hardware("h100-sxm"), get_hardware("h200")

    formats = tables.grid("cheat_formats")
    assert formats["BF16 (bfloat16)"]["Bytes per parameter"] == "2"
    assert formats["INT4"]["Llama 3.1 8B"] == format_GB(m8.params * 0.5)
    assert formats["BF16 (bfloat16)"]["Llama 3.1 70B"] == figures.weights("llama-3.1-70b")
    (train,) = (row for name, row in formats.items() if name.startswith("Train with Adam"))
    total = sum(training_state_bytes_per_param("adam", "mixed-16").values())
    assert train["Bytes per parameter"] == f"{total:g}"
    assert train["Llama 3.1 8B"] == figures.train_state("llama-3.1-8b")

    rules = tables.grid("cheat_flops_rules")
    assert rules["Use it (one token in or out)"]["Llama 3.1 8B"] == (
        figures.flops_per_token("llama-3.1-8b")
    )

    hardware = tables.grid("cheat_hardware")
    assert hardware["H100 SXM5 80GB"]["BF16 ridge"] == f"{ridge_point(h100, 'bf16'):,.0f}"
    assert hardware["H200 SXM 141GB"]["Bandwidth"] == figures.bandwidth("h200")
    assert hardware["H100 SXM5 80GB"]["Llama 3.1 8B decode"] == figures.decode_ceiling("llama-3.1-8b")
    assert hardware["H200 SXM 141GB"]["Llama 3.1 8B decode"] == (
        figures.decode_ceiling("llama-3.1-8b", hardware="h200")
    )

    fits = tables.grid("cheat_fits")
    a100 = get_hardware("a100-80gb")
    for model in (m8, m70):
        # From the A100's need (vLLM profiles 2,048 tokens there) to the H100's (8,192).
        least = format_GB(serving_memory(model, a100).per_gpu_bytes)[:-3]
        for hw in (h100, h200):
            mem = serving_memory(model, hw)
            assert fits[model.name]["Needs"] == f"{least}–{format_GB(mem.per_gpu_bytes)}"
            assert fits[model.name][cheatsheet.short_name(hw)] == ("fits" if mem.fits else "no")
    assert fits["Llama 3.1 70B"][cheatsheet.short_name(h100)] == "no"


def test_the_cheat_sheet_prints_on_one_a4_page(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url(CHEAT_PAGE))
    # The tables show on screen as on paper: none waits in a closed <details>.
    for name in cheatsheet.CHEAT_TABLES:
        assert page.is_visible(f"table[data-cheat={name}]")
    assert page.locator("article details").count() == 0
    pdf = page.pdf(format="A4", print_background=False)
    pages = len(PAGE_OBJECT.findall(pdf))
    print(f"the cheat sheet prints on {pages} A4 pages")
    # tools/offline_zip.py's README says one page; issue 28 allows two, the README must follow.
    assert pages == 1, f"the cheat sheet prints on {pages} A4 pages; the offline README says one"
    # Printing hides the site's chrome but keeps every table.
    page.emulate_media(media="print")
    # Found with what print hides (a hidden element leaves the accessibility tree).
    header = page.get_by_role("banner", include_hidden=True)
    lesson_nav = page.get_by_role("navigation", name="Navigation", exact=True, include_hidden=True)
    assert header.count() == 1 and lesson_nav.count() == 1
    assert not header.is_visible()
    assert not lesson_nav.is_visible()
    assert not page.locator(".next-step").is_visible()  # a paragraph: no role to find it by
    # Each table names its cheat in a data attribute (the tables have no captions).
    for name in cheatsheet.CHEAT_TABLES:
        assert page.is_visible(f"table[data-cheat={name}]")
