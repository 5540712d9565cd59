"""Model specifications: shapes from the catalogue, parameter counts derived from them.

``params`` and ``active_params`` are computed by :mod:`engine.numbers.model_shapes` from the shapes;
``published_params`` is what the model's authors state, kept only to test against.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from functools import cache, lru_cache
from typing import Any

from engine.numbers import validate
from engine.numbers.catalog._data import load
from engine.numbers.errors import EngineError
from engine.numbers.model_shapes import counts_from_shapes
from engine.numbers.records import Record

GENERIC_MIN_PARAMS = 20_000_000
GENERIC_MAX_PARAMS = 10**15


@dataclass(frozen=True, slots=True)
class ModelSpec(Record):
    """A transformer's shapes (counts, no units) and its derived parameter counts."""

    id: str
    name: str
    layers: int
    hidden: int
    ffn: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    max_context: int
    tied_embeddings: bool
    source: str
    family: str = ""
    attention: str = "gqa"  # 'gqa' (MHA when kv_heads == heads) or 'mla'
    gated_mlp: bool = True  # SwiGLU: gate, up, down; else up, down
    norm: str = "rmsnorm"  # 'rmsnorm' (weight) or 'layernorm' (weight + bias)
    norms_per_layer: int = 2
    qkv_bias: bool = False
    linear_bias: bool = False
    learned_positions: int = 0
    experts: int = 1
    experts_per_token: int = 1
    moe_ffn: int = 0
    shared_experts: int = 0
    dense_layers: int = 0
    router_bias: bool = False
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    sliding_window: int = 0
    # Layers that use the sliding window (0 with a window: all of them; Gemma 2: half).
    local_layers: int = 0
    published_params: float = 0.0
    published_active_params: float = 0.0
    params_source: str = ""
    # Kept only to check the engine against published figures (e.g. Llama 2 in the reality
    # check): found by get_model(), left out of list_models() and so of every picker.
    reference_only: bool = False
    note: str = ""
    confidence: str = "high"
    declared_params: int = 0  # generic models: the typed count, kept exactly
    assumptions: tuple[str, ...] = ()
    params: int = field(init=False)
    active_params: int = field(init=False)
    routed_params: int = field(init=False)

    def __post_init__(self) -> None:
        for name in ("layers", "hidden", "ffn", "heads", "kv_heads", "head_dim", "vocab",
                     "max_context", "experts", "experts_per_token", "norms_per_layer"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise EngineError(f"Model {self.id!r}: {name} must be a whole number >= 1.", name)
        if self.attention not in ("gqa", "mla"):
            raise EngineError(f"Model {self.id!r}: attention must be 'gqa' or 'mla'.", "attention")
        if self.attention == "gqa" and self.heads % self.kv_heads:
            raise EngineError(f"Model {self.id!r}: heads must be a multiple of kv_heads.",
                              "kv_heads")
        if self.attention == "mla" and min(self.kv_lora_rank, self.qk_rope_head_dim,
                                           self.q_lora_rank, self.v_head_dim) < 1:
            raise EngineError(f"Model {self.id!r}: MLA needs its latent ranks.", "kv_lora_rank")
        if self.experts_per_token > self.experts:
            raise EngineError(f"Model {self.id!r}: more experts per token than experts.",
                              "experts_per_token")
        if self.experts > 1 and (self.moe_ffn < 1 or self.dense_layers >= self.layers):
            raise EngineError(f"Model {self.id!r}: MoE needs moe_ffn and MoE layers.", "moe_ffn")
        if self.local_layers and not (self.sliding_window and self.local_layers <= self.layers):
            raise EngineError(f"Model {self.id!r}: local_layers needs a sliding_window and at "
                              "most layers.", "local_layers")
        total, active, routed = counts_from_shapes(self)
        if self.declared_params:
            if self.declared_params < total:
                raise EngineError(f"Model {self.id!r}: shapes exceed the declared count.",
                                  "params")
            active += self.declared_params - total
            total = self.declared_params
        object.__setattr__(self, "params", total)
        object.__setattr__(self, "active_params", round(active))
        object.__setattr__(self, "routed_params", routed)

    @property
    def is_moe(self) -> bool:
        return self.experts > 1


_FIELDS = {f.name for f in fields(ModelSpec) if f.init}


def _from_toml(model_id: str, entry: dict[str, Any]) -> ModelSpec:
    unknown = set(entry) - _FIELDS
    if unknown:
        raise EngineError(f"Model {model_id!r}: unknown fields {sorted(unknown)} in catalogue.")
    return ModelSpec(id=model_id, **entry)


@cache
def _all() -> dict[str, ModelSpec]:
    return {k: _from_toml(k, v) for k, v in load("models")["models"].items()}


def list_models(*, include_reference: bool = False) -> list[ModelSpec]:
    """The catalogue's models in catalogue order (reference-only ones on request)."""
    return [m for m in _all().values() if include_reference or not m.reference_only]


def get_model(model_id: object) -> ModelSpec:
    """The catalogue model called ``model_id`` (e.g. 'llama-3.1-8b')."""
    return validate.lookup(model_id, _all(), "model", "model")


def _generic_layer_params(hidden: int, head_dim: int, kv_heads: int, ffn: int) -> int:
    return 2 * hidden * hidden + 2 * hidden * kv_heads * head_dim + 3 * hidden * ffn + 2 * hidden


def generic_dense_model(params: object) -> ModelSpec:
    """A Llama-style dense model of exactly ``params`` parameters, shapes inferred.

    Inferred (and stated in ``assumptions``): hidden about 128 x layers (Llama 3's aspect
    ratio), head_dim 128, up to 8 KV heads (GQA), SwiGLU FFN of 3.5 x hidden, untied
    32,000-token vocabulary; whatever the shapes do not cover is listed as 'unassigned'.
    """
    n = validate.integer(params, "params", label="Parameter count", minimum=GENERIC_MIN_PARAMS,
                         maximum=GENERIC_MAX_PARAMS)
    return _generic(n)


@lru_cache(maxsize=256)
def _generic(n: int) -> ModelSpec:
    vocab = 32000
    head_dim = 128
    guess_layers = max(1, round((n / (13 * 128**2)) ** (1 / 3)))
    step = 1024 if 128 * guess_layers >= 2048 else 256  # keeps heads a multiple of 8
    hidden = max(256, step * round(128 * guess_layers / step))

    def shape(h: int) -> tuple[int, int, int]:
        heads = max(1, h // head_dim)
        kv = math.gcd(heads, 8)
        ffn = 256 * math.ceil(3.5 * h / 256)
        return heads, kv, ffn

    while hidden > 256:
        heads, kv, ffn = shape(hidden)
        if 2 * vocab * hidden + hidden + _generic_layer_params(hidden, head_dim, kv, ffn) <= n:
            break
        hidden -= 256
    heads, kv, ffn = shape(hidden)
    per_layer = _generic_layer_params(hidden, head_dim, kv, ffn)
    layers = max(1, (n - 2 * vocab * hidden - hidden) // per_layer)
    label = f"{n / 1e9:,.3g} B" if n >= 1e9 else f"{n / 1e6:,.3g} M"
    return ModelSpec(
        id=f"generic-{n}",
        name=f"Generic dense model, {label} parameters",
        family="generic",
        layers=layers,
        hidden=hidden,
        ffn=ffn,
        heads=heads,
        kv_heads=kv,
        head_dim=head_dim,
        vocab=vocab,
        max_context=131072,
        tied_embeddings=False,
        source="Shapes inferred by the engine from the parameter count alone (see assumptions).",
        declared_params=n,
        published_params=float(n),
        confidence="low",
        assumptions=(
            f"Shapes inferred from {n:,} parameters, Llama-style: {layers} layers, hidden "
            f"{hidden}, {heads} heads of 128 with {kv} KV heads, SwiGLU FFN {ffn}, untied "
            "32,000-token vocabulary. Weights, FLOPs and training state use the typed count "
            "exactly; the KV cache and activations depend on these inferred shapes.",
        ),
    )


def resolve_model(model_id: object = None, params: object = None) -> ModelSpec:
    """A catalogue model by id, or a generic dense model from a parameter count (not both)."""
    if model_id is not None and model_id != "" and params is not None and params != "":
        raise EngineError("Give a model or a parameter count, not both.", "model")
    if model_id is not None and model_id != "":
        return get_model(model_id)
    if params is not None and params != "":
        return generic_dense_model(params)
    raise EngineError("Choose a model or type a parameter count.", "model")
