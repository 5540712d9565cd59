"""Links that widget results name by the page's source file (``<a data-site-page="X.md">``,
engine/render/widget.py): the engine renders a result without knowing the page it sits on,
so the build gives each such link its address relative to that page."""

from __future__ import annotations

import re
from typing import Any

_SITE_LINK = re.compile(r'<a data-site-page="([^"]+)"')


class SiteLinkError(ValueError):
    """A widget links to a page the site does not have."""


def resolve_site_links(html: str, page: Any, files: Any) -> str:
    """``html`` with an ``href`` on every ``<a data-site-page>``: the named page's address from
    ``page`` (MkDocs' File objects, so any sub-path and either URL style)."""

    def with_address(match: re.Match[str]) -> str:
        source = match.group(1)
        target = files.get_file_from_path(source)
        if target is None:
            raise SiteLinkError(f"{page.file.src_uri} links to {source}, not a page of the site")
        return f'<a href="{target.url_relative_to(page.file)}" data-site-page="{source}"'

    return _SITE_LINK.sub(with_address, html)
