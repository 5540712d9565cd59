import pytest

from engine.lesson.figures import prose as figures
from engine.lesson.figures.prose import get_figure
from engine.numbers.activations import (
    activation_bytes_per_layer,
    layer_activations,
    micro_batches_in_flight,
)
from engine.numbers.catalog import ModelSpec, generic_dense_model, get_hardware, get_model
from engine.numbers.errors import EngineError
from engine.numbers.memory import (
    RUNTIME_OVERHEAD_BYTES,
    kv_cache_bytes_per_token,
    kv_cache_room_bytes,
    kv_tokens_at_utilization,
    min_gpus_to_serve,
    min_gpus_to_train,
    serving_memory,
    training_memory,
    training_state_bytes_per_param,
    weights_bytes,
)
from engine.numbers.plan import plan
from engine.words.memory_explained import memory_assumptions, serving_warnings

GB = 1e9


def test_weights_bytes():
    assert weights_bytes(8_030_261_248, "bf16") == 16_060_522_496
    assert weights_bytes(1e9, "int4") == 0.5e9
    # The typed function trusts its inputs; the entry points refuse bad ones.
    with pytest.raises(EngineError, match="Parameter count"):
        generic_dense_model(-1)
    with pytest.raises(EngineError) as e:
        get_figure("weights")("llama-3.1-8b", "bf15")
    assert e.value.field == "format"


def test_kv_cache_gqa_and_mla():
    assert kv_cache_bytes_per_token(get_model("llama-3.1-8b")) == 131_072
    assert kv_cache_bytes_per_token(get_model("llama-3.1-8b"), "fp8") == 65_536
    # MLA: (512 + 64) x 61 layers x 2 bytes.
    assert kv_cache_bytes_per_token(get_model("deepseek-v3")) == 576 * 61 * 2


def test_serving_parts_sum_and_verdict():
    s = serving_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"))
    assert sum(s.parts.values()) == pytest.approx(s.per_gpu_bytes)
    # 79.11 GiB allocatable on an "80 GB" H100 (vllm-project/vllm #27508).
    assert s.fits and s.headroom_bytes == pytest.approx(79.11 * 2**30 - s.per_gpu_bytes)
    assert s.parts["kv_cache"] == 131_072 * 8192
    assert s.max_concurrent_requests == s.max_context_tokens_that_fit // 8192
    assert len(memory_assumptions(s)) >= 4
    d = s.to_dict()
    assert d["fits"] is True and set(d["parts"]) == set(s.parts)


def test_the_kv_caches_room_is_what_a_serving_engine_leaves_in_whole_blocks():
    # Llama 3.1 8B bf16 on one H100, by hand: 84,943,715,697 B (79.11 GiB) less the weights
    # 16,060,522,496, the working space of vLLM's fullest step there (its profiling pass,
    # vllm/v1/worker/gpu_model_runner.py profile_run -> _dummy_run(self.max_num_tokens), with
    # max_num_tokens = max_num_batched_tokens, 8,192 on an H100 (EngineArgs.get_batch_defaults):
    # 8,192 tokens x (2 x 4,096 + 2 x 14,336) x 2 B = 603,979,776, plus the sampler's dummy run
    # on min(8,192, max_num_seqs 1,024) = 1,024 sequences' logits x 128,256 x 4 B =
    # 525,336,576) and the 1.5 GB overhead: 66,253,876,849 B; over 16-token blocks of
    # 131,072 B a token, 31,592 whole blocks = 505,472 tokens, at any batch.
    m, h = get_model("llama-3.1-8b"), get_hardware("h100-sxm")
    for context, batch in ((16384, 1), (8192, 16), (1024, 8)):
        s = serving_memory(m, h, context_tokens=context, batch=batch)
        assert s.max_context_tokens_that_fit == 505_472
    assert serving_memory(m, h, context_tokens=16384).max_concurrent_requests == 30
    # vLLM's default gpu_memory_utilization 0.9 keeps 8,494,371,570 B back: 4,051 blocks
    # fewer (31,592 - floor(57,759,505,279 / 2,097,152) = 31,592 - 27,541), 64,816 tokens.
    assert kv_tokens_at_utilization(serving_memory(m, h), 0.9) == 505_472 - 64_816


