"""A lesson page on paper (print media): no offline-reading line, no widget frame without a
result, and each widget's control values printed before its result, since the form is not."""

from __future__ import annotations

from playwright.sync_api import expect
from support import Site, Watched, wait_live, widget

PAGES = ("steps/roofline/", "steps/playground/", "steps/serve-the-model/")

WIDGET_FRAMES = """() => [...document.querySelectorAll('.widget')]
  .filter(w => w.getClientRects().length > 0)
  .map(w => ({name: w.dataset.widget,
              result: (w.querySelector('.widget-result')?.getBoundingClientRect().height || 0),
              fields: w.querySelectorAll('.widget-field').length,
              values: w.querySelector('.widget-print-values')?.innerText || ''}))"""


def test_a_printed_page_has_its_results_and_their_inputs_and_no_screen_furniture(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    for path in PAGES:
        page.goto(root_site.page_url(path))
        wait_live(page)
        page.emulate_media(media="print")
        expect(page.locator("[data-lesson-offline]")).to_be_hidden()
        expect(page.locator(".widget-controls").first).to_be_hidden()
        frames = page.evaluate(WIDGET_FRAMES)
        assert frames, path
        for frame in frames:
            assert frame["result"] > 0, (path, frame)  # no empty frame
            if frame["fields"]:  # the inputs, named (a panel without controls has none)
                assert ": " in frame["values"], (path, frame)
        page.emulate_media(media="screen")
        expect(page.locator(".widget-print-values").first).to_be_hidden()
    # The roofline's slider prints in the words it announces, the playground's choice by name.
    page.goto(root_site.page_url("steps/roofline/"))
    wait_live(page)
    page.emulate_media(media="print")
    values = widget(page, "roofline_chart").locator(".widget-print-values")
    expect(values).to_contain_text("Batch (powers of two): a batch of 1")
    page.emulate_media(media="screen")  # the reader prints a page shown on screen
    page.goto(root_site.page_url("steps/playground/"))
    wait_live(page)
    page.emulate_media(media="print")
    values = widget(page, "playground").locator(".widget-print-values")
    expect(values).to_contain_text("Task: Serve it (answer requests)")
    assert watched.console_errors == []
