"""The Apple and edge chips people own: each figure against its source, each plans a decode."""

import json

import pytest

from engine.lesson.plans.plan_json import plan_to_dict
from engine.numbers.catalog.hardware import get_hardware
from engine.numbers.catalog.links import get_links
from engine.numbers.plan import plan

OWNED_CHIPS = ["apple-m3-max", "apple-m4-max", "apple-m3-ultra", "jetson-agx-orin"]
GiB = 2**30


def _json(p: object) -> dict:
    return json.loads(json.dumps(plan_to_dict(p), allow_nan=False))  # type: ignore[arg-type]


@pytest.mark.parametrize("chip", OWNED_CHIPS)
def test_owned_chip_is_sourced_with_links(chip: str) -> None:
    hw = get_hardware(chip)
    assert hw.kind == "soc" and hw.source and hw.memory_basis and hw.assumptions
    assert hw.confidence in ("low", "medium")
    assert get_links(chip).source


def test_apple_m3_max() -> None:
    # Apple newsroom, October 2023: 40-core GPU, 128 GB, 400 GB/s. Metal's default working set
    # on a 128 GiB Mac: 107.52 GiB (antirez/ds4 pull request #893). GPU clock 1,398 MHz
    # (hmc-tech.com): 40 x 128 x 2 x 1.398e9 = 14.3 TFLOP/s.
    hw = get_hardware("apple-m3-max")
    assert hw.memory_bytes == round(107.52 * GiB)
    assert hw.bandwidth_bytes_per_s == pytest.approx(400e9)
    assert hw.peak_flops_per_s("fp32") == pytest.approx(40 * 128 * 2 * 1.398e9, rel=3e-3)  # three figures
    assert hw.lanes == 40 * 128


def test_apple_m4_max() -> None:
    # Apple newsroom, October 2024: 40-core GPU, 128 GB, 546 GB/s. Clock 1,678 MHz
    # (hmc-tech.com): 40 x 128 x 2 x 1.678e9 = 17.2 TFLOP/s.
    hw = get_hardware("apple-m4-max")
    assert hw.memory_bytes == round(107.52 * GiB)
    assert hw.bandwidth_bytes_per_s == pytest.approx(546e9)
    assert hw.peak_flops_per_s("fp32") == pytest.approx(40 * 128 * 2 * 1.678e9, rel=3e-3)  # three figures


def test_apple_m3_ultra() -> None:
    # Apple newsroom, March 2025: 80-core GPU, up to 512 GB, 819 GB/s; 75 % of 512 GiB as
    # the working set (assumed, as for the M2 Ultra); 80 x 128 x 2 x 1.398e9 = 28.6 TFLOP/s.
    hw = get_hardware("apple-m3-ultra")
    assert hw.memory_bytes == 0.75 * 512 * GiB
    assert hw.bandwidth_bytes_per_s == pytest.approx(819e9)
    assert hw.peak_flops_per_s("fp32") == pytest.approx(80 * 128 * 2 * 1.398e9, rel=3e-3)  # three figures


def test_jetson_agx_orin() -> None:
    # NVIDIA Jetson AGX Orin data sheet DS-10662-001: 204.8 GB/s; GPU 2,048 CUDA cores at
    # 1.3 GHz (x 2 = 5.3 TFLOP/s fp32), 170 sparse INT8 TOPS for the GPU (275 is the module
    # with its DLAs), so 85 dense; fp16 half of that; 60 W at MAXN.
    hw = get_hardware("jetson-agx-orin")
    assert hw.bandwidth_bytes_per_s == pytest.approx(204.8e9)
    assert hw.peak_flops_per_s("fp32") == pytest.approx(2048 * 2 * 1.3e9, rel=1e-2)
    assert hw.peak_flops_per_s("int8") == 170e12 / 2
    assert hw.peak_flops_per_s("bf16") == hw.peak_flops_per_s("int8") / 2
    assert hw.power_W == 60
    assert hw.memory_bytes == round(0.9 * 64 * GiB)


# Llama 3.2 1B in int4 at batch 1: each decode step reads 1,235,814,400 x 0.5 B of weights
# and the KV cache, 32,768 B a token (16 layers x 8 KV heads x 64 x 2 (K and V) x 2 B), at
# the decode's mean context of 1,024 + 128 = 1,152 tokens. At best it runs at bandwidth.
_STEP_BYTES = 1_235_814_400 * 0.5 + 1152 * 32768


@pytest.mark.parametrize(("chip", "bandwidth_bytes_per_s"), [
    ("apple-m3-max", 400e9), ("apple-m4-max", 546e9), ("apple-m3-ultra", 819e9),
    ("jetson-agx-orin", 204.8e9)])
def test_llama_1b_int4_decode_at_best(chip: str, bandwidth_bytes_per_s: float) -> None:
    serve = _json(plan(model="llama-3.2-1b", hardware=chip, gpus=1, weight_format="int4"))["serve"]
    assert serve["bound"] == "memory"
    assert serve["decode_seconds_per_token"] == pytest.approx(
        _STEP_BYTES / bandwidth_bytes_per_s, rel=1e-9)
    assert 0 < serve["expected"]["output_tokens_per_s"] < serve["output_tokens_per_s"]
