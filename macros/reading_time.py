"""How long a step takes: the words a reader sees on the built page, and its widgets.

A step's minutes are counted on the page as it opens, after the build: the words inside the
page's ``<article>`` that show without a click (widget output included, since the build
writes each widget's first result into the page), read at :data:`READING_WORDS_PER_MINUTE`,
plus an allowance for working the widgets. Not counted: what a reader must open on purpose
(the body of a closed ``<details>``; its ``<summary>`` counts), script and style, a
drop-down's options other than the chosen one, tooltips (``title`` attributes, SVG
``<title>``), elements marked ``hidden``, and the step header itself (it states the result).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

READING_WORDS_PER_MINUTE = 238  # adult silent reading of non-fiction (Brysbaert 2019)
WIDGET_MINUTES = 0.5  # a default allowance per widget, unless the page sets widget_minutes
WORD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’.,-]*")

_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
     "track", "wbr"}
)
_NEVER_SHOWN = frozenset({"script", "style", "template", "noscript", "title", "desc"})


class _VisibleWords(HTMLParser):
    """Collects the words of the article that show with the page as it opens."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        # One entry per open element: (tag, hides its content, is a closed <details>).
        self._open: list[tuple[str, bool, bool]] = []
        self._in_article = 0
        self.words: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            return
        named = dict(attrs)
        classes = (named.get("class") or "").split()
        hides = (
            tag in _NEVER_SHOWN
            or "hidden" in named
            or "step-meta" in classes
            or (tag == "option" and "selected" not in named)
        )
        closed_details = tag == "details" and "open" not in named
        self._open.append((tag, hides, closed_details))
        if tag == "article":
            self._in_article += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID or all(open_tag != tag for open_tag, _, _ in self._open):
            return
        while self._open:
            open_tag, _, _ = self._open.pop()
            if open_tag == "article":
                self._in_article -= 1
            if open_tag == tag:
                break

    def _shown(self) -> bool:
        for depth, (_, hides, closed_details) in enumerate(self._open):
            if hides:
                return False
            if closed_details and not any(t == "summary" for t, _, _ in self._open[depth + 1 :]):
                return False
        return True

    def handle_data(self, data: str) -> None:
        if self._in_article and self._shown():
            self.words += WORD_RE.findall(data)


def visible_words(page_html: str) -> int:
    """The number of words in the page's ``<article>`` a reader sees without opening anything."""
    parser = _VisibleWords()
    parser.feed(page_html)
    parser.close()
    return len(parser.words)


def step_minutes(words: int, widget_minutes: float) -> int:
    """Whole minutes (at least 1) to read ``words`` and work the widgets for ``widget_minutes``."""
    return max(1, round(words / READING_WORDS_PER_MINUTE + widget_minutes))
