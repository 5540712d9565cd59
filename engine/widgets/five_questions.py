"""Step 19: any workload, and the engine's answers to the five questions.

The answers are :meth:`engine.lesson.plan.Plan.answers`, word for word; the widget only collects
the workload and lists them.
"""

from __future__ import annotations

from engine.lesson.plan import CHINCHILLA_TOKENS_PER_PARAM, QUESTIONS, TASKS, plan
from engine.numbers.memory import SHARDINGS
from engine.numbers.validate import choice
from engine.render.html import esc, tag
from engine.render.options import (
    SERVING_WEIGHT_FORMATS,
    TASK_LABELS,
    format_options,
    hardware_options,
    model_controls,
    model_from,
)
from engine.render.widget import Control, Inputs, Widget

SHARDING_LABELS = {
    "none": "None (every GPU holds everything)",
    "zero1": "ZeRO-1 (optimizer states split)",
    "zero2": "ZeRO-2 (+ gradients split)",
    "zero3": "ZeRO-3 (+ weights split)",
}


def render(inputs: Inputs) -> str:
    model = model_from(inputs)
    task = choice(inputs["task"], "task", TASKS, label="Task")
    weight_format = choice(
        inputs["weight_format"], "weight_format", SERVING_WEIGHT_FORMATS, label="Weights format"
    )
    p = plan(
        model=model,
        hardware=inputs["hardware"],
        gpus=inputs["gpus"],
        task=task,
        weight_format=weight_format,
        context_tokens=inputs["context_tokens"],
        sharding=inputs["sharding"],
        tokens=inputs["tokens"].strip(),
        mfu=inputs["mfu"],
        usd_per_gpu_hour=inputs["usd_per_gpu_hour"].strip(),
    )
    answers = p.answers()
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
    items = "".join(
        tag(
            "li",
            tag("span", esc(question), class_="s4-question") + esc(answers[key]),
            data_question=key,
        )
        for key, question in QUESTIONS
    )
    notes = tag(
        "details",
        tag("summary", "Assumptions")
        + tag("ul", "".join(tag("li", esc(a)) for a in p.memory.assumptions)),
        class_="widget-notes",
    )
    return head + tag("ol", items, class_="s4-answers") + notes


WIDGET = Widget(
    name="five_questions",
    title="Five questions, any workload",
    controls=(
        *model_controls(),
        Control("hardware", "Hardware", "select", "h100-sxm", options=hardware_options()),
        Control("gpus", "GPUs (or chips)", "number", "1"),
        Control("task", "Task", "select", "serve", options=tuple(TASK_LABELS.items())),
        Control(
            "weight_format",
            "Weights stored as",
            "select",
            "bf16",
            options=format_options(*SERVING_WEIGHT_FORMATS),
            hint="Serving only.",
        ),
        Control(
            "context_tokens",
            "Context per request",
            "number",
            "8192",
            unit="tokens",
            hint="Serving only.",
        ),
        Control(
            "tokens",
            "Training tokens",
            "number",
            "",
            unit="tokens",
            hint=f"Training only. Empty: {CHINCHILLA_TOKENS_PER_PARAM} per parameter (compute-optimal).",
        ),
        Control(
            "mfu",
            "MFU",
            "number",
            "0.4",
            hint="Training only: share of peak FLOP/s achieved, e.g. 0.4.",
        ),
        Control(
            "sharding",
            "Sharding",
            "select",
            "none",
            options=tuple((s, SHARDING_LABELS.get(s, s)) for s in SHARDINGS),
            hint="Training only.",
        ),
        Control(
            "usd_per_gpu_hour",
            "Price per GPU-hour",
            "number",
            "",
            unit="USD",
            hint="Empty: the catalogue's cloud price for this hardware, if it has one.",
        ),
    ),
    render=render,
    summary="Any workload (model, hardware, GPUs, serve or train): does it fit, what limits "
    "its speed, how many GPUs, why would it fail, what does it cost.",
)
