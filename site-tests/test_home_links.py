"""Home leads a reader who knows the ground straight to the tools: the calculator (the
playground, where a config.json can be pasted), the cheat sheet and the page on how good the
numbers are, in one short line under the start button."""

from __future__ import annotations

from playwright.sync_api import expect
from support import Site, Watched

LINKS = {
    "the calculator": "steps/playground/",
    "the cheat sheet": "steps/cheat-sheet/",
    "How good are these numbers?": "reality-check/",
}


def test_home_links_the_calculator_the_cheat_sheet_and_the_reality_page(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(""))
    article = page.locator("article")
    for name, address in LINKS.items():
        link = article.get_by_role("link", name=name, exact=True)
        expect(link).to_be_visible()
        assert link.get_attribute("href") is not None
        assert link.evaluate("a => a.href") == root_site.page_url(address)
    # one line beside the others: the paste is named where the calculator is
    line = article.get_by_role("link", name="the calculator", exact=True).locator("xpath=..")
    expect(line).to_contain_text("paste a config.json")
    assert len(line.inner_text().split()) <= 20
    article.get_by_role("link", name="the calculator", exact=True).click()
    page.wait_for_url(root_site.page_url("steps/playground/") + "*")
    assert watched.console_errors == []
