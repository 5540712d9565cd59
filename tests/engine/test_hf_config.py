"""A model from its config.json: published configs give the published parameter counts, the
catalogue's models round-trip, and hostile configs get clear messages (never a crash)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.numbers.catalog import list_models
from engine.numbers.catalog.hf_config import (
    FAMILIES,
    MAX_CONFIG_CHARS,
    config_from_model,
    model_from_config,
    parse_text,
)
from engine.numbers.errors import EngineError
from engine.numbers.memory import kv_cache_bytes_per_token

CONFIGS = Path(__file__).resolve().parent.parent / "fixtures" / "configs"


def read(name: str) -> str:
    return (CONFIGS / f"{name}.json").read_text(encoding="utf-8")


# (config, published total, published active or 0, tolerance as a share, source)
PUBLISHED = [
    ("Llama-3.1-8B", 8_030_261_248, 0, 0.005,
     "safetensors count of meta-llama/Llama-3.1-8B (the catalogue's published_params)"),
    ("Mixtral-8x7B-v0.1", 46_702_792_704, 12.9e9, 0.005,
     "safetensors count; Mixtral of Experts (arXiv 2401.04088): 13B active (12.9 B)"),
    ("Qwen2.5-7B", 7_615_616_512, 0, 0.005, "Qwen2.5-7B model card: 7.61B"),
    ("Qwen3-30B-A3B", 30.5e9, 3.3e9, 0.005,
     "Qwen3-30B-A3B model card: 30.5B total, 3.3B activated"),
    ("gemma-2-9b", 9_241_705_984, 0, 0.005, "safetensors count of google/gemma-2-9b"),
    ("DeepSeek-V3", 671e9, 37e9, 0.005,
     "DeepSeek-V3 README: 671B total (without the 14B MTP module), 37B activated"),
    ("Phi-3-mini-4k-instruct", 3.82e9, 0, 0.005,
     "Hugging Face page of microsoft/Phi-3-mini-4k-instruct: 3.82B params (safetensors)"),
    ("pythia-1.4b", 1_414_647_808, 0, 0.005,
     "EleutherAI/pythia README, model table: 1,414,647,808 total parameters"),
    ("falcon-7b", 6.92e9, 0, 0.005,
     "Hugging Face page of tiiuae/falcon-7b: 6.92B params (safetensors); the card's '7B' rounds it"),
    ("gemma-3-1b-it", 1.0e9, 0, 0.005,
     "Gemma 3 Technical Report (arXiv 2503.19786) Table 1, 1B: 302M embedding + 698M "
     "non-embedding parameters"),
]


@pytest.mark.parametrize(("name", "total", "active", "tol", "source"), PUBLISHED)
def test_published_counts(name: str, total: float, active: float, tol: float, source: str
                          ) -> None:
    m = model_from_config(read(name)).model
    assert m.params == pytest.approx(total, rel=tol), source
    if active:
        # Published active counts are rounded to 2 figures (37B, 3.3B): within 2 %.
        assert m.active_params == pytest.approx(active, rel=0.02), source
    else:
        assert m.active_params == m.params


def test_shapes_read() -> None:
    falcon = model_from_config(read("falcon-7b"))
    assert falcon.model.kv_heads == 1 and falcon.model.norms_per_layer == 1
    assert kv_cache_bytes_per_token(falcon.model) == 2 * 32 * 1 * 64 * 2  # multi-query
    assert any("multi_query" in a for a in falcon.assumed)
    ds = model_from_config(read("DeepSeek-V3")).model
    assert ds.attention == "mla" and ds.dense_layers == 3 and ds.shared_experts == 1
    assert kv_cache_bytes_per_token(ds) == (512 + 64) * 61 * 2  # the latent, not full K and V
    gemma = model_from_config(read("gemma-2-9b")).model
    assert (gemma.sliding_window, gemma.local_layers) == (4096, 21)
    qwen = model_from_config(read("Qwen2.5-7B")).model
    assert qwen.qkv_bias and not qwen.sliding_window  # use_sliding_window is false
    moe = model_from_config(read("Qwen3-30B-A3B"))
    assert (moe.model.experts, moe.model.experts_per_token, moe.model.moe_ffn) == (128, 8, 768)
    assert moe.left_out  # the query/key norms are said to be left out
    phi = model_from_config(read("Phi-3-mini-4k-instruct"))
    assert phi.model.name == "Phi-3-mini-4k-instruct" and not phi.model.sliding_window
    assert any("sliding_window 2047" in a for a in phi.assumed)


def test_unused_fields_are_listed() -> None:
    ds = model_from_config(read("DeepSeek-V3"))
    assert "routed_scaling_factor" in ds.unused
    assert "torch_dtype" not in ds.unused  # not a shape: not worth listing


@pytest.mark.parametrize("model", list_models(), ids=lambda m: m.id)
def test_catalogue_round_trip(model: object) -> None:
    from engine.numbers.catalog import ModelSpec

    assert isinstance(model, ModelSpec)
    text = json.dumps(config_from_model(model))
    back = model_from_config(text).model
    assert (back.params, back.active_params) == (model.params, model.active_params)
    assert kv_cache_bytes_per_token(back) == kv_cache_bytes_per_token(model)
    assert (back.sliding_window, back.local_layers) == (model.sliding_window, model.local_layers)
    assert back.max_context == model.max_context


def test_gemma3_text_config_uses_family_defaults() -> None:
    config = {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
              "text_config": {"model_type": "gemma3_text", "hidden_size": 2560,
                              "intermediate_size": 10240, "num_hidden_layers": 34,
                              "sliding_window": 1024},
              "vision_config": {"hidden_size": 1152}}
    c = model_from_config(config)
    assert (c.model.heads, c.model.kv_heads, c.model.head_dim) == (8, 4, 256)
    assert (c.model.sliding_window, c.model.local_layers) == (1024, 34 - 34 // 6)
    assert any("text_config" in a for a in c.assumed)
    assert any(a.startswith("num_attention_heads not given: 8") for a in c.assumed)
    # Gemma 3 4B: 3.88 B parameters with its 0.42 B vision tower (Gemma 3 report, arXiv
    # 2503.19786, Table 1: 675 M embedding + 3,209 M non-embedding for the language model).
    assert c.model.params == pytest.approx(675e6 + 3209e6, rel=0.005)


def test_unknown_architecture_is_refused_by_name_never_guessed() -> None:
    said = message({"model_type": "mystery", "hidden_size": 1024, "num_hidden_layers": 4,
                    "num_attention_heads": 8, "intermediate_size": 4096, "vocab_size": 1000,
                    "num_experts": 8})
    assert "'mystery' is not one the engine can size" in said
    assert "gated" in said and "llama" in said
    assert "no model_type" in message({"hidden_size": 1024})


def message(config: object) -> str:
    with pytest.raises(EngineError) as info:
        model_from_config(config)
    assert info.value.field == "config"
    return info.value.message


BASE = {"model_type": "llama", "hidden_size": 1024, "num_hidden_layers": 4,
        "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 4096,
        "vocab_size": 1000}


@pytest.mark.parametrize(("change", "said"), [
    ({"hidden_size": None}, "hidden_size: missing"),
    ({"num_hidden_layers": "32"}, "num_hidden_layers: must be a whole number"),
    ({"num_hidden_layers": 3.5}, "must be a whole number"),
    ({"num_hidden_layers": True}, "must be a whole number"),
    ({"vocab_size": -5}, "vocab_size: -5 is too small"),
    ({"intermediate_size": 10**12}, "absurdly large"),
    ({"num_key_value_heads": 3}, "does not divide num_attention_heads"),
    ({"hidden_size": 1000, "num_attention_heads": 7}, "not a multiple of num_attention_heads"),
    ({"tie_word_embeddings": "yes"}, "tie_word_embeddings: must be true or false"),
    ({"num_hidden_layers": {"a": 1}}, "must be a whole number, not an object"),
])
def test_bad_fields_named(change: dict[str, object], said: str) -> None:
    config = {k: v for k, v in {**BASE, **change}.items() if v is not None}
    assert said in message(config)


def test_every_problem_at_once() -> None:
    text = message({"model_type": "llama", "hidden_size": "big", "vocab_size": 0})
    for key in ("hidden_size", "vocab_size", "num_hidden_layers", "num_attention_heads",
                "intermediate_size"):
        assert key in text


@pytest.mark.parametrize(("text", "said"), [
    ("[1, 2, 3]", "must be a JSON object"),
    ('"a string"', "must be a JSON object"),
    ("{not json", "not valid JSON (line 1"),
    ("", "empty"),
    ('{"hidden_size": NaN}', "NaN"),
    ("[" * 20_000 + "]" * 20_000, "nests more than"),
    ('{"a": ' * 5_000 + "1" + "}" * 5_000, "nests more than"),
    (" " * (MAX_CONFIG_CHARS + 1), "characters long"),
    (b"\xff\xfe", "not UTF-8"),
], ids=lambda v: str(v)[:12])
def test_hostile_text(text: object, said: str) -> None:
    assert said in message(text)


def test_fifty_megabytes_refused_before_parsing() -> None:
    with pytest.raises(EngineError, match="50,000,000 characters long"):
        parse_text("{" + " " * (50_000_000 - 2) + "}")


def test_brackets_inside_strings_do_not_count() -> None:
    data = parse_text(json.dumps({"note": "[" * 1000, **BASE}))
    assert data["note"] == "[" * 1000


def test_not_text() -> None:
    assert "text of a config.json" in message(12)
    assert "text of a config.json" in message(None)


def test_deepseek_v2_lite_without_q_lora_is_refused_clearly() -> None:
    config = json.loads(read("DeepSeek-V3"))
    config["q_lora_rank"] = None
    assert "q_lora_rank" in message(config)


def test_huge_model_refused() -> None:
    big = {**BASE, "hidden_size": 1_048_576, "num_hidden_layers": 10_000,
           "num_attention_heads": 8192, "num_key_value_heads": 8192,
           "intermediate_size": 4_000_000}
    assert "beyond" in message(big)


def test_a_long_list_of_unused_fields_is_cut() -> None:
    c = model_from_config({**BASE, **{f"extra_{i:03}": i for i in range(500)}})
    assert len(c.unused) == 31 and c.unused[-1] == "and 470 more"


_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
                    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3),
                                                                        st.integers(), max_size=2))
_KEYS = ["num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
         "intermediate_size", "vocab_size", "head_dim", "max_position_embeddings",
         "tie_word_embeddings", "sliding_window", "num_local_experts", "num_experts",
         "num_experts_per_tok", "moe_intermediate_size", "n_routed_experts", "q_lora_rank",
         "kv_lora_rank", "first_k_dense_replace", "layer_types", "text_config", "multi_query"]


@settings(max_examples=300, deadline=None)
@given(model_type=st.sampled_from([*sorted(FAMILIES), "mystery", ""]),
       changes=st.dictionaries(st.sampled_from(_KEYS), _VALUES, max_size=6))
def test_any_config_is_a_model_or_a_message(model_type: str, changes: dict[str, object]
                                            ) -> None:
    config = {**BASE, "model_type": model_type, **changes}
    try:
        c = model_from_config(config)
    except EngineError as error:
        assert error.field == "config" and error.message
        return
    assert 0 < c.model.active_params <= c.model.params <= 10**15
    assert kv_cache_bytes_per_token(c.model) > 0


def test_numbers_of_thousands_of_digits_are_refused_by_their_key_before_conversion() -> None:
    huge = "9" * 5000  # past Python's 4,300-digit limit on converting text to int
    said = message('{"model_type": "llama", "num_hidden_layers": ' + huge + ', "hidden_size": '
                   '64, "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128,'
                   ' "unread_key": -' + huge + '}')
    assert "num_hidden_layers: a number of 5,000 digits is absurdly large" in said
    # A parsed object holding one (a caller's dict) is refused the same way.
    said = message({"model_type": "llama", "num_hidden_layers": 10**5000, "hidden_size": 64,
                    "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128})
    assert "num_hidden_layers: a number of 5,001 digits" in said  # 10**5000 has 5,001