def test_a_smaller_gpu_profiles_its_own_smaller_token_budget():
    # An L4 (under 70 GiB) gets vLLM's smaller defaults, max_num_batched_tokens 2,048 and
    # max_num_seqs 256 (EngineArgs.get_batch_defaults), so its profiling pass is 2,048 tokens:
    # 24,152,899,584 B less the weights 16,060,522,496, 2,048 x 36,864 x 2 B = 150,994,944,
    # 256 x 128,256 x 4 B = 131,334,144 and the 1.5 GB overhead: 6,310,048,000 B, and the
    # plan's in-flight tokens are at most those 2,048.
    m, h = get_model("llama-3.1-8b"), get_hardware("l4")
    assert kv_cache_room_bytes(m, h, weight_format="bf16", gpus=1) == 6_310_048_000
    s = serving_memory(m, h, context_tokens=8192)
    assert s.activation_tokens == 2048
    # floor(6,310,048,000 / 2,097,152) = 3,008 blocks of 16 tokens.
    assert s.max_context_tokens_that_fit == 48_128
    assert serving_memory(m, get_hardware("h100-sxm"), context_tokens=8192
                          ).activation_tokens == 8192


def test_serving_split_over_gpus_and_min_gpus():
    one = serving_memory(get_model("llama-3.1-70b"), get_hardware("h100-sxm"))
    two = serving_memory(get_model("llama-3.1-70b"), get_hardware("h100-sxm"), gpus=2)
    assert not one.fits and two.fits
    assert two.parts["weights"] == pytest.approx(one.parts["weights"] / 2)
    assert min_gpus_to_serve(one) == 2


def test_serving_context_warning():
    s = serving_memory(get_model("gpt-3-175b"), get_hardware("h100-sxm"), context_tokens=4096, gpus=8)
    assert serving_warnings(s)


def test_serving_rejects_bad_inputs():
    # Checked where the inputs enter: plan()'s serving request.
    for kwargs, field in (({"context_tokens": 0}, "context_tokens"), ({"batch": -1}, "batch"),
                          ({"gpus": 1.5}, "gpus"), ({"weight_format": "x"}, "format")):
        with pytest.raises(EngineError) as e:
            plan(model="llama-3.1-8b", hardware="h100-sxm", **kwargs)
        assert e.value.field == field


def test_training_state_conventions():
    assert sum(training_state_bytes_per_param().values()) == 16
    assert training_state_bytes_per_param() == {
        "weights": 2, "gradients": 2, "master_weights": 4, "first_moment": 4,
        "second_moment": 4}
    assert sum(training_state_bytes_per_param("adam", "mixed-18").values()) == 18
    assert sum(training_state_bytes_per_param("adam", "mixed-20").values()) == 20
    assert sum(training_state_bytes_per_param("adam", "fp32").values()) == 16
    assert sum(training_state_bytes_per_param("sgd-momentum", "mixed-16").values()) == 12
    assert sum(training_state_bytes_per_param("adam-8bit", "mixed-16").values()) == 10
    assert sum(training_state_bytes_per_param("sgd", "fp32").values()) == 8
    # An unknown optimiser is refused where it enters: plan() (and an author's figure).
    with pytest.raises(EngineError, match="Unknown optimizer 'lion'"):
        plan(model="llama-3.1-8b", task="train", optimizer="lion")
    with pytest.raises(EngineError, match="Unknown optimizer 'lion'"):
        figures.train_bytes_per_param("lion")


@pytest.mark.parametrize("sharding,weights,grads,opt", [
    ("none", 2, 2, 12), ("zero1", 2, 2, 12 / 8), ("zero2", 2, 2 / 8, 12 / 8),
    ("zero3", 2 / 8, 2 / 8, 12 / 8)])
def test_training_sharding(sharding, weights, grads, opt):
    m = generic_dense_model(1e9)
    t = training_memory(m, get_hardware("h100-sxm"), gpus=8, sharding=sharding)
    assert t.parts["weights"] == pytest.approx(1e9 * weights)
    assert t.parts["gradients"] == pytest.approx(1e9 * grads)
    assert t.parts["optimizer_states"] == pytest.approx(1e9 * opt)
    assert sum(t.parts.values()) == pytest.approx(t.per_gpu_bytes)


def test_training_tensor_parallel_divides():
    m = get_model("llama-3.1-8b")
    t1 = training_memory(m, get_hardware("h100-sxm"), gpus=8, tp=1)
    t8 = training_memory(m, get_hardware("h100-sxm"), gpus=8, tp=8)
    assert t8.state_bytes == pytest.approx(t1.state_bytes / 8)
    assert t8.parts["activations"] == pytest.approx(t1.parts["activations"] / 8)
    with pytest.raises(EngineError):
        training_memory(m, get_hardware("h100-sxm"), gpus=6, tp=4)


