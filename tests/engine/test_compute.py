import pytest

from engine.lesson.figures import prose as figures
from engine.numbers.catalog import get_model
from engine.numbers.compute import (
    flops_per_token,
    gpus_for_deadline,
    mfu_from_throughput,
    tokens_per_s_at_mfu,
    training_flops,
    training_seconds,
)
from engine.numbers.errors import EngineError
from engine.numbers.plan import plan


def test_flops_per_token_uses_active_params_without_the_embedding():
    # Llama 3.1 8B: 2 x (8,030,261,248 parameters - 128,256 x 4,096 embedding) =
    # 2 x 7,504,924,672 = 15,009,849,344 minus the norms' 2 x 266,240 weights (0 FLOPs).
    assert flops_per_token(get_model("llama-3.1-8b")) == 2 * (8_030_261_248 - 128_256 * 4096 - 266_240)
    mix = get_model("mixtral-8x7b")
    assert flops_per_token(mix) < 2 * mix.active_params < 2.1 * flops_per_token(mix)


def test_training_flops():
    assert training_flops(1e9, 1e12) == 6e21
    assert training_flops(1e9, 1e12, recompute="full") == 8e21
    assert training_flops(1e9, 1e12, recompute="selective") == 6e21
    # An unknown recomputation is refused where it enters: plan().
    with pytest.raises(EngineError) as e:
        plan(model="llama-3.1-8b", task="train", recompute=3)
    assert e.value.field == "recompute"


def test_time_and_mfu_round_trip():
    f = training_flops(8e9, 1e12)
    s = training_seconds(f, 8, 989.4e12, 0.4)
    assert s == pytest.approx(f / (8 * 989.4e12 * 0.4))
    tps = 1e12 / s
    assert mfu_from_throughput(tps, 8e9, 8, 989.4e12) == pytest.approx(0.4)
    assert tokens_per_s_at_mfu(8e9, 8, 989.4e12, 0.4) == pytest.approx(tps)
    assert gpus_for_deadline(f, s, 989.4e12, 0.4) == 8


def test_bad_inputs():
    # A GPU count or an MFU out of range is refused where it enters: an author's figure.
    with pytest.raises(EngineError, match="GPU count"):
        figures.train_time("llama-3.1-8b", 1e12, gpus=0)
    with pytest.raises(EngineError, match="MFU"):
        figures.train_time("llama-3.1-8b", 1e12, mfu=1.5)
    with pytest.raises(EngineError):
        mfu_from_throughput(1e9, 8e9, 1, 989.4e12)  # > 100 %
