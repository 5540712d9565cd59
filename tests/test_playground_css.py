"""The playground's stylesheet hides the other task's inputs by their names: the names it
lists are exactly the plan's serve-only and train-only fields, so a field added to either
list is hidden with its task or this test says which is missing."""

from __future__ import annotations

import re
from pathlib import Path

from engine.lesson.plans.fields import PLAN_FIELDS, SERVE_ONLY, TRAIN_ONLY

RECAP_CSS = Path(__file__).resolve().parents[1] / "docs" / "css" / "recap.css"


def _hidden_when(task: str) -> set[str]:
    """The field names the rule for ``task`` being chosen hides."""
    css = RECAP_CSS.read_text(encoding="utf-8")
    rule = re.search(
        rf'option\[value="{task}"\]:checked\)\s*\.widget-field:has\(:is\(([^)]*)\)\)', css
    )
    assert rule, task
    return set(re.findall(r'\[name="([^"]+)"\]', rule.group(1)))


def test_serving_hides_exactly_the_training_inputs() -> None:
    assert _hidden_when("serve") == {PLAN_FIELDS[k].name for k in TRAIN_ONLY if k in PLAN_FIELDS}


def test_training_hides_exactly_the_serving_inputs() -> None:
    assert _hidden_when("train") == {PLAN_FIELDS[k].name for k in SERVE_ONLY if k in PLAN_FIELDS}
