"""The numbers the lesson's prose quotes most (the figures in the comments), reproduced by the engine."""

import pytest

from engine.lesson.plans.plan_json import plan_to_dict
from engine.numbers.catalog import get_hardware, get_model, get_system
from engine.numbers.compute import flops_per_token, training_flops, training_seconds
from engine.numbers.formats import FORMATS
from engine.numbers.memory import (
    kv_cache_bytes_per_token,
    serving_memory,
    training_memory,
    training_state_bytes_per_param,
    weights_bytes,
)
from engine.numbers.plan import plan
from engine.numbers.roofline import ridge_point
from engine.numbers.serving import decode_step
from engine.numbers.units import GB, SECONDS_PER_DAY, SECONDS_PER_YEAR

L8 = "llama-3.1-8b"


def test_llama_8b_params_and_bf16_weights():
    m = get_model(L8)
    assert m.params == 8_030_261_248  # "8.03 B parameters"
    assert round(m.params / 1e9, 2) == 8.03
    assert round(weights_bytes(m.params, "bf16") / GB, 2) == 16.06  # "16.06 GB in bf16"


def test_llama_8b_serving_plan_about_19_of_80_fits():
    s = serving_memory(get_model(L8), get_hardware("h100-sxm"))
    assert round(s.per_gpu_bytes / GB) == 19  # "about 19 GB"
    # "of the 80 GB H100": 79.11 GiB a program can allocate (vllm-project/vllm #27508) = 84.94 GB
    assert s.capacity_bytes == round(79.11 * 2**30) and round(s.capacity_bytes / GB, 2) == 84.94
    assert s.fits  # "fits"
    p = plan(model=L8, hardware="h100-sxm", gpus=1, task="serve")
    assert round(p.memory.per_gpu_bytes / GB) == 19 and p.memory.fits


def test_two_x_params_per_token_and_six_n_d():
    m = get_model(L8)
    # "a little under 2 x parameters": the 525 M-weight embedding is a lookup, not a matmul.
    assert flops_per_token(m) == 2 * (m.params - 128_256 * 4096 - 266_240)
    assert training_flops(m.params, 1e12) == 6 * m.params * 1e12


def test_sixteen_bytes_per_param_eight_times_serving():
    bpp = training_state_bytes_per_param("adam", "mixed-16")
    assert sum(bpp.values()) == 16
    assert sum(bpp.values()) / FORMATS["bf16"].bytes_per_number == 8


def test_training_llama_8b_on_one_h100():
    t = training_memory(get_model(L8), get_hardware("h100-sxm"))
    assert round(t.state_bytes / GB, 1) == 128.5  # "128.5 GB of state"
    assert not t.fits  # "does not fit"


def test_llama_70b_bf16_about_141_gb_does_not_fit():
    m = get_model("llama-3.1-70b")
    assert round(weights_bytes(m.params, "bf16") / GB) == 141
    assert not serving_memory(m, get_hardware("h100-sxm")).fits


def test_single_user_decode_4_5_ms_223_tokens_per_s():
    # 15,009,857,536 bytes (all weights but the untied input embedding, plus its one row) /
    # 3.35 TB/s = 4.48 ms, 223 tokens/s; the plan reads 1,024 tokens of KV cache too.
    d = decode_step(get_model(L8), get_hardware("h100-sxm"))
    assert round(d.seconds * 1e3, 1) == 4.5
    assert 220 <= d.tokens_per_s_per_user <= 226
    p = plan(model=L8)
    assert round(plan_to_dict(p)["serve"]["decode_seconds_per_token"] * 1e3, 1) == 4.5


def test_h100_ridge_point_295():
    assert round(ridge_point(get_hardware("h100-sxm"), "bf16")) == 295
    h = get_hardware("h100-sxm")
    assert round(h.peak_flops_per_s("bf16") / 1e12) == 989  # "989 TFLOP/s dense"
    assert h.bandwidth_bytes_per_s == 3.35e12


def test_gb_means_ten_to_the_ninth():
    assert GB == 1e9


def test_story_figures():
    s = get_system("dgx-1")
    # 8 x 79.11 GiB; 2 TB of RAM = 2,048 GiB (32 x 64 GiB DIMMs).
    assert s.gpu_memory_bytes == 8 * round(79.11 * 2**30) and s.gpu_count == 8
    assert s.ram_bytes == 2048 * 2**30
    assert s.cpu_count == 2 and s.cpu.id == "xeon-8480c"
    assert kv_cache_bytes_per_token(get_model(L8), "bf16") == 131_072


def test_405b_scale_example():
    # "a 405B model on about 15.6 T tokens is about 3.8e25 FLOPs; on one H100 at 40 % MFU
    # that is thousands of years; on 16,384 H100s it is a couple of months."
    f = training_flops(405e9, 15.6e12)
    assert f == pytest.approx(3.8e25, rel=0.01)
    one = training_seconds(f, 1, 989.4e12, 0.4)
    assert 1000 < one / SECONDS_PER_YEAR < 10000
    many = training_seconds(f, 16384, 989.4e12, 0.4)
    assert 45 < many / SECONDS_PER_DAY < 90
