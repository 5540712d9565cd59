"""A term is explained on or before the first step that uses it, in the navigation's order
(mkdocs.yml numbers the steps), so moving a step cannot leave a term used before it is taught."""

from __future__ import annotations

import re
from pathlib import Path

from macros.lesson_nav import STEPS_FOLDER, nav_step_slugs

ROOT = Path(__file__).resolve().parents[1]
# term as used -> what its explanation looks like (the bold first mention of its definition)
EXPLAINED_BY = {
    # Glossed where its bar first shows (step 1), then explained through queries, keys and
    # values where serving starts.
    "KV cache": r"\*\*KV cache\*\* \(each conversation's context|"
                r"\*\*query\*\*.*\*\*key\*\*.*\*\*value\*\*",
    "MFU": r"\*\*MFU\*\*, the share of peak",
    "Adam": r"Adam \(the usual update\s+rule\)",
    "inference": r"Serving \(inference\)",
    "compute-bound": r"called \*\*compute-bound\*\*",
    "memory-bound": r"\*\*memory-bound\*\*",
    "LoRA": r"Train small adapters instead \(LoRA, QLoRA\)",
}


def step_texts() -> list[tuple[str, str]]:
    paths = [f"{STEPS_FOLDER}{slug}.md" for slug in nav_step_slugs(ROOT / "mkdocs.yml")]
    assert len(paths) >= 20
    return [(p, (ROOT / "docs" / p).read_text(encoding="utf-8")) for p in paths]


def test_each_term_is_explained_no_later_than_its_first_use() -> None:
    steps = step_texts()
    for term, explanation in EXPLAINED_BY.items():
        first_use = next(i for i, (_, text) in enumerate(steps) if term in text)
        explained = [i for i, (_, text) in enumerate(steps) if re.search(explanation, text, re.S)]
        assert explained, f"{term!r} is never explained"
        assert explained[0] <= first_use, (
            f"{term!r} is used in {steps[first_use][0]} before {steps[explained[0]][0]} "
            "explains it")
