"""ZeRO-3 under a pipeline keeps each stage's gathered weights and unsharded gradients for the
whole step (torchtitan's default with pipeline parallelism), so it moves and holds what
ZeRO-1 does, not a gather per micro-batch."""

from __future__ import annotations

import pytest

from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.memory import sharding_stage, training_memory
from engine.numbers.plan import plan
from engine.words.memory_explained import sharding_words

MODEL = get_model("llama-3.1-70b")
H100 = get_hardware("h100-sxm")
# 64 GPUs: tensor parallel 4 x 4 stages x 4 data-parallel copies; 16 micro-batches a step.
LAYOUT = dict(gpus=64, tp=4, pp=4, seq_len=8192, global_batch_tokens=524288)


def test_the_stage_partitions_what_zero1_does_under_a_pipeline_only():
    assert sharding_stage("zero3", 1) == 3
    assert sharding_stage("zero3", 4) == 1
    assert sharding_stage("zero2", 4) == 2 and sharding_stage("none", 4) == 0


def test_the_stages_weights_and_gradients_stay_whole_on_every_gpu():
    zero3 = training_memory(MODEL, H100, sharding="zero3", **LAYOUT)
    zero1 = training_memory(MODEL, H100, sharding="zero1", **LAYOUT)
    # 70.55 billion parameters / tp 4 x the fullest stage's 20 of 80 layers (ceil(80 / 4)):
    # 4.41 billion per GPU, 2 bytes of 16-bit weights each, unsharded: 8.82 GB.
    per_gpu = MODEL.params / 4 * 20 / 80
    assert zero3.parts["weights"] == pytest.approx(per_gpu * 2)
    assert zero3.parts["gradients"] == pytest.approx(per_gpu * 2)
    assert zero3.parts == zero1.parts
    # Without a pipeline ZeRO-3 shards the weights over the 16 data-parallel copies.
    flat = training_memory(MODEL, H100, sharding="zero3", gpus=64, tp=4, seq_len=8192,
                           global_batch_tokens=524288)
    assert flat.parts["weights"] == pytest.approx(MODEL.params / 4 * 2 / 16)


def test_its_traffic_is_one_gather_and_one_reduce_scatter_a_step():
    train = plan(model=MODEL, hardware="h100-sxm", task="train", sharding="zero3",
                 **LAYOUT).train
    assert train is not None
    data = next(t for t in train.expected.traffic if t.strategy == "data")
    # The gradients, 2 bytes each of the GPU's 4.41 billion, once a step; not 16 micro-batches
    # x (two gathers of the weights + the gradients).
    assert data.bytes_per_step == pytest.approx(MODEL.params / 4 * 20 / 80 * 2)
    assert any("ZeRO-3 under a pipeline" in b.name for b in train.expected.basis)
    zero1 = plan(model=MODEL, hardware="h100-sxm", task="train", sharding="zero1",
                 **LAYOUT).train
    assert zero1 is not None
    assert train.expected.step.seconds == pytest.approx(zero1.expected.step.seconds)


def test_the_assumptions_say_why_it_holds_what_zero1_does():
    words = sharding_words("zero3", 4, 4, pp=4)
    assert words.startswith("ZeRO-3 under a pipeline") and "as with ZeRO-1" in words
    assert "split over the 4 data-parallel GPUs" in words
    assert "under a pipeline" not in sharding_words("zero3", 4, 4)
