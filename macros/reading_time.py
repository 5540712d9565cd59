"""How long a step takes: the words a reader sees on the built page, and its widgets.

A step's minutes are counted on the page as it opens, after the build: the words inside the
page's ``<article>`` that show without a click (widget output included, since the build
writes each widget's first result into the page), read at :data:`READING_WORDS_PER_MINUTE`,
plus an allowance for working the widgets. Not counted: what a reader must open on purpose
(the body of a closed ``<details>``; its ``<summary>`` counts), script and style, a
drop-down's options other than the chosen one, tooltips (``title`` attributes, SVG
``<title>``), elements marked ``hidden``, a widget field the stylesheet shows only for one
choice of model (the pasted config.json, the typed parameter count) while another is chosen,
and the step header itself (it states the result).
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
# Fields docs/css/lesson.css hides unless the widget's model choice is this value:
# (element, name) -> the model option that shows them.
_SHOWN_FOR_MODEL = {("textarea", "config"): "config", ("input", "params"): "custom"}


class _VisibleWords(HTMLParser):
    """Collects the words of the article that show with the page as it opens."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        # One entry per open element: (tag, hides its content, is a closed <details>).
        self._open: list[tuple[str, bool, bool]] = []
        self._in_article = 0
        self.words: list[str] = []
        self._chosen_model: str | None = None  # None: this widget has no model choice
        self._in_model_select = False
        # Where the open widget field's words start, and the model it needs to show (if any).
        self._field_start: int | None = None
        self._field_needs = ""
        self._field_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        classes = (named.get("class") or "").split()
        self._note_model_choice(tag, named, classes)
        if tag in _VOID:
            return
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

    def _note_model_choice(self, tag: str, named: dict[str, str | None], classes: list[str]) -> None:
        """Follow the widget's chosen model, and the fields shown only for one choice."""
        if tag == "div" and "widget" in classes:
            self._chosen_model = None
        elif tag == "select":
            self._in_model_select = named.get("name") == "model"
            if self._in_model_select:
                self._chosen_model = ""
        elif tag == "option" and self._in_model_select and "selected" in named:
            self._chosen_model = named.get("value") or ""
        elif tag == "div" and "widget-field" in classes:
            self._field_start, self._field_needs = len(self.words), ""
            self._field_depth = len(self._open) + 1
        elif (tag, named.get("name")) in _SHOWN_FOR_MODEL and self._field_start is not None:
            self._field_needs = _SHOWN_FOR_MODEL[(tag, named.get("name") or "")]

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._in_model_select = False
        if tag in _VOID or all(open_tag != tag for open_tag, _, _ in self._open):
            return
        while self._open:
            open_tag, _, _ = self._open.pop()
            if open_tag == "article":
                self._in_article -= 1
            if len(self._open) < self._field_depth and self._field_start is not None:
                needs, chosen = self._field_needs, self._chosen_model
                if needs and chosen is not None and needs != chosen:
                    del self.words[self._field_start :]
                self._field_start = None
            if open_tag == tag:
                break

    def _shown(self) -> bool:
        for depth, (_, hides, closed_details) in enumerate(self._open):
            if hides:
                return False
            # A closed <details> shows its own <summary> (its child), not a nested one's.
            inside = self._open[depth + 1 : depth + 2]
            if closed_details and not (inside and inside[0][0] == "summary"):
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


def exact_minutes(words: int, widget_minutes: float) -> float:
    """Minutes to read ``words`` and work the widgets for ``widget_minutes``, unrounded."""
    return words / READING_WORDS_PER_MINUTE + widget_minutes


def step_minutes(words: int, widget_minutes: float) -> int:
    """Whole minutes (at least 1) to read ``words`` and work the widgets for ``widget_minutes``.

    What a step's header states. A total is rounded once, from :func:`exact_minutes`: summing
    these rounded figures would lose up to half a minute a step (21 steps of 1.4 minutes would
    come to 21, not 29).
    """
    return max(1, round(exact_minutes(words, widget_minutes)))
