"""Going further: a roofline with three roofs. For tensor-parallel serving, the maths time,
the memory time and the all-reduce time of one decode step as the batch grows: 8 × L40S over
PCIe turn communication-bound where 8 × H100 over NVLink do not, and a model on 4 GPUs is
not 4 times faster than on one.
"""

from __future__ import annotations

from engine.lesson.plans.roofline_view import roofline_commands
from engine.numbers import quantities
from engine.numbers.architecture import check_tensor_parallel
from engine.numbers.catalog import get_hardware
from engine.numbers.expected_serving import DecodeParts, decode_parts
from engine.render.fields import Count
from engine.render.html import column_heads, esc, table_box, tag
from engine.render.log_lines import log_lines
from engine.render.options import (
    CONFIG,
    CONTEXT,
    catalog_model_field,
    chosen_model,
    hardware_field,
    noting_your_model,
)
from engine.render.widget import Command, Values, Widget
from engine.words.format import format_seconds

MODEL = catalog_model_field("llama-3.1-70b", your_model=True)
HARDWARE = hardware_field().but(default="l40s")
GPUS = Count("gpus", "Tensor-parallel GPUs", "8", unit="GPUs", control_kind="select",
             options=(("1", "1"), ("2", "2"), ("4", "4"), ("8", "8")),
             quantity=quantities.TENSOR_PARALLEL_IN_SERVER)
CONTEXT_TOKENS = CONTEXT.but(default="1024", label="Context per request")
BATCHES = tuple(2**i for i in range(10))  # 1 to 512 requests at once
LINES = (("maths", "net-maths"), ("memory", "net-memory"),
         ("all-reduces", "net-comm"), ("whole step, expected", "net-step"))
LIMIT_WORDS = {"maths": "maths", "memory": "memory", "communication": "all-reduces"}


def _ms(seconds: float) -> str:
    return format_seconds(seconds)


def render(values: Values) -> str:
    model = chosen_model(values, MODEL)
    hw = get_hardware(values[HARDWARE])
    gpus = check_tensor_parallel(model, values[GPUS])
    context = values[CONTEXT_TOKENS]
    steps: list[DecodeParts] = [decode_parts(model, hw, context_tokens=context, batch=b,
                                             gpus=gpus) for b in BATCHES]
    link = hw.link_spec().scale_up if gpus > 1 else "no link (one GPU)"
    first_comm = next((s.batch for s in steps if s.limit == "communication"), None)
    if gpus == 1:
        verdict = (f"On one {hw.name} nothing travels between GPUs: only the maths and "
                   "memory roofs are left.")
    elif first_comm is None:
        verdict = (f"On {gpus} × {hw.name}, linked by {link}, the all-reduces stay below the "
                   f"memory time up to a batch of {BATCHES[-1]}: the links are not the limit.")
    else:
        verdict = (f"On {gpus} × {hw.name}, linked by {link}, the all-reduces overtake the "
                   f"other roofs from a batch of {first_comm}: the step becomes "
                   "communication-bound.")
    one = decode_parts(model, hw, context_tokens=context, batch=1, gpus=1)
    speedup = one.seconds / steps[0].seconds
    scaling = (f"At batch 1 a step takes {_ms(one.seconds)} on one {hw.name} (were there room) "
               f"and {_ms(steps[0].seconds)} on {gpus}: {speedup:.1f} × faster, not "
               f"{gpus} ×. The all-reduces and the fixed cost of launching each layer's "
               "kernels do not shrink with more GPUs.") if gpus > 1 else ""
    parts = (("maths_seconds", LINES[0]), ("memory_seconds", LINES[1]),
             ("communication_seconds", LINES[2]), ("seconds", LINES[3]))
    series = [(name, css, [(float(s.batch), float(getattr(s, key))) for s in steps])
              for key, (name, css) in parts if gpus > 1 or key != "communication_seconds"]
    picture = log_lines(series, label=f"One decode step of {model.name} on {gpus} × {hw.name}",
                        x_label="requests at once (batch)", y_label="time per step",
                        x_text=lambda v: f"{v:,.0f}", y_text=_ms)
    head = column_heads(("Batch", "Maths", "Memory", "All-reduces", "Step, expected",
                         "Largest roof"))
    body = "".join(tag("tr", tag("th", f"{s.batch:,}", scope="row") + "".join(
        tag("td", esc(v)) for v in (_ms(s.maths_seconds), _ms(s.memory_seconds),
                                    _ms(s.communication_seconds), _ms(s.seconds),
                                    LIMIT_WORDS[s.limit])), data_batch=str(s.batch))
        for s in steps)
    figures = table_box(head, body, caption=f"{model.name}, {gpus} × {hw.name}, "
                        f"{context:,} tokens of context per request")
    note = tag("p", esc(
        "Each roof is the expected time of one part of the step on its own: the maths at the "
        "measured matrix-multiply efficiency, the memory at the measured share of the "
        "bandwidth, the all-reduces over the GPUs' links. In the step, reading and maths overlap "
        "only in part (more than the larger of the two, less than their sum); the all-reduces "
        "and a fixed cost per layer for launching kernels add to that. Whether a batch fits in "
        "memory is not checked here."),
        class_="widget-notes")
    return (tag("p", esc(verdict), class_="widget-verdict") + picture
            + (tag("p", esc(scaling)) if scaling else "") + figures + note)


def command(values: Values) -> Command:
    """The steps at every batch on the chosen GPUs (and each on one GPU, when more)."""
    return roofline_commands(values, MODEL, {
        "hardware": values[HARDWARE], "gpus": values[GPUS],
        "context_tokens": values[CONTEXT_TOKENS], "batches": BATCHES})


WIDGET = Widget(
    name="roofline_three_roofs",
    title="A roofline with three roofs",
    fields=(MODEL, CONFIG, HARDWARE, GPUS, CONTEXT_TOKENS),
    render=noting_your_model(render, MODEL),
    summary="Tensor-parallel serving: the maths, memory and all-reduce time of one decode step "
    "as the batch grows, and why more GPUs are not proportionally faster.",
    command=command,
)
