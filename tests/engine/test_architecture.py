import pytest

from engine.numbers.architecture import (
    attention_flops_per_token,
    components,
    layer_components,
    summary,
)
from engine.numbers.catalog import generic_dense_model, get_model, list_models
from engine.numbers.errors import EngineError
from engine.widgets.layer_matrices import EARLIER_TOKENS


@pytest.mark.parametrize("model", list_models(), ids=lambda m: m.id)
def test_components_sum_to_params(model):
    assert sum(c.params for c in components(model)) == model.params


def test_generic_components_sum_exactly():
    g = generic_dense_model(12_345_678_901)
    parts = components(g)
    assert sum(c.params for c in parts) == 12_345_678_901
    assert parts[-1].kind == "unassigned" and 0 <= parts[-1].params < 10**9


def test_llama_8b_one_layer():
    layer = {c.name: c for c in layer_components(get_model("llama-3.1-8b"))}
    assert (layer["attention.q"].rows, layer["attention.q"].cols) == (4096, 4096)
    assert (layer["attention.k"].rows, layer["attention.k"].cols) == (4096, 1024)
    assert (layer["mlp.gate"].rows, layer["mlp.gate"].cols) == (4096, 14336)
    assert sum(c.params for c in layer.values()) == 218_112_000
    assert layer["attention.q"].flops_per_token == 2 * 4096 * 4096


def test_flops_sum_near_two_x_params():
    s = summary(get_model("llama-3.1-8b"))
    assert s["total_params"] == 8_030_261_248
    # Embedding lookup is free, so the sum is 2 x (params - embedding) - norms.
    assert 0.9 < s["total_flops_per_token"] / s["two_x_params"] < 1.0


def test_tied_head_costs_flops_not_params():
    m = get_model("llama-3.2-1b")
    head = next(c for c in components(m) if c.kind == "tied_head")
    assert head.params == 0 and head.flops_per_token == 2 * 2048 * 128256


def test_moe_layer_and_dense_layer():
    ds = get_model("deepseek-v3")
    moe = layer_components(ds, "moe")
    dense = layer_components(ds, "dense")
    assert any(c.name == "moe.router" for c in moe)
    assert any(c.name == "mlp.up" for c in dense)


def test_attention_flops():
    m = get_model("llama-3.1-8b")
    assert attention_flops_per_token(m, 8192) == 4 * 32 * 32 * 128 * 8192
    # A negative context is refused where it enters: the widget's field.
    with pytest.raises(EngineError, match="Context"):
        EARLIER_TOKENS.parse("-1")
