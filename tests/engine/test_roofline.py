import pytest

from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.errors import EngineError
from engine.numbers.roofline import (
    attainable_flops_per_s,
    bound,
    decode_intensity,
    prefill_intensity,
    ridge_point,
    roofline,
    train_step_intensity,
)


def test_ridge_points():
    assert ridge_point(get_hardware("h100-sxm")) == pytest.approx(989.4 / 3.35)
    assert ridge_point(get_hardware("a100-80gb")) == pytest.approx(312 / 2.039)
    with pytest.raises(EngineError):
        ridge_point(get_hardware("a100-80gb"), "fp8")


def test_bound_and_attainable():
    assert bound(1.0, get_hardware("h100-sxm")) == "memory"
    assert bound(1000, get_hardware("h100-sxm")) == "compute"
    assert attainable_flops_per_s(1.0, get_hardware("h100-sxm")) == pytest.approx(3.35e12)
    assert attainable_flops_per_s(1e4, get_hardware("h100-sxm")) == pytest.approx(989.4e12)


def test_intensities():
    assert 0.9 < decode_intensity(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), batch=1) < 1.1
    assert decode_intensity(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), batch=64, context_tokens=1) > 50
    assert prefill_intensity(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), prompt_tokens=2048) > 295
    assert train_step_intensity(get_model("llama-3.1-8b")) > 295


def test_roofline_points():
    r = roofline(get_model("llama-3.1-8b"), get_hardware("h100-sxm"))
    names = [p.name for p in r.points]
    assert names[0].startswith("prefill") and names[-1] == "training step"
    assert r.to_dict()["ridge_point"] == pytest.approx(295.3, abs=0.1)
