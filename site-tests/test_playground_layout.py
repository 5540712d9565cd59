"""The playground's result stays in sight while the form is edited: on a laptop beside the
form, each panel no taller than the window; on a phone the verdict line sticks
at the top. A form with a task select shows only the chosen task's inputs."""

from __future__ import annotations

from playwright.sync_api import Browser, expect
from support import Site, open_watched, wait_live, widget

PAGE = "steps/playground/"
IN_VIEW = """el => { const r = el.getBoundingClientRect();
  return r.bottom > 0 && r.top < window.innerHeight && r.height > 0; }"""


def test_the_result_sits_beside_the_form_on_a_laptop_and_the_verdict_sticks_on_a_phone(
    browser: Browser, root_site: Site
) -> None:
    watched = open_watched(browser, viewport={"width": 1280, "height": 800})
    try:
        page = watched.page
        page.goto(root_site.page_url(PAGE))
        wait_live(page)
        box = widget(page, "playground")
        form, output = box.locator("form.widget-controls"), box.locator("output.widget-result")
        form_box, output_box = form.bounding_box(), output.bounding_box()
        assert form_box and output_box
        assert output_box["x"] >= form_box["x"] + form_box["width"] - 1  # beside, not under
        # The reader reaches the form and edits its last field: the verdict is still on screen.
        box.locator("form.widget-controls").scroll_into_view_if_needed()
        last = box.locator(".widget-field:visible input, .widget-field:visible select").last
        last.focus()
        assert last.evaluate(IN_VIEW)
        assert box.locator(".widget-verdict").evaluate(IN_VIEW)

        page.set_viewport_size({"width": 390, "height": 844})
        last.focus()
        last.scroll_into_view_if_needed()
        assert last.evaluate(IN_VIEW)
        assert box.locator(".widget-verdict").evaluate(IN_VIEW)
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
        assert watched.console_errors == []
    finally:
        watched.context.close()


def test_only_the_chosen_tasks_inputs_show(browser: Browser, root_site: Site) -> None:
    watched = open_watched(browser, viewport={"width": 1280, "height": 800})
    try:
        page = watched.page
        page.goto(root_site.page_url(PAGE))
        wait_live(page)
        box = widget(page, "playground")
        tokens = box.get_by_label("Training tokens", exact=True)
        batch = box.locator('[name="batch"]')
        expect(tokens).to_be_hidden()
        expect(batch).to_be_visible()
        box.get_by_label("Task", exact=True).select_option("train")
        expect(tokens).to_be_visible()
        expect(batch).to_be_hidden()
        expect(box.locator(".widget-verdict")).to_contain_text("Training")
        # The five questions name their fields by the plan's keywords: the same rule holds.
        page.goto(root_site.page_url("steps/five-questions/"))
        wait_live(page)
        five = widget(page, "five_questions")
        expect(five.locator('[name="tokens"]')).to_be_hidden()
        expect(five.locator('[name="context_tokens"]')).to_be_visible()
        five.get_by_label("Task", exact=True).select_option("train")
        expect(five.locator('[name="tokens"]')).to_be_visible()
        expect(five.locator('[name="context_tokens"]')).to_be_hidden()
        assert watched.console_errors == []
    finally:
        watched.context.close()
