"""docs/steps/pile-of-numbers.md: a model's size in bytes and FLOPs per token, and the opening plan on one H100."""

from __future__ import annotations

from engine.numbers import memory
from engine.numbers.catalog import get_hardware
from engine.numbers.compute import flops_per_token
from engine.numbers.formats import get_format
from engine.render.charts import memory_bar
from engine.render.html import definition_list, esc, tag
from engine.render.options import (
    MODEL_OR_CONFIG,
    format_field,
    model_fields,
    model_from,
    noting_your_model,
)
from engine.render.secondary import plain_list, secondary
from engine.render.widget import Values, Widget
from engine.words.format import format_count, format_GB

PLAN_HARDWARE = "h100-sxm"
FORMAT = format_field("format", "Number format", "bf16")


def render(values: Values) -> str:
    model = model_from(values)
    number_format = get_format(values[FORMAT])
    weights_bytes = memory.weights_bytes(model.params, number_format.id)
    gpu = get_hardware(PLAN_HARDWARE)
    plan = memory.serving_memory(model, gpu, weight_format=number_format.id)
    used = "the parameters a token uses" if model.active_params < model.params else "parameters"
    flops = f"{format_count(flops_per_token(model))} FLOPs"
    figures = definition_list(
        [
            ("Parameters", format_count(model.params)),
            ("Size of the weights", format_GB(weights_bytes)),
            ("FLOPs per token", flops),
        ]
    )
    # The figures repeat the step's prose for its model: with the working, one click away.
    arithmetic = secondary(
        "The arithmetic",
        figures
        + plain_list(
            (
                f"{model.params:,} parameters × {number_format.bytes_per_number:g} bytes per "
                f"number in {number_format.label} = {format_GB(weights_bytes)}",
                f"FLOPs per token: about 2 × {used}, {flops} (a multiply and an add per weight)",
            )
        ),
    )
    verdict_class = "fits" if plan.fits else "refused"
    # The bar's KV cache is for the lesson's default request: say which, in view.
    request = (f"one {plan.context_tokens:,}-token request" if plan.batch == 1
               else f"{plan.batch:,} requests of {plan.context_tokens:,} tokens")
    verdict_text = (
        f"Serving {request} on one {gpu.name}: {format_GB(plan.per_gpu_bytes)} of "
        f"{format_GB(plan.capacity_bytes)}: " + ("it fits." if plan.fits else "it does not fit.")
    )
    verdict = tag("p", esc(verdict_text), class_=f"widget-verdict {verdict_class}")
    bar = memory_bar(
        plan.parts, plan.capacity_bytes, label=f"Memory of one {gpu.name}", used_label=False
    )
    return verdict + bar + arithmetic


WIDGET = Widget(
    name="model_size",
    title="How big is a model?",
    fields=(*model_fields(hint_aside=" (e.g. 7e9 or 7,000,000,000)"), FORMAT),
    render=noting_your_model(render, MODEL_OR_CONFIG),
    summary="Size in GB and FLOPs per token for a model and a number format, and the opening "
    "serving plan on one H100.",
)
