"""The expected half of every time: values worked by hand, first-hand measurements, and the
rule that no expected time beats its bound (and no expected speed exceeds it).

Efficiencies (data/efficiency.toml): H100 SXM matmul 0.803 (stas00/ml-engineering MAMF
table: 794.5 of 989 TFLOP/s bf16); decode bandwidth 0.8 (NVIDIA aiconfigurator
mem_bw_empirical_scaling_factor); 9 kernels x 3 us per layer (aiconfigurator
mem_empirical_constant_latency; vLLM's LlamaDecoderLayer); FlashAttention 0.5 (Dao 2023);
forward-pass matmul share 0.84 (bench/measured/h200-2026-11-30.json).
"""

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cli import main
from engine.lesson.plans.plan_json import plan_to_dict
from engine.numbers.catalog import get_hardware, get_model, list_hardware, list_models
from engine.numbers.catalog.efficiency import matmul_fraction, memory_fraction
from engine.numbers.compute import training_seconds
from engine.numbers.errors import EngineError
from engine.numbers.expected_serving import decode_parts, expected_serve, maths_rates
from engine.numbers.expected_training import expected_train
from engine.numbers.plan import plan
from engine.numbers.serving import request_timeline
from engine.words.training import train_warning_words

H100 = "h100-sxm"
LLAMA_8B_PARAMS = 8_030_261_248  # Hugging Face safetensors of meta-llama/Llama-3.1-8B
# Its untied input embedding, 128,256 x 4,096 = 525,336,576, is looked up (one row of 4,096
# per token), not streamed: 8,030,261,248 - 525,336,576 = 7,504,924,672 read whole per step.
LLAMA_8B_STREAMED = LLAMA_8B_PARAMS - 128_256 * 4096  # 7,504,924,672
KERNELS_PER_LAYER_S = 9 * 3e-6


def overlap(memory_s: float, maths_s: float) -> float:
    # data/efficiency.toml [overlap]: streaming and maths add as (m^1.5 + c^1.5)^(1/1.5).
    return (memory_s ** 1.5 + maths_s ** 1.5) ** (1 / 1.5)


def test_decode_step_by_hand():
    # Llama 3.1 8B on one H100, batch 1, one decode step at context 1,025:
    # weights 2 x (7,504,924,672 + 4,096 looked up) bytes / (3.35e12 x 0.8) = 5.6007 ms,
    # beside their 2 x 7,504,658,432 FLOPs at 989.4e12 x 0.803 / 0.84 (22.5 us): together
    # 5.6016 ms; KV cache 2 x 32 layers x 8 heads x 128 x 2 bytes = 131,072 bytes x 1,025 /
    # 2.68e12 (50.1 us) beside 4 x 32 x 32 x 128 x 1,025 attention FLOPs at half of peak
    # (1.1 us); kernels 32 layers x 9 x 3 us = 0.864 ms; total 6.5159 ms.
    e = expected_serve(get_model("llama-3.1-8b"), get_hardware(H100), prompt_tokens=1024, output_tokens=2)
    weights = overlap(2 * (LLAMA_8B_STREAMED + 4096) / 2.68e12,
                      2 * 7_504_658_432 / (989.4e12 * 0.803 * 0.84))
    kv = overlap(131_072 * 1025 / 2.68e12, 4 * 32 * 32 * 128 * 1025 / (989.4e12 * 0.5))
    by_hand = weights + kv + 32 * KERNELS_PER_LAYER_S
    assert e.decode_seconds_per_token == pytest.approx(by_hand, rel=1e-9)
    assert e.decode_seconds_per_token == pytest.approx(6.5159e-3, rel=1e-4)
    assert e.communication_seconds_per_token == 0.0


