"""Every part of a page sits in a landmark (axe's "region" rule, of moderate impact and so not
in run_axe's serious and critical findings): the footer's offline control included, once the
service worker shows it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from support import AXE, Site, Watched


@pytest.mark.parametrize("path", ["", "steps/pile-of-numbers/", "glossary/"])
def test_the_offline_control_sits_in_a_landmark(watched: Watched, root_site: Site, path: str) -> None:
    page = watched.page
    page.goto(root_site.page_url(path))
    expect(page.get_by_role("checkbox", name="Save this lesson for offline reading")).to_be_visible()
    expect(page.get_by_role("complementary", name="Offline reading")).to_be_visible()
    page.add_script_tag(path=str(AXE))
    outside = page.evaluate(
        """async () => (await axe.run(document, { runOnly: ["region"] })).violations
             .flatMap(v => v.nodes.map(n => n.target.join(" ")))"""
    )
    assert outside == []
