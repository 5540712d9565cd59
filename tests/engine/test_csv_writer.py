"""The engine's CSV tables are written without the standard library's ``csv`` (the browser
downloads them too and ships no such module): the text is exactly what ``csv.writer`` writes,
for cells holding commas, quotes, line breaks and spaces."""

from __future__ import annotations

import csv
import io
import random

from engine.lesson.plans.csv_tables import COMPARE_HEADER, comparison_csv
from engine.numbers.compare import Difference, PlanComparison

AWKWARD = ["", " ", "a,b", 'say "no"', '"', "two\nlines", "cr\rlf\r\n", "x", "—é", "'", "\t"]


def by_the_csv_module(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().rstrip("\n")


def as_text(value: object) -> str:
    """A value as the tables write it: empty for none, true/false, floats in full."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def test_the_text_is_the_csv_modules() -> None:
    picks = random.Random(7)
    figures = []
    rows = [list(COMPARE_HEADER)]
    for _ in range(200):
        name, label, unit, word = (picks.choice(AWKWARD) + picks.choice(AWKWARD)
                                   for _ in range(4))
        a = picks.choice([word, 1.5e-3, None, True, 3])
        d = Difference(name, label, unit, a, word, None)
        figures.append(d)
        rows.append([name, label, unit, as_text(a), word, "", as_text(d.differs)])
    assert comparison_csv(PlanComparison(tuple(figures))) == by_the_csv_module(rows)
