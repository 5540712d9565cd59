"""Reader-facing names, one table per choice: the engine's memory parts (keyed in snake_case
by the numbers layer: label, the words in a sentence, the chart colour), the select options
the widgets share (task, sharding, optimiser, training-state convention, recomputation), and
chips counted in a sentence.

Spelling: British throughout the site ("optimiser", "utilisation", "colour"); identifiers,
option values and JSON keys keep the engine's names ("optimizer", "optimizer_states"), and
proper names keep their own ("Zero Redundancy Optimizer").
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers.catalog import HardwareSpec
from engine.numbers.memory import training_bytes_per_param
from engine.numbers.training_choices import SHARDINGS, Convention
from engine.words.sharding import sharding_label


@dataclass(frozen=True, slots=True)
class Part:
    """One memory part: its label (legends, tables), its words inside a sentence, and the CSS
    class that colours it in every chart (docs/css/parts.css)."""

    label: str
    words: str
    css_class: str


# Every part a memory record or a widget's own grouping names, by id.
PARTS: dict[str, Part] = {
    "weights": Part("Weights", "weights", "part-weights"),
    "kv_cache": Part("KV cache", "KV cache", "part-kv-cache"),
    "activations": Part("Activations", "activations", "part-activations"),
    "runtime_overhead": Part("Runtime overhead", "runtime overhead", "part-overhead"),
    # Serving's working space less its KV cache (model_size, on the first step, counts the KV cache in it).
    "working_space": Part("Activations + overhead", "activations and runtime overhead",
                          "part-working-space"),
    "gradients": Part("Gradients", "gradients", "part-gradients"),
    "optimizer_states": Part("Optimiser states", "optimiser states", "part-optimizer"),
    "master_weights": Part("FP32 master weights", "fp32 master weights",
                           "part-master-weights"),
    "fp32_gradients": Part("FP32 gradient copy", "fp32 gradient copy", "part-fp32-gradients"),
    "first_moment": Part("Adam first moment", "Adam first moment", "part-optimizer"),
    "second_moment": Part("Adam second moment", "Adam second moment", "part-optimizer-2"),
    "momentum": Part("Momentum", "momentum", "part-optimizer"),
    "other_jobs": Part("Held by other jobs", "held by other jobs", "part-other-jobs"),
}


def part(key: str) -> Part:
    """The part named ``key``; an id not in :data:`PARTS` reads as its words, in no colour of
    its own (the chart then colours it by position)."""
    found = PARTS.get(key)
    if found is not None:
        return found
    words = key.replace("_", " ")
    return Part(words.capitalize(), words, "")


def part_label(key: str) -> str:
    return part(key).label


def part_words(key: str) -> str:
    """The part inside a sentence: 'weights', 'KV cache', 'fp32 master weights'."""
    return part(key).words


TASK_LABELS = {"serve": "Serve it (answer requests)", "train": "Train it"}
SHARDING_LABELS: dict[str, str] = {s: sharding_label(s) for s in SHARDINGS}
OPTIMIZER_LABELS = {
    "adam": "Adam",
    "adamw": "AdamW",
    "adam-8bit": "8-bit Adam",
    "sgd-momentum": "SGD with momentum",
    "sgd": "Plain SGD",
}
_CONVENTION_WORDS: dict[Convention, str] = {
    "mixed-16": "bf16 gradients",
    "mixed-18": "fp32 gradients",
    "mixed-20": "fp16 + fp32 gradients",
    "fp32": "everything in fp32",
    "fp8": "fp8 matmuls, bf16 gradients, fp8 weight copies",
}
CONVENTION_LABELS: dict[str, str] = {
    conv: f"{conv}: {words}, {training_bytes_per_param('adam', conv):g} bytes per parameter "
    "with Adam"
    for conv, words in _CONVENTION_WORDS.items()
}
RECOMPUTE_LABELS = {
    "none": "None (keep every activation)",
    "selective": "Selective (recompute attention only)",
    "selective-op": "Selective by op (torchtitan: keep attention and every other matmul)",
    "full": "Full (keep only each layer's input)",
}

KERNEL_LABELS = {
    "fused": "Fused (Transformer Engine, torch.compile)",
    "eager": "Eager PyTorch (unfused norms, rotary, SwiGLU)",
    "eager-fused-norm": "Eager PyTorch with a fused RMSNorm",
}

ATTENTION_KERNEL_LABELS = {
    "fa2": "FlashAttention-2",
    "triton": "FlashAttention's Triton port",
    "cudnn": "cuDNN fused attention (Transformer Engine on Hopper)",
}

GRAD_REDUCE_LABELS = {
    "bf16": "In bf16, 2 bytes each",
    "fp32": "In fp32, 4 bytes each (Megatron-LM's and torchtitan's default)",
}

PIPELINE_SPLIT_LABELS = {
    "layers": "The layers cut evenly, the embedding and output layer on the end stages",
    "embedding-and-loss": ("The embedding and the loss each take a layer's place "
                           "(Megatron-LM --account-for-embedding/loss-in-pipeline-split)"),
}

PARAM_GATHER_LABELS = {
    "overlapped": "Beside the next forward pass (Megatron-LM --overlap-param-gather)",
    "after-step": "After the optimiser step (DeepSpeed ZeRO-1/2)",
}

TP_COMM_LABELS = {
    "exposed": "On the critical path",
    "overlapped": "Under the GEMMs (Megatron-LM --tp-comm-overlap, async TP)",
}


def side_name(chip: HardwareSpec, count: int) -> str:
    """'2 × Intel Xeon Platinum 8480C (one socket)' reads oddly: drop the per-socket note."""
    name = chip.name.replace(" (one socket)", "")
    return name if count == 1 else f"{count} × {name}"


def side_kind(chip: HardwareSpec, count: int) -> str:
    """'CPUs', 'GPU': a side in a chart whose caption already counts the chips."""
    return chip.kind.upper() + ("" if count == 1 else "s")


def side_count(chip: HardwareSpec, count: int) -> str:
    """'2 CPUs', '1 GPU': a side in a chart caption, where the chips' names would crowd it."""
    return f"{count:,} {side_kind(chip, count)}"
