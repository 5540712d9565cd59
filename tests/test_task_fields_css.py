"""The stylesheet hides the other task's inputs by their names: the names it lists are exactly
the plan's task_field_names, which the reader model (macros/reading_time.py) leaves out the
same way, so a field added to either task is hidden with it or this test says which is missing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.lesson.plans.fields import task_field_names

LESSON_CSS = Path(__file__).resolve().parents[1] / "docs" / "css" / "lesson.css"


def _hidden_when(task: str) -> set[str]:
    """The field names the rule for ``task`` being chosen hides."""
    css = LESSON_CSS.read_text(encoding="utf-8")
    rule = re.search(
        rf'select\[name="task"\] option\[value="{task}"\]:checked\)\s*'
        r"\.widget-field:has\(:is\(([^)]*)\)\)",
        css,
    )
    assert rule, task
    return set(re.findall(r'\[name="([^"]+)"\]', rule.group(1)))


@pytest.mark.parametrize(("chosen", "other"), [("serve", "train"), ("train", "serve")])
def test_a_chosen_task_hides_exactly_the_other_tasks_inputs(chosen: str, other: str) -> None:
    assert _hidden_when(chosen) == task_field_names(other)
