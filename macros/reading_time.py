"""How long a step takes: the reader model, counted on the built page.

A step's minutes are counted on the page as it opens, after the build:

- the words inside the page's ``<article>`` that show without a click (prose, table cells,
  widget output included, since the build writes each widget's first result into the page),
  read at :data:`READING_WORDS_PER_MINUTE`;
- plus each widget that shows, by what it asks of the reader (:func:`widget_minutes`): one
  it asks the reader to use (it has inputs) :data:`USE_MINUTES`, one only to look at
  :data:`LOOK_MINUTES`, a drill :data:`QUESTION_MINUTES` for each correct answer that
  completes it, and a clock the real running time of its animation on top. The build writes
  each widget's minutes on its frame (``data-reader-minutes``); this reads them back.
- plus each diagram that shows (a figure marked ``data-picture``, placed by the
  ``diagram()`` macro), :data:`LOOK_MINUTES` with its minutes on it: a picture to look at,
  whose labels that time covers, so its words are not counted again.

Not counted: code blocks (``<pre>``: a command line to copy, not prose to read; inline
``<code>`` in a sentence counts), what a reader must open on purpose
(the body of a closed ``<details>``; its ``<summary>`` counts), script and style, a
drop-down's options other than the chosen one, tooltips (``title`` attributes, SVG
``<title>``), elements marked ``hidden``, a widget field the stylesheet shows only for one
choice of model, hardware or task (the pasted config.json, the typed parameter count, the
reader's own chip, the other task's inputs) while another is chosen, the step header itself (it states the result), and a
widget frame's chrome (:data:`FRAME_CHROME_CLASSES`: its "Copy link" and "Copy as command"
buttons with "Show the command", and its "Build-time figures." status), the same few words on
every widget, which a reader recognises as the frame's buttons rather than reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

from engine.lesson.plans.fields import task_field_names

READING_WORDS_PER_MINUTE = 238  # adult silent reading of non-fiction (Brysbaert 2019)
USE_MINUTES = 1.0  # a widget the step asks the reader to use: change an input, read the result
LOOK_MINUTES = 0.5  # a widget the reader only looks at
QUESTION_MINUTES = 1.0  # one drill question: read it, work it out, type it, read the feedback
READER_KINDS = ("use", "look")  # what an author may say a widget asks (`reader=` in markdown)
# The classes of a widget frame's chrome (engine/render/widget.py), not counted as words.
FRAME_CHROME_CLASSES = frozenset({"widget-copy", "widget-status"})
# A chart drawn twice (plot.Narrow) shows one drawing at a time (docs/css/lesson.css): the
# reader reads its labels once, so the narrow copy is not counted.
NARROW_DRAWING_CLASSES = frozenset({"chart-scroll", "narrow"})
WORD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’.,-]*")

_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
     "track", "wbr"}
)
_NEVER_SHOWN = frozenset({"script", "style", "template", "noscript", "title", "desc"})
# Fields docs/css/lesson.css shows only for one choice of a select of the widget:
# (element, "" for any, and name, or a name's prefix ending in "_") -> (the select, the option),
# with whether that option shows them (shown for it alone) or hides them (shown for any other).
# A widget whose task select offers serving and training (the playground, the five questions)
# shows only the chosen task's inputs, each named as the plan's field or its keyword.
_SHOWN_FOR_CHOICE: dict[tuple[str, str], tuple[str, str, bool]] = {
    ("textarea", "config"): ("model", "config", True),
    ("input", "params"): ("model", "custom", True),
    ("input", "chip_"): ("hardware", "own", True),
    **{("", name): ("task", "train", False) for name in task_field_names("serve")},
    **{("", name): ("task", "serve", False) for name in task_field_names("train")},
}
_CHOICE_SELECTS = frozenset(select for select, _, _ in _SHOWN_FOR_CHOICE.values())


def _shown_for(tag: str, name: str) -> tuple[str, str, bool] | None:
    """The (select, option, shows) that decides whether a field element shows, or None when
    it always shows."""
    for (element, key), needs in _SHOWN_FOR_CHOICE.items():
        if element in ("", tag) and (name == key or (key.endswith("_") and name.startswith(key))):
            return needs
    return None


class _VisibleWords(HTMLParser):
    """Collects the words of the article that show with the page as it opens."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        # One entry per open element: (tag, hides its content, is a closed <details>).
        self._open: list[tuple[str, bool, bool]] = []
        self._in_article = 0
        self.words: list[str] = []
        # The chosen option of each of the open widget's selects that show or hide fields.
        self._chosen: dict[str, str] = {}
        self._in_select = ""
        # Where the open widget field's words start, and the choice it needs to show (if any).
        self._field_start: int | None = None
        self._field_needs: tuple[str, str, bool] | None = None
        self._field_depth = 0
        self.widget_minutes: list[float] = []  # each shown widget's data-reader-minutes

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        classes = (named.get("class") or "").split()
        self._note_model_choice(tag, named, classes)
        picture = "data-picture" in named
        if ("data-widget" in named or picture) and self._in_article and self._shown():
            self._note_widget(named)
        if tag in _VOID:
            return
        hides = (
            tag in _NEVER_SHOWN
            or tag == "pre"
            or "hidden" in named
            or "step-meta" in classes
            or not FRAME_CHROME_CLASSES.isdisjoint(classes)
            or NARROW_DRAWING_CLASSES.issubset(classes)
            or picture
            or (tag == "option" and "selected" not in named)
        )
        closed_details = tag == "details" and "open" not in named
        self._open.append((tag, hides, closed_details))
        if tag == "article":
            self._in_article += 1

    def _note_widget(self, named: dict[str, str | None]) -> None:
        minutes = named.get("data-reader-minutes")
        if minutes is None:
            raise ValueError(
                f"{named.get('data-widget') or named.get('data-picture')!r} has no "
                "data-reader-minutes: a widget or diagram in a step is placed with its macro"
            )
        self.widget_minutes.append(float(minutes))

    def _note_model_choice(self, tag: str, named: dict[str, str | None], classes: list[str]) -> None:
        """Follow the widget's chosen model and hardware, and the fields shown only for one
        choice of them."""
        if tag == "div" and "widget" in classes:
            self._chosen = {}
        elif tag == "select":
            name = named.get("name") or ""
            self._in_select = name if name in _CHOICE_SELECTS else ""
            if self._in_select:
                self._chosen[self._in_select] = ""
            self._note_field_needs(tag, name)
        elif tag == "option" and self._in_select and "selected" in named:
            self._chosen[self._in_select] = named.get("value") or ""
        elif tag == "div" and "widget-field" in classes:
            self._field_start, self._field_needs = len(self.words), None
            self._field_depth = len(self._open) + 1
        else:
            self._note_field_needs(tag, named.get("name") or "")

    def _note_field_needs(self, tag: str, name: str) -> None:
        """Inside a widget field, note the choice its element ``name`` needs to show."""
        if self._field_start is not None and (needs := _shown_for(tag, name)) is not None:
            self._field_needs = needs

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._in_select = ""
        if tag in _VOID or all(open_tag != tag for open_tag, _, _ in self._open):
            return
        while self._open:
            open_tag, _, _ = self._open.pop()
            if open_tag == "article":
                self._in_article -= 1
            if len(self._open) < self._field_depth and self._field_start is not None:
                if self._field_needs and self._hidden_by_choice(*self._field_needs):
                    del self.words[self._field_start :]
                self._field_start = None
            if open_tag == tag:
                break

    def _hidden_by_choice(self, select: str, option: str, shows: bool) -> bool:
        """Whether the open widget's choice in ``select`` hides a field that ``option`` shows
        (``shows``) or hides (not ``shows``); a widget without that select hides nothing."""
        if select not in self._chosen:
            return False
        return (self._chosen[select] != option) if shows else (self._chosen[select] == option)

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


