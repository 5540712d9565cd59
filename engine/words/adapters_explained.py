"""Adapter fine-tuning in words: the names of LoRA and QLoRA, which matrices get adapters, and
the assumptions behind an :class:`engine.numbers.adapters.AdapterMemory`.

Nothing here computes a size that the record (or engine.numbers.adapters) does not hold.
"""

from __future__ import annotations

from engine.numbers.adapter_setup import AdapterSetup, Targets
from engine.numbers.adapters import (
    ADAPTER_BYTES_PER_PARAM,
    NF4_DQ_BITS_PER_PARAM,
    AdapterMemory,
)
from engine.numbers.catalog import ModelSpec
from engine.words.format import format_count

METHOD_LABELS = {
    "lora": "LoRA (frozen bf16 weights)",
    "qlora": "QLoRA (frozen 4-bit NF4 layers; embeddings and head stay bf16)",
}
TARGET_WORDS = {
    "attention-qv": "the query and value matrices",
    "attention": "every attention projection (query, key, value, output)",
    "mlp": "every MLP matrix",
    "all-linear": "every linear matrix of each layer",
}
# The plan's choices (engine.numbers.adapter_setup.ADAPTER_CHOICES, PLAN_TARGETS) as shown.
ADAPTER_CHOICE_LABELS = {"none": "None: train every weight", **METHOD_LABELS}
PLAN_TARGET_LABELS = {"attn": "attn: every attention projection", "mlp": "mlp: every MLP matrix",
                      "all": "all: every linear matrix"}
SOURCES = (
    "LoRA: Hu et al. 2021, 'LoRA: Low-Rank Adaptation of Large Language Models', section 4.1 "
    "(a trainable B A of rank r beside each frozen d × k matrix: r (d + k) parameters).",
    "QLoRA: Dettmers et al. 2023, 'QLoRA: Efficient Finetuning of Quantized LLMs', section 3 "
    "(NF4 in blocks of 64, double quantisation: 4 + 8/64 + 32/(64 × 256) = "
    f"{NF4_DQ_BITS_PER_PARAM:.3f} bits per parameter).",
)


def nf4_bits() -> str:
    """'4.127 bits'."""
    return f"{NF4_DQ_BITS_PER_PARAM:.3f} bits"


def _adapter_sentence(rank: int, targets: Targets, trainable: int, model: ModelSpec,
                      micro_batch: int, seq_len: int, recompute: str) -> str:
    per = sum(ADAPTER_BYTES_PER_PARAM.values())
    kept = {"full": "recomputed in the backward pass (gradient checkpointing)",
            "selective": "partly recomputed (selective recomputation)",
            "selective-op": "partly recomputed (torchtitan's per-op policy)",
            "none": "all kept"}[recompute]
    return (f"Adapters of rank {rank} on {TARGET_WORDS[targets]} "
            f"({format_count(trainable)} parameters for {model.name}), each "
            f"with a bf16 weight and gradient and Adam's two fp32 moments ({per:g} bytes); "
            f"activations for {micro_batch:,} sequence of {seq_len:,} tokens, "
            f"{kept}.")


def adapter_assumptions(mem: AdapterMemory) -> str:
    """One sentence: rank, matrices, bytes per trained parameter, activations' setting."""
    return _adapter_sentence(mem.rank, mem.targets, mem.trainable_params, mem.model,
                             mem.micro_batch, mem.seq_len, mem.recompute)


def adapter_setup_words(setup: AdapterSetup, model: ModelSpec, micro_batch: int,
                        seq_len: int, recompute: str) -> tuple[str, ...]:
    """A plan's adapter run in words: the method and its frozen base, the adapters (the
    sentence of :func:`adapter_assumptions`), the time's frozen backward pass, the source."""
    base = ("the frozen base in bf16" if setup.method == "lora" else
            f"the frozen base's layer matrices in NF4 ({nf4_bits()} a weight), the "
            "embeddings and output head in bf16")
    return (f"{METHOD_LABELS[setup.method]}: {base}; only the adapters are trained.",
            _adapter_sentence(setup.rank, setup.targets, setup.trainable_params, model,
                              micro_batch, seq_len, recompute),
            "Time: the frozen matrices' backward pass computes the gradient of their input "
            "only (no weight gradient), the adapters add their own small matmuls, and only "
            "their gradients are reduced and stepped.",
            SOURCES[0] if setup.method == "lora" else SOURCES[1])
