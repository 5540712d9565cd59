"""ZeRO-2 keeps only each rank's shard of the gradients, so with several micro-batches a step it
reduce-scatters every micro-batch's gradients instead of accumulating them whole and reducing
once (ZeRO-1): the memory it saves is paid for in traffic."""

from __future__ import annotations

import pytest

from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.communication import group_link, reduce_scatter_seconds
from engine.numbers.expected_training import expected_train
from engine.numbers.memory import training_memory

MODEL = get_model("llama-3.1-70b")
H100 = get_hardware("h100-sxm")
# 64 GPUs: tensor parallel 4 x 4 stages x 4 data-parallel copies. 524,288 tokens a step over
# 4 copies of 8,192-token micro-batches: 16 micro-batches per step.
LAYOUT = dict(gpus=64, tp=4, pp=4, seq_len=8192, global_batch_tokens=524288)
TOKENS = 1e12
# One GPU's gradients: 70.55 billion parameters / tp 4 x the fullest stage's 20 of 80 layers,
# 2 bytes each.
GRAD_BYTES = MODEL.params / 4 * 20 / 80 * 2


def _train(sharding: str, **changes: object):
    layout = {**LAYOUT, **changes}
    return expected_train(MODEL, H100, tokens=TOKENS, sharding=sharding, **layout)


def _data_traffic(train) -> float:
    return next(t.bytes_per_step for t in train.traffic if t.strategy == "data")


def test_zero2_reduces_every_micro_batch_and_zero1_once():
    zero1, zero2 = _train("zero1"), _train("zero2")
    assert zero1.accumulation == zero2.accumulation == 16
    assert _data_traffic(zero1) == pytest.approx(GRAD_BYTES)
    assert _data_traffic(zero2) == pytest.approx(16 * GRAD_BYTES)
    # 15 more reduce-scatters of the gradients over the 4 data-parallel GPUs. One copy of the
    # model spans tp 4 x pp 4 = 16 GPUs, two 8-GPU servers, so each of the 4 is in another
    # server: one per server, over the network.
    link = group_link(H100.link_spec(), 4, per_server=1)
    extra = 15 * reduce_scatter_seconds(GRAD_BYTES, link)
    assert (zero2.communication_seconds_per_step - zero1.communication_seconds_per_step
            == pytest.approx(extra))
    assert zero2.step_seconds > zero1.step_seconds
    assert any(b.name.startswith("ZeRO-2: the gradients reduce-scattered every micro-batch")
               and b.value == 16 for b in zero2.basis)
    assert not any(b.name.startswith("ZeRO-2") for b in zero1.basis)


def test_with_one_micro_batch_a_step_zero2_moves_what_zero1_does():
    # 4 copies x 8,192 tokens: one micro-batch each, so there is nothing to accumulate.
    zero1 = _train("zero1", global_batch_tokens=32768)
    zero2 = _train("zero2", global_batch_tokens=32768)
    assert zero2.accumulation == 1
    assert zero2.step_seconds == pytest.approx(zero1.step_seconds)
    assert _data_traffic(zero2) == pytest.approx(_data_traffic(zero1))


def test_what_the_traffic_buys_is_the_gradients_memory():
    zero1 = training_memory(MODEL, H100, sharding="zero1", **LAYOUT)
    zero2 = training_memory(MODEL, H100, sharding="zero2", **LAYOUT)
    assert zero1.parts["gradients"] == pytest.approx(GRAD_BYTES)
    assert zero2.parts["gradients"] == pytest.approx(GRAD_BYTES / 4)


def test_the_train_json_echoes_the_cut_used():
    from engine.lesson.plans.plan_json import plan_to_dict
    from engine.numbers.plan import plan

    meta = plan(model="llama-3.1-405b", hardware="h100-sxm", task="train", gpus=16384, tp=8,
                pp=16, interleave=8, pipeline_split="embedding-and-loss", seq_len=8192,
                sharding="zero1", global_batch_tokens=16_777_216)
    train = plan_to_dict(meta)["train"]
    assert isinstance(train, dict)
    assert (train["interleave"], train["pipeline_split"]) == (8, "embedding-and-loss")
    # One stage: nothing to interleave or cut, whatever was asked.
    flat = plan_to_dict(plan(model=MODEL, hardware="h100-sxm", task="train", gpus=8, tp=8,
                             interleave=2, pipeline_split="embedding-and-loss"))["train"]
    assert isinstance(flat, dict)
    assert (flat["interleave"], flat["pipeline_split"]) == (1, "layers")
