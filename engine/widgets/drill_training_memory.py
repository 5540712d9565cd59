"""Step 7: drill on training memory per GPU, with the likely mistake named and a kept score.

The question comes from its number (hidden input ``seed``, mirrored in the address, so a
link reproduces it); the score lives in the hidden input ``state``, which the browser keeps
in localStorage under "local:drill-7". All the drill's logic is in :mod:`engine.drills`.
"""

from __future__ import annotations

from engine import drills
from engine.widgets.base import Action, Control, Inputs, Rendered, Widget
from engine.widgets.charts import memory_bar
from engine.widgets.html import definition_list, esc, tag
from engine.widgets.labels import labelled_parts

DRILL_STEP = 7
GOAL = 5  # correct answers that complete the drill


def _question_html(q: drills.TrainingMemoryQuestion) -> str:
    lead = tag("strong", esc(f"Question {q.seed:,}.")) + " " + esc(q.lead)
    return (
        tag("p", lead, class_="drill-question")
        + definition_list(q.givens())
        + tag("p", esc(q.ask), class_="drill-ask")
    )


def _feedback_html(
    q: drills.TrainingMemoryQuestion, feedback: drills.Feedback, counted: bool
) -> str:
    verdict = tag(
        "p",
        esc(feedback.headline),
        class_="widget-verdict " + ("fits" if feedback.correct else "refused"),
    )
    slip = ""
    if feedback.mistake and feedback.mistake != "unknown":
        slip = tag("strong", esc(f"Likely slip: you {drills.MISTAKES[feedback.mistake]}.")) + " "
    explanation = tag("p", slip + esc(feedback.explanation))
    repeat = (
        ""
        if counted
        else tag(
            "p",
            esc(
                "Only your first answer to a question counts, so the score is unchanged. "
                "Press New question for another."
            ),
            class_="widget-notes",
        )
    )
    working = tag("ol", "".join(tag("li", esc(line)) for line in feedback.working))
    parts = {
        k: v for k, v in q.memory.parts.items() if k in ("weights", "gradients", "optimizer_states")
    }
    if q.with_activations:
        parts["activations"] = q.activation_bytes
    bar = memory_bar(
        labelled_parts(parts), q.capacity_bytes, label=f"Memory of one {q.hardware.name}"
    )
    return tag(
        "div",
        verdict + explanation + repeat + tag("p", esc("The working:")) + working + bar,
        class_="drill-feedback",
        data_correct="true" if feedback.correct else "false",
        data_mistake=feedback.mistake or None,
    )


def _score_html(score: drills.Score) -> str:
    text = f"Score: {score.correct} correct of {score.answered} answered, streak {score.streak}."
    left = GOAL - score.correct
    if left > 0:
        more = f" {left} more correct answer{'s' if left > 1 else ''} complete the drill."
        return tag("p", esc(text + more), class_="drill-score")
    done = tag(
        "span",
        esc(f"Drill complete: {GOAL} or more correct answers."),
        data_drill_complete=str(DRILL_STEP),
    )
    return tag("p", esc(text) + " " + done, class_="drill-score")


def render(inputs: Inputs) -> Rendered:
    seed = drills.parse_seed(inputs["seed"])
    score = drills.Score.from_text(inputs["state"])
    action = inputs.get("action", "")
    set_inputs: dict[str, str] = {}
    feedback_html = ""
    if action == "new":
        seed = drills.next_seed(seed)
        set_inputs.update(seed=str(seed), answer="", fits="")
    question = drills.training_memory_question(seed)
    if action == "check":
        feedback = drills.check_answer(question, inputs["answer"], fits=inputs["fits"])
        score, counted = score.record(seed, feedback.correct)
        set_inputs["state"] = score.to_text()
        feedback_html = _feedback_html(question, feedback, counted)
    html = tag(
        "div",
        _question_html(question) + feedback_html + _score_html(score),
        class_="drill",
        data_seed=str(seed),
    )
    return Rendered(html, set_inputs)


WIDGET = Widget(
    name="drill_training_memory",
    title="Drill: training memory per GPU",
    controls=(
        Control(
            "answer",
            "Your answer",
            "text",
            "",
            unit="GB per GPU",
            hint="A number in GB (10^9 bytes), such as 42.5 or 42.5 GB; a point for decimals. "
            f"Answers within {drills.TOLERANCE * 100:g} % of the engine's figure count.",
        ),
        Control(
            "fits",
            "Does it fit?",
            "select",
            "",
            options=(("", "Choose…"), ("yes", "Yes, it fits"), ("no", "No, it does not fit")),
        ),
        Control("seed", "Question number", "hidden", "1"),
        Control("state", "Score", "hidden", drills.Score().to_text()),
    ),
    render=render,
    summary="Generated questions on training memory per GPU (bytes per parameter, optimiser, "
    f"sharding, activations), checked within {drills.TOLERANCE * 100:g} %, with the likely "
    "mistake named and a score kept on the reader's device.",
    actions=(Action("check", "Check", primary=True), Action("new", "New question")),
    store="local:drill-7",
    url_state=("seed",),
)
