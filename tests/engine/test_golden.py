"""Golden tests: the engine against PUBLISHED figures, the source beside each number."""

import pytest

from engine.numbers.catalog import generic_dense_model, get_hardware, get_model
from engine.numbers.compute import mfu_from_throughput, training_flops, training_seconds
from engine.numbers.memory import (
    activation_bytes_per_layer,
    kv_cache_bytes_per_token,
    training_memory,
    training_state_bytes_per_param,
)
from engine.numbers.units import GB


@pytest.mark.parametrize("model_id,published", [
    # Exact counts of the released safetensors (HF model repos; Meta model cards say 8B/70B/405B).
    ("llama-3.1-8b", 8_030_261_248),
    ("llama-3.1-70b", 70_553_706_496),
    ("llama-3.1-405b", 405_853_388_800),
    # Llama 3.2 model card: "1B (1.23B)", "3B (3.21B)"; exact safetensors counts.
    ("llama-3.2-1b", 1_235_814_400),
    ("llama-3.2-3b", 3_212_749_824),
    # Mistral-7B-v0.1 safetensors: 7,241,732,096.
    ("mistral-7b", 7_241_732_096),
    # Mixtral 8x7B safetensors: 46,702,792,704 (paper abstract: "47B parameters").
    ("mixtral-8x7b", 46_702_792_704),
    # Qwen2.5-7B model card: 7.61B; safetensors 7,615,616,512 (qkv bias included).
    ("qwen2.5-7b", 7_615_616_512),
    # Qwen2.5-72B model card: 72.7B; safetensors 72,706,203,648.
    ("qwen2.5-72b", 72_706_203_648),
    # Gemma 2 9B safetensors: 9,241,705,984 (tied embeddings, 4 norms per layer).
    ("gemma-2-9b", 9_241_705_984),
])
def test_exact_published_param_counts(model_id, published):
    assert get_model(model_id).params == published


def test_gpt3_params():
    # Brown et al. 2020, Table D.1: GPT-3 175B has 174,600 M parameters.
    assert get_model("gpt-3-175b").params == pytest.approx(174.6e9, rel=1e-3)


def test_deepseek_v3_total_and_active():
    # DeepSeek-V3 README / technical report: 671B total, 37B activated per token.
    m = get_model("deepseek-v3")
    assert m.params == pytest.approx(671e9, rel=1e-3)
    assert m.active_params == pytest.approx(37e9, rel=0.03)


def test_mixtral_active():
    # Mixtral of Experts (Jiang et al. 2024), abstract: "13B active parameters" (12.9B).
    assert get_model("mixtral-8x7b").active_params == pytest.approx(12.9e9, rel=0.01)


def test_gpt3_training_flops():
    # Brown et al. 2020, Table D.1: GPT-3 175B took 3.14e23 FLOPs
    # (6 x 174.6e9 parameters x 300e9 tokens).
    assert training_flops(174.6e9, 300e9) == pytest.approx(3.14e23, rel=0.01)


def test_llama3_405b_training_flops():
    # Llama 3 Herd of Models (Dubey et al. 2024), section 3.2.1: 405B trained with
    # 3.8 x 10^25 FLOPs on 15.6T tokens.
    assert training_flops(405e9, 15.6e12) == pytest.approx(3.8e25, rel=0.01)


def test_chinchilla_training_flops():
    # Hoffmann et al. 2022: Chinchilla 70B on 1.4T tokens, same compute as Gopher,
    # 5.76 x 10^23 FLOPs (Table 3); 6 N D gives 5.88e23, within 2 %.
    assert training_flops(70e9, 1.4e12) == pytest.approx(5.76e23, rel=0.025)


def test_palm_mfu():
    # Chowdhery et al. 2022 (PaLM), Table 3 and appendix B: PaLM 540B at 238.3K tokens/s on
    # 6144 TPU v4 chips (275 TFLOP/s bf16 each) = 46.2 % MFU, counting attention
    # as 12 x L x H x Q x T (L=118, H=48, Q=256, T=2048) per token.
    attention = 12 * 118 * 48 * 256 * 2048
    mfu = mfu_from_throughput(238.3e3, 540.35e9, 6144, 275e12, extra_flops_per_token=attention)
    assert mfu == pytest.approx(0.462, abs=0.002)


