"""Old addresses: each step's address from before the steps were named by subject alone
(steps/NN-slug/) leads to its step, with the link's query and anchor, at the root and under a
sub-path, with JavaScript on or off; an unknown address gets the site's own 404 page."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from playwright.sync_api import Browser, expect
from support import Site, Watched, old_step_addresses


@pytest.mark.parametrize("site_name", ["root_site", "subpath_site"])
def test_every_old_step_address_leads_to_its_step(
    watched: Watched, site_name: str, request: pytest.FixtureRequest
) -> None:
    site: Site = request.getfixturevalue(site_name)
    page = watched.page
    for old, new in old_step_addresses().items():
        page.goto(site.page_url(old))
        page.wait_for_url(site.page_url(new))
        expect(page.get_by_role("heading", level=1)).to_be_visible()


def test_an_old_link_keeps_its_linked_values_and_anchor(watched: Watched, root_site: Site) -> None:
    page = watched.page
    query = "?playground.gpus=4&playground.hardware=h200#w-playground-1"
    page.goto(root_site.page_url("steps/21-playground/" + query))
    page.wait_for_url(root_site.page_url("steps/playground/" + query))


def test_without_javascript_an_old_address_still_leads_on(browser: Browser, root_site: Site) -> None:
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(root_site.page_url("steps/16-roofline/"))
        page.wait_for_url(root_site.page_url("steps/roofline/"))
    finally:
        context.close()
    # For a browser that does not follow the refresh, the page says where the step went (read
    # from the file: in a browser the refresh leaves it at once).
    page_text = (root_site.directory / "steps/16-roofline/index.html").read_text()
    assert '<a href="../roofline/">go to the step</a>' in page_text
    assert "://" not in page_text, "relative addresses only, nothing outside the site"


@pytest.mark.parametrize("site_name", ["root_site", "subpath_site"])
def test_an_unknown_address_gets_the_sites_own_404_page(
    site_name: str, request: pytest.FixtureRequest
) -> None:
    site: Site = request.getfixturevalue(site_name)
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(site.page_url("steps/no-such-step/"), timeout=10)
    assert refused.value.code == 404
    body = refused.value.read().decode()
    assert body == (site.directory / "404.html").read_text()