def test_activation_recompute_options():
    # Llama 3.1 8B on one GPU at the default s = 4096, b = 1: 32 layers x s x h x 34 bytes
    # (FlashAttention: no s x s scores) + 32 x s x 32 heads x 4 bytes of softmax statistics
    # without recomputation; selective drops the statistics; full keeps 2 x s x h per layer.
    m = get_model("llama-3.1-8b")
    none = training_memory(m, get_hardware("h100-sxm"), recompute="none").parts["activations"]
    sel = training_memory(m, get_hardware("h100-sxm"), recompute="selective").parts["activations"]
    full = training_memory(m, get_hardware("h100-sxm"), recompute="full").parts["activations"]
    s, h, a, layers = 4096, 4096, 32, 32
    assert none == layers * (s * h * 34 + s * a * 4)
    assert sel == layers * s * h * 34
    assert full == layers * 2 * s * h


def test_one_llama_8b_layer_at_8k_by_hand():
    # One layer of Llama 3.1 8B (h 4,096, 32 heads, 8 KV heads of 128, SwiGLU f 14,336),
    # s = 8,192, b = 1, 16-bit, per token:
    #   norms' inputs 2 x 2 x 4,096 = 16,384
    #   attention: QKV input 8,192 + Q 8,192 + K 2,048 + V 2,048 + output-projection input
    #     8,192 = 28,672
    #   MLP: input 8,192 + gate 28,672 + up 28,672 + their product 28,672 = 94,208
    #   = 139,264 bytes (34 x 4,096); FlashAttention's statistics 32 heads x 4 B = 128.
    # x 8,192 tokens: 1,140,850,688 B kept (selective), + 1,048,576 B (none) =
    # 1,141,899,264 B; full recomputation keeps the input: 2 x 4,096 x 8,192 = 67,108,864 B.
    m = get_model("llama-3.1-8b")
    parts = layer_activations(m, recompute="none", seq_len=8192, micro_batch=1)
    assert (parts.norms, parts.attention, parts.mlp) == (16_384 * 8192, 28_672 * 8192,
                                                         94_208 * 8192)
    assert parts.softmax_stats == 1_048_576 and parts.dropout_masks == 0
    assert activation_bytes_per_layer(m, recompute="none", seq_len=8192, micro_batch=1
                                      ) == 1_141_899_264
    assert activation_bytes_per_layer(m, recompute="selective", seq_len=8192, micro_batch=1
                                      ) == 1_140_850_688
    assert activation_bytes_per_layer(m, recompute="full", seq_len=8192, micro_batch=1
                                      ) == 67_108_864


def test_moe_layer_keeps_the_experts_a_token_visits():
    # Mixtral 8x7B: each token runs through 2 of 8 SwiGLU experts of f 14,336, and each
    # keeps its own gate, up and product: per token norms 16,384 + attention 28,672 (as
    # Llama 3.1 8B) + MLP 8,192 + 6 x 2 x 14,336 = 180,224 -> 225,280 bytes; x 4,096.
    m = get_model("mixtral-8x7b")
    assert activation_bytes_per_layer(m, recompute="selective", seq_len=4096, micro_batch=1
                                      ) == 225_280 * 4096
    full = layer_activations(m, recompute="full", seq_len=4096, micro_batch=1)
    assert full.total == full.norms == 2 * 4096 * 4096


def test_mpt_7b_at_8k_without_recomputation_by_hand():
    # MPT-7B (mosaicml/mpt-7b config.json: 32 layers, d_model 4,096, 32 heads, expansion
    # ratio 4, GELU, no dropout), trained with FlashAttention. Per token per layer: norms
    # 4h + attention 2 x 5h + MLP 2h + 2 x 2 x 16,384 = 32h bytes = 131,072, + 32 x 4 B of
    # softmax statistics. At 8K, b = 1, no recomputation, one GPU:
    #   32 layers x 8,192 x (131,072 + 128) B = 34,393,292,800 B = 34.4 GB.
    mpt = ModelSpec(id="mpt-7b", name="MPT-7B", layers=32, hidden=4096, ffn=16384, heads=32,
                    kv_heads=32, head_dim=128, vocab=50432, max_context=2048,
                    tied_embeddings=True, source="mosaicml/mpt-7b config.json",
                    gated_mlp=False, norm="layernorm")
    mem = training_memory(mpt, get_hardware("h100-sxm"), seq_len=8192, recompute="none")
    assert mem.parts["activations"] == 32 * 8192 * (131_072 + 128) == 34_393_292_800


