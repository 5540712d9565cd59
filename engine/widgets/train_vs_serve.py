"""docs/steps/training-needs-more-memory.md: the same model served and trained on one GPU; training state per parameter."""

from __future__ import annotations

from engine.numbers import memory
from engine.numbers.catalog import get_hardware
from engine.numbers.formats import FormatId, get_format
from engine.numbers.training_choices import MEMORY_CONVENTIONS, OPTIMIZERS
from engine.numbers.training_choices import RECOMPUTE as RECOMPUTES
from engine.render.charts import memory_bar
from engine.render.fields import one_of
from engine.render.html import definition_list, esc, table, tag
from engine.render.options import (
    CONFIG,
    CONTEXT,
    MICRO_BATCH,
    SEQ_LEN,
    catalog_model_field,
    chosen_model,
    hardware_field,
    noting_your_model,
)
from engine.render.secondary import secondary
from engine.render.widget import Values, Widget
from engine.words.format import format_GB
from engine.words.labels import CONVENTION_LABELS, OPTIMIZER_LABELS, RECOMPUTE_LABELS, part_label
from engine.words.memory_explained import CONVENTION_SOURCES, OPTIMIZER_SOURCES

SERVING_FORMAT: FormatId = "bf16"
# Serving is the opening plan's (model_size, on the first step): one request with the lesson's
# default context, not the training sequence length, so the two steps show one serving total
# for the same model and GPU.
SERVING_CONTEXT_TOKENS = int(CONTEXT.default)



def _verdict(what: str, used: float, capacity: float) -> str:
    fits = used <= capacity
    text = f"{what}: {format_GB(used)} of {format_GB(capacity)}: " + (
        "it fits." if fits else "it does not fit."
    )
    return tag("p", esc(text), class_="widget-verdict " + ("fits" if fits else "refused"))


MODEL = catalog_model_field(your_model=True)
HARDWARE = hardware_field()
OPTIMIZER = one_of("optimizer", "Optimiser", "adam", OPTIMIZERS, OPTIMIZER_LABELS)
CONVENTION = one_of("convention", "Convention", "mixed-16", MEMORY_CONVENTIONS,
                    CONVENTION_LABELS)
RECOMPUTE = one_of("recompute", "Recomputation", "selective", RECOMPUTES, RECOMPUTE_LABELS)


def _block(task: str, mem: memory.ServingMemory | memory.TrainingMemory, what: str,
           scale_bytes: float) -> str:
    """One task's side: the verdict, which names the task, and its memory bar (on the shared
    scale; the verdict states the total, so the bar does not)."""
    return tag(
        "div",
        _verdict(task, mem.per_gpu_bytes, mem.capacity_bytes)
        + memory_bar(mem.parts, mem.capacity_bytes, label=f"{task} {what}", scale_bytes=scale_bytes,
                     used_label=False),
        class_=f"widget-compare {task.lower()}",
    )


def render(values: Values) -> str:
    model = chosen_model(values, MODEL)
    gpu = get_hardware(values[HARDWARE])
    optimizer = values[OPTIMIZER]
    convention = values[CONVENTION]
    micro_batch = values[MICRO_BATCH]
    seq_len = values[SEQ_LEN]
    recompute = values[RECOMPUTE]

    serve = memory.serving_memory(
        model,
        gpu,
        weight_format=SERVING_FORMAT,
        context_tokens=SERVING_CONTEXT_TOKENS,
    )
    train = memory.training_memory(
        model,
        gpu,
        optimizer=optimizer,
        convention=convention,
        micro_batch=micro_batch,
        seq_len=seq_len,
        recompute=recompute,
    )
    scale = max(serve.per_gpu_bytes, train.per_gpu_bytes, gpu.memory_bytes)
    serve_block = _block(
        "Serving",
        serve,
        f"{model.name} on one {gpu.name}, one request of {SERVING_CONTEXT_TOKENS:,} tokens",
        scale,
    )
    train_block = _block("Training", train, f"{model.name} on one {gpu.name}", scale)

    serve_bpp = get_format(SERVING_FORMAT).bytes_per_number
    train_bpp = train.bytes_per_param_total
    state_rows = [(part_label(k), f"{v:g}") for k, v in train.bytes_per_param.items()]
    state_rows.append(("Training state in all", f"{train_bpp:g}"))
    state_table = table(
        ("Held per parameter", "Bytes"),
        state_rows,
        caption=f"Training state per parameter ({OPTIMIZER_LABELS[optimizer]}, {convention})",
    )
    figures = definition_list(
        [
            ("Training ÷ serving, per parameter", f"{train_bpp / serve_bpp:g}×"),
        ]
    )
    more_figures = definition_list(
        [
            ("Training state for the whole model", format_GB(train.state_bytes_total)),
            (f"Serving: bytes per parameter ({SERVING_FORMAT} weights)", f"{serve_bpp:g}"),
            (
                "Serving: one request's context (KV cache)",
                f"{SERVING_CONTEXT_TOKENS:,} tokens, the lesson's default request",
            ),
            ("Training: bytes per parameter, before activations", f"{train_bpp:g}"),
            (
                f"Activations ({micro_batch:,} × {seq_len:,} tokens, {recompute} recomputation)",
                format_GB(train.parts["activations"]),
            ),
        ]
    )
    sources = tag(
        "ul",
        "".join(
            tag("li", esc(line))
            for line in (CONVENTION_SOURCES[convention], OPTIMIZER_SOURCES[optimizer])
        ),
    )
    details = secondary(
        "Each byte per parameter, with sources", state_table + more_figures + sources
    )
    return serve_block + train_block + figures + details

WIDGET = Widget(
    name="train_vs_serve",
    title="Serving versus training",
    fields=(MODEL, CONFIG, HARDWARE, OPTIMIZER, CONVENTION, MICRO_BATCH, SEQ_LEN, RECOMPUTE),
    render=noting_your_model(render, MODEL),
    summary="Serving and training memory side by side on one GPU; the training state per "
    "parameter (16 bytes for Adam in mixed precision) against the 2 bytes serving needs.",
)
