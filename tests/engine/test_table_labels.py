"""Tables a phone can stack: every body cell carries its column's head."""

from __future__ import annotations

import html
import re

from engine.registry import get_widget, widget_names
from engine.render.html import esc, table, table_box, tag
from engine.render.table_labels import stack_tables, unescape_esc

CELL = re.compile(r"<td\b([^>]*)>")


def test_each_body_cell_gets_its_columns_head_as_text() -> None:
    out = stack_tables(table(("Model", "Bytes & more", "<GPU>"), [("a", "1", "2"), ("b", "3", "4")]))
    assert '<table data-stack="rows">' in out
    labels = [re.search(r'data-label="([^"]*)"', c).group(1) for c in CELL.findall(out)]  # type: ignore[union-attr]
    assert labels == ["Model", "Bytes &amp; more", "&lt;GPU&gt;"] * 2


def test_a_row_head_and_a_spanning_head_keep_the_columns_in_step() -> None:
    head = tag("th", "What", scope="col") + tag("th", "Both", scope="col", colspan="2")
    body = tag("tr", tag("th", "row", scope="row") + tag("td", "x") + tag("td", "y"))
    out = stack_tables(table_box(head, body, caption="c"))
    assert 'scope="row">row</th>' in out  # a row's head is not labelled
    assert out.count('data-label="Both"') == 2


def test_narrow_tables_already_labelled_ones_and_text_without_tables_are_left_alone() -> None:
    narrow = table(("A", "B"), [("1", "2")])
    assert stack_tables(narrow) == narrow
    once = stack_tables(table(("A", "B", "C"), [("1", "2", "3")]))
    assert stack_tables(once) == once
    assert stack_tables("<p>no tables</p>") == "<p>no tables</p>"
    kept = '<table data-stack="never"><thead><tr><th>A</th><th>B</th><th>C</th></tr></thead></table>'
    assert stack_tables(kept) == kept


def test_every_widgets_wide_tables_are_stackable() -> None:
    wide = 0
    for name in widget_names():
        w = get_widget(name)
        result = w.run(w.defaults()).html
        for found in re.finditer(r"<table\b([^>]*)>(.*?)</table>", result, re.S):
            heads = re.search(r"<thead\b.*?</thead>", found.group(2), re.S)
            columns = len(re.findall(r"<th\b", heads.group(0))) if heads else 0
            if columns >= 3:
                wide += 1
                if "dgx-table" in found.group(1) and "data-stack=\"never\"" in found.group(1):
                    continue  # the dgx-1's GPU grid fits a phone as it is
                assert 'data-stack="rows"' in found.group(1), name
                assert all("data-label=" in c for c in CELL.findall(found.group(2))), name
    assert wide >= 8  # the lesson's wide widget tables, not an empty walk


def test_heads_are_unescaped_as_esc_escaped_them() -> None:
    # The browser's engine does without the html module (its entity table is ~40 kB on the
    # wire): undoing esc's five references gives what html.unescape gives on esc's output.
    for text in ("Bytes & more", "<GPU>", "a \"b\" 'c'", "&amp;lt; stays &lt;", "&rarr; & &#8212;"):
        assert unescape_esc(esc(text)) == text == html.unescape(esc(text))
    out = stack_tables(table(("A & B", "C", "'D'"), [("1", "2", "3")]))
    assert 'data-label="A &amp; B"' in out and 'data-label="&#x27;D&#x27;"' in out


def test_the_build_unescapes_any_reference_in_markdown_tables() -> None:
    markdown = (
        "<table><thead><tr><th>From &rarr; to</th><th>B</th><th>C&nbsp;D</th></tr></thead>"
        "<tbody><tr><td>1</td><td>2</td><td>3</td></tr></tbody></table>"
    )
    assert 'data-label="From → to"' in stack_tables(markdown, unescape=html.unescape)
    assert 'data-label="From &amp;rarr; to"' in stack_tables(markdown)  # esc's five only