def test_llama_405b_meta_layout_fits():
    # Llama 3 Herd of Models, Table 4: 16,384 H100s as TP 8 x PP 16 x DP 128, 8K sequences,
    # 16M-token batches; interleaved (2 chunks assumed), micro-batch 1, ZeRO-1 assumed.
    # Each rank runs 16,777,216 / (128 x 8,192) = 16 micro-batches per step, no more than
    # the stages, so the first stage holds 16 in flight x ceil(126 / 16) = 8 layers. One
    # layer per GPU (h 16,384, f 53,248, K and V 1,024 wide): (4h + 2 x (3h + 2,048) + 2h +
    # 6 x 53,248) x 8,192 / 8 = 31.75 x 16,384 x 1,024 = 532,676,608 B; x 128 =
    # 68,182,605,824 B. State: 405,853,388,800 / 8 x 8 / 126 params x (2 + 2 + 12 / 128) B
    # = 13.19 GB; + 1.5 GB overhead: 82.87 GB of the H100's 84.94 GB.
    m, hw = get_model("llama-3.1-405b"), get_hardware("h100-sxm")
    mem = training_memory(m, hw, gpus=16384, tp=8, pp=16, interleave=2, sharding="zero1",
                          seq_len=8192, global_batch_tokens=16_777_216)
    assert mem.micro_batches_per_step == 16 and mem.micro_batches_in_flight == 16
    assert mem.parts["activations"] == 128 * 532_676_608
    params = 405_853_388_800 / 8 * 8 / 126
    assert mem.state_bytes == pytest.approx(params * (4 + 12 / 128))
    assert mem.per_gpu_bytes == pytest.approx(82.87e9, abs=0.01e9)
    assert mem.fits


def test_pipeline_in_flight_micro_batches():
    # 1F1B: the first stage holds pp micro-batches; interleaved with v chunks pp + (pp-1)/v
    # (Korthikanti et al. 2022: L x (1 + (p - 1)/(p v)) layers); never more than a step has.
    assert micro_batches_in_flight(1, 1, 64) == 1
    assert micro_batches_in_flight(16, 1, 64) == 16
    assert micro_batches_in_flight(16, 2, 64) == 16 + 15 / 2
    assert micro_batches_in_flight(16, 2, 16) == 16
    assert micro_batches_in_flight(8, 1, 3) == 3


def test_min_gpus_to_train():
    t = training_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), sharding="zero3")
    n = min_gpus_to_train(t)
    assert n is not None and n > 1
    assert training_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), gpus=n, sharding="zero3").fits
    assert not training_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), gpus=n - 1, sharding="zero3").fits
    assert min_gpus_to_train(training_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"))) is None


def test_mla_selective_recomputation_keeps_the_latents_not_q_k_v() -> None:
    # DeepSeek-V3 (DeepSeek-AI 2024, section 3.2.3) recomputes MLA's up-projections, so a
    # layer keeps the latents: per token 2 x (h 7,168 + q latent 1,536 + kv latent 512 +
    # rotary key 64 + output 128 x 128) = 51,328 B of attention, besides the norms 2 x 2h =
    # 28,672 B and the MLP 2 x (h + 3 f) with f = 18,432 (dense, and 8 routed + 1 shared
    # experts of 2,048 in the MoE layers) = 124,928 B: 204,928 B per token.
    m = get_model("deepseek-v3")
    layer = layer_activations(m, seq_len=4096, micro_batch=1, recompute="selective")
    assert layer.attention == 51_328 * 4096
    assert layer.total == 204_928 * 4096
    # Without recomputation it keeps the per-head Q, K (192 wide) and V (128 wide).
    none = layer_activations(m, seq_len=4096, micro_batch=1, recompute="none")
    assert none.attention == 2 * (7168 + 2 * 128 * 192 + 2 * 128 * 128) * 4096


def test_serving_memory_carries_the_totals_its_sentences_show() -> None:
    from engine.numbers.memory import serving_memory

    mem = serving_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), context_tokens=8192,
                         batch=4, gpus=2)
    # 8,030,261,248 parameters x 2 bytes (bf16), before the split over 2 GPUs.
    assert mem.weights_bytes_total == 8_030_261_248 * 2
    assert mem.parts["weights"] == pytest.approx(mem.weights_bytes_total / 2)
    # Llama 3.1 8B: 2 (K and V) x 32 layers x 8 KV heads x 128 x 2 bytes = 131,072 bytes a
    # token; x 8,192 tokens x 4 requests, before the split.
    assert mem.kv_cache_bytes_per_token == 131_072
    assert mem.kv_cache_bytes_total == 131_072 * 8192 * 4
    # Free bytes beyond its own weights and working space hold KV cache over both GPUs.
    fixed = mem.per_gpu_bytes - mem.parts["kv_cache"]
    assert mem.kv_tokens_that_fit(fixed) == 0
    assert mem.kv_tokens_that_fit(fixed + 131_072) == 2  # 131,072 bytes on each of 2 GPUs


