"""The lesson's steps numbered from the navigation's order, the one place a step's number
comes from (mkdocs.yml's nav; the step pages live in docs/steps/)."""

from __future__ import annotations

from typing import Any

from macros.authoring import AuthoringError, number_steps, step_title
from macros.lesson_nav import STEPS_FOLDER


def number_nav_steps(nav: Any, config: Any, files: Any) -> None:
    """Each step page's title in ``nav`` becomes 'Step N · title', and
    ``config.extra["lesson_steps"]`` lists the steps' addresses in order (for the step_header
    and step_count macros, and for the page's script that ticks visited steps; see
    overrides/main.html). AuthoringError for a step page missing from the nav, or one listed
    there without a title."""
    in_nav = [(page.file.src_uri, page.url) for page in nav.pages]
    steps = number_steps(in_nav)
    listed = {src for src, _ in in_nav}
    unlisted = [f.src_uri for f in files.documentation_pages() if f.src_uri.startswith(STEPS_FOLDER)]
    unlisted = [src for src in unlisted if src not in listed]
    if unlisted:
        raise AuthoringError(f"step pages missing from mkdocs.yml's nav: {', '.join(unlisted)}")
    for page in nav.pages:
        if page.url in steps:
            if not page.title:
                raise AuthoringError(f"{page.file.src_uri}: give the step a title in the nav.")
            page.title = step_title(steps.index(page.url) + 1, page.title)
    config.extra["lesson_steps"] = list(steps)