def test_zero_paper_model_states():
    # Rajbhandari et al. 2020 (ZeRO), Figure 1: 7.5B model, Adam mixed precision (K = 12):
    # (2 + 2 + 12) x 7.5B = 120 GB per GPU with plain data parallelism; with ZeRO stage 3
    # (P_os+g+p) over 64 GPUs, 1.9 GB (120 / 64 = 1.875).
    m = generic_dense_model(7.5e9)
    assert training_memory(m, get_hardware("a100-80gb")).state_bytes == pytest.approx(120 * GB)
    z3 = training_memory(m, get_hardware("a100-80gb"), gpus=64, sharding="zero3").state_bytes
    assert z3 == pytest.approx(1.875 * GB)
    # Same figure: P_os 31.4 GB, P_os+g 16.6 GB.
    z1 = training_memory(m, get_hardware("a100-80gb"), gpus=64, sharding="zero1").state_bytes
    z2 = training_memory(m, get_hardware("a100-80gb"), gpus=64, sharding="zero2").state_bytes
    assert z1 == pytest.approx(31.4 * GB, abs=0.05 * GB)  # figure rounds to 3 digits
    assert z2 == pytest.approx(16.6 * GB, abs=0.05 * GB)


def test_megatron_distributed_optimizer_bytes():
    # Megatron-LM docs, 'Distributed Optimizer': bf16 params + fp32 grads = 18 bytes,
    # fp16 params + fp16 grads = 20 bytes per parameter (non-distributed, Adam).
    assert sum(training_state_bytes_per_param("adam", "mixed-18").values()) == 18
    assert sum(training_state_bytes_per_param("adam", "mixed-20").values()) == 20


def test_vllm_opt13b_kv_cache():
    # Kwon et al. 2023 (vLLM / PagedAttention), section 3: OPT-13B's KV cache is 800 KB per
    # token: 2 (key, value) x 5120 (hidden) x 40 (layers) x 2 bytes (fp16) = 819,200 B.
    assert kv_cache_bytes_per_token(get_model("opt-13b"), "fp16") == 819_200


def test_korthikanti_selective_recompute_saves_70_percent_for_gpt3():
    # Korthikanti et al. 2022, section 5: for GPT-3 175B (a = 96, s = 2048, h = 12288)
    # selective recomputation cuts activation memory by 70 % (34 vs 34 + 5as/h = 114), with
    # the paper's standard attention and dropout.
    m = get_model("gpt-3-175b")
    paper = {"flash_attention": False, "dropout": True}
    none = activation_bytes_per_layer(m, seq_len=2048, micro_batch=1, recompute="none", **paper)
    sel = activation_bytes_per_layer(m, seq_len=2048, micro_batch=1, recompute="selective",
                                     **paper)
    assert 1 - sel / none == pytest.approx(0.70, abs=0.01)


def test_korthikanti_per_layer_formula():
    # Korthikanti et al. 2022, equation (1): activations per layer = s*b*h*(34 + 5as/h)
    # bytes with no parallelism; with tensor + sequence parallelism divided by t (Table 2),
    # for the paper's GPT (a 4h GELU MLP, standard attention, dropout). With FlashAttention
    # and no dropout the scores and the two masks go: 32 x s x b x h + 4 x a x s x b.
    m = get_model("gpt-3-175b")
    s, b, h, a = 2048, 1, 12288, 96
    paper = {"flash_attention": False, "dropout": True}
    assert activation_bytes_per_layer(m, seq_len=s, micro_batch=b, recompute="none", **paper
                                      ) == pytest.approx(s * b * h * (34 + 5 * a * s / h))
    assert activation_bytes_per_layer(m, seq_len=s, micro_batch=b, recompute="none", tp=8,
                                      **paper) == pytest.approx(s * b * h * (34 + 5 * a * s / h) / 8)
    assert activation_bytes_per_layer(m, seq_len=s, micro_batch=b, recompute="selective",
                                      tp=8, **paper) == pytest.approx(s * b * h * 34 / 8)
    assert activation_bytes_per_layer(m, seq_len=s, micro_batch=b, recompute="none"
                                      ) == s * b * h * 32 + 4 * a * s * b


def test_llama3_training_time_scale():
    # Llama 3 paper, Table 4: 16,384 H100s at about 400 TFLOP/s per GPU (38-43 % MFU);
    # 3.8e25 FLOPs at 400 TFLOP/s x 16,384 = about 67 days of pure compute (the paper's
    # pre-training took roughly 54 days of the 16K-GPU phase plus other stages).
    seconds = training_seconds(3.8e25, 16384, 400e12, 1.0)
    assert 60 < seconds / 86400 < 70
