"""The config library: each real config.json read by the config reader gives the model card's
counts (total within 2 %, active within 5 %), and the CLI takes the library's ids."""

import json

import pytest

from engine.cli import main
from engine.lesson.plans.config_model import active_params_without_input_embedding
from engine.numbers.catalog.config_library import (
    library_entries,
    library_entry,
    library_ids,
    library_model,
)
from engine.numbers.errors import EngineError

# Each id with the model card's figures, written here as well as in the data file so that a
# change to either shows: (total, active or 0, where the card says so).
PUBLISHED = {
    "meta-llama/Llama-3.1-8B": (8.03e9, 0, "HF model page, safetensors: 8.03B"),
    "meta-llama/Llama-3.2-3B": (3.21e9, 0, "Llama 3.2 model card: 3.21B"),
    "meta-llama/Llama-3.2-1B": (1.23e9, 0, "Llama 3.2 model card: 1.23B"),
    "meta-llama/Llama-3.1-70B": (70.6e9, 0, "HF model page, safetensors: 70.6B"),
    "meta-llama/Llama-2-7b-hf": (6.74e9, 0, "HF model page, safetensors: 6.74B"),
    "meta-llama/Llama-2-13b-hf": (13.0e9, 0, "HF model page, safetensors: 13B"),
    "meta-llama/Llama-2-70b-hf": (69.0e9, 0, "HF model page, safetensors: 69B"),
    "meta-llama/Llama-4-Scout-17B-16E": (109e9, 17e9, "Llama 4 model card: 109B total, 17B active"),
    "codellama/CodeLlama-34b-hf": (33.7e9, 0, "HF model page, safetensors: 33.7B"),
    "TinyLlama/TinyLlama-1.1B-Chat-v1.0": (1.1e9, 0, "TinyLlama model card: 1.1B"),
    "Qwen/Qwen2.5-3B": (3.09e9, 0, "Qwen2.5-3B model card: 3.09B"),
    "Qwen/Qwen2.5-7B": (7.61e9, 0, "Qwen2.5-7B model card: 7.61B"),
    "Qwen/Qwen2.5-14B": (14.7e9, 0, "Qwen2.5-14B model card: 14.7B"),
    "Qwen/Qwen2.5-32B": (32.5e9, 0, "Qwen2.5-32B model card: 32.5B"),
    "Qwen/Qwen2-0.5B": (0.49e9, 0, "Qwen2 model card: 0.49B"),
    "Qwen/Qwen2-1.5B": (1.54e9, 0, "Qwen2 model card: 1.54B"),
    "Qwen/Qwen2-7B": (7.62e9, 0, "HF model page, safetensors: 7.62B"),
    "Qwen/Qwen3-0.6B": (0.6e9, 0, "Qwen3-0.6B model card: 0.6B"),
    "Qwen/Qwen3-1.7B": (1.7e9, 0, "Qwen3-1.7B model card: 1.7B"),
    "Qwen/Qwen3-4B": (4.0e9, 0, "Qwen3-4B model card: 4.0B"),
    "Qwen/Qwen3-8B": (8.2e9, 0, "Qwen3-8B model card: 8.2B"),
    "Qwen/Qwen3-14B": (14.8e9, 0, "Qwen3-14B model card: 14.8B"),
    "Qwen/Qwen3-32B": (32.8e9, 0, "Qwen3-32B model card: 32.8B"),
    "Qwen/Qwen3-30B-A3B": (30.5e9, 3.3e9, "Qwen3-30B-A3B model card: 30.5B, 3.3B activated"),
    "Qwen/Qwen1.5-MoE-A2.7B": (14.3e9, 2.7e9, "Qwen1.5-MoE-A2.7B card: 14.3B, 2.7B activated"),
    "mistralai/Mistral-7B-v0.3": (7.25e9, 0, "HF model page, safetensors: 7.25B"),
    "mistralai/Mixtral-8x7B-v0.1": (46.7e9, 12.9e9, "Mistral AI, Mixtral of experts: 46.7B, 12.9B"),
    "microsoft/Phi-3.5-mini-instruct": (3.8e9, 0, "Phi-3.5-mini model card: 3.8B"),
    "microsoft/Phi-4-mini-instruct": (3.8e9, 0, "Phi-4-mini model card: 3.8B"),
    "google/gemma-2b": (2.51e9, 0, "HF model page, safetensors: 2.51B"),
    "google/gemma-2-2b": (2.61e9, 0, "HF model page, safetensors: 2.61B"),
    "google/gemma-2-9b": (9.24e9, 0, "HF model page, safetensors: 9.24B"),
    "google/gemma-2-27b": (27.2e9, 0, "HF model page, safetensors: 27.2B"),
    "google/gemma-3-1b-it": (1.0e9, 0, "Gemma 3 report, arXiv 2503.19786, Table 1: 302M + 698M"),
    "deepseek-ai/DeepSeek-V3": (671e9, 37e9, "DeepSeek-V3 report, arXiv 2412.19437: 671B, 37B"),
    "deepseek-ai/deepseek-moe-16b-base": (16.4e9, 2.8e9, "DeepSeekMoE, arXiv 2401.06066: 16.4B, 2.8B"),
    "openai/gpt-oss-20b": (20.91e9, 3.61e9, "gpt-oss model card, Table 1: 20.91B, 3.61B active"),
    "bigcode/starcoder2-7b": (7.17e9, 0, "HF model page, safetensors: 7.17B"),
    "HuggingFaceTB/SmolLM2-135M": (135e6, 0, "SmolLM2 model card: 135M"),
    "HuggingFaceTB/SmolLM2-360M": (362e6, 0, "HF model page, safetensors: 362M"),
    "allenai/OLMo-2-1124-7B": (7.30e9, 0, "HF model page, safetensors: 7.3B"),
    "allenai/OLMo-2-1124-13B": (13.7e9, 0, "HF model page, safetensors: 13.7B"),
    "allenai/OLMo-2-0325-32B": (32.2e9, 0, "HF model page, safetensors: 32.2B"),
}


