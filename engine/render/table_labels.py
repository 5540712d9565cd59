"""Tables a phone can stack: each body cell labelled with its column's head.

On a narrow screen (the lesson's CSS, ``table[data-stack="rows"]``) a table's rows become
blocks and each cell shows its ``data-label`` before its value, so no column is ever cut off
by the screen's edge. :func:`stack_tables` marks and labels every table of some HTML that
has a head row of at least :data:`MIN_COLUMNS` columns, unless the table says already
(``data-stack="never"``: a grid made to fit a phone); it runs on every widget's result (live
and at build time) and on every built page (tables written in markdown). It reads only the
well-formed HTML the engine and the markdown renderer write (no nested tables).

A head's text is unescaped as :func:`esc` escaped it (the engine writes no other character
reference), not with ``html.unescape``: importing the ``html`` module would ship its
2,000-entry entity table to the reader's browser (~40 kB on the wire). The build passes
``html.unescape`` for the pages' markdown tables.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from engine.render.html import esc

__all__ = ["MIN_COLUMNS", "stack_tables", "unescape_esc"]

MIN_COLUMNS = 3  # narrower tables fit a phone as they are

_TABLE = re.compile(r"<table\b([^>]*)>(.*?)</table>", re.S)
_HEAD = re.compile(r"<thead\b[^>]*>(.*?)</thead>", re.S)
_BODY = re.compile(r"(<tbody\b[^>]*>)(.*?)(</tbody>)", re.S)
_ROW = re.compile(r"(<tr\b[^>]*>)(.*?)(</tr>)", re.S)
_CELL = re.compile(r"<(td|th)\b([^>]*)>(.*?)</\1>", re.S)
_CELL_OPEN = re.compile(r"<(td|th)\b([^>]*)>")
_TAGS = re.compile(r"<[^>]+>")
_SPAN = re.compile(r'\bcolspan="?(\d+)')


def _span(attributes: str) -> int:
    found = _SPAN.search(attributes)
    return max(1, int(found.group(1))) if found else 1


def unescape_esc(text: str) -> str:
    """``text`` as it was before :func:`esc` (its five references; any other stays as it is)."""
    for reference, character in _ESCAPED:
        text = text.replace(reference, character)
    return text


_ESCAPED = (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&#x27;", "'"), ("&amp;", "&"))


def _text(cell_html: str, unescape: Callable[[str], str]) -> str:
    return " ".join(unescape(_TAGS.sub(" ", cell_html)).split())


def _column_heads(head_html: str, unescape: Callable[[str], str]) -> list[str]:
    """The text of each column's head, from the last row of the table's head."""
    rows = _ROW.findall(head_html)
    if not rows:
        return []
    heads: list[str] = []
    for cell in _CELL.finditer(rows[-1][1]):
        heads += [_text(cell.group(3), unescape)] * _span(cell.group(2))
    return heads


def _label_row(row: re.Match[str], heads: list[str]) -> str:
    column = 0
    out: list[str] = []
    last = 0
    cells = row.group(2)
    for cell in _CELL_OPEN.finditer(cells):
        kind, attributes = cell.group(1), cell.group(2)
        label = heads[column] if column < len(heads) else ""
        column += _span(attributes)
        # A row's own head (th scope=row) names the row; it needs no label.
        if kind == "th" or not label or "data-label=" in attributes:
            continue
        out.append(cells[last:cell.end() - 1] + f' data-label="{esc(label)}">')
        last = cell.end()
    out.append(cells[last:])
    return row.group(1) + "".join(out) + row.group(3)


def _stack(table: re.Match[str], unescape: Callable[[str], str]) -> str:
    attributes, inner = table.group(1), table.group(2)
    if "data-stack" in attributes or "<table" in inner:
        return table.group(0)
    head = _HEAD.search(inner)
    heads = _column_heads(head.group(1), unescape) if head else []
    if len(heads) < MIN_COLUMNS:
        return table.group(0)
    labelled = _BODY.sub(
        lambda body: body.group(1)
        + _ROW.sub(lambda row: _label_row(row, heads), body.group(2))
        + body.group(3),
        inner,
    )
    return f'<table{attributes} data-stack="rows">{labelled}</table>'


def stack_tables(page_html: str, unescape: Callable[[str], str] = unescape_esc) -> str:
    """``page_html`` with each table of :data:`MIN_COLUMNS` or more columns marked
    ``data-stack="rows"`` and its body cells labelled ``data-label`` (the column's head as
    text, its references undone by ``unescape``: by default those :func:`esc` writes)."""
    if "<table" not in page_html:
        return page_html
    return _TABLE.sub(lambda table: _stack(table, unescape), page_html)
