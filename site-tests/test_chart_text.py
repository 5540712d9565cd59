"""Chart text on a phone: on a 390 px screen no chart label on any page is
drawn under 11 px; a chart too wide for the screen scrolls sideways in its own box, which
the keyboard reaches, unless it has a drawing for narrow screens, which then fits."""

from __future__ import annotations

from playwright.sync_api import Browser
from support import Site, open_watched, pages

PHONE = {"width": 390, "height": 844}
MIN_TEXT_PX = 11.0

# Every visible chart text: its drawn size is its font size (in the chart's user units)
# times the chart's scale (drawn width / viewBox width).
DRAWN_SIZES = """() => [...document.querySelectorAll('svg.chart')].flatMap(svg => {
  const drawn = svg.getBoundingClientRect().width;
  if (drawn === 0) return [];  // hidden (a closed panel): not on screen
  const scale = drawn / svg.viewBox.baseVal.width;
  return [...svg.querySelectorAll('text')].map(t => ({
    text: t.textContent,
    chart: svg.getAttribute('class'),
    px: parseFloat(getComputedStyle(t).fontSize) * scale,
  }));
})"""


def test_no_chart_text_is_under_11_px_on_a_phone(browser: Browser, root_site: Site) -> None:
    with_charts = [
        path
        for path in pages(root_site.directory)
        if 'class="chart ' in (root_site.directory / path / "index.html").read_text()
    ]
    assert len(with_charts) >= 15  # the lesson's chart pages, not an empty walk
    watched = open_watched(browser, viewport=PHONE)
    try:
        page = watched.page
        measured = 0
        for path in with_charts:
            page.goto(root_site.page_url(path), wait_until="domcontentloaded")
            sizes = page.evaluate(DRAWN_SIZES)
            measured += len(sizes)
            small = [s for s in sizes if s["px"] < MIN_TEXT_PX - 0.01]
            assert small == [], (path, small[:3])
            # Each chart wider than the screen scrolls in a box the keyboard can reach; a
            # chart drawn for a narrow screen fits it.
            boxes = page.evaluate(
                """() => [...document.querySelectorAll('.chart-scroll')]
                     .filter(box => box.getBoundingClientRect().width > 0)
                     .map(box => ({tabindex: box.getAttribute('tabindex'),
                                   narrow: box.classList.contains('narrow'),
                                   scrolls: box.scrollWidth > box.clientWidth}))"""
            )
            assert boxes and all(
                b["tabindex"] == "0" and b["scrolls"] != b["narrow"] for b in boxes
            ), path
            # ... and the page itself never scrolls sideways.
            assert page.evaluate(
                "() => document.documentElement.scrollWidth <= window.innerWidth"
            ), path
        assert measured > 100
        assert watched.console_errors == []
        assert watched.outside(root_site.origin) == []
    finally:
        watched.context.close()
