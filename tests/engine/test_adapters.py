"""LoRA and QLoRA memory (engine.numbers.adapters) against the papers' own figures."""

from __future__ import annotations

import pytest

from engine.lesson.figures.prose import get_figure
from engine.lesson.tables.registry import get_table
from engine.numbers import adapters
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.catalog.hf_config import model_from_config
from engine.numbers.errors import EngineError
from engine.numbers.memory import training_memory

# LLaMA 65B's shapes (Touvron et al. 2023, 'LLaMA', Table 2: 80 layers, dimension 8,192, 64
# heads; FFN 22,016 and a 32,000-token vocabulary as in the released params.json).
LLAMA_65B = model_from_config({
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 8192,
    "intermediate_size": 22016, "num_attention_heads": 64, "num_hidden_layers": 80,
    "vocab_size": 32000, "max_position_embeddings": 2048, "tie_word_embeddings": False,
}, name="LLaMA 65B").model


def test_nf4_with_double_quantisation_is_4_127_bits() -> None:
    # Dettmers et al. 2023, 'QLoRA', section 3: constants drop from 32/64 = 0.5 bits per
    # parameter to 8/64 + 32/(64 x 256) = 0.127 bits.
    assert abs(adapters.NF4_DQ_BITS_PER_PARAM - 4.127) < 5e-4
    assert get_figure("nf4_bits")() == "4.127 bits"


def test_gpt3_adapters_match_the_lora_paper() -> None:
    # Hu et al. 2021, 'LoRA', Table 4: GPT-3 175B with LoRA on W_q and W_v has 4.7M
    # trainable parameters (r = 1) and 37.7M (r = 8).
    assert adapters.adapter_params(get_model("gpt-3-175b"), 1, "attention-qv") == pytest.approx(4.7e6,
                                                                                      rel=0.01)
    assert adapters.adapter_params(get_model("gpt-3-175b"), 8, "attention-qv") == pytest.approx(37.7e6,
                                                                                      rel=0.01)


def test_gpt3_lora_holds_the_frozen_weights_in_350_GB() -> None:
    # Hu et al. 2021, section 4.2: 'we reduce VRAM consumption during training from 1.2TB
    # to 350GB' for GPT-3 175B; the frozen bf16 weights are that 350 GB.
    mem = adapters.adapter_memory(get_model("gpt-3-175b"), get_hardware("h100-sxm"), method="lora", rank=4,
                                  targets="attention-qv", seq_len=2048)
    state = mem.parts["frozen_weights"] + mem.parts["adapter_weights"] + \
        mem.parts["adapter_gradients"] + mem.parts["adapter_optimizer_states"]
    assert state == pytest.approx(350e9, rel=0.01)
    assert not mem.fits


def test_qlora_fine_tunes_65b_on_one_48_GB_gpu() -> None:
    # Dettmers et al. 2023, abstract: QLoRA 'reduces the average memory requirements of
    # finetuning a 65B parameter model from >780GB of GPU memory to <48GB'; Guanaco 65B used
    # rank 64 on every linear layer (section 5.1) and sequences of about 512 tokens.
    mem = adapters.adapter_memory(LLAMA_65B, get_hardware("a100-80gb"), method="qlora", rank=64,
                                  seq_len=512)
    assert mem.targets == "all-linear"
    assert 40e9 < mem.per_gpu_bytes < 48e9
    full = training_memory(LLAMA_65B, get_hardware("a100-80gb"), recompute="full", seq_len=512)
    assert full.per_gpu_bytes > 780e9


def test_qlora_stores_the_base_at_a_quarter_of_bf16_and_lora_does_not() -> None:
    lora = adapters.frozen_base_bytes(get_model("llama-3.1-70b"), "lora")
    qlora = adapters.frozen_base_bytes(get_model("llama-3.1-70b"), "qlora")
    assert lora == pytest.approx(70.55e9 * 2, rel=0.01)
    # The layers' matrices in 4.127 bits; embeddings and head (2 x 128,256 x 8,192) and the
    # norms (about a million numbers) in bf16.
    bf16_params = 2 * 128_256 * 8_192
    quantised = lora / 2 - bf16_params
    assert qlora == pytest.approx(quantised * 4.127 / 8 + bf16_params * 2, rel=1e-3)


def test_one_h100_fine_tunes_8b_with_adapters_but_not_fully() -> None:
    rows = get_table("finetune_memory")()
    assert rows.count("fits") == 3 and rows.count(">no<") == 1
    lora = adapters.adapter_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), method="lora")
    qlora = adapters.adapter_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), method="qlora")
    assert lora.fits and qlora.fits and qlora.per_gpu_bytes < lora.per_gpu_bytes
    assert lora.trainable_params == qlora.trainable_params < 0.01 * lora.model.params
    assert get_figure("finetune_total")("llama-3.1-8b", "lora") == "19.14 GB"
    # Full training recomputes all activations here (131.1 GB), where steps 3 and 4 keep
    # selective recomputation's: the caption gives their total too (128.5 GB of state +
    # 18.25 GB of activations + 1.5 GB overhead = 148.2 GB), so the two figures are one story.
    assert ">131.1 GB<" in rows
    assert "full training with the selective recomputation the launch above used: 148.2 GB" in rows


def test_bad_inputs_are_refused_with_a_message() -> None:
    # Checked where the inputs enter: the figures' keywords.
    with pytest.raises(EngineError, match="rank"):
        get_figure("lora_params")("llama-3.1-8b", 0)
    with pytest.raises(EngineError, match="method"):
        get_figure("finetune_total")("llama-3.1-8b", "full")
    with pytest.raises(EngineError, match="dense"):
        adapters.adapter_params(get_model("mixtral-8x7b"))