def test_prefill_by_hand():
    # 1,024 tokens: matmuls 2 x 7,504,658,432 weights (all but the embedding table and the
    # norms) x 1,024 FLOPs at 989.4e12 x 0.803, causal attention 4 x 32 x 32 x 128 x 1,024 x
    # 1,025 / 2 FLOPs at half of peak, both / 0.84 (23.69 ms), beside reading the weights
    # (7,504,924,672 + 1,024 looked-up rows of 4,096) and writing 1,024 tokens of KV cache,
    # 15,152,455,680 bytes / 2.68e12 (5.65 ms): together 25.50 ms; plus 32 x 27 us of
    # kernels: 26.36 ms.
    e = expected_serve(get_model("llama-3.1-8b"), get_hardware(H100), prompt_tokens=1024, output_tokens=2)
    mm = 2 * 7_504_658_432 * 1024
    attn = 4 * 32 * 32 * 128 * 1024 * 1025 / 2
    maths = (mm / (989.4e12 * 0.803) + attn / (989.4e12 * 0.5)) / 0.84
    by_hand = overlap((2 * (LLAMA_8B_STREAMED + 1024 * 4096) + 131_072 * 1024) / 2.68e12,
                      maths) + 32 * 27e-6
    assert e.ttft_seconds == pytest.approx(by_hand, rel=1e-9)
    assert e.ttft_seconds == pytest.approx(26.36e-3, rel=1e-3)


def test_fp8_prefill_keeps_the_16_bit_time_outside_matmuls_by_hand():
    # The same 1,024 tokens with fp8 weights: the matmuls run at 1,978.9e12 x 0.709 (fp8 MAMF),
    # but attention stays at half of the 16-bit peak and the time outside matmuls (norms,
    # activations: 1/0.84 - 1 of the bf16 matmul time, bench/measured/h200-2026-11-30.json)
    # does not halve with them: 10.955 + 3.692 + 0.650 = 15.30 ms (scaling everything by the
    # fp8 rate would give 13.37 ms), beside reading 7,504,924,672 + 1,024 x 4,096 (the
    # looked-up rows) + 1,024 x 65,536 bytes (2.83 ms): 16.10 ms, plus 0.864 ms of kernels:
    # 16.97 ms.
    e = expected_serve(get_model("llama-3.1-8b"), get_hardware(H100), prompt_tokens=1024, output_tokens=2,
                       weight_format="fp8", kv_format="fp8")
    mm = 2 * 7_504_658_432 * 1024
    attn = 4 * 32 * 32 * 128 * 1024 * 1025 / 2
    maths = (mm / (1978.9e12 * 0.709) + (1 / 0.84 - 1) * mm / (989.4e12 * 0.803)
             + attn / (989.4e12 * 0.5) / 0.84)
    by_hand = overlap((LLAMA_8B_STREAMED + 1024 * 4096 + 65_536 * 1024) / 2.68e12, maths) \
        + 32 * 27e-6
    assert e.ttft_seconds == pytest.approx(by_hand, rel=1e-9)
    assert e.ttft_seconds == pytest.approx(16.97e-3, rel=1e-3)
    bf16 = expected_serve(get_model("llama-3.1-8b"), get_hardware(H100), prompt_tokens=1024, output_tokens=2)
    # fp8 saves only the matmuls' own time: 26.36 -> 16.97 ms, not half.
    assert 0.6 < e.ttft_seconds / bf16.ttft_seconds < 0.7
    assert any("16-bit rate" in b.name for b in e.basis)
    assert not any("16-bit rate" in b.name for b in bf16.basis)


def test_tensor_parallel_all_reduces_by_hand():
    # Llama 3.1 70B on 4 H100s, batch 1: 2 x 80 layers all-reduces of 8,192 x 2 bytes:
    # each 2 x 3/4 x 16,384 / 360e9 s + (3.6 + 6 x 0.47) us = 6.488 us; x 160 = 1.0381 ms.
    e = expected_serve(get_model("llama-3.1-70b"), get_hardware(H100), prompt_tokens=1024, output_tokens=256, gpus=4)
    each = 2 * 3 / 4 * 16_384 / 360e9 + (3.6 + 6 * 0.47) * 1e-6
    assert e.communication_seconds_per_token == pytest.approx(160 * each, rel=1e-9)


