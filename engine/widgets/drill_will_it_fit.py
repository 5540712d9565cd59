"""docs/steps/drill-will-it-fit.md: drill on whether a workload fits, with the likely mistake named and a kept score.

The scenario comes from its number (hidden input ``seed``, mirrored in the address, so a
link reproduces it); the score lives in the hidden input ``state``, which the browser keeps
in localStorage under "local:drill-will-it-fit". The drill's logic is in :mod:`engine.lesson.drills.fit`;
the score and the question numbers are :mod:`engine.lesson.drills.core`'s, and the view it shares
with the other drills is :mod:`engine.lesson.drills.view`.
"""

from __future__ import annotations

from engine.lesson.drills import fit as drill_fit
from engine.lesson.drills.view import FITS, STATE, DrillView, actions, answer_field, seed_field
from engine.render.charts import memory_bar
from engine.render.widget import Rendered, Values, Widget

NAME = "drill_will_it_fit"


ANSWER = answer_field("Total memory per GPU (optional)")


def _check(q: drill_fit.FitQuestion, values: Values) -> drill_fit.FitFeedback:
    return drill_fit.check_answer(q, values[FITS], values[ANSWER])


def _bar(q: drill_fit.FitQuestion) -> str:
    return memory_bar(
        q.parts, q.capacity_bytes, label=f"Memory of one {q.hardware.name}"
    )


VIEW = DrillView(
    widget_name=NAME,
    noun="scenario",
    mistakes=drill_fit.MISTAKES,
    question=drill_fit.fit_question,
    check=_check,
    bar=_bar,
    working_title="The working, per GPU:",
    data=lambda q: {"data_task": q.task},
    notes=lambda q: q.notes(),
    worked_problem="worked-problem",
    worked_problem_title="decode below the critical batch",
)


def render(values: Values) -> Rendered:
    return VIEW.render(values)


WIDGET = Widget(
    name=NAME,
    title="Drill: will it fit?",
    fields=(FITS, ANSWER, seed_field("scenario"), STATE),
    render=render,
    summary="Generated scenarios (model, task, format, GPU type and count, context, batch): "
    "does it fit, and how much memory per GPU; checked by the engine, with the likely mistake "
    "named and a score kept on the reader's device.",
    actions=actions("scenario"),
    goal_answers=VIEW.goal,
    store="local:drill-will-it-fit",
    url_state=("seed",),
)
