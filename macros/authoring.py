"""What the authoring macros do, as plain functions (the macros module only registers them).

Each turns one line of markdown into HTML or text computed by the engine. Any problem (an
unknown widget, figure or table, a bad argument) raises :class:`AuthoringError` with the page
and the engine's message, and the build stops there.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

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
