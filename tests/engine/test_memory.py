import pytest

from engine.lesson.figures import prose as figures
from engine.lesson.figures.prose import get_figure
from engine.numbers.catalog import generic_dense_model, get_hardware, get_model
from engine.numbers.errors import EngineError
from engine.numbers.memory import (
    kv_cache_bytes_per_token,
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
    m = get_model("llama-3.1-8b")
    none = training_memory(m, get_hardware("h100-sxm"), recompute="none").parts["activations"]
    sel = training_memory(m, get_hardware("h100-sxm"), recompute="selective").parts["activations"]
    full = training_memory(m, get_hardware("h100-sxm"), recompute="full").parts["activations"]
    s, h, a, layers = 4096, 4096, 32, 32
    assert none == pytest.approx(layers * s * h * (34 + 5 * a * s / h))
    assert sel == pytest.approx(layers * 34 * s * h)
    assert full == pytest.approx(layers * 2 * s * h)


def test_min_gpus_to_train():
    t = training_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), sharding="zero3")
    n = min_gpus_to_train(t)
    assert n is not None and n > 1
    assert training_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), gpus=n, sharding="zero3").fits
    assert not training_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), gpus=n - 1, sharding="zero3").fits
    assert min_gpus_to_train(training_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"))) is None
