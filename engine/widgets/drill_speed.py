"""The second drill of docs/steps/drill-will-it-fit.md: how fast? Time per token, time to first token and a batch's
tokens/s, each with the limit that sets it; the likely mistake named and a kept score.

The question comes from its number (hidden input ``seed``, mirrored in the address, so a
link reproduces it); the score lives in the hidden input ``state``, which the browser keeps
in localStorage under "local:drill-speed". The drill's logic is in
:mod:`engine.lesson.drills.speed`; the view it shares with the other drills is
:mod:`engine.lesson.drills.view`.
"""

from __future__ import annotations

from engine.lesson.drills import speed as drill_speed
from engine.lesson.drills.view import STATE, DrillView, actions, seed_field
from engine.render.fields import Text
from engine.render.widget import Rendered, Values, Widget

NAME = "drill_speed"

# Text, not a Choice: the drill's own check answers an unchosen or odd value in its words.
LIMIT = Text(
    "limit",
    "Which limit sets it?",
    "",
    control_kind="select",
    options=(("", "Choose…"), ("memory", "Memory bandwidth"), ("compute", "Compute")),
)
ANSWER = Text("answer", "Your answer", "", unit="ms or tokens/s")
ANSWER_RULE = (
    "Give ms (such as 4.8) or tokens/s (such as 1,200), as the question asks; a point for "
    "decimals."
)


def _check(q: drill_speed.SpeedQuestion, values: Values) -> drill_speed.SpeedFeedback:
    return drill_speed.check_answer(q, values[LIMIT], values[ANSWER])


VIEW = DrillView(
    widget_name=NAME,
    noun="question",
    mistakes=drill_speed.MISTAKES,
    question=drill_speed.speed_question,
    check=_check,
    bar=lambda _: "",
    data=lambda q: {"data_kind": q.kind},
    cleared=("answer", "limit"),
    answer_rule=ANSWER_RULE,
    notes=lambda q: q.notes(),
    worked_problem="worked-problem",
    worked_problem_title="decode below the critical batch",
)


def render(values: Values) -> Rendered:
    return VIEW.render(values)


WIDGET = Widget(
    name=NAME,
    title="Drill: how fast?",
    fields=(ANSWER, LIMIT, seed_field("question"), STATE),
    render=render,
    summary="Generated questions on serving speed (time per output token, time to first "
    "token, a batch's tokens/s) and the limit that sets each, checked against the engine's "
    "bound, with the expected value beside it, the likely mistake named and a score kept "
    "on the reader's device.",
    actions=actions("question"),
    goal_answers=VIEW.goal,
    store="local:drill-speed",
    url_state=("seed",),
)
