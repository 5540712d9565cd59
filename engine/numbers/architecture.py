"""The matrices a model is made of: names, shapes, parameter counts and FLOPs per token.

A model's parameter count is *derived* here from its shapes (never typed in), so the
catalogue's published counts become tests. Pushing one token through a weight matrix of
``rows x cols`` costs ``2 x rows x cols`` FLOPs (one multiply and one add per weight).
The input embedding is a table lookup (no FLOPs); norms cost a few FLOPs per number,
counted here as zero. So the FLOPs of one token sum to slightly less than 2 x parameters,
the rule of thumb the lesson uses; attention scores add ``4 x layers x heads x head_dim``
FLOPs per token of context (see :func:`attention_flops_per_token`).
"""

from __future__ import annotations

import math
from typing import Literal

from engine.numbers.catalog.models import ModelSpec
from engine.numbers.errors import EngineError
from engine.numbers.model_shapes import Component as Component
from engine.numbers.model_shapes import counts_from_shapes as counts_from_shapes
from engine.numbers.model_shapes import shape_components as shape_components
from engine.numbers.rounding import ceil_div

# Which layer of a model that has both kinds: 'auto' is its usual one (the MoE layer).
LayerKind = Literal["auto", "dense", "moe"]


def components(m: ModelSpec) -> list[Component]:
    """Every tensor of the model; their ``params`` sum exactly to ``m.params``.

    For a generic model built from a typed parameter count the inferred shapes leave a
    remainder smaller than one layer; it is listed as 'unassigned' so the sum stays exact.
    """
    parts = shape_components(m)
    if m.declared_params:
        rest = m.declared_params - sum(c.params for c in parts)
        if rest:
            parts.append(Component("unassigned (typed count minus inferred shapes)",
                                   "unassigned", rest, 1, 0, 1, 1.0, "model"))
    return parts


def layer_components(m: ModelSpec, kind: LayerKind = "auto") -> list[Component]:
    """The matrices of ONE transformer layer (``copies`` divided by the number of layers).

    ``kind``: 'dense' or 'moe' for models with both; 'auto' picks the model's usual layer.
    """
    if m.experts <= 1:
        scope = "layer"
        n = m.layers
    elif kind == "dense" and m.dense_layers:
        scope = "dense-layer"
        n = m.dense_layers
    else:
        scope = "moe-layer"
        n = m.layers - m.dense_layers
    out = []
    for c in shape_components(m):
        if c.scope == scope:
            out.append(Component(c.name, c.kind, c.rows, c.cols, c.bias, c.copies // n,
                                 c.active_fraction, "layer"))
    return out


def attention_head_dims(m: ModelSpec) -> tuple[int, int]:
    """(query/key width, value width) of one attention head: head_dim for both in GQA/MHA;
    MLA (DeepSeek-V3) scores with qk_nope + qk_rope dims (192) and sums values of 128."""
    if m.attention == "mla":
        return m.qk_nope_head_dim + m.qk_rope_head_dim, m.v_head_dim
    return m.head_dim, m.head_dim


def attention_layer_groups(m: ModelSpec) -> tuple[tuple[int, int], ...]:
    """(number of layers, window in tokens or 0 for full attention) for each kind of layer.

    Mistral 7B v0.1: every layer sees the last 4,096 tokens; Gemma 2: half the layers
    (alternate ones) are local with a 4,096-token window, half global.
    """
    if not m.sliding_window:
        return ((m.layers, 0),)
    local = m.local_layers or m.layers
    groups = ((local, m.sliding_window), (m.layers - local, 0))
    return tuple(g for g in groups if g[0])


def attended_layer_tokens(m: ModelSpec, context_tokens: float) -> float:
    """Sum over layers of the tokens one new token attends to: layers x context without a
    sliding window, a local layer's share capped at its window."""
    return float(sum(n * (min(context_tokens, w) if w else context_tokens)
                     for n, w in attention_layer_groups(m)))


def causal_attended_tokens(tokens: int, window: int = 0) -> float:
    """Sum over positions 1..``tokens`` of one prompt of the tokens each attends to, in one
    layer: s(s+1)/2 with full attention; w(w+1)/2 + (s - w) w once s passes a window w."""
    s, w = tokens, window
    if not w or s <= w:
        return s * (s + 1) / 2.0
    return w * (w + 1) / 2.0 + (s - w) * w


def causal_attended_layer_tokens(m: ModelSpec, tokens: int) -> float:
    """Sum of :func:`attended_layer_tokens` over positions 1..``tokens`` of one prompt:
    :func:`causal_attended_tokens` of each layer."""
    total = 0.0
    for n, w in attention_layer_groups(m):
        total += n * causal_attended_tokens(tokens, w)
    return total


def attention_flops_per_layer_token(m: ModelSpec) -> float:
    """Forward FLOPs of attention scores per (layer, attended token): QK^T and the weighted
    sum of V, 2 FLOPs per multiply-add: 2 x heads x (qk + v) (= 4 x heads x head_dim)."""
    qk, v = attention_head_dims(m)
    return 2.0 * m.heads * (qk + v)


