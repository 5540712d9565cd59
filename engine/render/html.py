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


def table(headers: Iterable[str], rows: Iterable[Iterable[object]], *, caption: str = "") -> str:
    """A plain table; cells are escaped text."""
    head = "".join(f'<th scope="col">{esc(h)}</th>' for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    # A keyboard-reachable scroll box: wide tables scroll inside it on narrow screens.
    return (
        f'<div class="table-scroll" role="region" tabindex="0" aria-label="{esc(caption or "Table")}">'
        f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def definition_list(items: Iterable[tuple[str, str]]) -> str:
    """Figures as term/value pairs, both escaped text."""
    body = "".join(f"<dt>{esc(term)}</dt><dd>{esc(value)}</dd>" for term, value in items)
    return f'<dl class="widget-figures">{body}</dl>'


def json_island(data: object) -> str:
    """JSON safe to embed in a <script type="application/json"> element."""
    text = json.dumps(data, separators=(",", ":"), sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