def test_the_library_holds_at_least_40_real_configs_with_their_provenance() -> None:
    assert len(library_ids()) >= 40
    assert set(library_ids()) == set(PUBLISHED)
    families = {library_model(i).family for i in library_ids()}
    assert {"Llama", "Llama 4", "Qwen3", "Qwen3 MoE", "Mistral", "Mixtral", "Gemma 2", "Gemma 3",
            "DeepSeek-V3", "Phi-3", "gpt-oss", "OLMo 2"} <= families
    for e in library_entries():
        assert e.repo.count("/") == 1 and e.path and len(e.commit) == 40, e.id
        assert e.params_source


@pytest.mark.parametrize("model_id", sorted(PUBLISHED))
def test_each_library_model_gives_its_published_counts(model_id: str) -> None:
    total, active, _source = PUBLISHED[model_id]
    entry = library_entry(model_id)
    assert (entry.published_params, entry.published_active_params) == (total, active)
    m = library_model(model_id).model
    assert m.params == pytest.approx(total, rel=0.02)
    if active:
        counted = (active_params_without_input_embedding(m) if entry.active_basis
                   else m.active_params)
        assert counted == pytest.approx(active, rel=0.05)


def test_moe_layouts_are_read_from_the_keys() -> None:
    v3 = library_model("deepseek-ai/DeepSeek-V3")
    assert (v3.model.experts, v3.model.shared_experts, v3.model.dense_layers) == (256, 1, 3)
    assert v3.moe_layout == ""  # the first three dense, said as such
    oss = library_model("openai/gpt-oss-20b").model
    assert (oss.experts, oss.experts_per_token, oss.moe_ffn) == (32, 4, 2880)
    assert oss.router_bias and oss.linear_bias and oss.qkv_bias
    assert (oss.sliding_window, oss.local_layers) == (128, 12)  # layer_types: every other
    scout = library_model("meta-llama/Llama-4-Scout-17B-16E")
    assert (scout.model.experts, scout.model.shared_experts, scout.model.ffn) == (16, 1, 16384)
    assert scout.model.moe_ffn == 8192


def test_interleaved_moe_layers_are_counted_and_said() -> None:
    from engine.lesson.plans.config_model import shape_rows
    from engine.numbers.catalog.hf_config import model_from_config

    # Llama 4 Maverick's arrangement: experts in every second layer.
    config = {**library_entry("meta-llama/Llama-4-Scout-17B-16E").config}
    text = {**config["text_config"], "interleave_moe_layer_step": 2, "num_local_experts": 128}
    c = model_from_config({**config, "text_config": text})
    assert c.model.dense_layers == 24
    assert "24 of 48 layers have experts (layers 1, 3, ... 47, every 2" in c.moe_layout
    assert any("24 of 48 layers" in v for _, v in shape_rows(c))
    qwen = {**library_entry("Qwen/Qwen3-30B-A3B").config, "decoder_sparse_step": 2,
            "mlp_only_layers": [1]}
    assert model_from_config(qwen).model.dense_layers == 25


def test_cli_lists_inspects_and_plans_library_models(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    listed = capsys.readouterr().out
    assert "openai/gpt-oss-20b" in listed and "20.9 billion" in listed
    assert main(["inspect", "openai/gpt-oss-20b", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["params"] == pytest.approx(20.91e9, rel=0.02)
    assert data["active_params_without_input_embedding"] == pytest.approx(3.61e9, rel=0.05)
    assert main(["plan", "--model", "Qwen/Qwen3-8B", "--hardware", "h100-sxm", "--gpus", "1",
                 "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["model"]["name"] == "Qwen/Qwen3-8B"
    assert main(["plan", "--model", "No/Such-Model", "--hardware", "h100-sxm"]) == 2
    assert "No/Such-Model" in capsys.readouterr().err


def test_an_unknown_id_is_refused_on_its_field() -> None:
    with pytest.raises(EngineError) as info:
        library_entry("No/Such")
    assert info.value.field == "model"
