"""Figures for the rule to remember about decode (the roofline step, the cheat sheet): its FLOPs per
byte are about the batch size, it turns compute-bound only near a batch as large as the
ridge point, and the KV cache caps it below the ridge at long contexts."""

from __future__ import annotations

from engine.numbers.catalog import get_hardware, resolve_model
from engine.numbers.decode_batching import compute_bound_batch, kv_ceiling_flops_per_byte
from engine.numbers.serving import decode_step
from engine.words.format import format_flops_per_byte

MODEL = "llama-3.1-8b"
HARDWARE = "h100-sxm"


def decode_flops_per_byte(model: str = MODEL, hardware: str = HARDWARE, batch: int = 1,
                          context: int = 0) -> str:
    """One decode step's FLOPs per byte read: '1 FLOP/byte' at batch 1, no context."""
    step = decode_step(resolve_model(model_id=model), get_hardware(hardware), batch=batch,
                       context_tokens=context)
    return format_flops_per_byte(step.arithmetic_intensity)


def decode_compute_batch(model: str = MODEL, hardware: str = HARDWARE, context: int = 0) -> str:
    """The smallest batch whose decode step is compute-bound: '296', or 'none' when the KV
    cache keeps every batch below the ridge."""
    b = compute_bound_batch(resolve_model(model_id=model), get_hardware(hardware),
                            context_tokens=context)
    return "none" if b is None else f"{b:,}"


def decode_kv_ceiling(model: str = MODEL, hardware: str = HARDWARE, context: int = 8192) -> str:
    """The FLOPs per byte decode approaches however large the batch, at ``context`` tokens
    per request: '18 FLOP/byte' for Llama 3.1 8B at 8,192 tokens."""
    x = kv_ceiling_flops_per_byte(resolve_model(model_id=model), get_hardware(hardware),
                                  context_tokens=context)
    return "no ceiling" if x is None else format_flops_per_byte(x)


DECODE_FIGURES = (decode_flops_per_byte, decode_compute_batch, decode_kv_ceiling)