def attention_flops_per_token(m: ModelSpec, context_tokens: float) -> float:
    """Attention-score FLOPs for one token that attends to ``context_tokens`` earlier tokens.

    ``4 x layers x heads x head_dim x context`` for full attention; a sliding-window layer
    attends to at most its window. Not part of ``2 x parameters``; it matters only for long
    contexts. (Training averages this over a causal sequence, each token attending to those
    before it: :func:`causal_attended_layer_tokens`, used by
    compute.training_flops_per_token.)
    """
    return attention_flops_per_layer_token(m) * attended_layer_tokens(m, context_tokens)


def forward_flops_per_token(m: ModelSpec) -> float:
    """FLOPs of the weight matrices for one token, forward: 2 per active weight of every
    matmul (the output head too, tied or not); the input embedding is a lookup (0 FLOPs)
    and norms are counted as 0. Slightly under 2 x active parameters."""
    return float(sum(c.flops_per_token for c in components(m)))


def op_policy_recomputed(m: ModelSpec) -> frozenset[str]:
    """The layer matmuls that torchtitan's per-op activation checkpointing ('selective-op')
    computes again in the backward pass: its policy keeps the output of a layer's matmuls
    but every second one in forward order (the 2nd, 4th, ...), and attention's output; all
    else (norms, rotary, the activation, residual adds) is recomputed. Counted over each
    layer kind's matmuls in the catalogue's order (q, k, v, o, gate, up, down for a Llama
    layer: k, o and up recomputed); a mixture's router and experts are counted the same
    way, an assumption (torchtitan's grouped expert GEMMs are not plain matmuls)."""
    out: set[str] = set()
    seen: dict[str, int] = {}
    for c in components(m):
        if c.scope == "model" or c.kind not in ("matmul", "router", "unassigned"):
            continue
        seen[c.scope] = seen.get(c.scope, 0) + 1
        if seen[c.scope] % 2 == 0:
            out.add(c.name)
    return frozenset(out)


def op_policy_recomputed_flops_per_token(m: ModelSpec) -> float:
    """Forward FLOPs per token of the matmuls :func:`op_policy_recomputed` names."""
    again = op_policy_recomputed(m)
    return math.fsum(c.flops_per_token for c in components(m) if c.name in again)


def check_tensor_parallel(m: ModelSpec, tp: int, field: str = "gpus") -> int:
    """``tp`` if the model can be split that many ways, else EngineError.

    Each GPU must get whole attention heads (TP divides the heads), and the KV heads must
    split evenly or be replicated evenly (KV heads divisible by TP, or TP by KV heads):
    vLLM's rule (ModelConfig.verify_with_parallel_config; QKVParallelLinear replicates KV
    heads when TP exceeds them). MLA models keep their latent cache whole on every GPU.
    """
    heads, kv = m.heads, m.kv_heads
    if tp > 1 and heads % tp:
        raise EngineError(
            f"{m.name} has {heads} attention heads, which {tp} GPUs cannot share evenly: "
            f"tensor parallelism needs a GPU count that divides {heads}.", field)
    if tp > 1 and m.attention == "gqa" and kv % tp and tp % kv:
        raise EngineError(
            f"{m.name} has {kv} KV heads: {tp} GPUs can neither split them evenly nor hold "
            "one copy each.", field)
    return tp


def tensor_parallel_ok(m: ModelSpec, tp: int) -> bool:
    """Whether :func:`check_tensor_parallel` accepts ``tp`` for ``m``."""
    try:
        check_tensor_parallel(m, tp)
    except EngineError:
        return False
    return True


def kv_replication(m: ModelSpec, tp: int) -> float:
    """How many times the whole KV cache is stored across ``tp`` GPUs (1 when the KV heads
    split evenly). More GPUs than KV heads: each GPU keeps at least one head, so the cache
    is stored tp / KV heads times; MLA's latent is kept whole on every GPU (tp times)."""
    if m.attention == "mla":
        return float(tp)
    per_gpu = ceil_div(m.kv_heads, tp)
    return per_gpu * tp / m.kv_heads


def summary(m: ModelSpec) -> dict[str, object]:
    """The table for the 'matrices of one layer' widget, plain JSON values."""
    layer = layer_components(m)
    every = components(m)
    return {
        "model": m.id,
        "layer": [c.to_dict() for c in layer],
        "layer_params": float(sum(c.params for c in layer)),
        "layer_flops_per_token": float(sum(c.flops_per_token for c in layer)),
        "components": [c.to_dict() for c in every],
        "total_params": float(sum(c.params for c in every)),
        "total_flops_per_token": float(sum(c.flops_per_token for c in every)),
        "two_x_params": 2.0 * m.active_params,
        "forward_flops_per_token": forward_flops_per_token(m),
        "note": (
            "The input embedding is a lookup (no FLOPs) and norms are counted as 0 FLOPs, so "
            "the sum is a little under 2 × parameters; attention scores add "
            "4 × layers × heads × head_dim FLOPs per token of context."
        ),
    }
