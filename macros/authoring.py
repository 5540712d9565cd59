"""What the authoring macros do, as plain functions (the macros module only registers them).

Each turns one line of markdown into HTML or text computed by the engine. Any problem (an
unknown widget, figure or table, a bad argument) raises :class:`AuthoringError` with the page
and the engine's message, and the build stops there.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

from engine.lesson.figures import get_figure
from engine.lesson.tables import get_table
from engine.numbers.errors import EngineError
from engine.registry import get_widget
from engine.render.html import esc
from engine.render.widget import render_page_widget

_instances_per_page: defaultdict[str, int] = defaultdict(int)


class AuthoringError(Exception):
    """A macro call in a page that the engine refuses; the message says where and why."""


def widget_html(name: str, page: str, inputs: Mapping[str, object]) -> str:
    """The widget's full HTML with its build-time result; ids unique within the page."""
    try:
        widget = get_widget(name)
        _instances_per_page[page] += 1
        instance = f"w-{name.replace('_', '-')}-{_instances_per_page[page]}"
        return render_page_widget(widget, instance, inputs)
    except EngineError as error:
        raise AuthoringError(f"{page}: widget({name!r}, ...): {error.message}") from error


def figure_text(name: str, inputs: Mapping[str, object]) -> str:
    """A number for prose, formatted by the engine."""
    try:
        return get_figure(name)(**inputs)
    except EngineError as error:
        raise AuthoringError(f"figure({name!r}, ...): {error.message}") from error
    except TypeError as error:
        raise AuthoringError(f"figure({name!r}, ...): {error}") from error


def table_html(name: str, inputs: Mapping[str, object]) -> str:
    """A table rendered by the engine."""
    try:
        return get_table(name)(**inputs)
    except EngineError as error:
        raise AuthoringError(f"table({name!r}, ...): {error.message}") from error
    except TypeError as error:
        raise AuthoringError(f"table({name!r}, ...): {error}") from error


def reset_page_counter(page: str) -> None:
    """Start the page's widget numbering again from 1."""
    _instances_per_page.pop(page, None)


STEPS_FOLDER = "steps/"  # docs/steps/: every page there is a step of the lesson


def number_steps(nav_pages: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """The lesson's steps in order: the pages in ``docs/steps/``, as the navigation lists them.

    ``nav_pages`` holds (source path, address) of every page in the navigation's order; the
    result holds the addresses of the steps, so a step's number is its place here (one source:
    mkdocs.yml's nav). A page in ``docs/steps/`` left out of the nav would go unnumbered: that
    stops the build.
    """
    return tuple(url for src, url in nav_pages if src.startswith(STEPS_FOLDER))


def step_title(number: int, title: str) -> str:
    """A step's title in the navigation, the next-step button and the browser tab."""
    return f"Step {number} · {title}"


READING_WORDS_PER_MINUTE = 238  # adult silent reading of non-fiction (Brysbaert 2019)
WIDGET_MINUTES = 0.5  # a default allowance per widget, unless the page sets widget_minutes
_MACRO_RE = re.compile(r"{{.*?}}|{%.*?%}", re.S)
_WORD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’.,-]*")


def reading_words(markdown: str) -> int:
    """Words a reader reads on the page: the prose, without macro calls and markup."""
    text = _MACRO_RE.sub(" ", markdown)
    text = re.sub(r"<[^>]+>|\]\([^)]*\)|\{[^}]*\}", " ", text)
    return len(_WORD_RE.findall(text))


def step_header(
    meta: Mapping[str, object], page: str, markdown: str, steps: Sequence[str]
) -> str:
    """'Step 3 of 21 · about 2 minutes (240 words, 1 widget)'.

    The step number is the page's place among ``steps`` (:func:`number_steps`); the minutes
    are computed from the page's words and its widgets (`widget_minutes:` in the front matter
    overrides the default allowance of half a minute per widget), so the time a step states
    stays true as its prose changes.
    """
    if page not in steps:
        raise AuthoringError(
            f"{page}: step_header() belongs on a step page (docs/{STEPS_FOLDER}, in the nav)."
        )
    step = steps.index(page) + 1
    words = reading_words(markdown)
    widgets = len(re.findall(r"{{\s*widget\(", markdown))
    widget_minutes = meta.get("widget_minutes", widgets * WIDGET_MINUTES)
    if not isinstance(widget_minutes, int | float) or not 0 <= widget_minutes <= 15:
        raise AuthoringError(f"{page}: `widget_minutes:` must be a number of minutes (0-15).")
    minutes = max(1, round(words / READING_WORDS_PER_MINUTE + widget_minutes))
    widget_text = f", {widgets} widget{'s' if widgets != 1 else ''}" if widgets else ""
    return (
        f'<p class="step-meta" data-step="{step}" data-minutes="{minutes}" data-words="{words}" '
        f'data-widget-minutes="{widget_minutes:g}">'
        f"Step {step} of {len(steps)} · about {minutes} minute{'s' if minutes != 1 else ''}"
        f" ({words:,} words{widget_text})</p>"
    )


def next_step_link(next_title: str | None, next_url: str | None) -> str:
    """The way on at the end of a step: a button to the next page in the navigation."""
    if not next_title or next_url is None:
        return ""
    return (
        f'<p class="next-step"><a class="md-button md-button--primary" href="{next_url}">'
        f"Next: {esc(next_title)} →</a></p>"
    )


def glossary_html(path: Path) -> str:
    """The abbreviation definitions of ``path`` (`*[TERM]: definition`) as a definition list."""
    items = []
    for line in path.read_text().splitlines():
        if line.startswith("*[") and "]: " in line:
            term, definition = line[2:].split("]: ", 1)
            items.append(f"<dt>{esc(term)}</dt><dd>{esc(definition)}</dd>")
    if not items:
        raise AuthoringError(f"{path}: no glossary entries found.")
    return '<dl class="glossary">' + "".join(items) + "</dl>"
