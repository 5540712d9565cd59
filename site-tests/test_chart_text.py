"""Charts on a phone: on a 390 px screen every chart on every page is drawn for that width
(its narrow drawing, engine.render.plot.Narrow), whole on screen with nothing to scroll
sideways, in its box or in the page, its text never under 11 px; in light and in dark mode,
axe clean. On a laptop a chart shows its wide drawing wherever its column holds it."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect
from support import Site, open_watched, pages, run_axe

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1280, "height": 900}
MIN_TEXT_PX = 11.0

# Every chart on screen once all its page's <details> are open: its drawn box, whether its
# scroll box scrolls, and each text's drawn size (its font size, in the chart's user units,
# times the chart's scale: drawn width / viewBox width) and edges.
DRAWN = """() => {
  for (const d of document.querySelectorAll('details')) d.open = true;
  return [...document.querySelectorAll('svg.chart')].flatMap(svg => {
    const box = svg.getBoundingClientRect();
    if (box.width === 0) return [];  // not shown: the other drawing of a pair
    const scale = box.width / svg.viewBox.baseVal.width;
    const scroller = svg.closest('.chart-scroll');
    const texts = [...svg.querySelectorAll('text')].map(t => {
      const r = t.getBoundingClientRect();
      return {text: t.textContent, left: r.left, right: r.right,
              px: parseFloat(getComputedStyle(t).fontSize) * scale};
    });
    const pair = svg.closest('.chart-pair');
    return [{chart: svg.getAttribute('class'), left: box.left, right: box.right,
             column: pair ? pair.clientWidth : null,
             scrolls: scroller.scrollWidth > scroller.clientWidth,
             tabindex: scroller.getAttribute('tabindex'), texts}];
  });
}"""


def _chart_pages(site: Site) -> list[str]:
    found = [
        path
        for path in pages(site.directory)
        if 'class="chart ' in (site.directory / path / "index.html").read_text()
    ]
    assert len(found) >= 15  # the lesson's chart pages, not an empty walk
    return found


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_phone_sees_every_chart_whole_drawn_for_its_width(
    browser: Browser, root_site: Site, scheme: str
) -> None:
    watched = open_watched(browser, viewport=PHONE, color_scheme=scheme)
    try:
        page = watched.page
        measured = 0
        for path in _chart_pages(root_site):
            page.goto(root_site.page_url(path), wait_until="domcontentloaded")
            expect(page.locator("body")).to_have_attribute(
                "data-md-color-scheme", "slate" if scheme == "dark" else "default"
            )
            charts = page.evaluate(DRAWN)
            assert charts, path
            for c in charts:
                where = (path, c["chart"])
                assert "chart-narrow" in c["chart"], where  # the drawing for a narrow screen
                assert c["left"] >= 0 and c["right"] <= PHONE["width"], (where, c["right"])
                assert not c["scrolls"] and c["tabindex"] == "0", where
                for t in c["texts"]:
                    assert t["px"] >= MIN_TEXT_PX - 0.01, (where, t)
                    assert t["left"] >= 0 and t["right"] <= PHONE["width"], (where, t)
                measured += len(c["texts"])
            assert page.evaluate(
                "() => document.documentElement.scrollWidth <= window.innerWidth"
            ), path
            assert run_axe(page) == [], path
        assert measured > 100
        assert watched.console_errors == []
        assert watched.outside(root_site.origin) == []
    finally:
        watched.context.close()


def test_a_laptop_sees_the_wide_drawing_where_its_column_holds_it(
    browser: Browser, root_site: Site
) -> None:
    watched = open_watched(browser, viewport=LAPTOP)
    try:
        page = watched.page
        wide = 0
        for path in _chart_pages(root_site):
            page.goto(root_site.page_url(path), wait_until="domcontentloaded")
            charts = page.evaluate(DRAWN)
            assert charts, path
            for c in charts:
                where = (path, c["chart"], c["column"])
                if c["column"] is not None:  # a chart drawn twice
                    assert ("chart-narrow" in c["chart"]) == (c["column"] < 640), where
                wide += "chart-narrow" not in c["chart"]
                assert not c["scrolls"], where
                assert all(t["px"] >= MIN_TEXT_PX - 0.01 for t in c["texts"]), where
        assert wide >= 10  # the main column holds the wide drawings
        assert watched.console_errors == []
    finally:
        watched.context.close()
