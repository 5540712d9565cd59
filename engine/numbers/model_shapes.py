"""The tensors a transformer's shapes make, and their parameter counts.

The arithmetic the catalogue needs to derive a model's parameter count from its shapes
(:class:`engine.numbers.catalog.models.ModelSpec` calls :func:`counts_from_shapes` when it is
built), written against :class:`TransformerShape`, the shape fields it reads, so that this
module needs nothing from the catalogue. :mod:`engine.numbers.architecture` builds the rest
(FLOPs per token, one layer's matrices, tensor-parallel splits) on top of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class TransformerShape(Protocol):
    """The shapes of a transformer (all counts): what :func:`shape_components` reads.
    :class:`~engine.numbers.catalog.models.ModelSpec` documents each field."""

    @property
    def layers(self) -> int: ...
    @property
    def hidden(self) -> int: ...
    @property
    def ffn(self) -> int: ...
    @property
    def heads(self) -> int: ...
    @property
    def kv_heads(self) -> int: ...
    @property
    def head_dim(self) -> int: ...
    @property
    def vocab(self) -> int: ...
    @property
    def tied_embeddings(self) -> bool: ...
    @property
    def attention(self) -> str: ...
    @property
    def gated_mlp(self) -> bool: ...
    @property
    def norm(self) -> str: ...
    @property
    def norms_per_layer(self) -> int: ...
    @property
    def qkv_bias(self) -> bool: ...
    @property
    def linear_bias(self) -> bool: ...
    @property
    def learned_positions(self) -> int: ...
    @property
    def experts(self) -> int: ...
    @property
    def experts_per_token(self) -> int: ...
    @property
    def moe_ffn(self) -> int: ...
    @property
    def shared_experts(self) -> int: ...
    @property
    def dense_layers(self) -> int: ...
    @property
    def router_bias(self) -> bool: ...
    @property
    def q_lora_rank(self) -> int: ...
    @property
    def kv_lora_rank(self) -> int: ...
    @property
    def qk_nope_head_dim(self) -> int: ...
    @property
    def qk_rope_head_dim(self) -> int: ...
    @property
    def v_head_dim(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Component:
    """One kind of tensor: its shape, how many copies the model holds, and what they cost.

    ``copies`` counts every copy in the model (per layer x layers, x experts for MoE).
    ``active_fraction`` is the share used by one token (top-k of E experts: k/E; else 1).
    ``flops_per_token`` counts the active copies at 2 FLOPs per weight (0 for lookups/norms).
    """

    name: str
    kind: str  # 'matmul' | 'embedding' | 'norm' | 'router' | 'tied_head' | 'unassigned'
    rows: int
    cols: int
    bias: int
    copies: int
    active_fraction: float
    scope: str  # 'layer' (one per layer), 'dense-layer', 'moe-layer', or 'model'

    @property
    def params_each(self) -> int:
        return self.rows * self.cols + self.bias

    @property
    def params(self) -> int:
        return self.params_each * self.copies

    @property
    def active_params(self) -> float:
        return self.params * self.active_fraction

    @property
    def flops_per_token(self) -> float:
        if self.kind in ("matmul", "router", "unassigned"):
            return 2.0 * self.active_params
        if self.kind == "tied_head":
            return 2.0 * self.rows * self.cols
        return 0.0

    def to_dict(self) -> dict[str, object]:
        """Its own JSON rather than engine.numbers.records': the shape as one list, the counts
        as floats (whole numbers past 2^53 would reach JavaScript as BigInt)."""
        return {
            "name": self.name,
            "kind": self.kind,
            "shape": [self.rows, self.cols] if self.cols != 1 else [self.rows],
            "bias": self.bias,
            "copies": self.copies,
            "scope": self.scope,
            "params_each": float(self.params_each),
            "params": float(self.params),
            "active_params": float(self.active_params),
            "flops_per_token": float(self.flops_per_token),
        }


def _attention(m: TransformerShape, copies: int, scope: str) -> list[Component]:
    h = m.hidden
    lb = m.linear_bias
    if m.attention == "mla":
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        return [
            Component("attention.q_down", "matmul", h, m.q_lora_rank, 0, copies, 1.0, scope),
            Component("attention.q_norm", "norm", m.q_lora_rank, 1, 0, copies, 1.0, scope),
            Component("attention.q_up", "matmul", m.q_lora_rank, m.heads * qk, 0, copies, 1.0,
                      scope),
            Component("attention.kv_down", "matmul", h, m.kv_lora_rank + m.qk_rope_head_dim, 0,
                      copies, 1.0, scope),
            Component("attention.kv_norm", "norm", m.kv_lora_rank, 1, 0, copies, 1.0, scope),
            Component("attention.kv_up", "matmul", m.kv_lora_rank,
                      m.heads * (m.qk_nope_head_dim + m.v_head_dim), 0, copies, 1.0, scope),
            Component("attention.o", "matmul", m.heads * m.v_head_dim, h, 0, copies, 1.0, scope),
        ]
    q = m.heads * m.head_dim
    kv = m.kv_heads * m.head_dim
    qkv_bias = m.qkv_bias or lb
    return [
        Component("attention.q", "matmul", h, q, q if qkv_bias else 0, copies, 1.0, scope),
        Component("attention.k", "matmul", h, kv, kv if qkv_bias else 0, copies, 1.0, scope),
        Component("attention.v", "matmul", h, kv, kv if qkv_bias else 0, copies, 1.0, scope),
        Component("attention.o", "matmul", q, h, h if lb else 0, copies, 1.0, scope),
    ]


def _mlp(m: TransformerShape, prefix: str, ffn: int, copies: int, active: float, scope: str
         ) -> list[Component]:
    h = m.hidden
    lb = m.linear_bias
    out = []
    if m.gated_mlp:
        out.append(Component(f"{prefix}.gate", "matmul", h, ffn, ffn if lb else 0, copies, active,
                             scope))
    out.append(Component(f"{prefix}.up", "matmul", h, ffn, ffn if lb else 0, copies, active, scope))
    out.append(Component(f"{prefix}.down", "matmul", ffn, h, h if lb else 0, copies, active, scope))
    return out


def _norms(m: TransformerShape, copies: int, scope: str) -> list[Component]:
    bias = m.hidden if m.norm == "layernorm" else 0
    return [Component("norms", "norm", m.hidden, 1, bias, copies * m.norms_per_layer, 1.0, scope)]


def _layer_kind(m: TransformerShape, moe: bool, n_layers: int, scope: str) -> list[Component]:
    parts = _attention(m, n_layers, scope)
    if moe:
        e = m.experts
        parts.append(Component("moe.router", "router", m.hidden, e, e if m.router_bias else 0,
                               n_layers, 1.0, scope))
        parts += _mlp(m, "moe.routed_expert", m.moe_ffn, n_layers * e, m.experts_per_token / e,
                      scope)
        if m.shared_experts:
            parts += _mlp(m, "moe.shared_expert", m.moe_ffn, n_layers * m.shared_experts, 1.0,
                          scope)
    else:
        parts += _mlp(m, "mlp", m.ffn, n_layers, 1.0, scope)
    parts += _norms(m, n_layers, scope)
    return parts


def shape_components(m: TransformerShape) -> list[Component]:
    """Every tensor derived from the shapes (no 'unassigned' remainder)."""
    h = m.hidden
    parts = [Component("embedding", "embedding", m.vocab, h, 0, 1, 1.0, "model")]
    if m.learned_positions:
        parts.append(Component("position_embedding", "embedding", m.learned_positions, h, 0, 1,
                               1.0, "model"))
    dense_layers = m.layers if m.experts <= 1 else m.dense_layers
    moe_layers = m.layers - dense_layers
    if m.experts <= 1:
        parts += _layer_kind(m, False, m.layers, "layer")
    else:
        if dense_layers:
            parts += _layer_kind(m, False, dense_layers, "dense-layer")
        parts += _layer_kind(m, True, moe_layers, "moe-layer")
    final_bias = h if m.norm == "layernorm" else 0
    parts.append(Component("final_norm", "norm", h, 1, final_bias, 1, 1.0, "model"))
    if not m.tied_embeddings:
        parts.append(Component("lm_head", "matmul", h, m.vocab, 0, 1, 1.0, "model"))
    else:
        # The head reuses the embedding table: no new parameters, but its matmul costs FLOPs.
        parts.append(Component("lm_head (tied to embedding)", "tied_head", h, m.vocab, 0, 0, 1.0,
                               "model"))
    return parts


def counts_from_shapes(m: TransformerShape) -> tuple[int, float, int]:
    """(total params, active params per token, routed-expert params) from the shapes alone."""
    total = 0
    active = 0.0
    routed = 0
    for c in shape_components(m):
        p = c.params
        total += p
        active += c.active_params
        if c.active_fraction < 1.0:
            routed += p
    return total, active, routed
