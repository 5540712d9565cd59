"""What a mixture of experts adds to a forward pass beyond a dense model's matmuls: the
routed experts' grouped GEMM at the rate of its own small shapes, the busiest expert's
rows, and the router's top-k and the token permutation as memory-bound kernels.

One definition for training (engine.numbers.training_ops) and serving
(engine.numbers.expected_serving, engine.numbers.load.step_time):

- **token permutation** (dispatch before the experts, combine after): each routed copy of a
  token, ``hidden`` 16-bit numbers, read and written once each way: 2 x 2 x 2 bytes x
  hidden x k per token, in :data:`PERMUTATION_KERNELS` kernels (align/sort, gather, scatter,
  weighted sum), per MoE layer;
- **router top-k**: the router's matmul is one of the model's matrices (counted with them);
  its softmax and top-k read the E fp32 logits of each token and write k expert ids (int32)
  and k weights (fp32): 4 E + 8 k bytes per token, one kernel, per MoE layer. With tensor
  parallelism every GPU routes and permutes all the step's tokens (the activations are
  whole after each all-reduce), so these bytes are per GPU, not split;
- **the busiest expert**: ``tokens`` tokens each pick k of E experts; with uniform routing
  (what a load-balancing loss drives a router towards) an expert's count is binomial(tokens,
  k/E), close to Poisson(tokens k / E) for E >> k. The expected largest of E such counts is
  sum over j >= 0 of 1 - F(j)^E (F the Poisson CDF, the E counts taken as independent: the
  Poisson approximation of the multinomial), :func:`busiest_expert_rows`;
- **the grouped GEMM**: one kernel runs the product of every expert the step reaches
  (E(1 - (1 - k/E)^tokens) of them, :func:`engine.numbers.serving.experts_touched`; a
  gated MLP's gate and up projections as one product, as fused_moe runs them), its
  tiles sized for the busiest expert's rows: an upper estimate, as a kernel that skips each
  group's empty tiles (DeepGEMM's masked layout, vLLM's fused_moe with rows padded to its
  block) does the mean's work plus a tile's padding. Each of a layer's expert matrices then
  runs as one product of (experts reached x busiest rows) x n x k on a GPU (n or k split by
  tensor parallelism as Megatron splits an MLP), at the rate that shape reaches
  (catalog.kernel_rates.matmul_shape_fraction, fp8_matmul_shape_fraction for fp8 maths,
  training's own function), against the chip's large-matmul efficiency that a dense
  model's matmuls are timed at. The experts' weight bytes are the bound's (the experts
  reached), unchanged here.

:func:`serving_moe_cost` gives a step of ``tokens`` tokens what the expected serving time
adds: the extra matmul FLOPs (at the raw peak, to be timed with the other matmuls) that
stand for the grouped GEMM's lower rate and padding, and the seconds of the router's top-k
and the permutation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from engine.numbers import architecture
from engine.numbers.catalog import HardwareSpec, ModelSpec
from engine.numbers.catalog.efficiency import Basis, matmul_fraction, per_kernel_seconds
from engine.numbers.catalog.kernel_rates import (
    fp8_matmul_shape_fraction,
    matmul_shape_fraction,
    memory_stream_fraction,
    smallest_measured_rows,
)
from engine.numbers.communication import ACTIVATION_BYTES
from engine.numbers.serving import experts_touched

# Dispatch's align/sort and gather, combine's scatter and weighted sum.
PERMUTATION_KERNELS = 4
ROUTER_TOPK_KERNELS = 1
LOGIT_BYTES = 4.0  # the router's logits and weights in fp32
EXPERT_ID_BYTES = 4.0  # int32 expert ids


def token_permutation_bytes(model: ModelSpec, tokens: float) -> float:
    """Bytes the dispatch and combine of ``tokens`` tokens move in one MoE layer: each routed
    copy of a token read and written once each way."""
    return 2 * 2 * ACTIVATION_BYTES * tokens * model.experts_per_token * model.hidden


def router_topk_bytes(model: ModelSpec, tokens: float) -> float:
    """Bytes the router's softmax and top-k move for ``tokens`` tokens in one MoE layer:
    the E fp32 logits read, k expert ids and k weights written per token."""
    k = model.experts_per_token
    return tokens * (LOGIT_BYTES * model.experts + (EXPERT_ID_BYTES + LOGIT_BYTES) * k)


@lru_cache(maxsize=4096)
def busiest_expert_rows(experts: int, experts_per_token: int, tokens: int) -> float:
    """Expected rows of the busiest of ``experts`` experts when ``tokens`` tokens each pick
    ``experts_per_token`` of them uniformly: the expected maximum of E independent
    Poisson(tokens k / E) counts (:func:`poisson_expected_max`). 0 for no tokens."""
    if tokens <= 0 or experts < 1:
        return 0.0
    # No expert gets more rows than there are tokens (the Poisson tail allows it).
    return min(float(tokens), poisson_expected_max(experts, tokens * experts_per_token / experts))


def poisson_expected_max(counts: int, mean: float) -> float:
    """Expected largest of ``counts`` independent Poisson(``mean``) counts, sum over j >= 0
    of 1 - F(j)^counts (F the Poisson CDF). Rounded to 1e-9 so that libms differing in a
    logarithm's last bit give the same value. ``mean`` > 0."""
    spread = math.sqrt(mean)
    # Below ``low`` every count's CDF is below 1e-30, so each j < low adds 1 - F^n = 1.
    low = max(0, math.floor(mean - 12 * spread - 12))
    high = math.ceil(mean + 12 * spread + 40)
    p = math.exp(low * math.log(mean) - mean - math.lgamma(low + 1))
    cdf = 0.0
    total = float(low)
    for j in range(low, high + 1):
        cdf += p
        total += 1.0 - min(cdf, 1.0) ** counts
        p *= mean / (j + 1)
    return round(total, 9)


