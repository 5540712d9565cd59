"""The chips added beyond the lesson's own: each sourced, each usable in a plan."""

import json

import pytest

from engine.lesson.plans.plan_json import plan_to_dict
from engine.numbers.catalog.hardware import get_hardware
from engine.numbers.catalog.links import get_links
from engine.numbers.plan import plan

NEW_CHIPS = ["h20", "b300", "gb200", "mi250x", "mi325x", "mi355x", "tpu-v6e", "gaudi-3",
             "rtx-3090", "rtx-5090", "a10g", "t4"]


def _json(p: object) -> dict:
    return json.loads(json.dumps(plan_to_dict(p), allow_nan=False))  # type: ignore[arg-type]


@pytest.mark.parametrize("chip", NEW_CHIPS)
def test_new_chip_is_sourced_with_links(chip: str) -> None:
    hw = get_hardware(chip)
    assert hw.source and hw.memory_basis and hw.memory_marketed_GB > 0
    assert hw.memory_bytes > 0 and hw.bandwidth_bytes_per_s > 0
    assert hw.peak_flops_per_s("bf16") > 0
    assert get_links(chip).source


@pytest.mark.parametrize("chip", NEW_CHIPS)
def test_new_chip_plans_serve_and_train(chip: str) -> None:
    serve = _json(plan(model="llama-3.1-8b", hardware=chip, gpus=1))
    assert serve["serve"]["output_tokens_per_s"] > 0
    assert serve["serve"]["expected"]["output_tokens_per_s"] > 0
    train = _json(plan(model="llama-3.1-8b", hardware=chip, gpus=8, task="train",
                       sharding="zero3", tokens=1e9))
    assert train["train"]["seconds"] > 0 and train["train"]["expected"]["seconds"] > 0
    fp8 = _json(plan(model="llama-3.1-70b", hardware=chip, gpus=8, weight_format="fp8"))
    assert fp8["serve"]["expected"]["output_tokens_per_s"] > 0


def test_hand_worked_peaks_and_memory() -> None:
    # TPU v6e documentation: 918 TFLOP/s bf16, 1,638 GB/s, 32 GB (taken as GiB).
    v6e = get_hardware("tpu-v6e")
    assert v6e.peak_flops_per_s("bf16") == pytest.approx(918e12)
    assert v6e.bandwidth_bytes_per_s == pytest.approx(1.638e12)
    assert v6e.memory_bytes == 32 * 2**30
    # MI355X: 2,400 MHz x 512 FMA x 2 x 1,024 matrix cores = 2,516.6 TFLOP/s bf16.
    assert get_hardware("mi355x").peak_flops_per_s("bf16") == pytest.approx(
        2400e6 * 512 * 2 * 1024, rel=1e-4)
    # One MI250X GCD is half the package's 383 TFLOP/s and 128 GiB.
    gcd = get_hardware("mi250x")
    assert gcd.peak_flops_per_s("bf16") == pytest.approx(383e12 / 2)
    assert gcd.memory_bytes == 64 * 2**30
    # RTX 3090: 23.70 GiB allocatable; bf16 at its fp32-accumulate rate, half of fp16's.
    r = get_hardware("rtx-3090")
    assert r.memory_bytes == round(23.70 * 2**30)
    assert r.peak_flops_per_s("bf16") * 2 == r.peak_flops_per_s("fp16")
