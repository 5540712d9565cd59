"""Any model from its Hugging Face ``config.json``: the text (or its parsed object) in, a
:class:`~engine.numbers.catalog.models.ModelSpec` out, with every field assumed or left unused.

Families read (``model_type``, else the first of ``architectures``): Llama 1-4, Mistral,
Mixtral, Qwen 2/2.5/3 dense and MoE, Gemma 1/2/3, DeepSeek V2/V3 (multi-head latent
attention), Phi-3/4, gpt-oss, GLM-4.5, OLMo 2, OLMoE, StarCoder 2, GPT-NeoX (Pythia), Falcon
(multi-query) and GPT-2: what a config does not say (gated or plain MLP, norms, biases) is in
each family's modelling code, written here once per family. An architecture outside them is
refused, naming it, never guessed. Mixture-of-experts is read from the keys themselves in any
family (expert counts and widths, shared experts, dense-first and interleaved layers), and
sliding-window layers from ``layer_types`` where a config lists them.

Untrusted text is bounded before it is parsed: at most :data:`MAX_CONFIG_CHARS` characters and
:data:`MAX_DEPTH` levels of nested brackets (the JSON parser recurses, so 20,000 brackets would
otherwise end in a RecursionError, or in the browser overflow the WebAssembly stack; the
depth is measured by :func:`engine.numbers.bounded_json.nesting_depth`), and every whole
number at most :data:`MAX_NUMBER_DIGITS` digits before Python converts it (a longer one is
kept as :class:`HugeNumber` and refused by the key that holds it). Every problem found is
reported at once, field by field.
The parameter counts are derived by :mod:`engine.numbers.architecture` from the shapes read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.numbers.bounded_json import json_kind, nesting_depth
from engine.numbers.catalog.models import ModelSpec
from engine.numbers.errors import EngineError
from engine.numbers.records import Record
from engine.numbers.validate import show_number

# Real config.json files are 1 to 10 kB (a multimodal one with its vision tower about 20 kB);
# the browser's inputs are capped at 200,000 characters altogether (engine.browser).
MAX_CONFIG_CHARS = 100_000
MAX_DEPTH = 32  # real configs nest 3 or 4 levels (rope_scaling, text_config, quantization)
MAX_UNUSED_LISTED = 30
MAX_PARAMS = 10**15  # the catalogue's ceiling for a typed count (1,000 x the largest models)
# Python refuses to convert a number of more than 4,300 digits (a ValueError naming no key);
# every size read is far below 10**30.
MAX_NUMBER_DIGITS = 30

# (smallest, largest) of each size read; far beyond any model built, short of absurd.
BOUNDS: dict[str, tuple[int, int]] = {
    "layers": (1, 10_000),
    "hidden": (1, 1_048_576),
    "heads": (1, 65_536),
    "kv_heads": (1, 65_536),
    "head_dim": (1, 65_536),
    "ffn": (1, 16_777_216),
    "moe_ffn": (1, 16_777_216),
    "vocab": (1, 16_777_216),
    "max_context": (1, 1_000_000_000),
    "sliding_window": (1, 1_000_000_000),
    "experts": (1, 1_000_000),
    "experts_per_token": (1, 1_000_000),
    "shared_experts": (0, 1_000_000),
    "dense_layers": (0, 10_000),
    "q_lora_rank": (1, 1_048_576),
    "kv_lora_rank": (1, 1_048_576),
    "qk_nope_head_dim": (1, 65_536),
    "qk_rope_head_dim": (1, 65_536),
    "v_head_dim": (1, 65_536),
}


@dataclass(frozen=True, slots=True)
class Family:
    """What a config does not say but its family's code does (transformers' modelling files)."""

    name: str
    gated_mlp: bool = True
    norm: str = "rmsnorm"
    norms_per_layer: int = 2
    qkv_bias: bool = False
    linear_bias: bool = False
    tied_default: bool = False
    # Whose code the expert keys follow: '' (no MoE in this family), 'mixtral' (experts as
    # wide as intermediate_size), 'qwen' (moe_intermediate_size, one shared expert of its own
    # width), 'deepseek' (n_shared_experts of moe_intermediate_size, first dense layers).
    moe: str = ""
    mla: bool = False
    window: str = ""  # '', 'all' (Mistral), 'qwen', 'alternate' (Gemma 2), 'pattern' (Gemma 3)
    learned_positions: bool = False
    left_out: str = ""  # small weights the shapes do not count
    router_bias: bool = False  # the router is a linear layer with a bias (gpt-oss)
    shared_experts: int = 0  # shared experts the code always builds (Llama 4: one)
    dense_ffn_key: str = "intermediate_size"  # the dense layers' MLP width


_QK_NORM = "the per-head query and key norms (2 x head_dim per layer, under 0.001 %)"
FAMILIES: dict[str, Family] = {
    "llama": Family("Llama"),
    "mistral": Family("Mistral", window="all"),
    "mixtral": Family("Mixtral", moe="mixtral", window="all"),
    "qwen2": Family("Qwen2 / Qwen2.5", qkv_bias=True, window="qwen"),
    "qwen2_moe": Family("Qwen2 MoE", qkv_bias=True, moe="qwen", window="qwen",
                        left_out="the shared expert's gate (hidden x 1 per layer)"),
    "qwen3": Family("Qwen3", window="qwen", left_out=_QK_NORM),
    "qwen3_moe": Family("Qwen3 MoE", moe="qwen", window="qwen", left_out=_QK_NORM),
    "gemma": Family("Gemma", tied_default=True),
    "gemma2": Family("Gemma 2", norms_per_layer=4, tied_default=True, window="alternate"),
    "gemma3_text": Family("Gemma 3", norms_per_layer=4, tied_default=True, window="pattern",
                          left_out=_QK_NORM),
    "deepseek": Family("DeepSeekMoE", moe="deepseek"),
    "deepseek_v2": Family("DeepSeek-V2", moe="deepseek", mla=True),
    "deepseek_v3": Family("DeepSeek-V3", moe="deepseek", mla=True),
    "phi3": Family("Phi-3"),
    "llama4_text": Family("Llama 4", moe="mixtral", shared_experts=1,
                          dense_ffn_key="intermediate_size_mlp"),
    "gpt_oss": Family("gpt-oss", moe="mixtral", qkv_bias=True, linear_bias=True,
                      router_bias=True, window="types",
                      left_out="the attention sinks (one number per head per layer)"),
    "glm4_moe": Family("GLM-4.5", moe="deepseek", left_out=_QK_NORM),
    "olmo2": Family("OLMo 2", left_out="the query and key norms (hidden + KV width per "
                    "layer, under 0.01 %)"),
    "olmoe": Family("OLMoE", moe="qwen", left_out="the query and key norms (hidden + KV "
                    "width per layer, under 0.01 %)"),
    "starcoder2": Family("StarCoder 2", gated_mlp=False, norm="layernorm", linear_bias=True,
                         tied_default=True, window="all"),
    "gpt_neox": Family("GPT-NeoX", gated_mlp=False, norm="layernorm", linear_bias=True),
    "falcon": Family("Falcon", gated_mlp=False, norm="layernorm", norms_per_layer=1,
                     tied_default=True),
    "gpt2": Family("GPT-2", gated_mlp=False, norm="layernorm", linear_bias=True,
                   tied_default=True, learned_positions=True),
}
_ARCHITECTURES = {
    "llamaforcausallm": "llama", "mistralforcausallm": "mistral",
    "mixtralforcausallm": "mixtral", "qwen2forcausallm": "qwen2",
    "qwen2moeforcausallm": "qwen2_moe", "qwen3forcausallm": "qwen3",
    "qwen3moeforcausallm": "qwen3_moe", "gemmaforcausallm": "gemma",
    "gemma2forcausallm": "gemma2", "gemma3forcausallm": "gemma3_text",
    "gemma3forconditionalgeneration": "gemma3_text", "deepseekv2forcausallm": "deepseek_v2",
    "deepseekv3forcausallm": "deepseek_v3", "phi3forcausallm": "phi3",
    "gptneoxforcausallm": "gpt_neox", "falconforcausallm": "falcon",
    "rwforcausallm": "falcon", "gpt2lmheadmodel": "gpt2",
    "llama4forcausallm": "llama4_text", "llama4forconditionalgeneration": "llama4_text",
    "gptossforcausallm": "gpt_oss", "glm4moeforcausallm": "glm4_moe",
    "olmo2forcausallm": "olmo2", "olmoeforcausallm": "olmoe",
    "starcoder2forcausallm": "starcoder2", "deepseekforcausallm": "deepseek",
}
_MODEL_TYPES = {"gemma3": "gemma3_text", "refinedweb": "falcon", "refinedwebmodel": "falcon",
                "llama4": "llama4_text", "kimi_k2": "deepseek_v3"}
# Gemma 3's text_config carries only what differs from Gemma3TextConfig's defaults.
_GEMMA3_DEFAULTS = {"num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
                    "vocab_size": 262_208, "max_position_embeddings": 131_072,
                    "sliding_window": 4096}

# Keys that describe training, tokens or numerics, not the shapes: read by no one here, and
# not worth listing as unused.
_NOT_SHAPES = frozenset({
    "_name_or_path", "architectures", "model_type", "torch_dtype", "dtype",
    "transformers_version", "bos_token_id", "eos_token_id", "pad_token_id", "use_cache",
    "initializer_range", "rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon",
    "attention_dropout", "hidden_dropout", "embd_pdrop", "resid_pdrop", "attn_pdrop",
    "summary_first_dropout", "hidden_act", "hidden_activation", "activation_function",
    "rope_theta", "rope_scaling", "rotary_emb_base", "rotary_pct", "partial_rotary_factor",
    "auto_map", "output_router_logits", "router_aux_loss_coef", "aux_loss_alpha",
    "pretraining_tp", "quantization_config", "tie_word_embeddings",
})


@dataclass(frozen=True, slots=True)
class ConfigModel(Record):
    """A model read from a config.json: its spec, the family it was read as, and in words
    what was assumed (not in the config), what was read but not used, and which weights the
    shapes leave out."""

    model: ModelSpec
    model_type: str
    family: str
    assumed: tuple[str, ...]
    unused: tuple[str, ...]
    left_out: tuple[str, ...]
    # Which layers are mixture-of-experts when not all are, in words ('' when all or none).
    moe_layout: str = ""


@dataclass(frozen=True, slots=True)
class HugeNumber:
    """A whole number in the JSON text of more than MAX_NUMBER_DIGITS digits, kept unconverted
    (Python would refuse it without naming its key); ``digits`` counts them."""

    digits: int


def parse_text(text: object) -> dict[str, Any]:
    """A config.json's text as a dict, size and nesting checked before the JSON parser runs."""
    if isinstance(text, bytes):
        if len(text) > 4 * MAX_CONFIG_CHARS:
            raise _too_long(len(text))
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise EngineError("The config is not UTF-8 text.", "config") from None
    if not isinstance(text, str):
        raise EngineError("The config must be the text of a config.json.", "config")
    if len(text) > MAX_CONFIG_CHARS:
        raise _too_long(len(text))
    if not text.strip():
        raise EngineError("The config is empty: paste the text of a config.json.", "config")
    if nesting_depth(text) > MAX_DEPTH:
        raise EngineError(f"The config nests more than {MAX_DEPTH} levels of brackets; a "
                          "config.json nests three or four.", "config")
    try:
        data = json.loads(text, parse_constant=_no_constant, parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        raise EngineError(f"The config is not valid JSON (line {exc.lineno}, column "
                          f"{exc.colno}: {exc.msg}).", "config") from None
    except RecursionError:  # cannot happen after the depth check; kept as a last guard
        raise EngineError("The config nests too deeply.", "config") from None
    if not isinstance(data, dict):
        raise EngineError(f"The config must be a JSON object ({{...}}), not {_kind(data)}.",
                          "config")
    return data


def _too_long(n: int) -> EngineError:
    return EngineError(f"The config is {n:,} characters long; a config.json is a few thousand "
                       f"(at most {MAX_CONFIG_CHARS:,} are read).", "config")


def _bounded_int(digits: str) -> int | HugeNumber:
    length = len(digits.lstrip("-"))
    return HugeNumber(length) if length > MAX_NUMBER_DIGITS else int(digits)


def _no_constant(name: str) -> object:
    raise EngineError(f"The config holds {name}, which is not a number JSON allows.", "config")


def _kind(value: object) -> str:
    if isinstance(value, HugeNumber):
        return f"a number of {value.digits:,} digits"
    return json_kind(value)


class _Reader:
    """Reads fields from one config, keeping every problem, assumption and key read."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data
        self.read: set[str] = set()
        self.problems: list[str] = []
        self.assumed: list[str] = []

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def raw(self, *keys: str) -> tuple[str, Any] | None:
        for key in keys:
            self.read.add(key)
        for key in keys:
            if self.data.get(key) is not None:
                return key, self.data[key]
        return None

    def size(self, what: str, *keys: str, default: int | None = None, why: str = "",
             required: bool = True) -> int:
        """A whole number from the first of ``keys`` present, within BOUNDS[what]; else the
        default (an assumption, said with ``why``) or a problem."""
        found = self.raw(*keys)
        if found is None:
            if default is not None:
                if why:
                    self.assumed.append(f"{keys[0]} not given: {default:,} assumed ({why}).")
                return default
            if required:
                self.problems.append(f"{keys[0]}: missing (needed for {what.replace('_', ' ')}).")
            return 0
        key, value = found
        low, high = BOUNDS[what]
        if isinstance(value, int) and not isinstance(value, bool) and (
                _digits(value) > MAX_NUMBER_DIGITS):
            value = HugeNumber(_digits(value))
        if isinstance(value, HugeNumber):
            self.problems.append(f"{key}: a number of {value.digits:,} digits is absurdly large "
                                 f"(at most {high:,}).")
            return 0
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.problems.append(f"{key}: must be a whole number, not {_shown(value)}.")
            return 0
        if isinstance(value, float) and math.isinf(value):  # 1e400 in the text
            self.problems.append(f"{key}: far too large (at most {high:,})." if value > 0 else
                                 f"{key}: far too small (at least {low:,}).")
            return 0
        if isinstance(value, float) and not value.is_integer():
            self.problems.append(f"{key}: must be a whole number, not {_shown(value)}.")
            return 0
        if value < low:
            self.problems.append(f"{key}: {show_number(value)} is too small (at least {low:,}).")
            return 0
        if value > high:
            self.problems.append(f"{key}: {show_number(value)} is absurdly large "
                                 f"(at most {high:,}).")
            return 0
        return int(value)

    def flag(self, key: str, default: bool) -> bool:
        found = self.raw(key)
        if found is None:
            return default
        if not isinstance(found[1], bool):
            self.problems.append(f"{key}: must be true or false, not {_shown(found[1])}.")
            return default
        return found[1]


def _digits(value: int) -> int:
    """About how many decimal digits ``value`` has, without converting it to text."""
    return max(1, int(abs(value).bit_length() * 0.30103) + 1)


def _shown(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and _digits(value) > MAX_NUMBER_DIGITS:
        value = HugeNumber(_digits(value))
    if isinstance(value, float | int) and not isinstance(value, bool):
        # As a reader writes it (1e308, not 309 digits; an overflowing 1e400 as what it is).
        if not math.isfinite(value):
            text = "a number far too large" if value > 0 else "a number far too small"
        else:
            text = json.dumps(value) if abs(value) < 1e10 else show_number(value)
    else:
        plain = isinstance(value, str | bool) or value is None
        text = json.dumps(value) if plain else _kind(value)
    return text if len(text) <= 30 else text[:30] + "..."


def _family_key(data: Mapping[str, Any]) -> tuple[str, str]:
    """(the model_type as written, the family key it is read as, '' when unknown)."""
    model_type = data.get("model_type")
    written = model_type if isinstance(model_type, str) else ""
    key = _MODEL_TYPES.get(written.lower(), written.lower())
    if key in FAMILIES:
        return written, key
    arch = data.get("architectures")
    if isinstance(arch, list) and arch and isinstance(arch[0], str):
        found = _ARCHITECTURES.get(arch[0].lower(), "")
        return written or arch[0][:60], found
    return written[:60], ""


def model_from_config(config: object, *, name: str = "") -> ConfigModel:
    """The model a config.json describes. ``config``: its text (str or bytes) or the parsed
    object. ``name``: what to call it (default: ``_name_or_path``, else the family).

    EngineError (field 'config') lists every problem found: missing keys, non-numbers, sizes
    out of range, heads that do not divide, an architecture the engine does not know.
    """
    data = config if isinstance(config, Mapping) else parse_text(config)
    top_keys = set(data)
    text_config = data.get("text_config")
    nested = isinstance(text_config, Mapping) and not data.get("hidden_size")
    written, key = _family_key(data)
    assumed_head: list[str] = []
    if nested:
        assert isinstance(text_config, Mapping)
        inner_written, inner_key = _family_key(text_config)
        key = inner_key or key
        written = inner_written or written
        parts = sorted(str(k)[:40] for k, v in data.items() if isinstance(v, Mapping)
                       and k not in ("text_config", "quantization_config", "rope_scaling"))
        rest = f" ({', '.join(parts)})" if parts else ""
        assumed_head.append("The language model is counted, read from text_config; the other "
                            f"parts{rest} are left out.")
        outer = {k: data[k] for k in ("tie_word_embeddings",) if k in data and k not in text_config}
        data = {**text_config, **outer}
    if not key:
        raise EngineError(_unknown_architecture(written), "config")
    if key == "gemma3_text":
        filled = [k for k in _GEMMA3_DEFAULTS if data.get(k) is None]
        data = {**data, **{k: _GEMMA3_DEFAULTS[k] for k in filled}}
        assumed_head += [f"{k} not given: {_GEMMA3_DEFAULTS[k]:,} assumed (Gemma 3's default)."
                         for k in filled]
    family = FAMILIES[key]
    r = _Reader(data)
    r.assumed.extend(assumed_head)
    r.raw("model_type", "architectures", "text_config")
    label = (name or _name(data) or f"Your {family.name} model")[:80]
    shapes, layout = _read_shapes(r, family, key)
    if r.problems:
        raise EngineError("This config.json cannot be read: " + " ".join(r.problems), "config")
    try:
        model = ModelSpec(id="config", name=label, family=family.name,
                          source="Shapes read from a config.json by the engine.",
                          confidence="medium", **shapes)
    except EngineError as exc:  # ModelSpec's own checks (kept as a guard after ours)
        raise EngineError(f"This config.json cannot be read: {exc.message}", "config") from None
    if model.params > MAX_PARAMS:
        raise EngineError(f"This config.json describes {model.params:.3g} parameters, beyond "
                          f"the {MAX_PARAMS:.0e} the engine takes.", "config")
    keys = set(data) | (top_keys - {"text_config"} if nested else set())
    unused = sorted(str(k)[:40] for k in keys if k not in r.read and k not in _NOT_SHAPES)
    if len(unused) > MAX_UNUSED_LISTED:
        unused = [*unused[:MAX_UNUSED_LISTED], f"and {len(unused) - MAX_UNUSED_LISTED:,} more"]
    left = (family.left_out,) if family.left_out else ()
    return ConfigModel(model, written, family.name, tuple(r.assumed), tuple(unused), left,
                       layout)


def _unknown_architecture(written: str) -> str:
    known = sorted({*FAMILIES, *_MODEL_TYPES})
    what = f"Architecture {written[:60]!r}" if written else "A config with no model_type"
    return (f"{what} is not one the engine can size: whether its MLP is gated, which layers "
            "carry biases and norms is written in each family's modelling code, not in its "
            "config.json, and the engine knows these model_type values: "
            f"{', '.join(known)}.")


def _name(data: Mapping[str, Any]) -> str:
    value = data.get("_name_or_path")
    if not isinstance(value, str):
        return ""
    tail = value.rstrip("/").rsplit("/", 1)[-1]
    return "".join(ch for ch in tail if ch.isprintable())[:60]


def _read_shapes(r: _Reader, f: Family, key: str) -> tuple[dict[str, Any], str]:
    """The ModelSpec keywords read, and which layers are MoE in words (see _moe)."""
    layers = r.size("layers", "num_hidden_layers", "n_layer", "num_layers")
    hidden = r.size("hidden", "hidden_size", "n_embd", "d_model")
    heads = r.size("heads", "num_attention_heads", "n_head")
    vocab = r.size("vocab", "vocab_size")
    kv_heads = _kv_heads(r, key, heads)
    head_dim = _head_dim(r, f, hidden, heads)
    ffn_default = 4 * hidden if not f.gated_mlp and hidden else None
    expert_width = 0
    if f.dense_ffn_key != "intermediate_size":  # Llama 4: experts as wide as intermediate_size
        expert_width = r.size("moe_ffn", "intermediate_size")
    ffn = r.size("ffn", f.dense_ffn_key, "intermediate_size", "n_inner", "ffn_hidden_size",
                 default=ffn_default, why="4 x hidden, the family's MLP width")
    context_default = 2048 if key in ("falcon", "gpt2") else 4096
    context = r.size("max_context", "max_position_embeddings", "n_positions",
                     "max_sequence_length", "seq_length", default=context_default,
                     why=f"{'the family default' if key else 'a guess'}; only limits the context")
    tied = r.flag("tie_word_embeddings", f.tied_default)
    if not r.has("tie_word_embeddings") and key:
        r.assumed.append(f"tie_word_embeddings not given: {str(tied).lower()} "
                         f"({f.name}'s default).")
    qkv_bias = r.flag("attention_bias", False) or f.qkv_bias
    linear_bias = any([r.flag("mlp_bias", False), r.flag("bias", False), f.linear_bias])
    if heads and kv_heads and not f.mla and heads % kv_heads:
        r.problems.append(f"num_key_value_heads: {kv_heads:,} does not divide "
                          f"num_attention_heads ({heads:,}); each KV head serves a whole "
                          "group of query heads.")
    shapes: dict[str, Any] = dict(
        layers=layers, hidden=hidden, ffn=ffn, heads=heads, kv_heads=kv_heads,
        head_dim=head_dim, vocab=vocab, max_context=context, tied_embeddings=tied,
        gated_mlp=f.gated_mlp, norm=f.norm, norms_per_layer=_norms(r, f, key),
        qkv_bias=qkv_bias, linear_bias=linear_bias,
        learned_positions=context if f.learned_positions else 0,
    )
    moe, layout = _moe(r, f, layers, expert_width or ffn)
    shapes.update(moe)
    if f.mla:
        shapes.update(_mla(r, heads))
    shapes.update(_window(r, f, layers))
    return shapes, layout


def _kv_heads(r: _Reader, key: str, heads: int) -> int:
    if key == "falcon":
        if r.flag("new_decoder_architecture", False):
            return r.size("kv_heads", "num_kv_heads", default=heads or 1, why="as many as heads")
        if r.flag("multi_query", True):
            r.assumed.append("Multi-query attention (multi_query): one KV head.")
            return 1
        return heads
    why = "as many as query heads: multi-head attention, as in the family's code"
    return r.size("kv_heads", "num_key_value_heads", "num_kv_heads",
                  default=heads or 1, why=why if key else "multi-head attention")


def _head_dim(r: _Reader, f: Family, hidden: int, heads: int) -> int:
    if f.mla:
        nope = r.size("qk_nope_head_dim", "qk_nope_head_dim")
        rope = r.size("qk_rope_head_dim", "qk_rope_head_dim")
        return nope + rope if nope and rope else 1
    if r.has("head_dim") or r.has("kv_channels"):
        return r.size("head_dim", "head_dim", "kv_channels")
    r.raw("head_dim")
    if hidden and heads:
        if hidden % heads:
            r.problems.append(f"hidden_size: {hidden:,} is not a multiple of "
                              f"num_attention_heads ({heads:,}), and no head_dim is given.")
            return 1
        return hidden // heads
    return 1


def _norms(r: _Reader, f: Family, key: str) -> int:
    if key == "falcon" and (r.flag("new_decoder_architecture", False)
                            or not r.flag("parallel_attn", True)):
        return 2
    return f.norms_per_layer


_EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")
_TOP_K_KEYS = ("num_experts_per_tok", "experts_per_token", "num_experts_per_token")
_MOE_KEYS = ("moe_intermediate_size", "n_shared_experts", "shared_expert_intermediate_size",
             "first_k_dense_replace", "moe_layer_freq", "decoder_sparse_step",
             "interleave_moe_layer_step", "mlp_only_layers", "moe_layers", *_TOP_K_KEYS)


def _moe(r: _Reader, f: Family, layers: int, ffn: int) -> tuple[dict[str, Any], str]:
    """The experts, read from the keys in any family: their count, the experts per token,
    each expert's width, the shared experts and which layers are MoE (as a count of dense
    layers, and in words when they are not simply the first ones)."""
    experts = r.size("experts", *_EXPERT_KEYS, required=False)
    if experts <= 1:
        r.raw(*_MOE_KEYS)
        return {}, ""
    mixtral = f.moe == "mixtral" or not f.moe
    top_k = r.size("experts_per_token", *_TOP_K_KEYS,
                   default=2 if f.moe == "mixtral" and not f.shared_experts else None,
                   why="Mixtral's 2")
    if mixtral and not r.has("moe_intermediate_size"):
        r.raw("moe_intermediate_size")
        moe_ffn = ffn  # each expert is a whole MLP of the family's width
    else:
        moe_ffn = r.size("moe_ffn", "moe_intermediate_size")
    out: dict[str, Any] = dict(experts=experts, experts_per_token=top_k, moe_ffn=moe_ffn)
    shared = _shared_experts(r, f, moe_ffn)
    if shared:
        out["shared_experts"] = shared
    moe_layers = _moe_layers(r, layers)
    out["dense_layers"] = layers - len(moe_layers) if layers else 0
    if layers and not moe_layers:
        r.problems.append("The MoE layer keys leave no layer with experts.")
    out["router_bias"] = f.router_bias or r.data.get("topk_method") == "noaux_tc"
    r.raw("topk_method")
    if r.has("num_nextn_predict_layers"):
        r.raw("num_nextn_predict_layers")
        r.assumed.append("The multi-token-prediction module (num_nextn_predict_layers) is "
                         "left out, as in the published parameter count.")
    first = set(range(out["dense_layers"], layers))
    layout = "" if not layers or moe_layers == first else (
        f"{len(moe_layers):,} of {layers:,} layers have experts (layers "
        f"{_ranges(sorted(moe_layers))}, counted from 0); the others are dense")
    return out, layout


def _shared_experts(r: _Reader, f: Family, moe_ffn: int) -> int:
    """Shared experts, as a count of experts of ``moe_ffn`` (the same weights)."""
    if r.has("n_shared_experts"):
        return r.size("shared_experts", "n_shared_experts")
    width = r.size("moe_ffn", "shared_expert_intermediate_size", default=0)
    if width and moe_ffn:
        if width % moe_ffn:
            r.problems.append(f"shared_expert_intermediate_size: {width:,} is not a multiple "
                              f"of moe_intermediate_size ({moe_ffn:,}); not supported.")
            return 0
        r.assumed.append(f"The shared expert of width {width:,} is counted as "
                         f"{width // moe_ffn} experts of {moe_ffn:,} (the same weights).")
        return width // moe_ffn
    return f.shared_experts


def _layer_list(r: _Reader, key: str, layers: int) -> set[int] | None:
    """A list of layer indices under ``key`` (None when absent); a bad one is a problem."""
    found = r.raw(key)
    if found is None:
        return None
    value = found[1]
    if not isinstance(value, list) or len(value) > BOUNDS["layers"][1] or not all(
            isinstance(i, int) and not isinstance(i, bool) and 0 <= i < max(layers, 1)
            for i in value):
        r.problems.append(f"{key}: must be a list of layer numbers from 0 to "
                          f"{max(layers - 1, 0):,}, not {_shown(value)}.")
        return set()
    return set(value)


def _moe_layers(r: _Reader, layers: int) -> set[int]:
    """The layers (from 0) that have experts: every one unless the config's keys say
    otherwise, each key as its family's code reads it (DeepSeek's first_k_dense_replace and
    moe_layer_freq, Qwen's decoder_sparse_step and mlp_only_layers, Llama 4's
    interleave_moe_layer_step or moe_layers)."""
    explicit = _layer_list(r, "moe_layers", layers)
    if explicit is not None:
        r.raw("interleave_moe_layer_step")
        return explicit
    first_dense = r.size("dense_layers", "first_k_dense_replace", default=0)
    freq = r.size("dense_layers", "moe_layer_freq", default=1) or 1
    sparse_step = r.size("dense_layers", "decoder_sparse_step", default=1) or 1
    interleave = r.size("dense_layers", "interleave_moe_layer_step", default=1) or 1
    dense_only = _layer_list(r, "mlp_only_layers", layers) or set()
    return {i for i in range(layers)
            if i >= first_dense and i % freq == 0 and (i + 1) % sparse_step == 0
            and (i + 1) % interleave == 0 and i not in dense_only}


def _ranges(indices: list[int]) -> str:
    """0, 1, 2, 5 -> '0-2, 5'; at most a few runs spelled out."""
    runs: list[tuple[int, int]] = []
    for i in indices:
        if runs and i == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    if len(runs) > 4:
        step = indices[1] - indices[0] if len(indices) > 1 else 1
        return f"{indices[0]}, {indices[1]}, ... {indices[-1]}, every {step}"
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def _mla(r: _Reader, heads: int) -> dict[str, Any]:
    if not r.has("q_lora_rank"):
        r.raw("q_lora_rank")
        r.problems.append("q_lora_rank: missing or null (a query without its low-rank "
                          "projection, as in DeepSeek-V2-Lite) is not supported.")
        return {}
    return dict(
        attention="mla", kv_heads=heads or 1,
        q_lora_rank=r.size("q_lora_rank", "q_lora_rank"),
        kv_lora_rank=r.size("kv_lora_rank", "kv_lora_rank"),
        qk_nope_head_dim=r.size("qk_nope_head_dim", "qk_nope_head_dim"),
        qk_rope_head_dim=r.size("qk_rope_head_dim", "qk_rope_head_dim"),
        v_head_dim=r.size("v_head_dim", "v_head_dim"),
    )


def _window(r: _Reader, f: Family, layers: int) -> dict[str, Any]:
    """The sliding window and the layers that use it, where the family's code applies it."""
    found = r.raw("sliding_window")
    r.raw("use_sliding_window", "max_window_layers", "sliding_window_pattern", "layer_types",
          "sliding_window_size")
    types = r.data.get("layer_types")
    listed = isinstance(types, list) and len(types) == layers
    if found is None or not (f.window or listed):
        if found is not None:
            r.assumed.append(f"sliding_window {_shown(found[1])} is not applied: "
                             f"{f.name}'s code attends to the whole context.")
        return {}
    window = r.size("sliding_window", "sliding_window")
    if not window or not layers:
        return {}
    if listed:
        assert isinstance(types, list)
        local = sum(1 for t in types if t == "sliding_attention")
    elif f.window == "qwen":
        if not r.flag("use_sliding_window", False):
            return {}
        local = layers - min(layers, r.size("layers", "max_window_layers", default=layers))
    elif f.window == "alternate":
        local = (layers + 1) // 2
    elif f.window == "pattern":
        pattern = r.size("layers", "sliding_window_pattern", default=6, why="Gemma 3's 5 local "
                         "layers to 1 global")
        local = layers - layers // pattern
    else:
        local = layers
    if not local:
        return {}
    return dict(sliding_window=window, local_layers=0 if local == layers else local)


