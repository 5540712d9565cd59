"""The 'embedding-and-loss' pipeline split: the embedding and the output layer with its loss
each take one layer's place in the cut (Megatron-LM's --account-for-embedding-in-pipeline-
split and --account-for-loss-in-pipeline-split; Llama 3 405B's run, Llama 3 Herd of Models,
section 3.3.2), and what the fullest rank then holds, worked by hand."""

from __future__ import annotations

import pytest
from row_refusals import assert_row_refuses

from engine.lesson.reality.measurements import load
from engine.numbers.activations import (
    activation_bytes_per_layer,
    layers_in_flight_with_embedding_and_loss,
)
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.errors import EngineError
from engine.numbers.memory import training_memory
from engine.numbers.parallelism import check_split, stage_params_share
from engine.numbers.plan import plan

# Meta's Table 4 layout: TP 8 x PP 16, 8K sequences, 16M tokens (2,048 sequences) a step.
META = dict(model="llama-3.1-405b", hardware="h100-sxm", task="train", tp=8, pp=16,
            sharding="zero1", seq_len=8192, global_batch_tokens=16_777_216, tokens=15.6e12,
            interleave=8, recompute="none", pipeline_split="embedding-and-loss")


def test_megatron_warm_up_rank_by_rank():
    # 16 stages x 8 chunks of one place, 32 micro-batches (8,192 GPUs: DP 64).
    # Rank 0 runs 2 x 15 + 7 x 16 + 1 = 143 forward chunks before its first backward, 31 of
    # them in its first chunk (micro-batches 0-15 and 16-30), which holds no layer: 112.
    # Rank 1: 2 x 14 + 7 x 16 + 1 = 141 chunks of one layer each: the fuller of the two.
    assert layers_in_flight_with_embedding_and_loss(16, 8, 32, 8) == 141
    # 16 micro-batches (16,384 GPUs: DP 128): every forward pass runs first, 16 x 8 = 128
    # chunks; rank 0's 16 in its first chunk hold nothing (112), rank 1's hold 128.
    assert layers_in_flight_with_embedding_and_loss(16, 8, 16, 8) == 128
    # 1F1B, 4 stages of 8 places, 8 micro-batches: rank 0 holds 4 of its 7 layers (28),
    # rank 1 holds 3 of its 8 (24).
    assert layers_in_flight_with_embedding_and_loss(4, 1, 8, 8) == 28


def test_the_cut_gives_the_embedding_and_the_loss_a_place_each():
    m, hw = get_model("llama-3.1-405b"), get_hardware("h100-sxm")
    even = check_split(m, hw, 8192, 8, 16)
    split = check_split(m, hw, 8192, 8, 16, "embedding-and-loss")
    # 126 layers: 8 on the fullest stage either way; the even cut leaves 126 - 15 x 8 = 6 on
    # the last, the embedding-and-loss cut 128 - 15 x 8 - 1 = 7 beside the output layer.
    assert (even.places, even.stage_layers, even.last_stage_layers) == (126, 8, 6)
    assert (split.places, split.stage_layers, split.last_stage_layers) == (128, 8, 7)
    assert stage_params_share(m, 16, "layers") == 8 / 126
    # A middle stage holds 8 layers, each (params - 2 x 128,256 x 16,384) / 126 parameters.
    per_layer = (m.params - 2 * 128_256 * 16_384) / 126
    assert stage_params_share(m, 16, "embedding-and-loss") == pytest.approx(
        8 * per_layer / m.params, rel=1e-12)
    # One stage: nothing to cut.
    assert stage_params_share(m, 1, "embedding-and-loss") == 1.0


def test_chunks_may_number_the_places_not_only_the_layers():
    with pytest.raises(EngineError) as e:
        plan(**{**META, "pipeline_split": "layers"}, gpus=8192)
    assert e.value.field == "interleave" and "at most 126" in str(e.value)
    with pytest.raises(EngineError) as e:
        plan(**{**META, "interleave": 9}, gpus=8192)
    assert e.value.field == "interleave" and "must divide 8" in str(e.value)
    with pytest.raises(EngineError) as e:
        plan(**{**META, "pipeline_split": "first-and-last"}, gpus=8192)
    assert e.value.field == "pipeline_split"


def test_meta_layout_memory_by_hand():
    m, hw = get_model("llama-3.1-405b"), get_hardware("h100-sxm")
    per_layer = activation_bytes_per_layer(m, seq_len=8192, micro_batch=1, recompute="none",
                                           tp=8)
    for gpus, layers_held, fits in ((8192, 141, False), (16384, 128, True)):
        mem = training_memory(m, hw, gpus=gpus, sharding="zero1", tp=8, pp=16, interleave=8,
                              seq_len=8192, recompute="none", global_batch_tokens=16_777_216,
                              pipeline_split="embedding-and-loss")
        assert mem.parts["activations"] == pytest.approx(layers_held * per_layer, rel=1e-12)
        assert mem.fits is fits
    # The even cut with 2 chunks (the engine's layout before) held 23.5 micro-batches x 8
    # layers = 188 layers' activations on its first stage.
    even = training_memory(m, hw, gpus=8192, sharding="zero1", tp=8, pp=16, interleave=2,
                           seq_len=8192, recompute="none", global_batch_tokens=16_777_216)
    assert even.parts["activations"] == pytest.approx(188 * per_layer, rel=1e-12)


