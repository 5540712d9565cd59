"""The search index's synonyms: each page named gets its words as tags, in both forms of the
index (served, and the file:// copy's), and a page the site lacks is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from macros import search_synonyms
from macros.search_synonyms import SEARCH_SYNONYMS, add_search_synonyms, tag_index

PRACTITIONERS_WORDS = (
    "GGUF",
    "MoE",
    "quantization",
    "quantisation",
    "offload",
    "FlashAttention",
    "speculative",
)


def _index(*locations: str) -> dict[str, object]:
    docs = [{"location": loc, "title": loc, "text": ""} for loc in locations]
    docs.append({"location": "steps/capacity/#a-section", "title": "s", "text": ""})
    return {"config": {}, "docs": docs}


def test_every_practitioners_word_finds_a_page() -> None:
    tagged = {w.lower() for words in SEARCH_SYNONYMS.values() for w in words}
    assert {w.lower() for w in PRACTITIONERS_WORDS} <= tagged


def test_each_named_page_is_one_the_lesson_has() -> None:
    docs = Path(__file__).resolve().parents[1] / "docs"
    for location in SEARCH_SYNONYMS:
        assert (docs / (location.rstrip("/") + ".md")).exists(), location


def test_a_page_gets_its_words_as_tags_and_its_sections_none() -> None:
    index = _index(*SEARCH_SYNONYMS, "")
    tag_index(index, {"steps/capacity/": ("offload", "GGUF")})
    docs = {d["location"]: d for d in index["docs"]}  # type: ignore[attr-defined]
    assert docs["steps/capacity/"]["tags"] == ["offload", "GGUF"]
    assert "tags" not in docs["steps/capacity/#a-section"] and "tags" not in docs[""]


def test_a_page_missing_from_the_site_is_refused() -> None:
    with pytest.raises(ValueError, match="steps/gone/"):
        tag_index(_index("steps/capacity/"), {"steps/gone/": ("GGUF",)})


def test_both_forms_of_the_index_are_tagged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_synonyms, "SEARCH_SYNONYMS", {"steps/capacity/": ("offload",)})
    (tmp_path / "search").mkdir()
    served = tmp_path / "search" / "search_index.json"
    served.write_text(json.dumps(_index("steps/capacity/")))
    offline = tmp_path / "search" / "search_index.js"
    offline.write_text("var __index = " + json.dumps(_index("steps/capacity.html")))
    add_search_synonyms(tmp_path)
    assert json.loads(served.read_text())["docs"][0]["tags"] == ["offload"]
    text = offline.read_text()
    assert text.startswith("var __index = ")
    assert json.loads(text[len("var __index = ") :])["docs"][0]["tags"] == ["offload"]


GLOSSARY = Path(__file__).resolve().parents[1] / "includes" / "glossary.md"


def test_the_glossary_page_holds_each_practitioners_word_so_search_lands_on_its_text() -> None:
    # The glossary page is indexed like any page: a word in its text is found there, with
    # a definition, not only as a tag on a step that may not say it.
    text = GLOSSARY.read_text(encoding="utf-8").lower()
    for word in PRACTITIONERS_WORDS:
        assert word.lower() in text, word
    for term in ("GGUF", "CPU offload", "speculative decoding", "dense", "tensor cores", "PUE",
                 "perplexity"):
        assert f"*[{term}]: " in GLOSSARY.read_text(encoding="utf-8"), term


def test_the_glossary_lists_each_term_once() -> None:
    from macros.authoring import glossary_html

    listed = glossary_html(GLOSSARY)
    terms = listed.split("<dt>")[1:]
    names = [t.split("</dt>", 1)[0] for t in terms]
    assert len(names) == len(set(names))
    # 'tokens' stays for the tooltips but is listed once, as 'token'; 'bandwidth-bound' is
    # the memory-bound entry's other name, not an entry of its own.
    assert "token" in names and "tokens" not in names and "bandwidth-bound" not in names
    definitions = [t.split("<dd>", 1)[1].split("</dd>", 1)[0] for t in terms]
    assert len(definitions) == len(set(definitions))