def test_first_hand_h200_measurements():
    # bench/measured/h200-2026-11-30.json: plain PyTorch + CUDA graphs, Llama 3.1 8B shapes,
    # 1,024 tokens of context: 5.075 ms per step at batch 1, 7.232 ms at batch 64; prefill of
    # 2,048 tokens 50.41 ms. A tuned stack is at least as fast; within 15 % of each.
    for batch, ms in ((1, 5.075), (64, 7.232)):
        e = expected_serve(get_model("llama-3.1-8b"), get_hardware("h200"), prompt_tokens=1023, output_tokens=1,
                           batch=batch)
        b = request_timeline(get_model("llama-3.1-8b"), get_hardware("h200"), prompt_tokens=1023, output_tokens=2,
                             batch=batch)
        assert b.last_step.seconds < ms * 1e-3
        assert e.decode_seconds_per_token == pytest.approx(ms * 1e-3, rel=0.15)
    e = expected_serve(get_model("llama-3.1-8b"), get_hardware("h200"), prompt_tokens=2048, output_tokens=1)
    assert e.ttft_seconds == pytest.approx(50.41e-3, rel=0.15)
    # bench/measured/h200-2026-11-30-70b-long-context.json: Llama 3.1 70B shapes in bf16 on
    # the one H200, batch 1, 1,024 tokens of context: 35.653 ms per step.
    e = expected_serve(get_model("llama-3.1-70b"), get_hardware("h200"), prompt_tokens=1023, output_tokens=1)
    assert e.decode_seconds_per_token == pytest.approx(35.653e-3, rel=0.15)


def test_decode_split_into_bandwidth_and_fixed_cost():
    # Two first-hand H200 steps, batch 1, context 1,024 (bench/measured/): 8B shapes read
    # 15,009,841,152 weight bytes in 5.075 ms over 32 layers, 70B shapes 139,006,050,304 in
    # 35.653 ms over 80 layers (KV: 131,072 and 327,680 bytes per token). Solving
    # t = bytes / B + layers x c for both gives B = 0.92 x 4.8 TB/s, c = 52 us per layer
    # (plain PyTorch). The engine's 0.8 and 27 us per layer lie on the same line for 8B.
    b8 = 15_009_841_152 + 131_072 * 1024
    b70 = 139_006_050_304 + 327_680 * 1024
    # 5.075e-3 = b8 / B + 32 c;  35.653e-3 = b70 / B + 80 c
    inv_b = (35.653e-3 - 2.5 * 5.075e-3) / (b70 - 2.5 * b8)
    c = (5.075e-3 - b8 * inv_b) / 32
    assert 1 / inv_b / 4.8e12 == pytest.approx(0.92, abs=0.02)
    assert c == pytest.approx(52e-6, rel=0.05)
    engine_8b = b8 / (4.8e12 * 0.8) + 32 * KERNELS_PER_LAYER_S
    assert engine_8b == pytest.approx(b8 * inv_b + 32 * c, rel=0.06)


def test_moe_expected_reads_the_experts_touched():
    # Mixtral 8x7B, top-2 of 8: at batch 1 the expected step reads what the bound reads; at
    # batch 64, 1 - (6/8)^64 ~ 1 of the experts: about 3.6 x the bytes of one token's. (The
    # whole step grows less: at batch 1 the grouped GEMM's small products already cost time.)
    m, hw = get_model("mixtral-8x7b"), get_hardware(H100)
    one = decode_parts(m, hw, context_tokens=2)
    many = decode_parts(m, hw, context_tokens=2, batch=64)
    assert many.memory_seconds > 3 * one.memory_seconds


def test_kv_replication_comes_with_the_bound():
    # Llama 3.1 70B has 8 KV heads: on 16 GPUs each keeps one head, twice 1/16 of the cache;
    # the bound reads it (engine.numbers.serving), the expected value names it in its basis.
    e = expected_serve(get_model("llama-3.1-70b"), get_hardware(H100), prompt_tokens=1024, output_tokens=2, gpus=16)
    assert any(b.name.startswith("KV cache replication") and b.value == 2.0 for b in e.basis)


def test_efficiencies_have_sources_and_defaults_say_so():
    h100 = get_hardware(H100)
    assert matmul_fraction(h100, "bf16").value == pytest.approx(794.5 / 989.4, abs=1e-3)
    assert "Maximum Achievable Matmul" in matmul_fraction(h100, "bf16").source
    l4 = matmul_fraction(get_hardware("l4"), "bf16")
    assert "default" in l4.name and l4.source
    # The measured copy bandwidth on H200 (4.255 of 4.8 TB/s) caps the decode fraction.
    assert memory_fraction(get_hardware("h200"), "bf16").value <= 4.255 / 4.8
    # llama.cpp on an M2 Ultra: 4-bit weights reach less of the bandwidth than 16-bit.
    m2 = get_hardware("apple-m2-ultra")
    assert memory_fraction(m2, "int4").value < memory_fraction(m2, "bf16").value


