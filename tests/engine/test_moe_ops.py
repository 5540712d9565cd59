"""The MoE kernels' parts: the busiest expert's rows, the router and permutation bytes, and
what a mixture adds to a serving step (nothing for a dense model)."""

from __future__ import annotations

import random

import pytest

from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.moe_ops import (
    NO_MOE,
    PERMUTATION_KERNELS,
    busiest_expert_rows,
    router_topk_bytes,
    serving_moe_cost,
    token_permutation_bytes,
)


def _simulated_busiest(experts: int, k: int, tokens: int, trials: int = 400) -> float:
    rng = random.Random(7)
    total = 0
    for _ in range(trials):
        counts = [0] * experts
        for _ in range(tokens):
            for e in rng.sample(range(experts), k):
                counts[e] += 1
        total += max(counts)
    return total / trials


@pytest.mark.parametrize(("experts", "k", "tokens"), [(8, 2, 64), (8, 2, 1024), (64, 6, 128)])
def test_busiest_rows_match_a_routing_simulation(experts: int, k: int, tokens: int) -> None:
    """The Poisson approximation stays within 10 % of uniform top-k routing simulated."""
    simulated = _simulated_busiest(experts, k, tokens)
    assert busiest_expert_rows(experts, k, tokens) == pytest.approx(simulated, rel=0.10)


def test_busiest_rows_edges() -> None:
    assert busiest_expert_rows(256, 8, 0) == 0.0
    assert busiest_expert_rows(256, 8, 1) == 1.0  # one token reaches an expert at most once
    mean = 8192 * 8 / 256
    assert mean < busiest_expert_rows(256, 8, 8192) < mean + 4 * mean ** 0.5


def test_bytes_per_token_as_stated() -> None:
    m = get_model("mixtral-8x7b")
    assert token_permutation_bytes(m, 10) == 2 * 2 * 2 * 10 * 2 * 4096
    assert router_topk_bytes(m, 10) == 10 * (4 * 8 + 8 * 2)
    assert PERMUTATION_KERNELS == 4


def test_dense_models_get_nothing() -> None:
    hw = get_hardware("h100-sxm")
    assert serving_moe_cost(get_model("llama-3.1-8b"), hw, "bf16", 64, 1) is NO_MOE


def test_small_expert_shapes_cost_more_and_grow_with_tokens() -> None:
    m, hw = get_model("deepseek-v3"), get_hardware("h200")
    one, many = serving_moe_cost(m, hw, "fp8", 1, 8), serving_moe_cost(m, hw, "fp8", 8192, 8)
    assert one.extra_matmul_flops > 0 and one.memory_op_seconds > 0
    assert many.memory_op_seconds > one.memory_op_seconds
    assert one.experts_reached == pytest.approx(8.0)
