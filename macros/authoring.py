"""What the authoring macros do, as plain functions (the macros module only registers them).

Each turns one line of markdown into HTML or text computed by the engine. Any problem (an
unknown widget, figure or table, a bad argument) raises :class:`AuthoringError` with the page
and the engine's message, and the build stops there.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

from engine.errors import EngineError
from engine.figures import get_figure
from engine.tables import get_table
from engine.widgets.base import render_page_widget
from engine.widgets.registry import get_widget

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


LESSON_STEPS = 21


def step_header(meta: Mapping[str, object], page: str) -> str:
    """'Step 3 of 21 · about 2 minutes' from the page's front matter (step, minutes)."""
    step, minutes = meta.get("step"), meta.get("minutes")
    if not isinstance(step, int) or not 1 <= step <= LESSON_STEPS:
        raise AuthoringError(f"{page}: front matter needs `step:` between 1 and {LESSON_STEPS}.")
    if not isinstance(minutes, int | float) or not 0 < minutes <= 15:
        raise AuthoringError(f"{page}: front matter needs `minutes:` (reading and doing time).")
    return (
        f'<p class="step-meta" data-step="{step}" data-minutes="{minutes:g}">'
        f"Step {step} of {LESSON_STEPS} · about {minutes:g} minute{'s' if minutes != 1 else ''}</p>"
    )


def next_step_link(next_title: str | None, next_url: str | None) -> str:
    """The way on at the end of a step: a button to the next page in the navigation."""
    if not next_title or next_url is None:
        return ""
    return (
        f'<p class="next-step"><a class="md-button md-button--primary" href="{next_url}">'
        f"Next: {esc_text(next_title)} →</a></p>"
    )


def esc_text(text: str) -> str:
    import html

    return html.escape(text, quote=True)


def glossary_html(path: Path) -> str:
    """The abbreviation definitions of ``path`` (`*[TERM]: definition`) as a definition list."""
    items = []
    for line in path.read_text().splitlines():
        if line.startswith("*[") and "]: " in line:
            term, definition = line[2:].split("]: ", 1)
            items.append(f"<dt>{esc_text(term)}</dt><dd>{esc_text(definition)}</dd>")
    if not items:
        raise AuthoringError(f"{path}: no glossary entries found.")
    return '<dl class="glossary">' + "".join(items) + "</dl>"
