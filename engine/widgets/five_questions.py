"""docs/steps/five-questions.md: any workload, and the engine's answers to the five questions.

The answers are :func:`engine.words.answers.answers`, word for word; the widget only collects
the workload and lists them.
"""

from __future__ import annotations

from engine.lesson.plans.fields import PLAN_FIELDS, plan_arguments, plan_widget_command
from engine.lesson.plans.plan_json import plan_json
from engine.numbers.memory import SHARDINGS
from engine.numbers.plan import CHINCHILLA_TOKENS_PER_PARAM, plan
from engine.render.html import esc, tag
from engine.render.options import (
    MODEL_OR_CONFIG,
    SERVING_WEIGHT_FORMATS,
    format_options,
    model_fields,
    model_from,
    noting_your_model,
    pasted_config,
)
from engine.render.secondary import plain_list, secondary
from engine.render.widget import Rendered, Values, Widget
from engine.words.answer_lines import answer_lines
from engine.words.answers import QUESTIONS, answers
from engine.words.labels import SHARDING_LABELS
from engine.words.memory_explained import memory_assumptions

# The plan's own fields, renamed and relabelled for this step; the other inputs take plan()'s
# defaults. Only the chosen task's fields are read.
FIELDS = {
    "hardware": PLAN_FIELDS["hardware"],
    "gpus": PLAN_FIELDS["gpus"],
    # One hint here rather than 'Serving only.' / 'Training only.' under five fields.
    "task": PLAN_FIELDS["task"].but(hint="The other task's fields wait."),
    "weight_format": PLAN_FIELDS["weight_format"].but(
        name="weight_format",
        options=format_options(*SERVING_WEIGHT_FORMATS),
        ids=SERVING_WEIGHT_FORMATS,
        hint="",
    ),
    "context_tokens": PLAN_FIELDS["context_tokens"].but(name="context_tokens", hint=""),
    "tokens": PLAN_FIELDS["tokens"].but(
        hint=f"Empty: {CHINCHILLA_TOKENS_PER_PARAM} per parameter (compute-optimal)."
    ),
    "mfu": PLAN_FIELDS["mfu"].but(hint=""),
    "sharding": PLAN_FIELDS["sharding"].but(
        options=tuple((s, SHARDING_LABELS.get(s, s)) for s in SHARDINGS), hint=""
    ),
    "usd_per_gpu_hour": PLAN_FIELDS["usd_per_gpu_hour"].but(name="usd_per_gpu_hour"),
}


def render(values: Values) -> Rendered:
    p = plan(model=model_from(values), **plan_arguments(values, FIELDS, every_task=False))
    answered = answers(p)
    unit = "GPU" if p.hardware.kind == "gpu" else "chip"
    what = "Serving" if p.task == "serve" else "Training"
    head = tag(
        "p",
        esc(
            f"{what} {p.model.name} on {p.gpus:,} {unit}{'s' if p.gpus > 1 else ''} "
            f"({p.hardware.name}):"
        ),
        class_="widget-verdict " + ("fits" if p.memory.fits else "refused"),
    )
    short = answer_lines(p)
    items = "".join(
        tag(
            "li",
            tag("span", esc(question), class_="five-question") + esc(short[key]),
            data_question=key,
        )
        for key, question in QUESTIONS
    )
    workings = tag("ol", "".join(
        tag("li", tag("strong", esc(question)) + " " + esc(answered[key]), data_question=key)
        for key, question in QUESTIONS
    ), class_="five-workings")
    assumptions = plain_list(memory_assumptions(p.memory))
    notes = secondary("The workings and assumptions", workings + assumptions)
    return Rendered(head + tag("ol", items, class_="five-answers") + notes,
                    result_json=plan_json(p, pasted_config(values, MODEL_OR_CONFIG)))


WIDGET = Widget(
    name="five_questions",
    title="Five questions, any workload",
    fields=(*model_fields(), *FIELDS.values()),
    render=noting_your_model(render, MODEL_OR_CONFIG),
    command=plan_widget_command(FIELDS),
    summary="Any workload (model, hardware, GPUs, serve or train): does it fit, what limits "
    "its speed, how many GPUs, why would it fail, what does it cost.",
)
