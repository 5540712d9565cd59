"""docs/steps/drill-training-memory.md: drill on training memory per GPU, with the likely mistake named and a kept score.

The question comes from its number (hidden input ``seed``, mirrored in the address, so a
link reproduces it); the score lives in the hidden input ``state``, which the browser keeps
in localStorage under "local:drill-training-memory". All the drill's logic is in :mod:`engine.lesson.drills.training_memory`; the
view it shares with the other drills is :mod:`engine.lesson.drills.view`.
"""

from __future__ import annotations

from engine.lesson.drills import training_memory as training_drill
from engine.lesson.drills.view import FITS, STATE, DrillView, actions, answer_field, seed_field
from engine.render.charts import memory_bar
from engine.render.widget import Rendered, Values, Widget
from engine.words.format import format_percent

NAME = "drill_training_memory"


ANSWER = answer_field("Your answer")


def _check(q: training_drill.TrainingMemoryQuestion, values: Values) -> training_drill.Feedback:
    return training_drill.check_answer(q, values[ANSWER], fits=values[FITS])


def _bar(q: training_drill.TrainingMemoryQuestion) -> str:
    parts = {
        k: v for k, v in q.memory.parts.items() if k in ("weights", "gradients", "optimizer_states")
    }
    if q.with_activations:
        parts["activations"] = q.activation_bytes
    return memory_bar(
        parts, q.capacity_bytes, label=f"Memory of one {q.hardware.name}"
    )


VIEW = DrillView(
    widget_name=NAME,
    noun="question",
    mistakes=training_drill.MISTAKES,
    question=training_drill.training_memory_question,
    check=_check,
    bar=_bar,
    notes=lambda q: q.notes(),
    worked_problem="worked-problem",
    worked_problem_title="the days to train Llama 3.1 405B",
)


def render(values: Values) -> Rendered:
    return VIEW.render(values)


WIDGET = Widget(
    name=NAME,
    title="Training memory per GPU",
    fields=(ANSWER, FITS, seed_field("question"), STATE),
    render=render,
    summary="Generated questions on training memory per GPU (bytes per parameter, optimiser, "
    f"sharding, activations), checked within {format_percent(training_drill.TOLERANCE)}, with the likely "
    "mistake named and a score kept on the reader's device.",
    actions=actions("question"),
    goal_answers=VIEW.goal,
    store="local:drill-training-memory",
    url_state=("seed",),
)
