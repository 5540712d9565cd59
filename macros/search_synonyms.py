"""Search finds the words practitioners type for what the lesson names otherwise: each page
below gets those words as its search tags (Material's search index weighs a tag above a
title), so "GGUF" or "quantization" finds the page on number formats though neither word is
in its prose.

The build writes the index twice: ``search/search_index.json`` for the served site, and in
the copy for file:// ``search/search_index.js`` (the same JSON after ``var __index = ``).
Both get the tags.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# A page's address (as the index names it) -> the words that should find it.
SEARCH_SYNONYMS: dict[str, tuple[str, ...]] = {
    "steps/pile-of-numbers/": (
        "quantization",
        "quantisation",
        "quantize",
        "quantise",
        "GGUF",
        "int4",
        "4-bit",
    ),
    "steps/capacity/": ("offload", "offloading", "quantization", "quantisation", "GGUF"),
    "steps/training-at-scale/": ("MoE", "mixture-of-experts", "experts", "offload"),
    "further/cluster/": ("MoE", "mixture-of-experts", "FlashAttention", "flash-attention"),
    "steps/compute/": ("FlashAttention", "flash-attention"),
    "steps/bandwidth/": ("speculative", "speculative-decoding", "decoding"),
    "steps/roofline/": ("speculative", "speculative-decoding"),
}

_JS_PREFIX = "var __index = "


def tag_index(index: dict[str, Any], synonyms: dict[str, tuple[str, ...]]) -> None:
    """Add each page's synonyms to the tags of its entry in ``index`` (the page's own entry,
    not its sections'). A page named in ``synonyms`` but missing from the index is an error:
    a renamed page would otherwise lose its words silently."""
    pages = {_page_address(doc["location"]): doc for doc in index["docs"]}
    missing = [location for location in synonyms if location not in pages]
    if missing:
        raise ValueError(f"search synonyms name pages the site does not have: {missing}")
    for location, words in synonyms.items():
        doc = pages[location]
        doc["tags"] = [*doc.get("tags", []), *(w for w in words if w not in doc.get("tags", []))]


def _page_address(location: str) -> str:
    """A location as the served site names it: the file:// copy's 'steps/capacity.html' and
    'index.html' read as 'steps/capacity/' and ''."""
    if location.endswith("index.html"):
        return location.removesuffix("index.html")
    if location.endswith(".html"):
        return location.removesuffix(".html") + "/"
    return location


def add_search_synonyms(site: Path) -> None:
    """Tag the built site's search index (both forms, where written) with SEARCH_SYNONYMS."""
    folder = site / "search"
    json_path = folder / "search_index.json"
    if json_path.exists():
        index = json.loads(json_path.read_text(encoding="utf-8"))
        tag_index(index, SEARCH_SYNONYMS)
        json_path.write_text(json.dumps(index, separators=(",", ":")), encoding="utf-8")
    js_path = folder / "search_index.js"
    if js_path.exists():
        source = js_path.read_text(encoding="utf-8")
        if source.startswith(_JS_PREFIX):
            index = json.loads(source[len(_JS_PREFIX) :].rstrip().rstrip(";"))
            tag_index(index, SEARCH_SYNONYMS)
            js_path.write_text(
                _JS_PREFIX + json.dumps(index, separators=(",", ":")), encoding="utf-8"
            )
