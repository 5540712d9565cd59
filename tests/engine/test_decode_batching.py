"""Decode's FLOPs per byte grow with the batch, and the KV cache caps them
(engine.numbers.decode_batching, the roofline's rule to remember)."""

from __future__ import annotations

import pytest

from engine.lesson.figures.prose import get_figure
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.decode_batching import compute_bound_batch, kv_ceiling_flops_per_byte
from engine.numbers.roofline import ridge_point
from engine.numbers.serving import decode_step


def test_intensity_is_about_the_batch_in_bf16() -> None:
    # 2 FLOPs per parameter per request over 2 bytes per parameter read once per step.
    for b in (1, 8, 64):
        step = decode_step(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), batch=b)
        assert step.arithmetic_intensity == pytest.approx(b, rel=0.1)


def test_decode_turns_compute_bound_near_a_batch_of_the_ridge() -> None:
    # H100 SXM: 989.4 TFLOP/s dense bf16 / 3.35 TB/s (NVIDIA H100 datasheet) = 295.
    assert ridge_point(get_hardware("h100-sxm")) == pytest.approx(989.4e12 / 3.35e12)
    b = compute_bound_batch(get_model("llama-3.1-8b"), get_hardware("h100-sxm"))
    assert b is not None and 295 <= b <= 330
    assert decode_step(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), batch=b).bound == "compute"
    assert decode_step(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), batch=b - 1).bound == "memory"
    assert get_figure("decode_compute_batch")() == f"{b:,}"


def test_the_kv_cache_caps_decode_below_the_ridge_at_long_contexts() -> None:
    ceiling = kv_ceiling_flops_per_byte(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), context_tokens=8192)
    assert ceiling is not None and ceiling < ridge_point(get_hardware("h100-sxm")) / 10
    huge = decode_step(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), batch=1_000_000, context_tokens=8192)
    assert huge.arithmetic_intensity < ceiling
    assert huge.arithmetic_intensity == pytest.approx(ceiling, rel=0.01)
    assert compute_bound_batch(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), context_tokens=8192) is None
    assert get_figure("decode_compute_batch")(context=8192) == "none"
    assert kv_ceiling_flops_per_byte(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), context_tokens=0) is None
