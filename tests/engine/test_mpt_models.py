"""LLM Foundry's MPT models as its benchmark tables ran them, counted by hand.

MPT-7B in llm-foundry v0.3.0's mpt-7b.yaml and MPTConfig's defaults: d_model 4,096, 32 heads,
32 layers, an MLP of 4 x 4,096 with GELU, vocabulary 50,368 tied to the output head, learned
positions (2,048 at the tables' default length), LayerNorm and every linear layer with biases.
"""

import pytest

from engine.lesson.reality.measurements import load
from engine.numbers.catalog import get_hardware, get_model, list_models
from engine.numbers.training_ops import StepShape, training_ops

D = 4096


def test_mpt_7b_count_by_hand():
    per_layer = (3 * D * D + 3 * D  # fused q, k, v and their biases
                 + D * D + D  # attention output
                 + 2 * D * 4 * D + 4 * D + D  # up and down, with biases
                 + 2 * 2 * D)  # two LayerNorms, weight and bias
    hand = 50368 * D + 2048 * D + 32 * per_layer + 2 * D  # embeddings, positions, final norm
    assert hand == 6_658_859_008  # the table's NumParams at 2,048 tokens
    assert get_model("llmfoundry-mpt-7b").params == hand


def test_every_mpt_matches_the_table_and_stays_out_of_pickers():
    listed = {m.id for m in list_models()}
    for size in ("1b", "3b", "7b", "13b", "30b", "70b"):
        m = get_model(f"llmfoundry-mpt-{size}")
        assert m.params == m.published_params
        assert m.id not in listed


def test_mpt_step_has_no_rotary_and_a_plain_activation():
    # One sequence of 2,048 tokens, per layer (32 of them): GELU reads and writes the 16,384-wide hidden
    # (4 bytes a number forward, fused), and there is no rotary embedding to apply.
    stream = 3.35e12 * 0.866
    ops = training_ops(get_model("llmfoundry-mpt-7b"), get_hardware("h100-sxm"),
                       StepShape(2048, 2048, 1, 32, 1, 1, 1, "none"), 2)
    names = {o.name: o.seconds for o in ops.micro_batch}
    assert not any("rotary" in n for n in names)
    assert names["activation (forward)"] / 32 == pytest.approx(4 * 2048 * 4 * D / stream + 3e-6)


def test_llm_foundry_rows_use_the_mpt_shapes():
    rows = [m for m in load() if m.id.startswith("llmfoundry-")]
    assert rows and all(m.model.startswith("llmfoundry-mpt-") for m in rows)
    assert all(m.attention == "triton" for m in rows)
