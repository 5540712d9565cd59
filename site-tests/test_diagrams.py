"""The engine's diagrams in the browser: whole on a 390 px phone, labels 11 px or more inside
their boxes, readable in light and dark mode, axe clean."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect
from support import Site, open_watched, run_axe

PHONE = {"width": 390, "height": 844}
PAGES = ("steps/ai-ml-dl/", "further/network/")

MEASURE = """() => [...document.querySelectorAll('svg.diagram')].map(svg => {
  const box = svg.getBoundingClientRect();
  const scale = box.width / svg.viewBox.baseVal.width;
  const rgb = c => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = c => { const [r, g, b] = rgb(c).map(v => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const contrast = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05); };
  return {
    left: box.left, right: box.right, width: box.width,
    labels: [...svg.querySelectorAll('g')].map(g => {
      const t = g.querySelector('text'), r = g.querySelector('rect');
      const tb = t.getBoundingClientRect(), rb = r.getBoundingClientRect();
      return { text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * scale,
               inside: tb.left >= rb.left - 0.5 && tb.right <= rb.right + 0.5,
               contrast: contrast(getComputedStyle(t).fill, getComputedStyle(r).fill) };
    }),
  };
})"""

@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_the_diagrams_are_whole_and_readable_on_a_phone(browser: Browser, root_site: Site,
                                                            scheme: str) -> None:
    # The palette follows the system's preference until the reader picks one.
    watched = open_watched(browser, viewport=PHONE,
                           color_scheme="dark" if scheme == "slate" else "light")
    try:
        page = watched.page
        for path in PAGES:
            page.goto(root_site.page_url(path), wait_until="load")
            expect(page.locator("body")).to_have_attribute("data-md-color-scheme", scheme)
            (drawn,) = page.evaluate(MEASURE)
            assert drawn["left"] >= 0 and drawn["right"] <= PHONE["width"], path
            assert drawn["width"] >= 290, path
            assert len(drawn["labels"]) >= 11, path
            for label in drawn["labels"]:
                assert label["px"] >= 10.99, (path, label)
                assert label["inside"], (path, label)
                assert label["contrast"] >= 4.5, (path, label)
            assert page.evaluate(
                "() => document.documentElement.scrollWidth <= window.innerWidth"), path
            assert run_axe(page) == [], path
        assert watched.console_errors == []
    finally:
        watched.context.close()