def test_training_step_by_hand():
    # Llama 3.1 8B on 8 H100s, ZeRO-3, micro-batch 1 x 4,096 tokens, selective recompute;
    # global batch 4,194,304 tokens = 128 micro-batches per GPU. The step is the micro-batch's
    # ops (engine.numbers.training_ops, worked by hand in test_training_ops.py) 128 times,
    # plus the optimiser's once. ZeRO-3 traffic 3 x 7/8 x 16.06 GB / 360 GB/s = 0.117 s per
    # micro-batch, hidden behind its 0.33 s of compute, which it slows: beside it the
    # compute has 112 of the 132 SMs (DeepSeek-V3's 20 for communication), so it takes
    # 0.117 x 20 / 112 = 0.021 s more each micro-batch.
    t = expected_train(get_model("llama-3.1-8b"), get_hardware(H100), tokens=1e12, gpus=8, sharding="zero3")
    assert t.accumulation == 128
    compute = sum(o.seconds for o in t.ops if o.limit != "communication"
                  and not o.name.startswith(("optimizer", "gradient")))
    slowed = {o.name: o.seconds for o in t.ops}["compute beside collectives (the SMs they take)"]
    assert slowed == pytest.approx(t.exposed_communication_seconds_per_step, rel=1e-12)
    zero3_mb = t.communication_seconds_per_step / 128
    assert zero3_mb == pytest.approx(3 * 7 / 8 * 16.06e9 / 360e9, rel=0.01)
    assert slowed == pytest.approx(128 * zero3_mb * 0.1515 / (1 - 0.1515), rel=1e-9)
    assert t.step_seconds == pytest.approx(compute + slowed + t.step.optimizer_seconds, rel=1e-12)
    assert t.step_seconds == pytest.approx(sum(o.seconds for o in t.ops), rel=1e-12)
    assert 0.30 < compute / 128 < 0.36
    model_flops = 6 * 7_504_658_432 + 6 * 32 * 32 * 128 * 4097  # per token, as MFU counts
    assert t.mfu == pytest.approx(model_flops * t.tokens_per_s / (8 * 989.4e12))
    # The bound: those model FLOPs at the eight GPUs' peak, 48.25e9 x 1e12 / 7.915e15 s
    # = 70.6 days (the time at 100 % MFU).
    assert t.bound_seconds == pytest.approx(model_flops * 1e12 / (8 * 989.4e12), rel=1e-12)
    assert t.warnings == ()
    # Published good runs reach 35-55 % (PaLM 46 %, Llama 3 405B 38-43 %); one node with
    # fused kernels and no pipeline sits near the top of that band.
    assert 0.45 < t.mfu < 0.62


def test_the_gradient_reduction_slows_only_the_last_micro_batch():
    # Without ZeRO-3 the gradients are reduced once a step, one all-reduce of 16.06 GB
    # (2 x 7/8 x 16.06 GB / 360 GB/s = 0.078 s) beside the last of the 64 micro-batches'
    # backward pass (the others accumulate locally), so the SMs it takes are charged once a
    # step; ZeRO-3's gathers and reduce-scatter run beside every micro-batch, charged 64 times.
    model, h100 = get_model("llama-3.1-8b"), get_hardware(H100)
    ddp = expected_train(model, h100, tokens=1e12, gpus=8, seq_len=8192)
    zero3 = expected_train(model, h100, tokens=1e12, gpus=8, seq_len=8192, sharding="zero3")
    assert ddp.accumulation == zero3.accumulation == 64
    share = 0.1515 / (1 - 0.1515)

    def slowed(t):
        return {o.name: o.seconds for o in t.ops}["compute beside collectives (the SMs they take)"]

    assert ddp.communication_seconds_per_step == pytest.approx(2 * 7 / 8 * 16.06e9 / 360e9,
                                                               rel=0.01)
    assert slowed(ddp) == pytest.approx(share * ddp.communication_seconds_per_step, rel=1e-9)
    assert slowed(zero3) == pytest.approx(share * zero3.communication_seconds_per_step, rel=1e-9)
    assert zero3.communication_seconds_per_step / 64 == pytest.approx(
        3 * 7 / 8 * 16.06e9 / 360e9, rel=0.01)


