"""Search finds what practitioners type: each word the lesson says otherwise (GGUF for its
number formats, MoE for mixture of experts, ...) brings a page about it to the top of the
theme's search results, on a page without widgets (its search starts at once)."""

from __future__ import annotations

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from support import Site, Watched

# What a practitioner types -> the pages that answer it (one of them among the first three).
WORDS = {
    "GGUF": ("steps/pile-of-numbers/", "steps/capacity/"),
    "MoE": ("further/cluster/", "steps/training-at-scale/"),
    "quantization": ("steps/pile-of-numbers/", "steps/capacity/"),
    "quantisation": ("steps/pile-of-numbers/", "steps/capacity/"),
    "offload": ("steps/capacity/", "steps/training-at-scale/"),
    "FlashAttention": ("further/cluster/", "steps/compute/"),
    "speculative": ("steps/bandwidth/", "steps/roofline/"),
}

RESULT_PAGES = """() => [...document.querySelectorAll('.md-search-result__item > a')]
  .map(a => a.href.split(/[?#]/)[0])"""


@pytest.mark.parametrize("word", list(WORDS))
def test_a_practitioners_word_finds_its_page(watched: Watched, root_site: Site, word: str) -> None:
    page = watched.page
    page.goto(root_site.page_url("glossary/"))
    page.click("label.md-search__icon, .md-search__input", timeout=10_000)
    found: list[str] = []
    for _ in range(12):  # the index may still be building: type again until results come
        page.fill(".md-search__input", "")
        page.type(".md-search__input", word, delay=20)  # the theme listens to keys
        try:
            page.wait_for_selector(".md-search-result__item", timeout=5_000)
        except PlaywrightTimeoutError:
            continue
        found = page.evaluate(RESULT_PAGES)
        break
    tops = [href.removeprefix(root_site.url) for href in found[:3]]
    assert any(p in tops for p in WORDS[word]), (word, found[:5])
