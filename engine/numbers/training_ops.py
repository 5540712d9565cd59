"""The operations of a training step on one GPU, op by op, each timed by engine.numbers.op_time.

Per micro-batch of ``micro_batch`` x ``seq_len`` tokens, on the busiest GPU of a split into
``tp`` tensor-parallel GPUs and pipeline stages (the fullest stage's layers; the output head
and the loss on the last stage):

- every matmul of a layer, forward (Y = X W) and backward (dX = dY W^T and dW = X^T dY), each
  at the rate its shape reaches on the chip (catalog.kernel_rates.matmul_shape_fraction), in
  16 bits, or in fp8 as Transformer Engine runs them (``fp8``: the layers' matmuls at
  catalog.kernel_rates.fp8_matmul_shape_fraction of the fp8 peak, each input cast to fp8 by
  a memory-bound kernel first; the router, the output head and the loss stay in bf16); a
  mixture of experts runs each routed expert on its share of the tokens
  (tokens x top-k / experts, balanced) gathered from the expert-parallel GPUs, and its
  router and token permutation;
- attention forward and backward separately, at FlashAttention's measured rate for the
  direction, head size, causal mask and sequence length (catalog.kernel_rates.attention_rates);
  FLOPs as the engine counts them (causal, half the scores), backward 2.5 x forward; in
  bf16 under fp8 too; with context parallelism 1/cp of each sequence's on each GPU;
- the memory-bound ops (norms, rotary embedding, the activation, residual adds, the token
  permutation, the fp32 loss over the vocabulary) at the bytes fused kernels move
  ([elementwise]) and the bandwidth one elementwise stream reaches;
- the memory-bound ops as eager PyTorch runs them (``kernels`` 'eager': torchtitan's RMSNorm,
  rotary embedding and SwiGLU as separate kernels, and GQA's key/value repeat; 'eager-fused-
  norm' the same with a fused RMSNorm; [elementwise_eager]);
- recomputation: selective adds attention's forward again; selective-op (torchtitan's
  per-op policy) every other matmul of a layer and all its memory-bound ops; full the whole
  layer's forward;
- every kernel's fixed cost ([kernels] per_kernel_seconds);
- fine-tuning with adapters (``adapter``): every base weight frozen, so its backward pass
  computes dX only (the gradient still flows back through every layer) and skips dW; each
  adapter B A of rank r beside a k x n matrix adds its own small GEMMs, X A and (X A) B
  forward, their dX and dW backward, and the optimiser step covers the adapters alone.

With tensor parallelism the norms and residual adds work on 1/tp of the tokens (Megatron-LM's
sequence parallelism) and the matmuls on 1/tp of the weights. Per optimiser step: Adam over the
GPU's share of the parameters (sharded over data-parallel ranks with ZeRO) and gradient
clipping's read of the gradients. Communication is not here: expected_training adds it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from engine.numbers import architecture
from engine.numbers.adapter_setup import AdapterSetup
from engine.numbers.catalog import HardwareSpec, ModelSpec
from engine.numbers.catalog.efficiency import Basis, per_kernel_seconds
from engine.numbers.catalog.kernel_rates import (
    BACKWARD_FLOPS_PER_FORWARD,
    adam_bytes_per_param,
    attention_rates,
    eager_elementwise,
    elementwise_bytes,
    elementwise_stack,
    fp8_matmul_shape_fraction,
    fp8_training_peak,
    matmul_shape_fraction,
    memory_stream_fraction,
    smallest_measured_rows,
    training_attention_kernel,
)
from engine.numbers.model_shapes import Component
from engine.numbers.moe_ops import PERMUTATION_KERNELS, token_permutation_bytes
from engine.numbers.op_time import Op, Work, ops_of
from engine.numbers.parallelism import pipeline_cut
from engine.numbers.training_choices import AttentionKernel, Kernels, Recompute

ACTIVATION_BYTES = 2.0  # 16-bit activations and weights in the matmuls
FP8_BYTES = 1.0  # an fp8 number (E4M3 forward, E5M2 gradients)
# The op that casts the layers' weights to fp8, once per optimiser step.
WEIGHT_CAST = "fp8 casts (weights, once per step)"
# Matmuls whose input dimension tensor parallelism splits (Megatron's row-parallel layers);
# the rest split their output (column-parallel), except those kept whole on every GPU.
_ROW_PARALLEL = ("attention.o", ".down")
_REPLICATED = ("attention.q_down", "attention.kv_down", "moe.router")


@dataclass(frozen=True, slots=True)
class StepShape:
    """Where the ops run: ``tokens`` per micro-batch on one data-parallel rank (micro-batch x
    ``seq_len``), ``tp`` GPUs wide, ``stage_layers`` of ``layers`` on the fullest stage,
    ``pipeline`` stages, ``ep`` expert-parallel GPUs, ``optimizer_shards`` the data-parallel
    ranks the optimiser state is split over (1 without ZeRO). ``fp8``: the layers' matmuls
    run in fp8 (Transformer Engine). ``cp``: context-parallel GPUs sharing each sequence of
    ``seq_len`` tokens; ``tokens`` is then this GPU's share, micro-batch x seq_len / cp.
    ``kernels``: the stack's memory-bound kernels, fused or eager PyTorch's
    (training_choices.Kernels); ``attention``: its attention kernel
    (training_choices.AttentionKernel). ``last_stage_layers``: the layers beside the output
    layer on the last stage (None: what the even cut leaves, parallelism.pipeline_cut);
    ``stage_share``: the share of the parameters the fullest stage steps
    (None: stage_layers / layers); ``routed_share``: the share of a mixture's routed experts
    on it (None: stage_layers / layers), 1/ep of which each GPU holds."""

    tokens: int
    seq_len: int
    tp: int
    stage_layers: int
    pipeline: int
    ep: int
    optimizer_shards: int
    recompute: Recompute
    fp8: bool = False
    cp: int = 1
    adapter: AdapterSetup | None = None
    kernels: Kernels = "fused"
    attention: AttentionKernel = "fa2"
    last_stage_layers: int | None = None
    stage_share: float | None = None
    routed_share: float | None = None


@dataclass(frozen=True, slots=True)
class TrainingOps:
    """One micro-batch's ops on the busiest GPU (``micro_batch``), the optimiser step's
    (``optimizer``), and every efficiency they used (``basis``). Sums are math.fsum's,
    correctly rounded, so CPython and Pyodide (whose built-in sum of floats differs from
    3.12 on) agree to the last bit."""

    micro_batch: tuple[Op, ...]
    optimizer: tuple[Op, ...]
    basis: tuple[Basis, ...]

    @property
    def micro_batch_seconds(self) -> float:
        return math.fsum(o.seconds for o in self.micro_batch)

    @property
    def optimizer_seconds(self) -> float:
        return math.fsum(o.seconds for o in self.optimizer)


@dataclass(frozen=True, slots=True)
class _Rates:
    peak: float
    stream: float
    per_kernel: float
    hw: HardwareSpec
    fp8_peak: float = 0.0  # > 0: the layers' matmuls run in fp8 at this dense peak
    # A GEMM's rate is asked at no fewer rows than this: below the chip's grid's smallest
    # measured rows the grid's time is the weights' streaming, which the GEMM's bytes count.
    rate_rows: int = 1


def _group(c: Component) -> str:
    if c.name.startswith("attention."):
        return "attention projections"
    if c.name == "moe.router":
        return "router"
    if c.name.startswith("moe.routed_expert"):
        return "expert MLPs"
    if c.kind == "unassigned":
        return "other matmuls"
    return "MLP"


def _bf16(r: _Rates) -> _Rates:
    """``r`` with every matmul in 16 bits (the router, the output head)."""
    return _Rates(r.peak, r.stream, r.per_kernel, r.hw, rate_rows=r.rate_rows)


def _gemm(name: str, m: int, n: int, k: int, r: _Rates, times: float) -> Work:
    """One m x k by k x n product at its shape's rate: in 16 bits, or with ``r.fp8_peak`` in
    fp8 (inputs 1 byte per number, the output in bf16, 2)."""
    m, n, k = max(1, m), max(1, n), max(1, k)
    if r.fp8_peak:
        f = fp8_matmul_shape_fraction(r.hw, max(m, r.rate_rows), n, k).value
        return Work(name, 2.0 * m * n * k, FP8_BYTES * (m * k + k * n) + ACTIVATION_BYTES * m * n,
                    r.fp8_peak * f, r.stream, 1, r.per_kernel, times)
    f = matmul_shape_fraction(r.hw, max(m, r.rate_rows), n, k).value
    return Work(name, 2.0 * m * n * k, ACTIVATION_BYTES * (m * k + k * n + m * n),
                r.peak * f, r.stream, 1, r.per_kernel, times)


def _linear(name: str, tokens: int, k_in: int, n_out: int, r: _Rates, times: float,
            backward: bool, frozen: bool = False) -> list[Work]:
    """A linear layer's GEMMs: forward X[t, k] W[k, n]; backward dX = dY W^T and dW = X^T dY.
    In fp8, each GEMM input is cast first, each number read in bf16 (2 bytes) and written in
    fp8 (1): X in the forward pass and dY in the backward (X, kept from the forward, serves
    dW too), W once per optimiser step (:data:`WEIGHT_CAST`; Transformer Engine keeps the
    copy for the step's micro-batches). The cast kernel finds the tensor's amax as it goes
    (Transformer Engine's fused cast), so amax and the scaling add no pass of their own."""
    out: list[Work] = []
    if r.fp8_peak:
        cast_bytes = ACTIVATION_BYTES + FP8_BYTES
        numbers = tokens * (n_out if backward else k_in)
        suffix = "(backward)" if backward else "(forward)"
        out.append(Work(f"fp8 casts {suffix}", 0.0, cast_bytes * numbers, 1.0, r.stream, 1,
                        r.per_kernel, times))
        if not backward:
            out.append(Work(WEIGHT_CAST, 0.0, cast_bytes * k_in * n_out, 1.0, r.stream, 1,
                            r.per_kernel, times))
    if not backward:
        return [*out, _gemm(f"matmul: {name} (forward)", tokens, n_out, k_in, r, times)]
    label = f"matmul: {name} (backward)"
    if frozen:  # a frozen weight needs no dW = X^T dY
        return [*out, _gemm(label, tokens, k_in, n_out, r, times)]
    return [*out, _gemm(label, tokens, k_in, n_out, r, times),
            _gemm(label, k_in, n_out, tokens, r, times)]


def _adapter_gemms(tokens: int, k_in: int, n_out: int, rank: int, r: _Rates, times: float,
                   backward: bool) -> list[Work]:
    """One adapter's GEMMs in 16 bits: forward H = X A (t x k by k x r) and H B (t x r by
    r x n); backward each product's dX and dW."""
    bf16 = _bf16(r)
    if not backward:
        return [*_linear("adapters", tokens, k_in, rank, bf16, times, False),
                *_linear("adapters", tokens, rank, n_out, bf16, times, False)]
    return [*_linear("adapters", tokens, rank, n_out, bf16, times, True),
            *_linear("adapters", tokens, k_in, rank, bf16, times, True)]


def _layer_matmuls(model: ModelSpec, s: StepShape, r: _Rates, backward: bool,
                   layers_of: dict[str, float], only: frozenset[str] | None = None
                   ) -> list[Work]:
    """Every matmul of the stage's layers (``layers_of``: layers of each scope on it), or
    only those named in ``only``."""
    out: list[Work] = []
    scope_layers = {"layer": model.layers, "dense-layer": model.dense_layers,
                    "moe-layer": model.layers - model.dense_layers}
    for c in architecture.components(model):
        if c.scope not in layers_of or c.kind not in ("matmul", "router", "unassigned"):
            continue
        if only is not None and c.name not in only:
            continue
        per_layer = c.copies / scope_layers[c.scope]
        k_in, n_out = c.rows, c.cols
        if c.kind == "unassigned":
            k_in, n_out = model.hidden, max(1, c.params // model.hidden)
        t = s.tp
        if not c.name.startswith(_REPLICATED):
            if c.name.endswith(_ROW_PARALLEL):
                k_in = max(1, k_in // t)
            else:
                n_out = max(1, n_out // t)
        tokens = s.tokens
        copies = per_layer
        rates = r if c.kind != "router" else _bf16(r)
        if c.active_fraction < 1.0:
            # Each GPU holds copies / ep experts; each expert sees its share of the tokens of
            # the ep GPUs that send it theirs.
            tokens = max(1, round(s.tokens * c.active_fraction * s.ep))
            copies = per_layer / s.ep
        times = copies * layers_of[c.scope]
        out += _linear(_group(c), tokens, k_in, n_out, rates, times, backward,
                       frozen=s.adapter is not None)
        if s.adapter is not None and c.name in s.adapter.matrices:
            out += _adapter_gemms(tokens, k_in, n_out, s.adapter.rank, r, times, backward)
    return out


def _attention(model: ModelSpec, s: StepShape, r: _Rates, layers: float,
               basis: list[Basis], backward_basis: bool = True
               ) -> tuple[list[Work], list[Work]]:
    """Attention forward and backward of the stage's layers, per layer group (full, local).

    With ``cp`` context-parallel GPUs each holds 1/cp of every sequence's queries, as two
    chunks (i and 2cp - 1 - i of 2cp: Megatron-LM's causal load balancing), so each does 1/cp
    of the sequence's attention FLOPs (``tokens`` / ``seq_len`` = micro-batch / cp sequences'
    worth), reading the keys and values of all cp ranks' chunks, in cp kernels per
    direction (one per ring step) at the rate of a seq_len / cp long sequence."""
    forward: list[Work] = []
    backward: list[Work] = []
    sequences = s.tokens / s.seq_len
    qk, v = architecture.attention_head_dims(model)
    heads = model.heads / s.tp
    kv_heads = model.kv_heads / s.tp if model.attention == "gqa" else heads
    io = ACTIVATION_BYTES * s.tokens * (heads * (2 * qk + v) + s.cp * kv_heads * (qk + v))
    for n, window in architecture.attention_layer_groups(model):
        share = layers * n / model.layers
        flops = (architecture.attention_flops_per_layer_token(model) / s.tp * sequences
                 * architecture.causal_attended_tokens(s.seq_len, window))
        kernel_len = max(1, min(s.seq_len, window or s.seq_len) // s.cp)
        rates = attention_rates(r.hw, qk, True, kernel_len, s.attention)
        basis += [rates.forward, rates.backward] if backward_basis else [rates.forward]
        forward.append(Work("attention (forward)", flops, io, r.peak * rates.forward.value,
                            r.stream, s.cp, r.per_kernel, share))
        backward.append(Work("attention (backward)", BACKWARD_FLOPS_PER_FORWARD * flops,
                             2 * io, r.peak * rates.backward.value, r.stream, 3 * s.cp,
                             r.per_kernel, share))
    return forward, backward


@dataclass(frozen=True, slots=True)
class _OpCost:
    bytes: float  # per number of the op's tensor
    kernels: int


def _norm_cost(model: ModelSpec, kernels: Kernels, side: int) -> _OpCost:
    """One norm's bytes per number and kernels: fused, or torchtitan's RMSNorm in eager
    PyTorch (a LayerNorm is one native kernel either way)."""
    if kernels == "eager" and model.norm == "rmsnorm":
        op = eager_elementwise().rmsnorm
        return _OpCost(op.bytes[side], op.kernels[side])
    return _OpCost(elementwise_bytes().norm[side], 1)


def _elementwise(model: ModelSpec, s: StepShape, r: _Rates, layers: float, backward: bool
                 ) -> list[Work]:
    """The memory-bound ops of the stage's layers, at the bytes their kernels move: fused
    ([elementwise]) or eager PyTorch's ([elementwise_eager]) as ``s.kernels`` says."""
    e = elementwise_bytes()
    eager = eager_elementwise() if s.kernels != "fused" else None
    side = 1 if backward else 0
    suffix = "(backward)" if backward else "(forward)"
    stream_tokens = s.tokens / s.tp  # sequence parallelism
    d = model.hidden
    qk, _ = architecture.attention_head_dims(model)
    rotary_width = (model.heads * model.qk_rope_head_dim + model.qk_rope_head_dim
                    if model.attention == "mla" else (model.heads + model.kv_heads) * qk)
    moe_layers = (model.layers - model.dense_layers) / model.layers if model.is_moe else 0.0
    dense_ffn = (1 - moe_layers) * model.ffn
    moe_ffn = moe_layers * model.moe_ffn * (model.experts_per_token + model.shared_experts)
    width = (dense_ffn + moe_ffn) / s.tp
    act = _OpCost((e.gated_activation if model.gated_mlp else e.plain_activation)[side], 1)
    rotary = _OpCost(e.rotary[side], 1)
    if eager is not None:
        rotary = _OpCost(eager.rotary.bytes[side], eager.rotary.kernels[side])
        if model.gated_mlp:
            act = _OpCost(eager.gated_activation.bytes[side],
                          eager.gated_activation.kernels[side])
    norm = _norm_cost(model, s.kernels, side)

    def op(name: str, moved: float, kernels: int, times: float = layers) -> Work:
        return Work(f"{name} {suffix}", 0.0, moved, 1.0, r.stream, kernels, r.per_kernel,
                    times)

    out = [op("norms", norm.bytes * stream_tokens * d * model.norms_per_layer,
              norm.kernels * model.norms_per_layer),
           op("residual adds", e.residual[side] * stream_tokens * d * 2, 2),
           op("activation", act.bytes * s.tokens * width, act.kernels)]
    if not model.learned_positions:
        out.append(op("rotary embedding", rotary.bytes * s.tokens * rotary_width / s.tp,
                      rotary.kernels))
    if eager is not None and model.attention == "gqa" and model.kv_heads < model.heads:
        # torchtitan's repeat_kv copies K and V to every query head (and sums them back).
        qk, v = architecture.attention_head_dims(model)
        numbers = s.tokens * (model.kv_heads + model.heads) * (qk + v) / s.tp
        out.append(op("key/value repeat (GQA)", eager.kv_repeat.bytes[side] * numbers,
                      eager.kv_repeat.kernels[side]))
    if model.is_moe:
        out.append(op("token permutation", token_permutation_bytes(model, s.tokens),
                      PERMUTATION_KERNELS, layers * moe_layers))
    return out


def _head(model: ModelSpec, s: StepShape, r: _Rates) -> list[Work]:
    """The last stage's final norm, output head and fp32 loss, forward and backward."""
    e = elementwise_bytes()
    d = model.hidden
    vocab = max(1, model.vocab // s.tp)
    stream_tokens = s.tokens / s.tp
    forward, backward = _norm_cost(model, s.kernels, 0), _norm_cost(model, s.kernels, 1)
    out = [Work("norms (forward)", 0.0, forward.bytes * stream_tokens * d, 1.0, r.stream,
                forward.kernels, r.per_kernel),
           *_linear("output head", s.tokens, d, vocab, _bf16(r), 1.0, False),
           Work("loss (fp32 cross-entropy)", 0.0, e.loss_bytes_per_logit * s.tokens * vocab,
                1.0, r.stream, e.loss_kernels, r.per_kernel),
           *_linear("output head", s.tokens, d, vocab, _bf16(r), 1.0, True,
                    frozen=s.adapter is not None),
           Work("norms (backward)", 0.0, backward.bytes * stream_tokens * d, 1.0, r.stream,
                backward.kernels, r.per_kernel)]
    return out


def _recomputed(work: list[Work], name: str) -> list[Work]:
    return [Work(name, w.flops, w.bytes, w.flops_per_s, w.bytes_per_s, w.kernels,
                 w.seconds_per_kernel, w.times) for w in work]


def _rates(hw: HardwareSpec, s: StepShape) -> tuple[_Rates, list[Basis]]:
    """The rates every op of ``s`` on ``hw`` runs at, and their basis."""
    stream = memory_stream_fraction(hw)
    kernel_cost = per_kernel_seconds()
    r = _Rates(hw.peak_flops_per_s("bf16"), hw.bandwidth_bytes_per_s * stream.value,
               kernel_cost.value, hw, fp8_training_peak(hw) if s.fp8 else 0.0)
    return r, [training_attention_kernel(s.attention), stream, kernel_cost]


def _layers_of(m: ModelSpec, layers: float) -> dict[str, float]:
    """The layers of each scope (dense, MoE) among ``layers`` of ``m``'s."""
    if m.is_moe:
        moe = m.layers - m.dense_layers
        return {"dense-layer": layers * m.dense_layers / m.layers,
                "moe-layer": layers * moe / m.layers}
    return {"layer": layers}


@dataclass(frozen=True, slots=True)
class ForwardOps:
    """One forward pass's ops on one GPU of ``tp`` (every layer, then the final norm and the
    output head), and every efficiency they used (``basis``)."""

    ops: tuple[Op, ...]
    basis: tuple[Basis, ...]

    @property
    def seconds(self) -> float:
        return math.fsum(o.seconds for o in self.ops)


def forward_ops(model: ModelSpec, hardware: HardwareSpec, shape: StepShape,
                head_tokens: int) -> ForwardOps:
    """The ops of one forward pass over every layer of ``model`` for ``shape.tokens`` tokens
    (sequences of ``shape.seq_len``), as training times its forward pass: every matmul at
    its shape's rate, FlashAttention forward at its measured rate, the forward memory-bound
    ops at the bytes their kernels move, a fixed cost per kernel; then the final norm and
    the output head over ``head_tokens`` tokens only (a prefill computes the logits of each
    request's last position, no loss). A GEMM of fewer rows than the chip's grid measured
    runs at its smallest measured shape's rate, its weights' streaming in its own bytes. ``shape.stage_layers`` and ``pipeline`` are ignored:
    all the layers run here."""
    m, s, hw = model, shape, hardware
    r, basis = _rates(hw, s)
    r = replace(r, rate_rows=smallest_measured_rows(hw))
    layers = float(m.layers)
    work = _layer_matmuls(m, s, r, False, _layers_of(m, layers))
    work += _attention(m, s, r, layers, basis, backward_basis=False)[0]
    work += _elementwise(m, s, r, layers, False)
    norm = _norm_cost(model, s.kernels, 0)
    work.append(Work("norms (forward)", 0.0, norm.bytes * head_tokens * m.hidden, 1.0,
                     r.stream, norm.kernels, r.per_kernel))
    work += _linear("output head", head_tokens, m.hidden, max(1, m.vocab // s.tp), _bf16(r),
                    1.0, False)
    return ForwardOps(ops_of(w for w in work if w.name != WEIGHT_CAST), tuple(_unique(basis)))


def training_ops(model: ModelSpec, hardware: HardwareSpec, shape: StepShape,
                 grad_bytes_per_param: float) -> TrainingOps:
    """The busiest GPU's ops for one micro-batch and one optimiser step (see the module)."""
    m = model
    s = shape
    hw = hardware
    r, basis = _rates(hw, s)
    if s.kernels != "fused":
        basis.append(elementwise_stack(s.kernels))
    if s.fp8:
        # One layer GEMM's fp8 rate, for the record (each GEMM is timed at its own shape's).
        basis.append(fp8_matmul_shape_fraction(hw, s.tokens, m.hidden, m.hidden))

    def layer_ops(layers: float) -> list[Work]:
        layers_of = _layers_of(m, layers)
        fwd_mm = _layer_matmuls(m, s, r, False, layers_of)
        bwd_mm = _layer_matmuls(m, s, r, True, layers_of)
        attn_fwd, attn_bwd = _attention(m, s, r, layers, basis)
        fwd_mem = _elementwise(m, s, r, layers, False)
        bwd_mem = _elementwise(m, s, r, layers, True)
        forward = fwd_mm + attn_fwd + fwd_mem
        again: list[Work] = []
        if s.recompute == "selective":
            again = _recomputed(attn_fwd, "recomputation: attention (forward)")
        elif s.recompute == "selective-op":
            # torchtitan's per-op policy: every other matmul and every memory-bound op again
            # (not attention, whose output it keeps).
            some = _layer_matmuls(m, s, r, False, layers_of,
                                  architecture.op_policy_recomputed(m))
            again = _recomputed([w for w in some + fwd_mem if w.name != WEIGHT_CAST],
                                "recomputation: every other matmul and the memory-bound ops")
        elif s.recompute == "full":
            again = _recomputed(forward, "recomputation: the layers' forward pass")
        return forward + again + bwd_mm + attn_bwd + bwd_mem

    last_layers = (pipeline_cut(m.layers, s.pipeline, "layers").last_stage_layers
                   if s.last_stage_layers is None else s.last_stage_layers)
    fullest = layer_ops(float(s.stage_layers))
    last = layer_ops(float(last_layers)) + _head(m, s, r)
    busiest = max((fullest, last), key=lambda w: math.fsum(x.seconds for x in w))
    # Transformer Engine casts the weights once per step: that op runs with the optimiser's.
    weight_casts = [w for w in busiest if w.name == WEIGHT_CAST]
    busiest = [w for w in busiest if w.name != WEIGHT_CAST]
    share = s.stage_layers / m.layers if s.stage_share is None else s.stage_share
    local_params = m.params / s.tp * share
    if s.adapter is not None:
        local_params = s.adapter.trainable_params / s.tp * s.stage_layers / m.layers
    elif m.routed_params:
        routed_share = s.stage_layers / m.layers if s.routed_share is None else s.routed_share
        local_params -= m.routed_params / s.tp * routed_share * (1 - 1 / s.ep)
    adam = adam_bytes_per_param(grad_bytes_per_param)
    basis.append(adam)
    optimizer = [
        *weight_casts,
        Work("optimizer step (Adam)", 0.0, adam.value * local_params / s.optimizer_shards,
             1.0, r.stream, 1, r.per_kernel),
        Work("gradient clipping (norm)", 0.0, grad_bytes_per_param * local_params
             / s.optimizer_shards, 1.0, r.stream, 1, r.per_kernel),
    ]
    return TrainingOps(ops_of(busiest), ops_of(optimizer), tuple(_unique(basis)))


def _unique(basis: list[Basis]) -> list[Basis]:
    seen: set[str] = set()
    out = []
    for b in basis:
        if b.name not in seen:
            seen.add(b.name)
            out.append(b)
    return out
