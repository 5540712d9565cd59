"""Each step's reading time, counted on its page as built (widget output and all, closed
<details> left out: macros/reading_time.py), and the lesson's total on the Home page."""

from __future__ import annotations

from pathlib import Path

from macros.authoring import LESSON_MINUTES_MARK, finish_lesson_minutes, finish_step_header


class StepMinutes:
    """Each step's unrounded minutes, by address, gathered as the pages are built."""

    def __init__(self) -> None:
        self.by_address: dict[str, float] = {}

    def finish_page(self, html: str, address: str) -> str:
        """The built page with its step header's minutes stated (a page without one comes
        back as it is); the minutes are kept for :meth:`state_lesson_minutes`."""
        finished, minutes = finish_step_header(html)
        if minutes is not None:
            self.by_address[address] = minutes
        return finished

    def state_lesson_minutes(self, site: Path, steps: list[str]) -> None:
        """The Home page's 'about N minutes' (and its text in the search index): N is the sum
        of the ``steps``' unrounded minutes, rounded, known only once every step is built."""
        for path in [site / "index.html", *sorted((site / "search").glob("search_index.*"))]:
            if path.exists() and LESSON_MINUTES_MARK in (text := path.read_text("utf-8")):
                path.write_text(finish_lesson_minutes(text, self.by_address, steps), "utf-8")