def test_eight_chunks_a_gpu_shorten_the_bubble():
    # With 126 layers the fullest stage (8 layers) sets the pace either way, and the
    # embedding-and-loss cut lets 8 chunks per GPU shorten the bubble: fewer seconds a step.
    fine = plan(**META, gpus=8192).train
    coarse = plan(**{**META, "pipeline_split": "layers", "interleave": 2}, gpus=8192).train
    assert fine is not None and coarse is not None
    assert fine.expected.step.bubble_seconds < coarse.expected.step.bubble_seconds / 3
    assert any("pipeline cut: 128 places" in b.name for b in fine.expected.basis)


def test_a_row_says_where_its_split_is_read():
    row = next(r for r in load() if r.id == "llama3-405b-16k-gpus-mfu")
    assert row.pipeline_split == "embedding-and-loss" and "3.3.2" in row.pipeline_split_basis
    assert_row_refuses(row, "pipeline_split_basis", "")
    assert_row_refuses(row, "pipeline_split", "halves")


def test_the_8192_gpu_row_says_what_the_engine_finds():
    # The row's note: "5 GB over the 80 GB H100; a group of 14 micro-batches would fit".
    m, hw = get_model("llama-3.1-405b"), get_hardware("h100-sxm")
    row = next(r for r in load() if r.id == "llama3-405b-8k-gpus-mfu")
    assert "5 GB over" in row.note and "group of 14 micro-batches would fit" in row.note
    mem = training_memory(m, hw, gpus=8192, sharding="zero1", tp=8, pp=16, interleave=8,
                          seq_len=8192, recompute="none", global_batch_tokens=16_777_216,
                          pipeline_split="embedding-and-loss")
    assert round((mem.per_gpu_bytes - mem.capacity_bytes) / 1e9) == 5
    per_layer = mem.parts["activations"] / 141
    rest = mem.per_gpu_bytes - mem.parts["activations"]

    def fits_with_group(n: int) -> bool:
        held = layers_in_flight_with_embedding_and_loss(16, 8, 32, 8, group=n)
        return rest + held * per_layer <= mem.capacity_bytes

    # Rank 1 with groups of 14 holds 2 x 14 + 7 x 14 + 1 = 127 layers; with 15, 134.
    assert layers_in_flight_with_embedding_and_loss(16, 8, 32, 8, group=14) == 127
    assert fits_with_group(14) and not fits_with_group(15)


def test_the_8192_gpu_row_says_what_sharded_gradients_would_cost():
    # The row's note: kept as shards (ZeRO-2) the gradients fit, 83.8 GB, but each of the
    # 32 micro-batches reduce-scatters its FP32 gradients (12.8 GB a GPU): 32 % MFU.
    row = next(r for r in load() if r.id == "llama3-405b-8k-gpus-mfu")
    assert "they fit (83.8 of the 84.9 GB)" in row.note and "32 % MFU" in row.note
    sharded = plan(**{**META, "sharding": "zero2"}, gpus=8192, grad_reduce="fp32")
    assert sharded.train is not None
    assert sharded.memory.fits and round(sharded.memory.per_gpu_bytes / 1e9, 1) == 83.8
    # 405.85 billion parameters / tp 8 x the fullest stage's share (a middle stage's 8
    # layers, more than the first's 7 + the vocabulary table), 4 bytes each, once per
    # micro-batch.
    m = get_model("llama-3.1-405b")
    per_micro_batch = m.params / 8 * stage_params_share(m, 16, "embedding-and-loss") * 4
    assert round(per_micro_batch / 1e9, 1) == 12.8
    grads = next(t for t in sharded.train.expected.traffic if t.strategy == "data")
    assert grads.bytes_per_step == pytest.approx(32 * per_micro_batch)
    assert round(sharded.train.expected.mfu * 100) == 32
    assert round(plan(**META, gpus=8192, grad_reduce="fp32").train.expected.mfu * 100) == 47


