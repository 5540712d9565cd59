"""Steps are named by their slugs and numbered by mkdocs.yml's nav alone: moving a step in the
nav renumbers every mention of it, and no page types a step's number by hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from macros import authoring
from macros.lesson_nav import nav_pages, nav_step_slugs, step_number, step_slug, step_slugs

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
MKDOCS_YML = ROOT / "mkdocs.yml"
# A step's number typed in prose: "step 13", "Steps 5 and 10", "step 11's".
TYPED_STEP_RE = re.compile(r"\bsteps?\s+\d", re.I)
# What the macros and the raw blocks that show them hold: not prose.
MACRO_RE = re.compile(r"{%\s*raw\s*%}.*?{%\s*endraw\s*%}|{{.*?}}", re.S)
STEP_MACRO_RE = re.compile(r"{{\s*step\(\s*\"([^\"]+)\"")


def _addresses(slugs: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f"steps/{slug}/" for slug in slugs)


def test_the_nav_lists_every_step_page_once() -> None:
    slugs = nav_step_slugs(MKDOCS_YML)
    assert sorted(slugs) == sorted(p.stem for p in (DOCS / "steps").glob("*.md"))
    assert len(set(slugs)) == len(slugs)


def test_a_slug_comes_from_a_source_path_or_an_address() -> None:
    for address in ("steps/compute.md", "steps/compute/", "steps/compute.html"):
        assert step_slug(address) == "compute"
    with pytest.raises(ValueError):
        step_slug("further/network.md")
    assert step_slugs(["index.md", "steps/b.md", "glossary.md", "steps/a.md"]) == ("b", "a")


def test_moving_a_step_in_the_nav_changes_the_numbers_the_macro_gives() -> None:
    text = MKDOCS_YML.read_text(encoding="utf-8")
    slugs = step_slugs(nav_pages(text))
    first, last = slugs[0], slugs[-1]
    assert authoring.step_reference(first, _addresses(slugs), "index.md") == "step 1"
    assert authoring.step_reference(last, _addresses(slugs), "index.md") == f"step {len(slugs)}"

    # The first step's nav line moved to the end of the nav: it is now the last step.
    lines = text.splitlines(keepends=True)
    line = next(i for i, ln in enumerate(lines) if ln.rstrip().endswith(f"steps/{first}.md"))
    moved = lines[:line] + lines[line + 1 :] + [lines[line]]
    reordered = step_slugs(nav_pages("".join(moved)))
    assert reordered == (*slugs[1:], first)
    steps = _addresses(reordered)
    assert authoring.step_reference(first, steps, "index.md") == f"step {len(slugs)}"
    assert authoring.step_reference(slugs[1], steps, "index.md", capital=True) == "Step 1"
    assert step_number(last, reordered) == len(slugs) - 1


def test_the_linked_form_links_relative_to_the_page_it_is_on() -> None:
    steps = ("steps/pile-of-numbers/", "steps/compute/")
    assert (authoring.step_reference("compute", steps, "index.md", link=True)
            == "[step 2](steps/compute.md)")
    assert (authoring.step_reference("compute", steps, "further/network.md", link=True)
            == "[step 2](../steps/compute.md)")
    assert (authoring.step_reference("compute", steps, "steps/pile-of-numbers.md", link=True)
            == "[step 2](compute.md)")


def test_an_unknown_step_stops_the_build() -> None:
    with pytest.raises(authoring.AuthoringError, match="no step 'nowhere'"):
        authoring.step_reference("nowhere", ("steps/compute/",), "index.md")


def _pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def test_no_page_types_a_step_number_by_hand() -> None:
    typed = []
    for page in _pages():
        prose = MACRO_RE.sub("", page.read_text(encoding="utf-8"))
        typed += [f"{page.relative_to(ROOT)}: {m.group(0)!r}" for m in TYPED_STEP_RE.finditer(prose)]
    assert not typed, "name steps with {{ step(\"slug\") }}, not by number: " + "; ".join(typed)


def test_every_step_the_pages_name_is_in_the_nav() -> None:
    slugs = set(nav_step_slugs(MKDOCS_YML))
    named = {(page.name, slug) for page in _pages()
             for slug in STEP_MACRO_RE.findall(page.read_text(encoding="utf-8"))}
    assert named, "the pages name no step with the step() macro"
    assert not {(page, slug) for page, slug in named if slug not in slugs}


def test_the_engine_names_no_step_by_number() -> None:
    # The engine also renders in the reader's browser, where the nav is not at hand: what a
    # widget shows names another step by its subject or title, and the code by its page.
    typed = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
             for path in sorted((ROOT / "engine").rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if TYPED_STEP_RE.search(line)]
    assert not typed, "\n".join(typed)