def test_training_ops_add_up_to_the_step_and_name_their_limit():
    # Tensor and pipeline parallel: the step's ops include its exposed communication and its
    # bubble, and still add up to the step.
    t = expected_train(get_model("llama-3.1-70b"), get_hardware(H100), tokens=1e12, gpus=64,
                       tp=8, pp=4, sharding="zero1")
    names = {o.name: o for o in t.ops}
    assert sum(o.seconds for o in t.ops) == pytest.approx(t.step_seconds, rel=1e-12)
    assert names["tensor-parallel all-reduces"].limit == "communication"
    assert names["pipeline bubble"].seconds == pytest.approx(t.step.bubble_seconds)
    assert {o.limit for o in t.ops} <= {"compute", "memory", "communication"}
    # An MFU given scales every op alike.
    given = expected_train(get_model("llama-3.1-70b"), get_hardware(H100), tokens=1e12,
                           gpus=64, tp=8, pp=4, sharding="zero1", mfu=0.2)
    assert sum(o.seconds for o in given.ops) == pytest.approx(given.step_seconds, rel=1e-12)


def test_training_mfu_given_is_used():
    t = expected_train(get_model("llama-3.1-8b"), get_hardware(H100), tokens=1e12, gpus=8, mfu=0.3)
    assert t.mfu == 0.3 and t.mfu_given
    assert t.basis[0].name.startswith("MFU given")
    model_flops = 6 * 7_504_658_432 + 6 * 32 * 32 * 128 * 4097
    assert t.seconds == pytest.approx(model_flops * 1e12 / (8 * 989.4e12 * 0.3))


def test_one_gpu_trains_without_communication():
    t = expected_train(get_model("llama-3.2-1b"), get_hardware(H100), tokens=1e9)
    assert t.communication_seconds_per_step == 0.0


def test_a_batch_too_small_for_the_ranks_leaves_them_idle_and_says_so():
    # Llama 3.1 405B on 16,384 H100s, tensor parallel 8: 2,048 data-parallel ranks, but the
    # default batch of 4,194,304 tokens is 1,024 sequences of 4,096. 1,024 ranks get one
    # each; the other 1,024 (8,192 GPUs) wait. The batch is not raised: fed a batch twice as
    # big (one sequence per rank), the step takes the same time for twice the tokens.
    args = dict(tokens=15.6e12, gpus=16384, tp=8, sharding="zero3")
    m, hw = get_model("llama-3.1-405b"), get_hardware(H100)
    idle = expected_train(m, hw, **args)
    fed = expected_train(m, hw, **args, global_batch_tokens=8_388_608)
    assert idle.tokens_per_step == 4_194_304 and fed.tokens_per_step == 8_388_608
    assert idle.step_seconds == fed.step_seconds
    assert idle.tokens_per_s == pytest.approx(fed.tokens_per_s / 2, rel=1e-12)
    assert idle.mfu == pytest.approx(fed.mfu / 2, rel=1e-12)
    assert fed.warnings == ()
    (w,) = idle.warnings
    assert (w.kind, w.batch.dp, w.batch.busy_dp, w.idle_gpus) == ("idle_ranks", 2048, 1024, 8192)
    assert idle.bound_seconds == fed.bound_seconds  # the bound counts every GPU
    words = train_warning_words(w)
    assert "1,024 micro-batches of 4,096 tokens for 2,048 data-parallel ranks" in words
    assert "1,024 ranks (8,192 GPUs) get none" in words
    t = plan_to_dict(plan(model=m, hardware=H100, task="train", **args))["train"]
    assert t["global_batch_tokens"] == 4_194_304
    assert t["warnings"] == [words]
    assert t["expected"]["warnings"][0]["kind"] == "idle_ranks"


