"""A plan pinned as A beside the plan on screen (B): the playground's compare.

A's inputs are kept as one hidden input, :data:`PINNED`: JSON text, each input's name and its
text as typed, which the page address carries like any other input (compressed when long).
Read back, they are checked once here (:func:`pinned_inputs`) and then planned exactly as B
is; the two plans are compared by :func:`engine.numbers.compare.compare_plans`, as the
command line's ``compare`` does, and :func:`compare_command` writes that command's line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from engine.lesson.plans.compare_view import comparison_row, plan_title
from engine.lesson.plans.csv_tables import comparison_csv
from engine.lesson.plans.fields import shell_quote
from engine.numbers import bounded_json
from engine.numbers.catalog.hf_config import MAX_CONFIG_CHARS
from engine.numbers.compare import PlanComparison
from engine.numbers.errors import EngineError
from engine.numbers.plan import Plan
from engine.render.fields import Values, hidden
from engine.render.html import column_heads, esc, table_box, tag
from engine.render.widget import Command, file_download

PINNED = hidden("pinned", "Plan A, pinned", "")
# A's inputs: a pasted config.json at its longest, and every other input beside it.
MAX_PINNED_CHARS = MAX_CONFIG_CHARS + 20_000
COMPARE = ("python", "-m", "engine", "compare")

# Flags the command line reads whatever the task: a --tp A gives for training would set B's
# serving replicas (tensor-parallel GPUs each), so B, serving, gives it empty (one replica).
_READ_IN_EVERY_TASK = ("--tp",)

Flags = list[tuple[str, str | None]]
Files = tuple[tuple[str, str], ...]


def pin_text(values: Values, names: Iterable[str]) -> str:
    """The inputs ``names`` as they are now, as the text :data:`PINNED` keeps."""
    return json.dumps({n: values.text(n) for n in names if n != PINNED.name},
                      separators=(",", ":"))


def pinned_inputs(text: str, defaults: Mapping[str, str]) -> dict[str, str]:
    """A's inputs from :data:`PINNED`'s ``text``: every input of ``defaults``, those A names
    as pinned (one pinned before an input existed takes its default). Refused, naming what is
    wrong: text that is not such a set, an input the widget does not have (a link from
    another version, or changed by hand), a value that is not text."""
    raw = bounded_json.loads(text, what="Plan A, as pinned", field=PINNED.name,
                             max_chars=MAX_PINNED_CHARS, max_depth=1)
    if not isinstance(raw, dict):
        raise EngineError("Plan A, as pinned, is not a set of named inputs (changed by "
                          "hand?): unpin it, or pin again.", PINNED.name)
    for name, value in raw.items():
        if name not in defaults or name == PINNED.name:
            raise EngineError(f"Plan A, as pinned, names an input this widget does not have "
                              f"({name[:40]!r}: a link from another version, or changed by "
                              "hand): unpin it, or pin again.", PINNED.name)
        if not isinstance(value, str):
            raise EngineError(f"Plan A's input {name!r} is not text (changed by hand?): "
                              "unpin it, or pin again.", PINNED.name)
    return {**defaults, **raw, PINNED.name: ""}


def refused_words(error: EngineError, labels: Mapping[str, str]) -> str:
    """Why plan A is not shown, naming A's input the engine refused by its label."""
    label = labels.get(error.field or "", "") if error.field != PINNED.name else ""
    named = error.message.startswith(label)  # a field's own message opens with its label
    return f"Plan A is not shown: {'' if named else label + ': '}{error.message}"


@dataclass(frozen=True, slots=True)
class Side:
    """One plan's command-line flags (:func:`~engine.lesson.plans.fields.plan_flags`) and
    the files they read (name, text)."""

    flags: Flags
    files: Files


def _a_named_apart(a: Side, b: Side) -> Side:
    """A's files renamed 'a-NAME' where B reads a different file of the same name (two
    pasted configs, two chips of one's own), so both can sit in one folder."""
    flags, files = list(a.flags), []
    for name, text in a.files:
        if (name, text) in b.files or name not in {n for n, _ in b.files}:
            files.append((name, text))
            continue
        files.append(("a-" + name, text))
        flags = [(f, "a-" + name if t == name else t) for f, t in flags]
    return Side(flags, tuple(files))


def compare_command(a: Side, b: Side) -> Command:
    """The ``python -m engine compare A-flags --vs B-flags`` line of plans A and B, and the
    files it reads. After ``--vs`` come B's flags that differ from A's (the command line
    keeps A's others), an empty text for an optional amount A gives and B leaves empty (and
for A's training --tp when B serves), and,
    for plans alike, B's task (``--vs`` must name one)."""
    a = _a_named_apart(a, b)
    a_texts = dict(a.flags)
    changed: list[str] = []
    b_texts = dict(b.flags)
    for flag in _READ_IN_EVERY_TASK:
        if flag not in b_texts and a_texts.get(flag) is not None:
            changed += [flag, ""]
    for flag, text in b.flags:
        if text is None:
            if a_texts.get(flag) is not None:
                changed += [flag, ""]
        elif a_texts.get(flag) != text:
            changed += [flag, text]
    if not changed:
        changed = ["--task", b_texts.get("--task") or "serve"]
    a_words = [w for f, t in a.flags if t is not None for w in (f, t)]
    words = (*COMPARE, *(shell_quote(w) for w in a_words), "--vs",
             *(shell_quote(w) for w in changed))
    files = (*a.files, *(f for f in b.files if f not in a.files))
    return Command((" ".join(words),), files)


def comparison_html(a: Plan, b: Plan, comparison: PlanComparison) -> str:
    """A and B named, then a table of every figure: A, B and B / A, differing rows marked,
    and the table to download as the command line's ``--csv`` prints it."""
    rows = "".join(
        tag("tr", "".join(tag("td", esc(cell)) for cell in comparison_row(d)),
            class_="compare-differs" if d.differs else None)
        for d in comparison.figures)
    n = len(comparison.differences)
    return (tag("h2", "Pinned A against B, the plan above", class_="playground-heading")
            + tag("p", esc(f"A: {plan_title(a)}, task: {a.task}. "
                           f"B: {plan_title(b)}, task: {b.task}."))
            + table_box(column_heads(("", "A (pinned)", "B (now)", "B / A")), rows,
                        caption=f"{n:,} of {len(comparison.figures):,} figures differ",
                        label="Plan A against plan B", data_compare="figures")
            + tag("p", file_download(comparison_csv(comparison) + "\n", "compare.csv",
                                     "Download the table as CSV", "text/csv")
                  + ": what the command below prints with --csv.", class_="widget-csv"))
