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


# A chart's narrow drawing (engine.render.plot.Narrow): shown instead of the wide one on a
# narrow screen, never beside it, so a reader reads one of the two.
_NARROW_DRAWING = re.compile(r'<div class="chart-scroll narrow"[^>]*><svg .*?</svg></div>', re.S)


def one_drawing(markup: str) -> str:
    """``markup`` without the narrow drawings of its charts (each chart's wide one stays)."""
    return _NARROW_DRAWING.sub("", markup)


def text_of(markup: str) -> str:
    """``markup`` as text, as a reader reads it: each chart once (:func:`one_drawing`), tags
    become spaces, entities are decoded, white space collapses."""
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", one_drawing(markup))))
