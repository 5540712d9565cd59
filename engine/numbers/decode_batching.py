"""Decode's FLOPs per byte as the batch grows: the rule 'intensity is about the batch size'
and the KV cache's ceiling on it.

A decode step reads the weights once for the whole batch and does about 2 FLOPs per
parameter for each request; in bf16 a parameter is 2 bytes, so with no context the step's
FLOPs per byte is about the batch (Llama 3.1 8B: 0.99996 per request: its norms are read
but do no maths, and its input embedding is only looked up, one row per request). Each request also reads its own KV cache, which batching cannot share: the
step's FLOPs per byte then approach, from below, one request's FLOPs over its own KV bytes,
however large the batch. Every number comes from engine.numbers.serving.decode_step.
"""

from __future__ import annotations

from engine.numbers import quantities
from engine.numbers.catalog import HardwareSpec, ModelSpec
from engine.numbers.formats import FormatId
from engine.numbers.serving import decode_step


def compute_bound_batch(model: ModelSpec, hardware: HardwareSpec, *, context_tokens: int = 0,
                        weight_format: FormatId = "bf16") -> int | None:
    """The smallest batch whose decode step is compute-bound (intensity past the ridge);
    None if no batch up to the largest the engine accepts gets there (the KV cache's
    ceiling is below the ridge). Bisection: the intensity only grows with the batch."""
    m, hw = model, hardware

    def compute_bound(b: int) -> bool:
        return decode_step(m, hw, batch=b, context_tokens=context_tokens,
                           weight_format=weight_format, kv_format="bf16").bound == "compute"

    lo, hi = 1, int(quantities.BATCH.maximum)
    if not compute_bound(hi):
        return None
    if compute_bound(lo):
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if compute_bound(mid):
            hi = mid
        else:
            lo = mid
    return hi


def kv_ceiling_flops_per_byte(model: ModelSpec, hardware: HardwareSpec, *, context_tokens: int,
                              weight_format: FormatId = "bf16") -> float | None:
    """The FLOPs per byte decode approaches as the batch grows without bound: one more
    request's FLOPs over its own KV-cache bytes. None with no context (no ceiling: a request
    then adds only its row of the input embedding, and the intensity grows with the batch
    far past any ridge)."""
    m, hw = model, hardware
    if context_tokens <= 0:
        return None
    one, two = (decode_step(m, hw, batch=b, context_tokens=context_tokens,
                            weight_format=weight_format, kv_format="bf16") for b in (1, 2))
    extra_bytes = two.bytes_read - one.bytes_read
    if extra_bytes <= 0:
        return None
    return (two.flops - one.flops) / extra_bytes