@dataclass(frozen=True, slots=True)
class MoeStepCost:
    """What a mixture of experts adds to one forward pass of a step (all its GPUs):
    ``extra_matmul_flops``, FLOPs at the raw peak that, timed with the step's other matmuls,
    stand for the grouped GEMM's lower rate and its padding to the busiest expert's rows;
    ``memory_op_seconds``, the router's top-k and the token permutation (bytes at an
    elementwise stream's bandwidth, plus each kernel's fixed cost); ``busiest_rows``,
    ``experts_reached``: per MoE layer."""

    extra_matmul_flops: float
    memory_op_seconds: float
    busiest_rows: float
    experts_reached: float


NO_MOE = MoeStepCost(0.0, 0.0, 0.0, 0.0)


def _shape_fraction(hw: HardwareSpec, compute_format: str, m: int, n: int, k: int
                    ) -> tuple[float, float]:
    """(fraction of the peak an m x k by k x n product reaches, the chip's large-matmul
    fraction it is capped at) in fp8 for fp8 maths, else in bf16: both short-run rates,
    as serving's dense matmuls run at that large-matmul fraction."""
    if compute_format == "fp8":
        return (fp8_matmul_shape_fraction(hw, m, n, k).value,
                matmul_fraction(hw, "fp8").value)
    return (matmul_shape_fraction(hw, m, n, k, training_load=False).value,
            matmul_fraction(hw, "bf16").value)


def _routed_shapes(model: ModelSpec, gpus: int) -> tuple[tuple[int, int, float], ...]:
    """(n, k, routed FLOPs per token in one layer, all GPUs) of each routed expert matrix on
    one of ``gpus`` tensor-parallel GPUs: the down projection splits its input, the others
    their output."""
    moe_layers = model.layers - model.dense_layers
    out = []
    for c in architecture.components(model):
        if not c.name.startswith("moe.routed_expert") or c.name.endswith(".gate"):
            continue
        k_in, n_out = c.rows, c.cols
        flops = c.flops_per_token / moe_layers
        if c.name.endswith(".down"):
            k_in = max(1, k_in // gpus)
        else:
            # A gated MLP's gate and up projections run as one product of twice the width
            # (vLLM's and SGLang's fused_moe take one w13 weight).
            fused = 2 if model.gated_mlp else 1
            n_out = max(1, fused * n_out // gpus)
            flops *= fused
        out.append((n_out, k_in, flops))
    return tuple(out)


@lru_cache(maxsize=8192)
def serving_moe_cost(model: ModelSpec, hardware: HardwareSpec, compute_format: str,
                     tokens: int, gpus: int, ep: int = 1) -> MoeStepCost:
    """What ``tokens`` tokens in one forward pass on ``gpus`` tensor-parallel GPUs add for a
    mixture of experts (see the module); :data:`NO_MOE` for a dense model or no tokens.
    ``ep``: expert-parallel groups, each routed expert split over gpus / ep GPUs
    (:mod:`engine.numbers.expert_parallel`) instead of all of them."""
    m, hw = model, hardware
    if not m.routed_params or tokens <= 0:
        return NO_MOE
    moe_layers = m.layers - m.dense_layers
    reached = experts_touched(m, tokens)
    busiest = busiest_expert_rows(m.experts, m.experts_per_token, tokens)
    rows = max(1, round(reached * busiest))
    # Serving's memory side already streams every reached expert's weights once a step, so
    # the rate is asked at no fewer rows than the grid measured: below them the grid's time
    # is that weight streaming, which would otherwise be counted twice.
    rate_rows = max(rows, smallest_measured_rows(hw))
    extra = 0.0
    for n, k, flops_per_token in _routed_shapes(m, max(1, gpus // ep)):
        shape, best = _shape_fraction(hw, compute_format, rate_rows, n, k)
        # The grouped GEMM's seconds over a large matmul's for the FLOPs the tokens need.
        penalty = rows / (tokens * m.experts_per_token) * best / shape
        extra += tokens * flops_per_token * max(0.0, penalty - 1.0)
    stream = hw.bandwidth_bytes_per_s * memory_stream_fraction(hw).value
    moved = token_permutation_bytes(m, tokens) + router_topk_bytes(m, tokens)
    kernels = PERMUTATION_KERNELS + ROUTER_TOPK_KERNELS
    seconds = moe_layers * (moved / stream + kernels * per_kernel_seconds().value)
    return MoeStepCost(extra * moe_layers, seconds, busiest, reached)


def moe_basis(model: ModelSpec, hardware: HardwareSpec) -> tuple[Basis, ...]:
    """The measured parts the MoE costs use, for a plan's basis (empty for a dense model)."""
    if not model.routed_params:
        return ()
    return (Basis("mixture of experts: the grouped GEMM at its (experts reached x busiest "
                  "expert's rows) x n x k shape's rate; busiest rows the expected maximum of "
                  "E Poisson(tokens k / E) counts", float(model.experts),
                  "Poisson approximation of uniform top-k routing (each expert's count "
                  "binomial(tokens, k/E)); shape rates: catalog kernel_rates [matmul_shape]"),
            memory_stream_fraction(hardware), per_kernel_seconds())