def config_from_model(m: ModelSpec) -> dict[str, Any]:
    """A catalogue model written out as a Hugging Face-style config.json (the keys its family's
    config uses), so that :func:`model_from_config` reads the same shapes back."""
    key = _family_of(m)
    out: dict[str, Any] = {
        "model_type": key,
        "num_hidden_layers": m.layers,
        "hidden_size": m.hidden,
        "intermediate_size": m.ffn,
        "num_attention_heads": m.heads,
        "num_key_value_heads": m.kv_heads,
        "head_dim": m.head_dim,
        "vocab_size": m.vocab,
        "max_position_embeddings": m.max_context,
        "tie_word_embeddings": m.tied_embeddings,
        "_name_or_path": m.name,
    }
    if m.attention == "mla":
        del out["head_dim"]
        out.update(q_lora_rank=m.q_lora_rank, kv_lora_rank=m.kv_lora_rank,
                   qk_nope_head_dim=m.qk_nope_head_dim, qk_rope_head_dim=m.qk_rope_head_dim,
                   v_head_dim=m.v_head_dim)
    if m.is_moe:
        if key == "mixtral":
            out.update(num_local_experts=m.experts, num_experts_per_tok=m.experts_per_token)
        else:
            out.update(n_routed_experts=m.experts, num_experts_per_tok=m.experts_per_token,
                       moe_intermediate_size=m.moe_ffn, n_shared_experts=m.shared_experts,
                       first_k_dense_replace=m.dense_layers,
                       topk_method="noaux_tc" if m.router_bias else "greedy")
    if m.sliding_window:
        out["sliding_window"] = m.sliding_window
    if key == "qwen2":
        out["use_sliding_window"] = False
    return out


def _family_of(m: ModelSpec) -> str:
    if m.attention == "mla":
        return "deepseek_v3"
    if m.is_moe:
        return "mixtral"
    if m.norms_per_layer == 4:
        return "gemma2"
    if m.learned_positions:
        return "gpt2"
    if m.qkv_bias:
        return "qwen2"
    if m.sliding_window:
        return "mistral"
    return "llama"
