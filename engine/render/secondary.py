"""Secondary material in a widget's output, shut until the reader opens it.

What a reader needs to follow the step shows as the page opens: the verdict, the chart, the
headline figures. What backs them up (assumptions, sources, conventions, how a chart places
its points, a derivation, the same figures again as a table) sits in one closed ``<details>``
whose ``<summary>`` says what is inside. A step's stated minutes count only what shows
(macros/reading_time.py), so this is also what keeps "about 30 minutes" true.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.render.html import esc, tag


def secondary(summary: str, content: str) -> str:
    """``content`` (HTML) in a closed <details> titled ``summary`` (plain text)."""
    return tag("details", tag("summary", esc(summary)) + content, class_="widget-notes")


def secondary_list(summary: str, lines: Iterable[str], *, ordered: bool = False) -> str:
    """Lines of plain text as a list in a closed <details> titled ``summary``."""
    return secondary(summary, plain_list(lines, ordered=ordered))


def plain_list(lines: Iterable[str], *, ordered: bool = False) -> str:
    """Lines of plain text as an HTML list (to put several in one :func:`secondary`)."""
    items = "".join(tag("li", esc(line)) for line in lines)
    return tag("ol" if ordered else "ul", items)
