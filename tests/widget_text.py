"""Rendering a widget the way the engine tests read it: its output HTML, and that HTML as the
plain text a reader sees (tags dropped, entities decoded, runs of white space made one)."""

from __future__ import annotations

import html
import re

from engine.registry import get_widget


def render(name: str, **overrides: object) -> str:
    """Widget ``name``'s output HTML at its defaults with ``overrides`` (control name -> value)."""
    widget = get_widget(name)
    return widget.run(widget.defaults(overrides)).html


def text_of(markup: str) -> str:
    """``markup`` as text: tags become spaces, entities are decoded, white space collapses."""
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", markup)))
