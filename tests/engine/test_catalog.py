import json

import pytest

from engine.numbers.catalog import (
    CloudPrice,
    as_hardware,
    as_model,
    catalog_dict,
    generic_dense_model,
    get_hardware,
    get_model,
    get_system,
    list_hardware,
    list_models,
    prices,
    resolve_model,
)
from engine.numbers.errors import EngineError

MODELS = ["llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.2-1b", "llama-3.2-3b",
          "mistral-7b", "mixtral-8x7b", "qwen2.5-7b", "qwen2.5-72b", "deepseek-v3",
          "gpt-3-175b", "gemma-2-9b"]
HARDWARE = ["h100-sxm", "h100-pcie", "h200", "a100-40gb", "a100-80gb", "b200", "l4", "l40s",
            "rtx-4090", "mi300x", "tpu-v5e", "tpu-v5p", "xeon-8480c", "epyc-9654",
            "apple-m2-ultra", "apple-a17-pro"]


def test_required_models_and_hardware_present():
    ids = {m.id for m in list_models()}
    assert set(MODELS) <= ids
    assert set(HARDWARE) <= {h.id for h in list_hardware()}


@pytest.mark.parametrize("model_id", MODELS)
def test_every_model_has_source_and_derived_params(model_id):
    m = get_model(model_id)
    assert m.source and m.params > 0 and 0 < m.active_params <= m.params
    assert m.published_params > 0


def test_every_chip_has_source_memory_bandwidth_and_a_peak():
    for h in list_hardware():
        assert h.source and h.memory_bytes > 0 and h.bandwidth_bytes_per_s > 0
        assert h.peak_flops_per_s("bf16") > 0


def test_moe_total_vs_active():
    m = get_model("mixtral-8x7b")
    assert m.is_moe and m.active_params < m.params / 3
    assert get_model("deepseek-v3").attention == "mla"


def test_peaks_are_dense_not_sparse():
    # H100 SXM datasheet: 1,979 TFLOP/s bf16 is with 2:4 sparsity; dense is 989.4.
    assert get_hardware("h100-sxm").peak_flops_per_s("bf16") == pytest.approx(989.4e12)
    assert get_hardware("a100-80gb").peak_flops_per_s("bf16") == pytest.approx(312e12)


def test_missing_peak_raises_and_compute_peak_falls_back():
    a100 = get_hardware("a100-80gb")
    with pytest.raises(EngineError):
        a100.peak_flops_per_s("fp8")
    assert a100.compute_peak("fp8") == (312e12, "bf16")
    assert get_hardware("h100-sxm").compute_peak("int4") == (989.4e12, "bf16")


def test_cpu_peak_derived_low_confidence():
    x = get_hardware("xeon-8480c")
    assert x.peak_flops_per_s("bf16") == pytest.approx(56 * 1024 * 2.0e9)
    assert x.confidence == "low" and x.kind == "cpu"


def test_dgx1():
    s = get_system("dgx-1")
    assert s.gpu.id == "h100-sxm" and s.gpu_count == 8
    assert s.cpu.id == "xeon-8480c" and s.cpu_count == 2
    # 8 x 79.11 GiB (the H100's allocatable memory, vllm-project/vllm #27508) = 679.5 GB;
    # 2 TB of RAM = 32 x 64 GiB DIMMs = 2,048 GiB.
    assert s.gpu_memory_bytes == 8 * round(79.11 * 2**30) and s.ram_bytes == 2048 * 2**30
    assert s.nvlink_bytes_per_s_per_gpu == 900e9 and s.power_W == 10200


def test_prices_dated_and_sourced():
    p = prices()
    assert all(c.date and c.source for c in p.cloud)
    assert all(c.date and c.source for c in p.purchases)
    assert p.default_cloud("h100-sxm").usd_per_gpu_hour > 0
    assert p.default_purchase("h100-sxm").gpu_count == 8
    assert p.power_usd_per_kWh == pytest.approx(0.0806) and p.pue == pytest.approx(1.58)
    with pytest.raises(EngineError):
        p.default_cloud("l4")


def test_a_superseded_price_stays_with_its_history_but_is_never_a_default():
    p = prices()
    aws = next(c for c in p.cloud_for("h100-sxm") if c.offer.startswith("p5.48xlarge"))
    assert aws.usd_per_gpu_hour == 12.29 and not aws.current and "June 2025" in aws.superseded
    assert all(c.current for c in p.cloud if c.default)
    with pytest.raises(EngineError):
        CloudPrice(provider="X", offer="y", hardware="h100-sxm", usd_per_gpu_hour=1.0,
                   date="2025-01-01", source="z", default=True, superseded="cut")


def test_generic_model_keeps_typed_count_and_states_shapes():
    g = generic_dense_model("7.5e9")
    assert g.params == 7_500_000_000 and g.assumptions
    assert g.layers > 0 and g.hidden % 256 == 0
    for bad in (-1, 0, 1e3, float("nan"), float("inf"), "x", True, 1e20):
        with pytest.raises(EngineError):
            generic_dense_model(bad)


def test_resolve_model():
    assert resolve_model("llama-3.1-8b").id == "llama-3.1-8b"
    assert resolve_model(params=1e9).params == 10**9
    with pytest.raises(EngineError):
        resolve_model()
    with pytest.raises(EngineError):
        resolve_model("llama-3.1-8b", 1e9)
    with pytest.raises(EngineError):
        get_model("gpt-5")
    assert as_model("mistral-7b") is get_model("mistral-7b")
    assert as_hardware("l4") is get_hardware("l4")


def test_catalog_dict_is_json():
    text = json.dumps(catalog_dict(), allow_nan=False)
    assert "llama-3.1-8b" in text and "dgx-1" in text


def test_reference_only_models_are_found_but_not_listed():
    # Llama 2 is in the catalogue for the reality check only (see engine/lesson/reality/published.py).
    from engine.numbers.catalog import get_model

    listed = {m.id for m in list_models()}
    everything = {m.id for m in list_models(include_reference=True)}
    assert {"llama-2-7b", "llama-2-70b"} <= everything - listed
    assert get_model("llama-2-7b").params == 6_738_415_616  # released checkpoint's count


def test_the_newer_chips_are_priced_only_where_a_price_is_published():
    p = prices()
    # Rent: a cloud's on-demand price per chip-hour.
    assert p.default_cloud("tpu-v6e").usd_per_gpu_hour == pytest.approx(2.70)
    # Purchase: a maker's list or launch price, per item.
    bought = {b.hardware: b for b in p.purchases}
    assert bought["rtx-3090"].usd == 1499 and bought["rtx-5090"].usd == 1999
    assert bought["gaudi-3"].usd_per_gpu == pytest.approx(125000 / 8)
    assert "base price" in bought["apple-m4-max"].item and "base price" in bought["apple-m3-ultra"].item
    for chip in ("tpu-v6e", "gaudi-3", "rtx-3090", "rtx-5090", "apple-m4-max", "apple-m3-ultra"):
        offers = [*p.cloud_for(chip), *(b for b in p.purchases if b.hardware == chip)]
        assert offers and all(o.date and o.source for o in offers), chip
    # None published: no price, and the engine says so.
    for chip in ("h20", "b300", "gb200", "mi250x", "mi325x", "mi355x", "t4", "apple-m3-max",
                 "jetson-agx-orin"):
        assert not p.cloud_for(chip) and chip not in bought, chip
        with pytest.raises(EngineError, match="No cloud price in the catalogue"):
            p.default_cloud(chip)
