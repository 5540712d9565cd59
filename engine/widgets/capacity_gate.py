"""docs/steps/capacity.md: capacity is a gate. A model that does not fit one GPU is refused before anything
runs; the ways out (more GPUs, fewer bytes per weight, a bigger GPU), each with its numbers."""

from __future__ import annotations

from dataclasses import dataclass

from engine.lesson.plans.fields import plan_commands, serving_keywords
from engine.numbers import memory
from engine.numbers.catalog import HardwareSpec, ModelSpec, get_hardware
from engine.numbers.formats import FORMATS, FormatId, get_format
from engine.numbers.memory import ServingMemory
from engine.render.charts import memory_bar
from engine.render.html import column_heads, definition_list, esc, table_box, tag
from engine.render.options import (
    CONFIG,
    CONTEXT,
    catalog_model_field,
    chosen_model,
    hardware_field,
    noting_your_model,
    weight_format_field,
)
from engine.render.secondary import secondary
from engine.render.widget import Command, Values, Widget
from engine.words.format import format_count, format_GB, plural
from engine.words.memory_explained import KV_ROOM_RULE

SMALLER_FORMATS: tuple[FormatId, ...] = ("fp8", "int4")
BIGGER_GPUS = ("h200", "b200", "mi300x")
MODEL = catalog_model_field("llama-3.1-70b", your_model=True)
HARDWARE = hardware_field()
FORMAT = weight_format_field()
CONTEXT_TO_HOLD = CONTEXT.but(label="Context to hold")


@dataclass(frozen=True, slots=True)
class WayOut:
    """One row of the ways-out table: what changes (``kind``: "split", "format" or "chip"),
    and the engine's plan for it."""

    kind: str
    key: str
    words: str
    short: str
    plan: ServingMemory


def _plan(
    model: ModelSpec, gpu: HardwareSpec, weight_format: FormatId, context: int, gpus: int = 1
) -> ServingMemory:
    return memory.serving_memory(
        model, gpu, weight_format=weight_format, context_tokens=context, gpus=gpus
    )


def _share(n: int) -> str:
    """'half', '1/4': each GPU's share of a matrix split n ways (tensor parallelism)."""
    return "half" if n == 2 else f"1/{n}"


def ways_out(model: ModelSpec, gpu: HardwareSpec, weight_format: FormatId, context: int) -> list[WayOut]:
    """More GPUs of the same kind, smaller formats on one GPU, bigger single GPUs."""
    asked = _plan(model, gpu, weight_format, context)
    rows = []
    need = memory.min_gpus_to_serve(asked)
    if need is not None:
        n = max(2, need)
        rows.append(
            WayOut(
                "split",
                "gpus",
                f"Split over {n} × {gpu.name} (tensor parallel), {weight_format}",
                f"Split over {n} GPUs (each holds {_share(n)} of every matrix)",
                _plan(model, gpu, weight_format, context, gpus=n),
            )
        )
    chosen_bytes = get_format(weight_format).bytes_per_number
    for fmt in SMALLER_FORMATS:
        if FORMATS[fmt].bytes_per_number < chosen_bytes:
            rows.append(
                WayOut(
                    "format",
                    fmt,
                    f"{fmt} weights ({FORMATS[fmt].bytes_per_number:g} byte each) on 1 × {gpu.name}",
                    f"{fmt} weights",
                    _plan(model, gpu, fmt, context),
                )
            )
    for hw_id in BIGGER_GPUS:
        if hw_id != gpu.id:
            other = get_hardware(hw_id)
            rows.append(
                WayOut(
                    "chip",
                    hw_id,
                    f"1 × {other.name}, {weight_format}",
                    f"One {other.name}",
                    _plan(model, other, weight_format, context),
                )
            )
    return rows


def _way_line(row: WayOut) -> str:
    """One way out in a few words: 'fp8 weights: fits, 4 requests' (the list's heading says
    how long the requests are)."""
    p = row.plan
    if not p.fits:
        return f"{row.short}: does not fit"
    return f"{row.short}: fits, {p.max_concurrent_requests:,} request{'s' if p.max_concurrent_requests != 1 else ''}"


def ways_out_list(rows: list[WayOut], *, refused: bool, context: int) -> str:
    """The first way out of each kind (a split, a smaller format, a bigger chip) as one short
    line each, under a heading that says what the count is; every way waits in the table."""
    first_of_kind: dict[str, WayOut] = {}
    for row in rows:
        first_of_kind.setdefault(row.kind, row)
    heading = (
        f"{'Ways out' if refused else 'Other ways to run it'} (room left for requests of "
        f"{context:,} tokens):"
    )
    items = "".join(
        tag("li", esc(_way_line(row)), data_way=row.key, data_fits="true" if row.plan.fits else "false")
        for row in first_of_kind.values()
    )
    return tag("p", esc(heading), class_="gate-ways-heading") + tag("ul", items, class_="gate-ways-list")


