"""Answers the engine once got wrong, each checked against a value worked by hand
from a published figure (source beside the number)."""

from __future__ import annotations

import pytest

from engine.lesson.cluster import launch_training, new_cluster
from engine.numbers import architecture
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.compute import (
    causal_attention_training_flops_per_token,
    mfu_at,
    tokens_per_s_at,
    training_flops_per_token,
    training_seconds,
)
from engine.numbers.errors import EngineError
from engine.numbers.formats import get_format
from engine.numbers.memory import kv_cache_bytes, serving_memory, training_memory
from engine.numbers.plan import plan
from engine.numbers.serving import decode_step, prefill
from engine.words.memory_explained import memory_assumptions

GiB = 2**30

# ------------------------------------------------------------------ mixture-of-experts training


def test_moe_training_flops_use_active_parameters() -> None:
    m = get_model("deepseek-v3")
    t = training_flops_per_token(m, 4096)
    # 6 x 37 billion activated parameters (DeepSeek-V3 README), less the 0.93 billion
    # embedding lookup (129,280 x 7,168), is 6 x 36.1 billion = 216.5 billion; the shapes give
    # 219.7 billion (the router and the MLA projections counted exactly).
    assert t.matmul == pytest.approx(6 * (37e9 - 129_280 * 7168), rel=0.02)
    assert t.matmul < 0.06 * 6 * m.params  # nowhere near 6 x 671 billion
    # Causal attention over 4,096 tokens, each attending to 4,097 / 2 on average:
    # 3 x 2 x 128 heads x (192 + 128) x 61 layers x 4,097 / 2 = 3 x 128 x 320 x 61 x 4,097.
    assert t.attention == 3 * 128 * (192 + 128) * 61 * 4097


def test_deepseek_v3_published_gpu_hours_imply_a_plausible_mfu() -> None:
    # DeepSeek-V3 Technical Report (arXiv 2412.19437), Table 1: 2.788 M H800 GPU-hours for
    # 14.8 T tokens of pre-training at 4K context. The H800 has the H100 SXM's compute die
    # (989.4 TFLOP/s dense bf16, 1,978.9 fp8); DeepSeek trained its matmuls in fp8.
    per_token = training_flops_per_token(get_model("deepseek-v3"), 4096).model
    gpu_seconds = 2.788e6 * 3600
    bf16 = mfu_at(14.8e12 / gpu_seconds, per_token, 1, 989.4e12)
    fp8 = mfu_at(14.8e12 / gpu_seconds, per_token, 1, 1978.9e12)
    # By hand: (2.1975e11 matmul + 3.071e10 causal attention) = 2.5046e11 FLOPs/token x
    # 14.8e12 / 1.0037e10 s = 3.693e14 FLOP/s per GPU.
    assert bf16 == pytest.approx(3.693e14 / 989.4e12, rel=0.01)  # 37.3 %
    assert 0.15 < fp8 < bf16 < 0.45  # 19 % of the fp8 peak, 37 % of bf16: not 628 %
    # The plan gets the same training time from the same function.
    p = plan(model="deepseek-v3", hardware="h100-sxm", gpus=2048, task="train",
             sharding="zero3", tp=8, tokens=14.8e12, mfu=bf16)
    assert p.train is not None
    assert p.train.seconds * 2048 / 3600 == pytest.approx(2.788e6, rel=1e-3)


def test_memory_uses_total_parameters_for_moe() -> None:
    m = get_model("mixtral-8x7b")
    mem = training_memory(m, get_hardware("h100-sxm"), gpus=64, sharding="zero3")
    assert mem.state_bytes_total == m.params * 16  # all 46.7 B parameters, 16 bytes each


# ------------------------------------------------------------------ device memory in binary units


def test_capacities_are_the_bytes_a_program_can_allocate() -> None:
    # H200: torch.cuda.get_device_properties(0).total_memory on a real H200, 2026-11-30
    # (bench/measured/h200-2026-11-30.json).
    assert get_hardware("h200").memory_bytes == 150_109_880_320
    # H100 80GB HBM3: torch reports 79.11 GiB total capacity (vllm-project/vllm #27508).
    assert get_hardware("h100-sxm").memory_bytes == round(79.11 * GiB)
    for h in ("h100-sxm", "h200", "a100-40gb", "a100-80gb", "b200", "l4", "l40s", "rtx-4090",
              "mi300x", "apple-m2-ultra", "apple-a17-pro"):
        hw = get_hardware(h)
        assert hw.memory_basis, h
        # More than the name's figure in 10^9 bytes, less than the same figure in GiB,
        # except the M2 Ultra, whose GPU may use 75 % of the unified memory by default, and
        # the phone, where iOS gives one app about 6 GB of 8 (introlab/rtabmap #1446).
        if h not in ("apple-m2-ultra", "apple-a17-pro"):
            assert hw.memory_marketed_GB * 1e9 * 0.95 < hw.memory_bytes
            assert hw.memory_bytes <= hw.memory_marketed_GB * GiB


