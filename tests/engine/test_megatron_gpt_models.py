"""The GPT models of Megatron-LM's benchmark table, as the reality page's Megatron-Core rows
run them: the table's layers, hidden size, heads and 131,072-token vocabulary, Megatron-LM's
GPT defaults otherwise (a 4 x hidden GeLU MLP, LayerNorm, biases, multi-head attention,
learned positions), input embedding and output head untied."""

import pytest

from engine.lesson.reality.measurements import load
from engine.numbers.catalog import get_model


def test_the_1_7b_counts_as_its_shapes_add_up():
    # One layer: QKV 2,048 x 6,144 + 6,144 biases; output 2,048 x 2,048 + 2,048; MLP
    # 2,048 x 8,192 + 8,192 and 8,192 x 2,048 + 2,048; two LayerNorms of 2 x 2,048.
    layer = (2048 * 6144 + 6144) + (2048 * 2048 + 2048) + (2048 * 8192 + 8192) \
        + (8192 * 2048 + 2048) + 2 * 2 * 2048
    assert layer == 50_358_272
    # 24 layers, input embedding and output head of 131,072 x 2,048 each, 4,096 learned
    # positions of 2,048, the final LayerNorm.
    total = 24 * layer + 2 * 131072 * 2048 + 4096 * 2048 + 2 * 2048
    assert total == 1_753_862_144
    assert get_model("megatron-gpt-1.7b").params == total


@pytest.mark.parametrize("size", ["1.7b", "7.1b", "16b", "32b", "70b", "119b", "177b",
                                  "314b", "462b"])
def test_each_model_is_within_4_percent_of_the_tables_count(size):
    m = get_model(f"megatron-gpt-{size}")
    assert m.reference_only and m.vocab == 131072 and not m.tied_embeddings
    assert m.params == pytest.approx(m.published_params, rel=0.04)


def test_the_megatron_rows_run_their_tables_models():
    rows = [m for m in load() if m.id.startswith("megatron-h100-gpt-")]
    assert len(rows) == 9
    for row in rows:
        size = row.id.removeprefix("megatron-h100-gpt-").split("-")[0]
        assert row.model == f"megatron-gpt-{size}"
        m = get_model(row.model)
        assert f"{m.layers} layers" in row.model_note
        assert f"hidden size {m.hidden:,}" in row.model_note