def test_a_batch_of_part_micro_batches_is_rounded_up_and_says_so():
    # 1,000,000 tokens at 4,096 per sequence is 244.1 sequences: 245 micro-batches, on 8
    # ranks ceil(245 / 8) = 31 each, 31 x 8 x 4,096 = 1,015,808 tokens per step.
    t = expected_train(get_model("llama-3.1-8b"), get_hardware(H100), tokens=1e12, gpus=8,
                       sharding="zero3", global_batch_tokens=1e6)
    assert (t.accumulation, t.tokens_per_step) == (31, 1_015_808)
    (w,) = t.warnings
    assert w.kind == "batch_rounded_up"
    assert train_warning_words(w) == (
        "The global batch is rounded up from 1,000,000 to 1,015,808 tokens: 31 micro-batches "
        "of 4,096 tokens on each of 8 data-parallel ranks.")


# ------------------------------------------------------------------ one basis: bound = 100 % MFU

SERVE_MODELS = [m.id for m in list_models()]
GPU_CHIPS = [h.id for h in list_hardware()]
FORMATS = ["bf16", "fp16", "fp8", "int8", "int4", "fp32"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model=st.sampled_from(SERVE_MODELS), hw=st.sampled_from(GPU_CHIPS),
       gpus=st.sampled_from([1, 8, 64, 1024, 16384]), tp=st.sampled_from([1, 2, 8]),
       pp=st.sampled_from([1, 4]), sharding=st.sampled_from(["none", "zero1", "zero3"]),
       recompute=st.sampled_from(["none", "selective", "full"]),
       seq=st.sampled_from([1024, 4096, 8192]))
def test_the_bound_is_the_model_flops_at_peak_and_the_time_at_100_percent_mfu(
        model, hw, gpus, tp, pp, sharding, recompute, seq):
    try:
        p = plan(model=model, hardware=hw, gpus=gpus, tp=tp, pp=pp, task="train",
                 sharding=sharding, recompute=recompute, seq_len=seq, tokens=1e12)
    except EngineError:
        return
    t = p.train
    assert t is not None
    # The page's FLOPs divided by GPUs x dense peak is the page's bound, exactly.
    assert t.bound_seconds == t.model_flops / (p.gpus * t.peak_flops_per_s)
    assert t.bound_seconds == t.expected.bound_seconds
    assert t.bound_seconds == training_seconds(t.model_flops, p.gpus, t.peak_flops_per_s, 1.0)
    assert t.tokens_per_s * t.bound_seconds == pytest.approx(t.mfu * t.tokens, rel=1e-12)
    if recompute == "none":  # recomputation's extra FLOPs make 100 % MFU unreachable
        at_full = plan(model=model, hardware=hw, gpus=gpus, tp=tp, pp=pp, task="train",
                       sharding=sharding, recompute=recompute, seq_len=seq, tokens=1e12,
                       mfu=1.0).train
        assert at_full is not None
        assert at_full.seconds == t.bound_seconds
        assert at_full.expected.seconds == pytest.approx(t.bound_seconds, rel=1e-12)


# ------------------------------------------------------------------ expected never beats bound


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model=st.sampled_from(SERVE_MODELS), hw=st.sampled_from(GPU_CHIPS),
       fmt=st.sampled_from(FORMATS), batch=st.integers(1, 1024),
       gpus=st.sampled_from([1, 2, 4, 8, 16, 64]), prompt=st.integers(1, 32_768),
       out=st.integers(1, 4096))
def test_expected_serving_never_beats_the_bound(model, hw, fmt, batch, gpus, prompt, out):
    try:
        p = plan(model=model, hardware=hw, gpus=gpus, task="serve", weight_format=fmt,
                 kv_format="bf16", batch=batch, prompt_tokens=prompt, output_tokens=out,
                 context_tokens=prompt + out)
    except EngineError:
        return
    s = plan_to_dict(p)["serve"]
    e = s["expected"]
    assert e["ttft_seconds"] >= s["ttft_seconds"]
    assert e["decode_seconds_per_token"] >= s["decode_seconds_per_token"]
    assert e["output_tokens_per_s"] <= s["output_tokens_per_s"]
    assert all(math.isfinite(v) for v in (e["ttft_seconds"], e["decode_seconds_per_token"],
                                          e["output_tokens_per_s"]))
    assert (s["communication_seconds_per_token"] == 0.0) == (gpus == 1)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model=st.sampled_from(SERVE_MODELS), hw=st.sampled_from(GPU_CHIPS),
       gpus=st.sampled_from([1, 8, 64, 1024]), tp=st.sampled_from([1, 2, 8]),
       sharding=st.sampled_from(["none", "zero1", "zero3"]),
       recompute=st.sampled_from(["none", "selective", "full"]),
       seq=st.sampled_from([1024, 4096, 8192]))
