"""The page "How good are these numbers?" in a real browser: published measurements beside the
engine's bound and expected value, the engine's arithmetic beside published figures, every
row with a source and its errors in per cent, the numbers the engine computes in CPython, no
request off the site's origin, readable in both schemes."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page
from support import Site, Watched, open_watched, run_axe

from engine.lesson.reality import measured, published
from engine.lesson.reality.measurements import GROUPS, load

PAGE = "reality-check/"
ROWS = ".reality:not(.reality-measured) table tbody tr"
MEASURED = ".reality-measured table tbody tr"
PERCENT = re.compile(r"^(0\.0|[+\u2212]\d+(\.\d)?) %$")


def _open(watched: Watched, root_site: Site) -> Page:
    page = watched.page
    page.goto(root_site.page_url(PAGE))
    page.wait_for_load_state("networkidle")
    return page


def test_table_rows_have_source_and_difference_and_make_no_outside_request(
    watched: Watched, root_site: Site
) -> None:
    page = _open(watched, root_site)
    assert page.inner_text("h1").startswith("How good are these numbers?")

    rows = page.locator(ROWS)
    count = rows.count()
    assert count >= 8
    assert count == len(published.COMPARISONS)
    for i in range(count):
        row = rows.nth(i)
        source = row.locator("td.reality-source").inner_text().strip()
        assert len(source) > 10, i
        assert re.search(r"\b(19|20)\d\d\b", source), source
        diff = row.locator("td.reality-diff").inner_text().strip()
        assert PERCENT.match(diff), diff
        assert row.locator("td.reality-published").inner_text().strip()

    # Each row shows what the engine computes for it in CPython.
    for r in published.results():
        row = page.locator(f'{ROWS}[data-comparison="{r.comparison.id}"]')
        assert row.locator("td.reality-engine").inner_text() == published.format_value(
            r.engine, r.comparison.unit
        )
        assert row.locator("td.reality-diff").inner_text() == published.format_difference(
            r.difference_percent
        )

    # One table per group of measurements, then one per topic, each with its caption.
    captions = page.locator(".reality table caption").all_inner_texts()
    assert captions == list(GROUPS.values()) + list(published.TOPICS.values())


def test_measurements_show_bound_expected_and_errors_as_the_engine_computes_them(
    watched: Watched, root_site: Site
) -> None:
    page = _open(watched, root_site)
    rows = page.locator(MEASURED)
    assert rows.count() == len(load()) >= 40
    for c in measured.checked():
        m = c.measurement
        row = page.locator(f'{MEASURED}[data-measurement="{m.id}"]')
        source = row.locator("td.reality-source").inner_text()
        assert re.search(r"\b(19|20)\d\d\b", source), m.id
        assert row.locator("td.reality-published").inner_text() == m.value_text
        errors = row.locator("td.reality-diff").all_inner_texts()
        assert errors[1] == measured.expected_error_text(c)
        if c.bound is None:
            assert row.locator("td.reality-bound").inner_text() == "\u2014"
            continue
        assert row.locator("td.reality-bound").inner_text() == measured.format_measure(
            c.bound, m.metric, m.scope
        )
        assert errors[0] == measured.format_error(c.bound_error)
        assert PERCENT.match(errors[0]), errors[0]
    summary = page.locator("p.reality-summary").inner_text()
    # This project's own runs are counted apart from the publications.
    own = sum(m.source.startswith("This project") for m in load())
    assert f"{len(load())} measurements ({len(load()) - own} published by others, {own} made " \
        "for this lesson)" in summary


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_page_is_readable_in_both_colour_schemes(
    browser: Browser, root_site: Site, scheme: str
) -> None:
    w = open_watched(browser, color_scheme=scheme)
    try:
        w.page.goto(root_site.page_url(PAGE))
        w.page.wait_for_load_state("networkidle")
        assert run_axe(w.page) == []
        assert w.outside(root_site.origin) == []
    finally:
        w.context.close()
