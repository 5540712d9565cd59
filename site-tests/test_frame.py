"""The lesson frame: numbered steps with minutes, a way on from every step, progress kept on
the reader's device (surviving a reload and ignoring a corrupted value), glossary terms."""

from __future__ import annotations

import re

from support import Site, Watched, lesson_steps, step_number, visible_text, wait_live

STEPS = lesson_steps()


def test_a_reader_walks_from_home_through_the_steps_by_the_pages_own_links(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(""))
    # Home's call to action: the link styled as its primary button, to the first step.
    page.click(f"a.md-button--primary[href*='{STEPS[0]}']")
    seen = []
    while True:
        page.wait_for_selector(".step-meta[data-step]")
        meta = page.locator(".step-meta")
        seen.append(int(str(meta.get_attribute("data-step"))))
        assert re.fullmatch(
            rf"Step \d+ of {len(STEPS)} · about \d+ minutes? \([\d,]+ words(, \d+ widgets?)?\)",
            meta.inner_text(),
        )
        nxt = page.locator("p.next-step a")
        if "Step" not in nxt.inner_text():
            break
        nxt.click()
        # Instant navigation swaps the page in place: wait until the old step has gone.
        page.wait_for_function(
            "prev => document.querySelector('.step-meta')?.dataset.step !== prev",
            arg=str(seen[-1]),
        )
    assert seen == list(range(1, len(STEPS) + 1))


def test_progress_survives_a_reload_and_ignores_a_corrupted_value(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url("steps/ai-ml-dl/"))
    page.goto(root_site.page_url("steps/training-needs-more-memory/"))
    # The progress line is a paragraph at the top of the navigation: no role of its own.
    progress = page.locator(".lesson-progress__text")
    assert f"2 of {len(STEPS)} steps visited" in visible_text(progress)
    page.reload()
    assert f"2 of {len(STEPS)} steps visited" in visible_text(progress)
    assert page.locator(".md-nav__link.is-visited").count() >= 2
    for corrupted in [
        "{not json",
        '{"version": 1, "steps": "x"}',
        '{"version": 1, "steps": [1e9, -3, "<b>"], "drills": []}',
        "null",
    ]:
        page.evaluate("v => localStorage.setItem('lesson:progress', v)", corrupted)
        page.reload()
        assert f"1 of {len(STEPS)} steps visited" in visible_text(progress)
    page.get_by_role("button", name="Reset progress").click()
    assert f"0 of {len(STEPS)} steps visited" in visible_text(progress)


def test_glossary_terms_show_their_definition_on_focus(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url("steps/serve-the-model/"))
    term = page.locator(".md-content abbr[title]").first
    assert term.get_attribute("title")
    assert term.get_attribute("tabindex") == "0"
    page.goto(root_site.page_url("glossary/"))
    assert page.locator("dl.glossary dt").count() >= 10


# Counts the engine workers the page creates (run before any of the page's scripts).
COUNT_ENGINE_WORKERS = """
  window.__engineWorkers = 0;
  const NativeWorker = window.Worker;
  window.Worker = function (url, options) {
    if (String(url).includes("engine-worker.js")) window.__engineWorkers += 1;
    return new NativeWorker(url, options);
  };
  window.Worker.prototype = NativeWorker.prototype;
"""


def test_the_engine_starts_after_instant_navigation_from_a_page_without_widgets(
    watched: Watched, root_site: Site
) -> None:
    # The glossary has no widget, so its head has no engine start script: after instant
    # navigation to a step with widgets, lesson.js starts the engine itself.
    page = watched.page
    page.add_init_script(COUNT_ENGINE_WORKERS)
    page.goto(root_site.page_url("glossary/"))
    assert page.evaluate("window.__lessonEarlyEngine === undefined")
    page.evaluate("window.__sameDocument = true")
    link = ".md-sidebar--primary a.md-nav__link[href$='steps/train-it-anyway/']"
    # The nav's links carry the step number the build gave the page (its place in the nav).
    assert page.get_attribute(link, "data-step") == str(step_number("steps/train-it-anyway/"))
    page.click(link)
    page.wait_for_url("**/steps/train-it-anyway/")
    wait_live(page)
    assert page.evaluate("window.__sameDocument") is True
    assert page.get_attribute(".step-meta", "data-step") == str(
        step_number("steps/train-it-anyway/")
    )
    assert page.evaluate("window.__engineWorkers") == 1
