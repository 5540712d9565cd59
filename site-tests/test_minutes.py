"""The lesson's minutes are true of the pages a reader sees, and said the same everywhere.

Each step's header states minutes the build counted on the built page (macros/reading_time.py:
the words shown, and each shown widget's minutes, carried on its frame).
Here Chromium recounts independently: it opens each step as a reader first sees it (scripts
off, so the build-time widget output; closed <details> shut) and its innerText gives the words
it renders. The header's minutes must follow the stated rule from the words on the page, and
Home and the README must state the steps' total.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser
from support import Site, lesson_steps

from macros.reading_time import WORD_RE, exact_minutes, read_page, step_minutes

HEADER_RE = re.compile(
    r'class="step-meta" data-step="(\d+)" data-minutes="(\d+)" data-words="(\d+)" '
    r'data-widget-minutes="([0-9.]+)"'
)
# What the browser shows that a count of the page source may not know: drop-down options
# other than the chosen one are not on screen; the header states the count, and a widget
# frame's buttons and status are chrome the model does not count, so they are left out.
# Not read: what the reader model leaves out too, a diagram's labels among it (its half minute
# of looking covers them).
RENDERED_TEXT_JS = """() => {
  const notCounted = 'article option:not(:checked), article .step-meta, '
    + 'article .widget-copy, article .widget-status, article [data-picture]';
  for (const e of document.querySelectorAll(notCounted))
    e.remove();
  return document.querySelector('article').innerText;
}"""


def step_pages(site: Site) -> list[Path]:
    """The built steps' pages, in the navigation's order."""
    return [site.directory / path / "index.html" for path in lesson_steps()]


def _stated_minutes(site: Site) -> dict[int, tuple[int, int, float]]:
    """Step number -> (minutes, words, widget minutes) as each built step's header states."""
    stated = {}
    for html_path in step_pages(site):
        found = HEADER_RE.search(html_path.read_text())
        assert found, f"{html_path.parent.name}: no step header with its minutes"
        stated[int(found.group(1))] = (int(found.group(2)), int(found.group(3)), float(found.group(4)))
    steps = len(lesson_steps())
    assert sorted(stated) == list(range(1, steps + 1)), f"every one of the {steps} steps states its time"
    return stated


def test_each_step_states_the_minutes_of_what_a_reader_sees(
    root_site: Site, browser: Browser
) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        for html_path in step_pages(root_site):
            found = HEADER_RE.search(html_path.read_text())
            assert found, f"{html_path.parent.name}: no step header with its minutes"
            step, minutes, words = (int(found.group(i)) for i in (1, 2, 3))
            page.goto(html_path.as_uri())
            rendered = len(WORD_RE.findall(page.evaluate(RENDERED_TEXT_JS)))
            # The build's count reads the HTML and knows only the stylesheet's model-choice
            # fields: a few words it hides otherwise (a button for another case) count there.
            assert rendered * 0.95 <= words <= rendered * 1.05, (
                f"step {step}: the header counts {words} words, Chromium shows {rendered}"
            )
            widget_minutes = float(found.group(4))
            frames = read_page(html_path.read_text()).widget_minutes
            assert widget_minutes == pytest.approx(sum(frames), abs=1e-3), (
                f"step {step}: the header's widget minutes are its widgets' ({frames})"
            )
            assert minutes == step_minutes(words, widget_minutes)
    finally:
        context.close()
    total = _total_minutes(_stated_minutes(root_site))
    home = (root_site.directory / "index.html").read_text()
    assert f'<span class="lesson-minutes">about {total} minutes</span>' in home


def _total_minutes(stated: dict[int, tuple[int, int, float]]) -> int:
    """The lesson's minutes: each step's words at reading speed plus its widget allowance,
    added up unrounded and rounded once (rounding each step first would lose up to half a
    minute a step)."""
    return round(sum(exact_minutes(words, widget_minutes) for _, words, widget_minutes in stated.values()))


README_MINUTES_RE = re.compile(r"The lesson: \d+ steps in \d+ sections, about (\d+) minutes")


def test_the_readme_states_the_total_of_the_built_steps(root_site: Site) -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    found = README_MINUTES_RE.search(readme)
    assert found, "README.md says how long the lesson takes: 'The lesson: N steps in M sections, about T minutes'"
    total = _total_minutes(_stated_minutes(root_site))
    assert int(found.group(1)) == total, f"README says {found.group(1)} minutes, the steps add up to {total}"


def test_the_lesson_takes_about_half_an_hour(root_site: Site) -> None:
    stated = _stated_minutes(root_site)
    total = _total_minutes(stated)
    by_step = {step: (words, widget_minutes) for step, (_, words, widget_minutes) in stated.items()}
    assert 28 <= total <= 32, (
        f"the lesson takes about {total} minutes, not about 30 (words, widget minutes): {by_step}"
    )