def test_llama_70b_in_bf16_fits_one_h200() -> None:
    mem = serving_memory(get_model("llama-3.1-70b"), get_hardware("h200"))
    # 70,553,706,496 x 2 bytes = 141.1 GB of weights + 2.68 GB of KV cache (8,192 tokens x
    # 327,680 bytes) + 1.21 GB activations (the 8,192 tokens in one prefill step, vLLM's
    # max_num_batched_tokens on an H200: 8,192 x (2 x 8,192 + 2 x 28,672) x 2 B, plus one
    # row of 128,256 fp32 logits) + 1.5 GB overhead = 146.5 GB < 150.1 GB.
    assert mem.fits
    assert mem.per_gpu_bytes == pytest.approx(146.50e9, rel=1e-3)
    assert any("150.1 GB" in a and "h200-2026-11-30" in a for a in memory_assumptions(mem))


# ------------------------------------------------------------------ number formats


def test_weight_only_formats_compute_at_the_16_bit_rate() -> None:
    # AWQ/GPTQ int4 is dequantised to bf16 for the maths: an A100 (312 TFLOP/s bf16) cannot
    # prefill an int4 model faster than an H100 (989.4).
    assert get_hardware("a100-80gb").compute_peak("int4") == (312e12, "bf16")
    a100 = prefill(get_model("llama-3.1-8b"), get_hardware("a100-80gb"), prompt_tokens=2048, weight_format="int4")
    h100 = prefill(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), prompt_tokens=2048, weight_format="int4")
    assert a100.seconds > 3 * h100.seconds
    # fp8 and int8 quantise both operands: their own rate where the chip has the units.
    assert get_hardware("h100-sxm").compute_peak("fp8") == (1978.9e12, "fp8")
    assert get_hardware("a100-80gb").compute_peak("fp8") == (312e12, "bf16")
    # FP4 only on Blackwell: 9,000 TFLOP/s dense on a B200 (DGX B200 datasheet).
    assert get_hardware("b200").compute_peak("fp4") == (9000e12, "fp4")
    assert get_hardware("h100-sxm").compute_peak("fp4") == (989.4e12, "bf16")
    # GeForce: fp16 accumulating in fp16 runs at 330.3 TFLOP/s, bf16 (fp32 accumulate) at
    # 165.2 (NVIDIA Ada Lovelace architecture whitepaper, RTX 4090 column).
    assert get_hardware("rtx-4090").compute_peak("fp16") == (330.3e12, "fp16")
    assert get_hardware("rtx-4090").compute_peak("bf16") == (165.2e12, "bf16")
    # llama.cpp's q-formats multiply on int8 units (activations quantised to q8_1).
    assert get_hardware("rtx-4090").compute_peak("q4_0") == (660.6e12, "int8")
    assert get_hardware("apple-m2-ultra").compute_peak("q4_0")[1] == "fp16"


def test_llama_cpp_formats_cost_their_real_storage() -> None:
    # Llama 2 7B (6,738,415,616 parameters) in Q4_0: x 18/32 bytes = 3.79 GB; llama.cpp's
    # quantize table lists 3.56 GiB = 3.82 GB for its Q4_0 file (embeddings kept larger).
    m = get_model("llama-2-7b")
    assert m.params * get_format("q4_0").bytes_per_number == pytest.approx(3.790e9, rel=1e-3)
    assert get_format("q4_k_m").bits == 4.84 and get_format("q8_0").bits == 8.5


# ------------------------------------------------------------------ sliding-window attention


def test_mistral_kv_cache_stops_at_the_window() -> None:
    # Mistral 7B v0.1: 32 layers x 8 KV heads x 128 x 2 (K and V) x 2 bytes = 131,072 bytes
    # per token; every layer keeps at most 4,096 tokens (sliding window).
    m = get_model("mistral-7b")
    assert kv_cache_bytes(m, 2048) == 2048 * 131_072
    assert kv_cache_bytes(m, 32_768) == 4096 * 131_072  # 0.54 GB, not 4.3 GB
    assert serving_memory(m, get_hardware("h100-sxm"), context_tokens=32_768).parts["kv_cache"] == 4096 * 131_072
    near = decode_step(m, get_hardware("h100-sxm"), context_tokens=4096, batch=64)
    far = decode_step(m, get_hardware("h100-sxm"), context_tokens=32_000, batch=64)
    assert far.bytes_read == near.bytes_read  # reads per step bounded by the window too


def test_gemma2_kv_cache_by_layer_kind() -> None:
    # Gemma 2 9B: 42 layers, 21 local (4,096-token window) and 21 global; per layer per
    # token 2 x 8 KV heads x 256 x 2 bytes = 8,192 bytes. At 8,192 tokens of context:
    # 21 x 8,192 x (4,096 + 8,192) = 2,113,929,216 bytes.
    m = get_model("gemma-2-9b")
    assert kv_cache_bytes(m, 8192) == 21 * 8192 * (4096 + 8192)
    assert kv_cache_bytes(m, 4096) == 42 * 8192 * 4096


