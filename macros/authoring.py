"""What the authoring macros do, as plain functions (the macros module only registers them).

Each turns one line of markdown into HTML or text computed by the engine. Any problem (an
unknown widget, figure or table, a bad argument) raises :class:`AuthoringError` with the page
and the engine's message, and the build stops there.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

from engine.lesson.diagrams.registry import get_diagram
from engine.lesson.figures.prose import get_figure
from engine.lesson.tables.registry import get_table
from engine.numbers.errors import EngineError
from engine.registry import get_widget
from engine.render.fields import Values
from engine.render.html import esc
from engine.render.widget import Widget, render_page_widget
from macros.lesson_nav import STEPS_FOLDER, step_number, step_slug
from macros.reading_time import (
    LOOK_MINUTES,
    READER_KINDS,
    read_page,
    step_minutes,
    widget_minutes,
)

_instances_per_page: defaultdict[str, int] = defaultdict(int)


class AuthoringError(Exception):
    """A macro call in a page that the engine refuses; the message says where and why."""


def widget_html(name: str, page: str, inputs: Mapping[str, object]) -> str:
    """The widget's full HTML with its build-time result; ids unique within the page.

    ``inputs`` are the widget's inputs, and optionally ``reader="use"`` or ``"look"``: what the
    step asks of the reader, when it is not what the widget's inputs say (a widget with
    inputs is to be used). The frame carries the minutes that asks
    (``data-reader-minutes``, :func:`macros.reading_time.widget_minutes`), read back from the
    built page for the step's minutes.
    """
    widget_inputs = {key: value for key, value in inputs.items() if key != "reader"}
    try:
        widget = get_widget(name)
        _instances_per_page[page] += 1
        instance = f"w-{name.replace('_', '-')}-{_instances_per_page[page]}"
        kind = reader_kind(widget, inputs.get("reader"))
        # A widget only to look at shows its result; its inputs wait one click away.
        html = render_page_widget(widget, instance, widget_inputs, fold_controls=kind == "look")
        minutes = reader_minutes(widget, widget_inputs, kind)
    except EngineError as error:
        raise AuthoringError(f"{page}: widget({name!r}, ...): {error.message}") from error
    except ValueError as error:
        raise AuthoringError(f"{page}: widget({name!r}, ...): {error}") from error
    frame = f'<div class="widget" id="{instance}" data-widget="{name}"'
    if not html.startswith(frame):
        raise AuthoringError(f"{page}: widget({name!r}): its frame does not start as {frame!r}")
    return f'{frame} data-reader-minutes="{minutes:.4g}"{html[len(frame):]}'


def reader_kind(widget: Widget, reader: object = None) -> str:
    """What ``widget`` asks of a reader: ``reader`` when given ("use" or "look"), else to be
    used when it has inputs (a visible control or a button), else only looked at."""
    if reader is None:
        has_inputs = widget.actions or any(c.kind != "hidden" for c in widget.controls)
        reader = "use" if has_inputs else "look"
    if reader not in READER_KINDS:
        raise ValueError(f"reader= is {' or '.join(map(repr, READER_KINDS))}, not {reader!r}")
    return str(reader)


def reader_minutes(widget: Widget, inputs: Mapping[str, object], reader: object = None) -> float:
    """The minutes ``widget`` at ``inputs`` asks of a reader (:func:`reader_kind`)."""
    reader = reader_kind(widget, reader)
    running = 0.0
    if widget.running_seconds is not None:
        running = widget.running_seconds(Values(widget.defaults(inputs)))
    return widget_minutes(str(reader), goal_answers=widget.goal_answers, running_seconds=running)


def figure_text(name: str, inputs: Mapping[str, object]) -> str:
    """A number for prose, formatted by the engine."""
    try:
        return get_figure(name)(**inputs)
    except EngineError as error:
        raise AuthoringError(f"figure({name!r}, ...): {error.message}") from error
    except TypeError as error:
        raise AuthoringError(f"figure({name!r}, ...): {error}") from error


def diagram_html(name: str, inputs: Mapping[str, object]) -> str:
    """A diagram drawn by the engine at build time, in a figure that says it is a picture to
    look at (``data-picture``, with its minutes: :data:`macros.reading_time.LOOK_MINUTES`)."""
    try:
        drawn = get_diagram(name)(**inputs)
    except EngineError as error:
        raise AuthoringError(f"diagram({name!r}, ...): {error.message}") from error
    except TypeError as error:
        raise AuthoringError(f"diagram({name!r}, ...): {error}") from error
    return (f'<figure class="diagram-figure" data-picture="{esc(name)}" '
            f'data-reader-minutes="{LOOK_MINUTES:.4g}">{drawn}</figure>')


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


def number_steps(nav_pages: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """The lesson's steps in order: the pages in ``docs/steps/``, as the navigation lists them.

    ``nav_pages`` holds (source path, address) of every page in the navigation's order; the
    result holds the addresses of the steps, so a step's number is its place here (one source:
    mkdocs.yml's nav). A page in ``docs/steps/`` left out of the nav would go unnumbered: that
    stops the build.
    """
    return tuple(url for src, url in nav_pages if src.startswith(STEPS_FOLDER))


def step_reference(
    slug: str, steps: Sequence[str], page_src: str, *, capital: bool = False, link: bool = False
) -> str:
    """Prose naming a step by its slug: 'step 13' ('Step 13' with ``capital``), the number from
    the nav's order (``steps``, the steps' addresses, :func:`number_steps`).

    With ``link`` it is a markdown link to the step, relative to ``page_src`` (the source path
    of the page it is written on), so it works under any sub-path and MkDocs checks it.
    """
    try:
        number = step_number(slug, [step_slug(address) for address in steps])
    except ValueError as error:
        raise AuthoringError(f"{page_src}: step({slug!r}): {error}") from error
    text = f"{'Step' if capital else 'step'} {number}"
    if not link:
        return text
    target = posixpath.relpath(f"{STEPS_FOLDER}{slug}.md", posixpath.dirname(page_src) or ".")
    return f"[{text}]({target})"


def step_title(number: int, title: str) -> str:
    """A step's title in the navigation, the next-step button and the browser tab."""
    return f"Step {number} · {title}"