def test_expected_training_never_beats_the_bound(model, hw, gpus, tp, sharding, recompute, seq):
    try:
        p = plan(model=model, hardware=hw, gpus=gpus, tp=tp, task="train", sharding=sharding,
                 recompute=recompute, seq_len=seq, tokens=1e12)
    except EngineError:
        return
    t = plan_to_dict(p)["train"]
    e = t["expected"]
    assert e["seconds"] >= t["bound_seconds"]
    assert e["tokens_per_s"] <= t["bound_tokens_per_s"]
    assert 0 < e["mfu"] < 1
    assert (t["communication_seconds_per_step"] == 0.0) == (gpus == 1)


# ------------------------------------------------------------------ the CLI contract


def _cli(capsys, *args):
    assert main(["plan", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_serve_contract(capsys):
    d = _cli(capsys, "--model", "llama-3.1-70b", "--hardware", H100, "--gpus", "4",
             "--batch", "8", "--prompt", "1000", "--output", "200")
    s = d["serve"]
    assert s["tp"] == 4 and s["replicas"] == 1
    assert s["output_tokens_per_s"] == pytest.approx(8 * 200 / s["total_seconds"])
    e = s["expected"]
    for key in ("ttft_seconds", "decode_seconds_per_token", "output_tokens_per_s", "basis"):
        assert key in e
    assert all({"name", "value", "source"} <= set(b) for b in e["basis"])
    assert all(b["source"] for b in e["basis"])
    assert s["communication_seconds_per_token"] > 0
    assert e["communication_seconds_per_token"] == s["communication_seconds_per_token"]


def test_cli_serve_tp_makes_replicas(capsys):
    # 8 GPUs as 4 replicas of tensor parallel 2: the batch of 64 splits into 16 each.
    d = _cli(capsys, "--model", "llama-3.1-8b", "--hardware", H100, "--gpus", "8", "--tp", "2",
             "--batch", "64")
    s = d["serve"]
    assert (s["tp"], s["replicas"], s["batch"]) == (2, 4, 16)
    assert d["gpus"] == 8
    assert s["output_tokens_per_s"] == pytest.approx(64 * 256 / s["total_seconds"])


def test_cli_single_gpu_no_communication(capsys):
    d = _cli(capsys, "--model", "llama-3.1-8b", "--hardware", H100)
    assert d["serve"]["communication_seconds_per_token"] == 0.0
    t = _cli(capsys, "--model", "llama-3.2-1b", "--hardware", H100, "--task", "train")
    assert t["train"]["communication_seconds_per_step"] == 0.0


def test_cli_train_contract(capsys):
    d = _cli(capsys, "--model", "llama-3.1-8b", "--hardware", H100, "--gpus", "64",
             "--task", "train", "--sharding", "zero3")
    t = d["train"]
    e = t["expected"]
    assert {"mfu", "seconds", "tokens_per_s", "basis"} <= set(e)
    assert not e["mfu_given"]
    assert t["mfu"] == 0.4  # the main figures keep the lesson's default
    assert t["communication_seconds_per_step"] > 0
    given = _cli(capsys, "--model", "llama-3.1-8b", "--hardware", H100, "--gpus", "64",
                 "--task", "train", "--sharding", "zero3", "--mfu", "0.3")["train"]["expected"]
    assert given["mfu"] == 0.3 and given["mfu_given"]
    assert given["basis"][0]["name"].startswith("MFU given")


def test_a_short_prompt_waits_for_the_host_to_dispatch_its_layers() -> None:
    # bench/measured/h200-2026-11-30-short-prefill.json: an eager prefill of a Llama 3.1
    # 8B-shaped model took 7.25 ms for 16 tokens and for 128 tokens on one H200; worked by
    # hand, 32 layers x 227 us = 7.264 ms, the floor of any prefill of this model.
    short = [expected_serve(get_model("llama-3.1-8b"), get_hardware("h200"), prompt_tokens=n, output_tokens=2)
             for n in (16, 128)]
    assert short[0].ttft_seconds == short[1].ttft_seconds == pytest.approx(32 * 227e-6)
    assert short[1].ttft_seconds == pytest.approx(7.25e-3, rel=0.01)
    # A long prompt is set by its FLOPs, above the floor (measured 50.41 ms for 2,048 tokens).
    long = expected_serve(get_model("llama-3.1-8b"), get_hardware("h200"), prompt_tokens=2048, output_tokens=2)
    assert long.ttft_seconds == pytest.approx(50.41e-3, rel=0.1)


def test_llama_cpp_quantised_prefill_runs_at_mmq_int8_rate() -> None:
    # llama.cpp PR #7676: RTX 4090, Llama 3 8B Q4_0, pp512 at 10,358.75 tokens/s (int8
    # tensor-core MMQ): 96.5 us per token of 15.0 GFLOP, of which 21.6 us lie outside the
    # matmuls (1/0.84 - 1 of 15.0 GFLOP at the 4090's bf16 rate, 0.8 x 165.2 TFLOP/s); the
    # catalogue stores the matmuls' rate as 0.33 of the 660.6 TOP/s int8 peak; worked by hand,
    # the prefill of 512 tokens is 2 x 7,504,658,432 x 512 x (1 / (660.6e12 x 0.33) + 0.19 /
    # (165.2e12 x 0.8)) = 46.3 ms + attention + kernels, with reading the weights, about
    # 49.5 ms: within 5 % of the measurement it came from.
    hw = get_hardware("rtx-4090")
    assert matmul_fraction(hw, "int8", "q4_0").value == 0.33
    # The kernel sets the rate on every chip: llama.cpp's q8_0 on an H100 runs at 0.33 of the
    # int8 peak, while W8A8 int8 (TensorRT-LLM, SmoothQuant) keeps the chip's own efficiency.
    h100 = get_hardware("h100-sxm")
    assert matmul_fraction(h100, "int8", "q8_0").value == 0.33
    assert matmul_fraction(h100, "int8", "int8").value == matmul_fraction(h100, "int8").value
    assert matmul_fraction(h100, "int8").value == 0.709
    e = expected_serve(get_model("llama-3-8b"), get_hardware("rtx-4090"), prompt_tokens=512, output_tokens=2,
                       weight_format="q4_0", kv_format="fp16")
    assert 512 / e.ttft_seconds == pytest.approx(10_358.75, rel=0.05)


def test_geforce_fp16_accumulate_speeds_up_the_matmuls_only():
    """A GeForce card's fp16 peak (RTX 4090: 330.3 TFLOP/s) accumulates in fp16, twice its
    bf16 rate (165.2); llama.cpp's cuBLAS path runs it. Only the matmuls gain: attention and
    the time outside matmuls keep the bf16 rate, as under an fp8 matmul. Worked by hand, one
    second of matmuls at the raw fp16 peak costs 0.8 of it at the default fraction, with the
    forward pass's 0.16 outside matmuls at the bf16 rate:
    (330.3 / 165.2) / (0.8 x 0.84) + 1 / 0.8 - (330.3 / 165.2) / 0.8 = 1.72605 s, where
    taking the whole pass at the fp16 rate would give 1 / (0.8 x 0.84) = 1.48810 s."""
    rates = maths_rates(get_hardware("rtx-4090"), "fp16", "fp16")
    ratio = 330.3 / 165.2
    assert rates.sixteen == pytest.approx(ratio)
    assert rates.matmuls(1.0) == pytest.approx(ratio / (0.8 * 0.84) + 1 / 0.8 - ratio / 0.8)
    assert rates.matmuls(1.0) == pytest.approx(1.72605, abs=1e-5)
    assert rates.attention_seconds(1.0) == pytest.approx(ratio / 0.5)
    # A data-centre chip's fp16 peak is its bf16 peak: the whole pass at one rate.
    h100 = maths_rates(get_hardware("h100-sxm"), "fp16", "fp16")
    assert h100.sixteen == 1.0 and h100.matmuls(1.0) == pytest.approx(1 / (0.803 * 0.84))