# ------------------------------------------------------------------ training FLOPs


def test_training_flops_include_attention_and_recomputation() -> None:
    # Llama 3.1 8B at 4,096 tokens: forward matmuls 2 x 7,504,658,432 weights; causal
    # attention 12 x 32 layers x 32 heads x 128 x 4,097 / 2 = 3,222,011,904 (half of PaLM
    # appendix B's 12 x ... x 4,096, each token attending to itself and those before it).
    t = training_flops_per_token(get_model("llama-3.1-8b"), 4096, "full")
    assert t.matmul == 6 * 7_504_658_432
    assert t.attention == 6 * 32 * 32 * 128 * 4097
    assert t.attention == causal_attention_training_flops_per_token(32, 32, 128, 4096)
    assert t.hardware == pytest.approx(t.model * 8 / 6)  # full recomputation: 8/6
    sel = training_flops_per_token(get_model("llama-3.1-8b"), 4096, "selective")
    assert sel.hardware == sel.model + t.attention / 3  # the attention forward, again


@pytest.mark.parametrize("recompute", ["none", "selective", "full"])
def test_tokens_per_second_and_time_agree_under_every_recompute(recompute: str) -> None:
    p = plan(model="llama-3.1-8b", hardware="h100-sxm", gpus=8, task="train",
             sharding="zero3", recompute=recompute, tokens=1e12, mfu=0.4)
    t = p.train
    assert t is not None
    assert t.tokens_per_s * t.seconds == pytest.approx(1e12)
    # MFU is model FLOPs over peak: the same whatever is recomputed.
    assert mfu_at(t.tokens_per_s, t.per_token.model, 8, 989.4e12) == pytest.approx(0.4)
    assert t.seconds == pytest.approx(training_seconds(t.model_flops, 8, 989.4e12, 0.4))
    assert tokens_per_s_at(t.per_token.model, 8, 989.4e12, 0.4) == pytest.approx(t.tokens_per_s)


def test_an_mfu_that_recomputation_would_push_past_the_peak_is_refused() -> None:
    # 80 % MFU x 8/6 (full recomputation) = 107 % of the peak.
    with pytest.raises(EngineError, match="above their peak"):
        plan(model="llama-3.1-8b", task="train", gpus=8, sharding="zero3", recompute="full",
             mfu=0.8)
    with pytest.raises(EngineError, match="above their peak"):
        launch_training(new_cluster(), "llama-3.1-8b", gpus=tuple(range(8)), sharding="zero3",
                        recompute="full", mfu=0.8)


# ------------------------------------------------------------------ tensor parallelism


def test_tensor_parallel_must_divide_the_heads() -> None:
    # Checked where a GPU count enters: plan()'s serving request.
    with pytest.raises(EngineError, match="64 attention heads"):
        plan(model="llama-3.1-70b", hardware="h100-sxm", gpus=7)
    with pytest.raises(EngineError, match="28 attention heads"):
        plan(model="qwen2.5-7b", hardware="h100-sxm", gpus=8)
    with pytest.raises(EngineError, match="KV heads"):
        # 28 heads split 14 ways, but 4 KV heads can be neither split nor copied 14 ways.
        plan(model="qwen2.5-7b", hardware="h100-sxm", gpus=14)
    with pytest.raises(EngineError):
        training_memory(get_model("llama-3.1-70b"), get_hardware("h100-sxm"), gpus=21, tp=7, sharding="zero3")
    assert architecture.tensor_parallel_ok(get_model("qwen2.5-7b"), 4)


def test_kv_cache_is_replicated_beyond_the_kv_heads() -> None:
    # Llama 3.1 70B has 8 KV heads: on 16 GPUs each keeps one, so the cache is stored twice.
    # 8,192 tokens x 327,680 bytes = 2.68 GB in all; x 2 / 16 = 0.336 GB per GPU.
    m = get_model("llama-3.1-70b")
    assert architecture.kv_replication(m, 8) == 1 and architecture.kv_replication(m, 16) == 2
    mem = serving_memory(m, get_hardware("h100-sxm"), gpus=16)
    assert mem.parts["kv_cache"] == 8192 * 327_680 * 2 / 16


def test_the_reality_checks_deepseek_row_no_longer_beats_its_bound() -> None:
    # The reality check (engine/lesson/data/measurements.toml) runs DeepSeek-V3's published
    # 2.788 M H800 GPU-hours through plan(); with 6 x total parameters its bound was beaten.
    from engine.lesson.reality.measured import checked

    row = next(c for c in checked() if c.measurement.id == "deepseek-v3-gpu-hours")
    assert row.bound is not None and not row.beats_bound
    # Modelled in FP8 as it ran: the bound is its matmuls at the fp8 peak (attention at
    # bf16's), about 22 % of the GPU-hours it took; at the bf16 peak it was about 39 %.
    assert row.measurement.precision == "fp8"
    assert 0.15 < row.bound / row.measurement.value < 0.3