def _room(plan: ServingMemory) -> str:
    if not plan.fits:
        return "none: it does not fit"
    return (
        f"{plan.max_context_tokens_that_fit:,} tokens "
        f"({plural(plan.max_concurrent_requests, 'request')} of {plan.context_tokens:,})"
    )


def ways_out_table(rows: list[WayOut], *, refused: bool) -> str:
    headers = ("Way out", "Weights per GPU", "Memory per GPU", "Verdict", "Room for KV cache")
    body = []
    for row in rows:
        p = row.plan
        cells = (
            tag("th", esc(row.words), scope="row"),
            tag("td", esc(format_GB(p.parts["weights"]))),
            tag("td", esc(f"{format_GB(p.per_gpu_bytes)} of {format_GB(p.capacity_bytes)}")),
            tag(
                "td",
                esc("fits" if p.fits else "does not fit"),
                class_="gate-fits" if p.fits else "gate-nofit",
            ),
            tag("td", esc(_room(p))),
        )
        body.append(
            tag("tr", "".join(cells), data_way=row.key, data_fits="true" if p.fits else "false")
        )
    return table_box(
        column_heads(headers),
        "".join(body),
        caption=("Ways out, each planned by the engine" if refused else "Other ways to run it")
        + f"; room for KV cache: {KV_ROOM_RULE}",
        label="Ways out",
        extra_class="gate-ways",
    )


def render(values: Values) -> str:
    model = chosen_model(values, MODEL)
    gpu = get_hardware(values[HARDWARE])
    weight_format = get_format(values[FORMAT]).id
    context = values[CONTEXT_TO_HOLD]
    plan = _plan(model, gpu, weight_format, context)
    bytes_per = get_format(weight_format).bytes_per_number
    if plan.fits:
        verdict_text = (
            f"Admitted: {model.name} in {weight_format} needs {format_GB(plan.per_gpu_bytes)}; "
            f"one {gpu.name} holds {format_GB(plan.capacity_bytes)}. It fits."
        )
    else:
        verdict_text = (
            f"Refused: {model.name} in {weight_format} needs {format_GB(plan.per_gpu_bytes)}; "
            f"one {gpu.name} holds {format_GB(plan.capacity_bytes)}."
        )
    verdict = tag(
        "p",
        esc(verdict_text),
        class_="widget-verdict " + ("fits" if plan.fits else "refused"),
        data_fits="true" if plan.fits else "false",
    )
    bar = memory_bar(
        plan.parts, plan.capacity_bytes, label=f"Memory of one {gpu.name}", used_label=False
    )
    parts = plan.parts
    balance = plan.capacity_bytes - plan.per_gpu_bytes
    figures = definition_list(
        [
            (
                "Weights",
                f"{format_count(model.params)} parameters × {bytes_per:g} bytes = "
                f"{format_GB(parts['weights'])}",
            ),
            (
                "KV cache",
                f"{context:,} tokens × {plan.kv_cache_bytes_per_token:,.0f} bytes = "
                f"{format_GB(parts['kv_cache'])}",
            ),
            (
                "Activations + runtime overhead",
                format_GB(parts["activations"] + parts["runtime_overhead"]),
            ),
            ("Total", f"{format_GB(plan.per_gpu_bytes)} of {format_GB(plan.capacity_bytes)}"),
            (
                "Left over" if balance >= 0 else "Short by",
                format_GB(abs(balance)),
            ),
        ]
    )
    rows = ways_out(model, gpu, weight_format, context)
    return (
        verdict
        + bar
        + ways_out_list(rows, refused=not plan.fits, context=context)
        + secondary(
            "Worked out, and each way out in full",
            figures + ways_out_table(rows, refused=not plan.fits),
        )
    )


def command(values: Values) -> Command:
    """The serving plan asked for, then each way out's."""
    model = chosen_model(values, MODEL)
    gpu = get_hardware(values[HARDWARE])
    weight_format = get_format(values[FORMAT]).id
    context = values[CONTEXT_TO_HOLD]
    asked = _plan(model, gpu, weight_format, context)
    rows = ways_out(model, gpu, weight_format, context)
    return plan_commands(values, MODEL, *(serving_keywords(m)
                                          for m in (asked, *(row.plan for row in rows))))


WIDGET = Widget(
    name="capacity_gate",
    title="Capacity: does it fit at all?",
    fields=(MODEL, CONFIG, HARDWARE, FORMAT, CONTEXT_TO_HOLD),
    render=noting_your_model(render, MODEL),
    command=command,
    summary="Whether a model fits one GPU at all, the arithmetic of a refusal, and the ways "
    "out: more GPUs, smaller weights, a bigger GPU.",
)
