"""Any origin: a site built for one address and served from another (another port, or another
sub-path) keeps instant navigation, so the engine stays warm across pages; the pages find the
site's base at run time."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser
from support import Site, open_watched, wait_live

from tools.serve import serving


@pytest.mark.parametrize("where", ["another port", "another sub-path"])
def test_instant_navigation_works_where_the_site_was_not_built_for(
    browser: Browser, root_site: Site, tmp_path: Path, where: str
) -> None:
    # The same built files, served from another port at the root, or under /elsewhere/.
    served = root_site.directory
    if where == "another sub-path":
        (tmp_path / "elsewhere").symlink_to(root_site.directory, target_is_directory=True)
        served = tmp_path
    with serving(served) as host:
        base = host + ("elsewhere/" if where == "another sub-path" else "")
        assert base != root_site.url
        w = open_watched(browser)
        try:
            page = w.page
            page.goto(base + "steps/serve-the-model/")
            wait_live(page)
            page.evaluate("window.__sameDocument = true")
            page.click("a.md-footer__link--next")
            page.wait_for_url(base + "steps/follow-one-request/")
            wait_live(page)
            # Swapped in without a reload: the page's own marker survived.
            assert page.evaluate("() => window.__sameDocument === true")
            assert w.outside(host.rstrip("/")) == []
            assert w.console_errors == []
        finally:
            w.context.close()
