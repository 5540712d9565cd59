"""The ways out for fine-tuning in docs/steps/train-it-anyway.md on one GPU: full training against LoRA and QLoRA, as a
table and figures for prose (`{{ table("finetune_memory") }}`, `{{ figure("nf4_bits") }}`).

Every cell comes from engine.numbers.memory (full training) and engine.numbers.adapters
(LoRA, QLoRA) with the same sequence, micro-batch and recomputation, so the rows compare.
"""

from __future__ import annotations

from engine.numbers import adapters, quantities
from engine.numbers.catalog import get_hardware, resolve_model
from engine.numbers.memory import training_memory
from engine.render.html import column_heads, esc, table_box, tag
from engine.render.secondary import secondary
from engine.words import adapters_explained as adapter_words
from engine.words.adapters_explained import METHOD_LABELS, SOURCES, adapter_assumptions
from engine.words.format import format_count, format_GB

# (model, way) rows: full training is the sum training-needs-more-memory and train-it-anyway refused.
ROWS = (
    ("llama-3.1-8b", "full"),
    ("llama-3.1-8b", "lora"),
    ("llama-3.1-8b", "qlora"),
    ("llama-3.1-70b", "qlora"),
)
HARDWARE = "h100-sxm"
FULL_LABEL = "Full training (every weight trained)"


def _row(model_id: str, way: str, hardware: str) -> tuple[str, ...]:
    m = resolve_model(model_id=model_id)
    hw = get_hardware(hardware)
    if way == "full":
        full = training_memory(m, hw, recompute="full")
        p = full.parts
        weights, trained = p["weights"], m.params
        state = p["gradients"] + p["optimizer_states"]
        rest, total, fits = p["activations"] + p["runtime_overhead"], full.per_gpu_bytes, full.fits
        label = FULL_LABEL
    else:
        mem = adapters.adapter_memory(m, hw, method=adapters.parse_method(way))
        p = mem.parts
        weights = p["frozen_weights"] + p["adapter_weights"]
        trained = mem.trainable_params
        state = p["adapter_gradients"] + p["adapter_optimizer_states"]
        rest, total, fits = p["activations"] + p["runtime_overhead"], mem.per_gpu_bytes, mem.fits
        label = METHOD_LABELS[way]
    return (m.name, label, format_count(trained), format_GB(weights), format_GB(state),
            format_GB(rest), format_GB(total), "fits" if fits else "no")


def finetune_memory(hardware: str = HARDWARE) -> str:
    """Fine-tuning on ONE GPU: full training, LoRA and QLoRA, memory by part and verdict,
    with the adapters' assumptions and sources in a closed details block."""
    hw = get_hardware(hardware)
    headers = ("Model", "Way", "Trained parameters", "Weights",
               "Gradients and optimiser states", "Activations and overhead", "Total",
               "Fits one GPU?")
    body = "".join(
        tag("tr", "".join(tag("td", esc(c)) for c in _row(m, w, hw.id))) for m, w in ROWS
    )
    # Full training elsewhere in the lesson (the launch it refused, the step before) keeps
    # the activations of selective recomputation; here every row recomputes them all, as
    # fine-tuning stacks do, so the rows compare; the caption says both totals.
    selective = training_memory(resolve_model(model_id=ROWS[0][0]), hw)
    caption = (f"Fine-tune on one {hw.name} ({format_GB(hw.memory_bytes)}): memory by part, "
               "GB = 10^9 bytes; every row recomputes its activations in the backward pass "
               f"(full training with the selective recomputation the launch above used: "
               f"{format_GB(selective.per_gpu_bytes)})")
    example = adapters.adapter_memory(resolve_model(model_id=ROWS[1][0]), hw, method="lora")
    notes = " ".join((adapter_assumptions(example), *SOURCES))
    return table_box(column_heads(headers), body, caption=caption,
                     data_table="finetune_memory") + secondary(
        "Assumptions and sources", tag("p", esc(notes)))


def nf4_bits() -> str:
    """QLoRA's storage per frozen parameter, NF4 with double quantisation: '4.127 bits'."""
    return adapter_words.nf4_bits()


def lora_params(model: str, rank: int = adapters.DEFAULT_RANK,
                targets: str = "all-linear") -> str:
    """Trainable adapter parameters: '41.9 million' for Llama 3.1 8B at rank 16."""
    r = quantities.LORA_RANK.check_integer(rank, "rank", "Adapter rank")
    return format_count(adapters.adapter_params(resolve_model(model_id=model), r,
                                                adapters.parse_targets(targets)))


def finetune_total(model: str, method: str, hardware: str = HARDWARE) -> str:
    """One GPU's memory to fine-tune with LoRA or QLoRA: '19.14 GB'."""
    mem = adapters.adapter_memory(resolve_model(model_id=model), get_hardware(hardware),
                                  method=adapters.parse_method(method))
    return format_GB(mem.per_gpu_bytes)


FINETUNE_FIGURES = (nf4_bits, lora_params, finetune_total)
