"""Going further: drill on the training state each GPU of a pod holds, split by tensor and
pipeline parallelism with ZeRO-1 over the data-parallel copies; the likely slip named and a
score kept on the reader's device. The drill's logic is :mod:`engine.lesson.drills.cluster_memory`;
the view it shares with the other drills is :mod:`engine.lesson.drills.view`.
"""

from __future__ import annotations

from engine.lesson.drills import cluster_memory as drill_cluster
from engine.lesson.drills.core import TOLERANCE
from engine.lesson.drills.view import FITS, STATE, DrillView, actions, answer_field, seed_field
from engine.render.charts import memory_bar
from engine.render.widget import Rendered, Values, Widget
from engine.words.format import format_percent

NAME = "drill_cluster_memory"

ANSWER = answer_field("Your answer")


def _check(q: drill_cluster.PodMemoryQuestion, values: Values) -> drill_cluster.Feedback:
    return drill_cluster.check_answer(q, values[ANSWER], fits=values[FITS])


def _bar(q: drill_cluster.PodMemoryQuestion) -> str:
    parts = {k: v for k, v in q.memory.parts.items()
             if k in ("weights", "gradients", "optimizer_states")}
    return memory_bar(parts, q.capacity_bytes, label=f"Training state on one {q.hardware.name}")


VIEW = DrillView(
    widget_name=NAME,
    noun="question",
    mistakes=drill_cluster.MISTAKES,
    question=drill_cluster.pod_memory_question,
    check=_check,
    bar=_bar,
)


def render(values: Values) -> Rendered:
    return VIEW.render(values)


WIDGET = Widget(
    name=NAME,
    title="Drill: memory per GPU in a pod",
    fields=(ANSWER, FITS, seed_field("question"), STATE),
    render=render,
    summary="Generated questions on the training state per GPU under tensor parallel × "
    f"pipeline stages × ZeRO-1, checked within {format_percent(TOLERANCE)}, with the likely slip "
    "named and a score kept on the reader's device.",
    actions=actions("question"),
    goal_answers=VIEW.goal,
    store="local:drill-cluster",
    url_state=("seed",),
)
