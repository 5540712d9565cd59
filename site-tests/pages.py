"""What the built site contains: its pages and the widgets on each, read from the HTML."""

from __future__ import annotations

import re
from pathlib import Path

WIDGET_RE = re.compile(r'data-widget="([a-z_]+)"')


def pages(site_dir: Path) -> list[str]:
    """Site-relative paths of every lesson page (directory URLs end with '/')."""
    out = []
    for html in sorted(site_dir.rglob("index.html")):
        rel = html.parent.relative_to(site_dir).as_posix()
        if rel.startswith(("pyodide", "wheels", "assets", "download")) or rel == "404":
            continue
        out.append("" if rel == "." else rel + "/")
    return out


def widget_pages(site_dir: Path) -> dict[str, list[str]]:
    """Page path -> widget names on it, for pages that have widgets."""
    found = {}
    for path in pages(site_dir):
        names = WIDGET_RE.findall((site_dir / path / "index.html").read_text())
        if names:
            found[path] = names
    return found