def test_a_system_and_a_rent_or_own_record_carry_their_sums() -> None:
    from engine.numbers.catalog import get_system
    from engine.numbers.cost import rent_vs_own
    from engine.numbers.units import HOURS_PER_YEAR

    assert get_system("dgx-1").cpu_cores == 112  # two 56-core Xeons
    r = rent_vs_own(rent_usd_per_gpu_hour=2.0, purchase_usd=80_000.0, years=4.0, power_W=1000.0,
                    pue=1.3, usd_per_kWh=0.1, gpus=8, utilisation=0.5,
                    overhead_fraction_per_year=0.1)
    # Per GPU $10,000: capital $10,000 / (4 years of hours), overhead 10 % of it a year.
    hours = HOURS_PER_YEAR
    assert r.fixed_usd_per_hour == pytest.approx(10_000 / (4 * hours) + 10_000 * 0.1 / hours)


@pytest.mark.parametrize(("model", "gpus", "weight_format", "kv_format", "context"), [
    ("llama-3.1-8b", 1, "fp8", "bf16", 256),
    ("llama-3.1-8b", 1, "fp8", "fp8", 256),
    ("llama-3.1-8b", 1, "bf16", "bf16", 8192),
    ("llama-3.1-70b", 4, "bf16", "bf16", 4096),
    ("mixtral-8x7b", 2, "bf16", "fp8", 1024),
])
def test_max_concurrent_requests_is_a_batch_that_fits(model, gpus, weight_format, kv_format,
                                                      context) -> None:
    def serving(batch: int):
        return serving_memory(get_model(model), get_hardware("h100-sxm"), gpus=gpus,
                              weight_format=weight_format, kv_format=kv_format,
                              context_tokens=context, batch=batch)
    n = serving(1).max_concurrent_requests
    assert n > 1
    assert serving(n).fits
    # The count is what the serving engine's cache holds, in whole 16-token blocks, unless
    # the batch's own logits (past the scheduler's 1,024 running sequences) run out first.
    room = serving(1).max_context_tokens_that_fit
    request = -(-context // 16) * 16
    assert n * request <= room
    assert (n + 1) * request > room or not serving(n + 1).fits
    assert serving(n).max_concurrent_requests == n  # the same count whatever the batch


def test_a_phone_is_charged_its_own_runtime_not_a_servers() -> None:
    # llama.cpp on an iPhone (Apple A14), Llama 3.2 1B Q4_K_M at 1,024 tokens: a 254.50 MiB
    # compute buffer + a 0.49 MiB output buffer (carlostarrats/Control-LLM Console.md
    # @104a2cfb) = 254.99 MiB = 267,376,394 bytes; most of it is one 512-token batch's
    # logits, 512 x 128,256 x 4 bytes = 262,668,288 bytes = 250.5 MiB.
    phone = get_hardware("apple-a17-pro")
    assert phone.serving_overhead_bytes == 267_376_394.0
    assert 512 * 128_256 * 4 == 262_668_288 == 250.5 * 2**20
    mem = serving_memory(get_model("llama-3.2-1b"), phone, weight_format="int4",
                         context_tokens=4096)
    assert mem.parts["runtime_overhead"] == 267_376_394.0
    assert mem.per_gpu_bytes == pytest.approx(sum(mem.parts.values()))
    said = [a for a in memory_assumptions(mem) if a.startswith("Runtime overhead")]
    assert said == [f"Runtime overhead: 0.267 GB, measured. {phone.serving_overhead_basis}"]
    # A server GPU, and a Mac (no measurement of its runtime here), keep the 1.5 GB allowance.
    for chip in ("h100-sxm", "apple-m2-ultra"):
        server = serving_memory(get_model("llama-3.2-1b"), get_hardware(chip))
        assert server.parts["runtime_overhead"] == RUNTIME_OVERHEAD_BYTES == 1.5e9