@dataclass(frozen=True)
class PageReading:
    """What a built page asks of its reader: the words it shows as it opens, and the minutes
    of each widget that shows (in page order)."""

    words: int
    widget_minutes: tuple[float, ...]

    @property
    def minutes(self) -> float:
        """The page's unrounded minutes (:func:`exact_minutes`)."""
        return exact_minutes(self.words, sum(self.widget_minutes))


def read_page(page_html: str) -> PageReading:
    """The words in the page's ``<article>`` a reader sees without opening anything, and its
    shown widgets' minutes (each from its ``data-reader-minutes``; one without stops the count)."""
    parser = _VisibleWords()
    parser.feed(page_html)
    parser.close()
    return PageReading(len(parser.words), tuple(parser.widget_minutes))


def visible_text(page_html: str) -> str:
    """The words :func:`read_page` counts, in page order, one space between each (punctuation
    between words dropped): what a reader sees without opening anything, for tests to read."""
    parser = _VisibleWords()
    parser.feed(page_html)
    parser.close()
    return " ".join(parser.words)


def visible_words(page_html: str) -> int:
    """The number of words in the page's ``<article>`` a reader sees without opening anything."""
    return read_page(page_html).words


def widget_minutes(kind: str, *, goal_answers: int = 0, running_seconds: float = 0.0) -> float:
    """Minutes a widget asks of its reader.

    ``kind`` is "use" (:data:`USE_MINUTES`) or "look" (:data:`LOOK_MINUTES`). A drill
    (``goal_answers`` > 0, the correct answers that complete it) that the reader is to use
    takes :data:`QUESTION_MINUTES` for each of them instead; the questions a reader gets
    wrong, and those answered after completing the drill, are practice, not counted. A clock
    adds its animation's ``running_seconds`` (real seconds, start to end) to either kind.
    """
    if kind not in READER_KINDS:
        raise ValueError(f"a widget asks the reader to {' or '.join(READER_KINDS)}, not {kind!r}")
    if goal_answers < 0 or not running_seconds >= 0:
        raise ValueError("a drill's goal and a clock's running time are never negative")
    if kind == "look":
        base = LOOK_MINUTES
    elif goal_answers:
        base = goal_answers * QUESTION_MINUTES
    else:
        base = USE_MINUTES
    return base + running_seconds / 60


def exact_minutes(words: int, widgets_minutes: float) -> float:
    """Minutes to read ``words`` and work the widgets for ``widgets_minutes``, unrounded."""
    return words / READING_WORDS_PER_MINUTE + widgets_minutes


def step_minutes(words: int, widgets_minutes: float) -> int:
    """Whole minutes (at least 1) to read ``words`` and work the widgets for ``widgets_minutes``.

    What a step's header states. A total is rounded once, from :func:`exact_minutes`: summing
    these rounded figures would lose up to half a minute a step (21 steps of 1.4 minutes would
    come to 21, not 29).
    """
    return max(1, round(exact_minutes(words, widgets_minutes)))
