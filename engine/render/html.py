"""Small, escaping HTML builders shared by the widgets.

Everything that reaches a page goes through :func:`esc`, so a hostile string typed by a
reader or carried in an address is shown as text, never run as markup.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping


def esc(value: object) -> str:
    """The value as text, safe inside HTML content and attribute values.

    The same as ``html.escape(text, quote=True)``; written out because importing the ``html``
    module in Pyodide compiles its 2,000-entry entity table, the largest part of the engine's
    start-up in the browser.
    """
    text = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;").replace("'", "&#x27;")


def attrs(values: Mapping[str, object]) -> str:
    """` key="value"` pairs; None and False drop the attribute, True writes it bare."""
    parts = []
    for key, value in values.items():
        if value is None or value is False:
            continue
        parts.append(f" {key}" if value is True else f' {key}="{esc(value)}"')
    return "".join(parts)


def _attribute_names(attributes: Mapping[str, object]) -> dict[str, object]:
    """Python keyword names to HTML ones: ``class_`` -> class, ``data_x`` -> data-x."""
    return {k.rstrip("_").replace("_", "-"): v for k, v in attributes.items()}


def tag(element: str, content: str = "", /, **attributes: object) -> str:
    """`<element attrs>content</element>`; ``content`` must already be HTML (escape text with esc)."""
    return f"<{element}{attrs(_attribute_names(attributes))}>{content}</{element}>"


def void_tag(element: str, /, **attributes: object) -> str:
    """An element with no content and no end tag, such as <input>."""
    return f"<{element}{attrs(_attribute_names(attributes))}>"


def closed_tag(element: str, /, **attributes: object) -> str:
    """An SVG element with no children, closed by itself: `<line attrs/>`.

    Inside <svg> an HTML parser needs the slash: an unclosed `<line>` would hold every
    element after it.
    """
    return f"<{element}{attrs(_attribute_names(attributes))}/>"


def scroll_box(content: str, *, label: str, kind: str = "table", extra_class: str = "") -> str:
    """A keyboard-reachable region named ``label`` that scrolls sideways on a narrow screen.

    ``kind`` is "table" or "chart" (class table-scroll or chart-scroll, styled in the CSS);
    ``extra_class`` is added after it (the theme styles only tables without a class, so a
    table's own class sits on its box).
    """
    return tag(
        "div",
        content,
        class_=f"{kind}-scroll {extra_class}".strip(),
        role="region",
        tabindex="0",
        aria_label=label,
    )


def table(headers: Iterable[str], rows: Iterable[Iterable[object]], *, caption: str = "") -> str:
    """A plain table; cells are escaped text."""
    body = "".join(tag("tr", "".join(tag("td", esc(cell)) for cell in row)) for row in rows)
    return table_box(column_heads(headers), body, caption=caption)


def column_heads(headers: Iterable[str]) -> str:
    """A table's column header cells, escaped text."""
    return "".join(tag("th", esc(h), scope="col") for h in headers)


def table_box(
    head: str,
    body: str,
    *,
    caption: str,
    label: str = "",
    extra_class: str = "",
    **table_attributes: object,
) -> str:
    """A table in its scroll box, named ``label`` or else by its caption: ``head`` is the
    header row's cells and ``body`` the rows, both HTML already; ``extra_class`` goes on the
    box (the theme styles only tables without a class)."""
    cap = tag("caption", esc(caption)) if caption else ""
    inner = tag(
        "table", cap + tag("thead", tag("tr", head)) + tag("tbody", body), **table_attributes
    )
    return scroll_box(inner, label=label or caption or "Table", extra_class=extra_class)


def definition_list(items: Iterable[tuple[str, str]]) -> str:
    """Figures as term/value pairs, both escaped text."""
    body = "".join(tag("dt", esc(term)) + tag("dd", esc(value)) for term, value in items)
    return tag("dl", body, class_="widget-figures")


def json_island(data: object) -> str:
    """JSON safe to embed in a <script type="application/json"> element."""
    text = json.dumps(data, separators=(",", ":"), sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
