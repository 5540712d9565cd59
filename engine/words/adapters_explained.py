"""Adapter fine-tuning in words: the names of LoRA and QLoRA, which matrices get adapters, and
the assumptions behind an :class:`engine.numbers.adapters.AdapterMemory`.

Nothing here computes a size that the record (or engine.numbers.adapters) does not hold.
"""

from __future__ import annotations

from engine.numbers.adapters import (
    ADAPTER_BYTES_PER_PARAM,
    NF4_DQ_BITS_PER_PARAM,
    AdapterMemory,
)
from engine.words.format import format_count

METHOD_LABELS = {
    "lora": "LoRA (frozen bf16 weights)",
    "qlora": "QLoRA (frozen 4-bit NF4 weights)",
}
TARGET_WORDS = {
    "attention-qv": "the query and value matrices",
    "all-linear": "every linear matrix of each layer",
}
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


def adapter_assumptions(mem: AdapterMemory) -> str:
    """One sentence: rank, matrices, bytes per trained parameter, activations' setting."""
    per = sum(ADAPTER_BYTES_PER_PARAM.values())
    recompute = {"full": "recomputed in the backward pass (gradient checkpointing)",
                 "selective": "partly recomputed (selective recomputation)",
                 "none": "all kept"}[mem.recompute]
    return (f"Adapters of rank {mem.rank} on {TARGET_WORDS[mem.targets]} "
            f"({format_count(mem.trainable_params)} parameters for {mem.model.name}), each "
            f"with a bf16 weight and gradient and Adam's two fp32 moments ({per:g} bytes); "
            f"activations for {mem.micro_batch:,} sequence of {mem.seq_len:,} tokens, "
            f"{recompute}.")