def test_the_long_context_row_holds_what_the_8k_row_holds():
    # The 131,072-token row's note: each GPU holds 8,192 tokens of each of 16 micro-batches, as
    # on the 8K row with 16,384 GPUs, so the same 82.8 GB; recomputing attention would save
    # 0.07 GB a GPU and cost 12 % of the step.
    row = next(r for r in load() if r.id == "llama3-405b-16k-gpus-128k-mfu")
    assert row.recompute == "none"
    assert "82.8 GB a GPU either way" in row.note and "0.07 GB" in row.note
    assert "12 % of the step" in row.note
    long = {**META, "seq_len": 131072, "cp": 16}
    kept, redone = (plan(**{**long, "recompute": r}, gpus=16384, grad_reduce="fp32")
                    for r in ("none", "selective"))
    short = plan(**META, gpus=16384, grad_reduce="fp32")
    assert kept.memory.per_gpu_bytes == pytest.approx(short.memory.per_gpu_bytes)
    assert round(kept.memory.per_gpu_bytes / 1e9, 1) == 82.8
    saved = kept.memory.per_gpu_bytes - redone.memory.per_gpu_bytes
    assert round(saved / 1e9, 2) == 0.07
    assert redone.train is not None
    ops = {o.name: o.seconds for o in redone.train.expected.ops}
    assert round(100 * ops["recomputation: attention (forward)"]
                 / redone.train.expected.step_seconds) == 12


def test_two_stages_hold_the_loss_short_too():
    # 2 stages x 1F1B, 5 places each (8 layers + 2), 4 micro-batches: rank 0 holds 2 of its
    # 4 layers (8), rank 1, the last, 1 of its 4 (4): 8.
    assert layers_in_flight_with_embedding_and_loss(2, 1, 4, 5) == 8
    # Interleaved, 2 chunks of 2 places (6 layers + 2 over 2 stages), 4 micro-batches in
    # groups of 2: rank 0 runs 2 x 1 + 1 x 2 + 1 = 5 forward chunks (chunks 0, 0, 1, 1, 0),
    # 3 of them in its first chunk, one layer short: 5 x 2 - 3 = 7. Rank 1, the last, runs
    # 0 + 2 + 1 = 3 (chunks 0, 0, 1), 1 in its short last chunk: 3 x 2 - 1 = 5.
    assert layers_in_flight_with_embedding_and_loss(2, 2, 4, 4) == 7


def test_a_cut_that_cannot_share_the_places_evenly_is_refused():
    # Llama 3.2 1B: 16 layers + 2 = 18 places; 16 stages would leave the last one empty.
    one_b = dict(model="llama-3.2-1b", hardware="h100-sxm", task="train", gpus=16, pp=16,
                 seq_len=2048, pipeline_split="embedding-and-loss")
    with pytest.raises(EngineError) as e:
        plan(**one_b)
    assert e.value.field == "pp" and "18 places" in str(e.value) and "2, 3, 6, 9, 18" in str(
        e.value)
    # 18 places over 6 stages hold 3 each: 2 chunks cannot split 3.
    with pytest.raises(EngineError) as e:
        plan(**{**one_b, "gpus": 6, "pp": 6, "interleave": 2})
    assert e.value.field == "interleave"
    assert plan(**{**one_b, "gpus": 6, "pp": 6, "interleave": 3}).train is not None


def test_partial_groups_and_two_stages_follow_megatron_schedule():
    # 3 stages x 2 chunks of 3 places, 4 micro-batches: groups of 3 then 1, so rank 0's
    # forward chunks run 0, 0, 0, 1, 1, 1, 0, 1. Its warm-up is 2 x 2 + 3 = 7 forward passes
    # (2 + 2 + 2 + 3 + 3 + 3 + 2 = 17 layers) and the 8th (chunk 1, 3 layers) starts the
    # steady state before any backward: 20. Rank 1 holds 2 x 1 + 3 = 5 + 1 passes of 3: 18.
    assert layers_in_flight_with_embedding_and_loss(3, 2, 4, 6) == 20
    # 2 stages x 2 chunks of 1 place, 4 micro-batches: rank 1, the last, holds its first
    # chunk's layer for micro-batches 0 and 1, then 2 before their backward passes free them
    # (its second chunk is the loss alone): 3 at most.
    assert layers_in_flight_with_embedding_and_loss(2, 2, 4, 2) == 3


def test_the_lesson_quotes_the_engine_on_the_papers_layout():
    # Step 6 and the cluster page set Meta's measured 41 % beside what the engine expects on
    # the layout as the paper describes it: the 16,384-GPU row's own expected MFU.
    from engine.lesson.figures.network import published_expected
    from engine.lesson.reality.measured import checked

    row = next(c for c in checked() if c.measurement.id == "llama3-405b-16k-gpus-mfu")
    assert row.expected is not None
    assert published_expected("llama3-405b-16k-gpus-mfu") == f"{row.expected * 100:.1f} %"
    calculator = plan(**{**META, "interleave": 2, "recompute": "selective",
                         "pipeline_split": "layers"}, gpus=16384).train
    assert calculator is not None and calculator.expected.mfu < row.expected
    with pytest.raises(EngineError) as bad:
        published_expected("no-such-row")
    assert bad.value.field == "measurement"
