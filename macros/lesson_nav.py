"""The lesson's steps as mkdocs.yml's navigation orders them, named by their slugs.

A step is a page in ``docs/steps/``; its *slug* is its file's name without ``.md``
(``steps/compute.md`` -> ``compute``), and its number is its place in the navigation. Pages
and tests name a step by its slug, so that moving a step in the nav renumbers it everywhere
and edits nothing else. The build numbers the steps from MkDocs's own navigation
(``macros/step_numbers.py``, from the hook's ``on_nav``); :func:`nav_step_slugs` reads the same order from
``mkdocs.yml`` for code that runs without a build (the tests).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

STEPS_FOLDER = "steps/"  # docs/steps/: every page there is a step of the lesson

# One page of the nav: `- "Title": path.md` or `- Title: path.md` (mkdocs.yml's own form).
_NAV_PAGE_RE = re.compile(r"^\s*-\s+(?:\"[^\"]*\"|[^:\"]+):\s+([^\s:]+\.md)\s*$", re.M)


def step_slug(address: str) -> str:
    """The slug of a step page from its source path or its address.

    ``steps/compute.md``, ``steps/compute/`` and ``steps/compute.html`` all give ``compute``.
    """
    if not address.startswith(STEPS_FOLDER):
        raise ValueError(f"{address!r} is not a step page (not in docs/{STEPS_FOLDER})")
    name = address[len(STEPS_FOLDER):].strip("/")
    for suffix in (".md", ".html"):
        name = name.removesuffix(suffix)
    return name


def nav_pages(mkdocs_yml: str) -> tuple[str, ...]:
    """The source paths of the pages in the text of ``mkdocs.yml``, in the navigation's order."""
    nav = mkdocs_yml.split("\nnav:", 1)
    if len(nav) != 2:
        raise ValueError("mkdocs.yml has no nav")
    return tuple(_NAV_PAGE_RE.findall(nav[1]))


def step_slugs(pages: Sequence[str]) -> tuple[str, ...]:
    """The steps' slugs in order, from the nav's pages (source paths or addresses)."""
    return tuple(step_slug(page) for page in pages if page.startswith(STEPS_FOLDER))


def nav_step_slugs(mkdocs_yml: Path) -> tuple[str, ...]:
    """The steps' slugs in the order ``mkdocs.yml``'s navigation gives them."""
    return step_slugs(nav_pages(mkdocs_yml.read_text(encoding="utf-8")))


def step_number(slug: str, slugs: Sequence[str]) -> int:
    """The step's number (from 1): its place in ``slugs``; ValueError for an unknown slug."""
    if slug not in slugs:
        raise ValueError(f"no step {slug!r}; the steps are: {', '.join(slugs)}")
    return list(slugs).index(slug) + 1