_HEADER_RE = re.compile(
    r'<p class="step-meta" data-step="(?P<step>\d+)" data-of="(?P<of>\d+)">[^<]*</p>'
)
# What the Home page's "about N minutes" says until the build has counted every step.
LESSON_MINUTES_MARK = "@@lesson-minutes@@"


def step_header(
    meta: Mapping[str, object], page: str, markdown: str, steps: Sequence[str]
) -> str:
    """The step's header, 'Step 3 of 21', to be completed once the page is built.

    The step number is the page's place among ``steps`` (:func:`number_steps`). The minutes
    need the built page (the words a reader sees, widget output included, and the minutes its
    widgets carry), so :func:`finish_step_header` adds them after the build.
    """
    if page not in steps:
        raise AuthoringError(
            f"{page}: step_header() belongs on a step page (docs/{STEPS_FOLDER}, in the nav)."
        )
    if "widget_minutes" in meta:
        raise AuthoringError(
            f"{page}: `widget_minutes:` is no longer read: each widget's minutes follow from what "
            'it asks of the reader; say reader="look" or "use" on a widget() to set it.'
        )
    step = steps.index(page) + 1
    return (
        f'<p class="step-meta" data-step="{step}" data-of="{len(steps)}">'
        f"Step {step} of {len(steps)}</p>"
    )


def finish_step_header(page_html: str) -> tuple[str, float | None]:
    """The built page with its step header stating its minutes, and those minutes unrounded.

    'Step 3 of 21 · about 2 minutes (240 words, 1 widget)': the words are those a reader sees
    as the page opens and the widgets those that show, each with its minutes
    (:func:`macros.reading_time.read_page`); the header rounds, the lesson's total
    (:func:`finish_lesson_minutes`) adds the unrounded minutes. A page without a step header
    comes back unchanged, with None.
    """
    found = _HEADER_RE.search(page_html)
    if found is None:
        return page_html, None
    try:
        reading = read_page(page_html)
    except ValueError as error:
        raise AuthoringError(f"step {found['step']}: {error}") from error
    words, widgets = reading.words, len(reading.widget_minutes)
    widgets_minutes = sum(reading.widget_minutes)
    minutes = step_minutes(words, widgets_minutes)
    widget_text = f", {widgets} widget{'s' if widgets != 1 else ''}" if widgets else ""
    header = (
        f'<p class="step-meta" data-step="{found["step"]}" data-minutes="{minutes}" '
        f'data-words="{words}" data-widget-minutes="{widgets_minutes:.4g}">'
        f"Step {found['step']} of {found['of']} · about {minutes} "
        f"minute{'s' if minutes != 1 else ''} ({words:,} words{widget_text})</p>"
    )
    return page_html[: found.start()] + header + page_html[found.end() :], reading.minutes


def lesson_minutes_html() -> str:
    """'about N minutes' on the Home page: N is filled in by :func:`finish_lesson_minutes`."""
    return f'<span class="lesson-minutes">about {LESSON_MINUTES_MARK} minutes</span>'


def finish_lesson_minutes(text: str, step_minutes_by_page: Mapping[str, float],
                          steps: Sequence[str]) -> str:
    """``text`` with the lesson's total minutes in place of the mark: the steps' unrounded
    minutes added up, then rounded once."""
    missing = [page for page in steps if page not in step_minutes_by_page]
    if missing:
        raise AuthoringError(
            f"steps without a step_header(), so without minutes: {', '.join(missing)}"
        )
    total = round(sum(step_minutes_by_page[page] for page in steps))
    return text.replace(LESSON_MINUTES_MARK, str(total))


def next_step_link(next_title: str | None, next_url: str | None) -> str:
    """The way on at the end of a step: a button to the next page in the navigation."""
    if not next_title or next_url is None:
        return ""
    return (
        f'<p class="next-step"><a class="md-button md-button--primary" href="{next_url}">'
        f"Next: {esc(next_title)} →</a></p>"
    )


def download_link(site_path: str, page_url: str, text: str) -> str:
    """A download link to the site's file ``site_path`` from the page at ``page_url`` (a
    site-relative address: "" for Home, "a/" or "a.html"), relative so that any sub-path works."""
    to_root = "../" * page_url.count("/")
    return f'<a href="{esc(to_root + site_path)}" download>{esc(text)}</a>'


def glossary_html(path: Path) -> str:
    """The abbreviation definitions of ``path`` (`*[TERM]: definition`) as a definition list,
    each term once: a plural whose singular has its own entry ('tokens', 'token') is there
    only for the tooltips (an abbreviation matches whole words), not listed again."""
    entries = [line[2:].split("]: ", 1) for line in path.read_text().splitlines()
               if line.startswith("*[") and "]: " in line]
    terms = {term for term, _ in entries}
    items = []
    for term, definition in entries:
        if term.endswith("s") and term[:-1] in terms:
            continue
        items.append(f"<dt>{esc(term)}</dt><dd>{esc(definition)}</dd>")
    if not items:
        raise AuthoringError(f"{path}: no glossary entries found.")
    return '<dl class="glossary">' + "".join(items) + "</dl>"
