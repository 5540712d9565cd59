"""A serving plan on one GPU: memory breakdown and how much context the rest holds (the
authors' example widget, docs/authors.md; docs/steps/serve-the-model.md deploys with deploy_model instead)."""

from __future__ import annotations

from engine.lesson.plans.fields import plan_commands
from engine.numbers import memory
from engine.numbers.catalog import get_hardware
from engine.numbers.formats import FormatId
from engine.render.charts import memory_bar
from engine.render.html import definition_list, esc, tag
from engine.render.options import (
    BATCH,
    CONFIG,
    CONTEXT,
    catalog_model_field,
    chosen_model,
    hardware_field,
    noting_your_model,
    weight_format_field,
)
from engine.render.secondary import secondary_list
from engine.render.widget import Command, Values, Widget
from engine.words.format import format_bytes, format_GB
from engine.words.memory_explained import memory_assumptions

MODEL = catalog_model_field(your_model=True)
HARDWARE = hardware_field()
FORMAT = weight_format_field()
KV_FORMAT: FormatId = "bf16"  # the KV cache's format: the runtimes' default


def render(values: Values) -> str:
    model = chosen_model(values, MODEL)
    gpu = get_hardware(values[HARDWARE])
    context_tokens = values[CONTEXT]
    batch = values[BATCH]
    plan = memory.serving_memory(
        model,
        gpu,
        weight_format=values[FORMAT],
        kv_format=KV_FORMAT,
        context_tokens=context_tokens,
        batch=batch,
    )
    verdict_text = f"{format_GB(plan.per_gpu_bytes)} of {format_GB(plan.capacity_bytes)}: " + (
        "it fits." if plan.fits else "it does not fit."
    )
    verdict = tag(
        "p", esc(verdict_text), class_="widget-verdict " + ("fits" if plan.fits else "refused")
    )
    bar = memory_bar(
        plan.parts, plan.capacity_bytes, label=f"Memory of one {gpu.name}"
    )
    kv_per_token = memory.kv_cache_bytes_per_token(model)
    figures = definition_list(
        [
            ("KV cache per token", f"{format_bytes(kv_per_token)} ({kv_per_token:,.0f} bytes)"),
            ("Memory left free", format_GB(max(plan.headroom_bytes, 0.0))),
            ("Tokens of context the GPU can hold", f"{plan.max_context_tokens_that_fit:,}"),
            (
                f"Concurrent requests at {context_tokens:,} tokens each",
                f"{plan.max_concurrent_requests:,}",
            ),
        ]
    )
    details = secondary_list("Assumptions", memory_assumptions(plan))
    return verdict + bar + figures + details


def command(values: Values) -> Command:
    """The serving plan on one GPU whose memory this is."""
    return plan_commands(values, MODEL, {
        "hardware": values[HARDWARE], "gpus": 1, "task": "serve",
        "weight_format": values[FORMAT], "kv_format": KV_FORMAT,
        "context_tokens": values[CONTEXT], "batch": values[BATCH]})


WIDGET = Widget(
    name="serve_plan",
    title="Deploy a model on one GPU",
    fields=(MODEL, CONFIG, HARDWARE, FORMAT, CONTEXT, BATCH),
    render=noting_your_model(render, MODEL),
    command=command,
    summary="Serving memory on one GPU: weights, KV cache, activations, overhead; the context "
    "and concurrency the rest of the GPU can hold.",
)
