"""Words for the two numbers every time comes as: the bound and the expected value.

The bound: raw dense peak, full datasheet bandwidth, nothing else (no real system beats it).
The expected value: what a well-tuned stack reaches (engine.numbers.expected_serving and
expected_training): measured efficiencies, kernel overheads, communication between GPUs.
"""

from __future__ import annotations

from engine.words.format import format_seconds

BOUND_WORDS = ("At best: every FLOP at the chip's peak and every byte at its full datasheet "
               "bandwidth, nothing else. No real system doing the same work beats it; "
               "speculative decoding and a cached prompt change the work.")
EXPECTED_SERVING_WORDS = ("Expected: what a well-tuned server (vLLM, TensorRT-LLM, SGLang) "
                          "reaches: measured matrix-multiply and memory efficiencies, a few "
                          "microseconds per kernel, and the traffic between GPUs.")
EXPECTED_TRAINING_WORDS = ("Expected: what a well-tuned training stack (Megatron-style) "
                           "reaches: measured matrix-multiply efficiency, attention and other "
                           "work, and the gradient traffic between GPUs it cannot hide.")


def at_best_and_expected(bound_seconds: float, expected_seconds: float) -> str:
    """'5.84 ms at best, 6.91 ms expected'."""
    return (f"{format_seconds(bound_seconds)} at best, "
            f"{format_seconds(expected_seconds)} expected")


def ttft_basis_words(batch: int) -> str:
    """The workload a time to first token at ``batch`` requests kept running is for:
    'one request on an idle server', or 'a request joining 63 running: its prompt read
    beside their decode step'."""
    if batch <= 1:
        return ttft_basis_short(batch)
    return f"{ttft_basis_short(batch)}: its prompt read beside their decode step"


def ttft_basis_short(batch: int) -> str:
    """:func:`ttft_basis_words` without the why: 'one request on an idle server', or 'a
    request joining 63 running'."""
    if batch <= 1:
        return "one request on an idle server"
    return f"a request joining {batch - 1:,} running"


def together_words(batch: int) -> str:
    """The other workload a batch's prefill can mean: 'all 64 prompts arriving together'."""
    return f"all {batch:,} prompts arriving together"
