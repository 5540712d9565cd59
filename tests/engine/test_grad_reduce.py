"""The format the gradients cross the data-parallel network in: bf16 by default, fp32 as
Megatron-LM, NeMo 2.0 and torchtitan run BF16 training by default (twice the bytes)."""

from __future__ import annotations

import pytest
from row_refusals import assert_row_refuses

from engine.lesson.reality.measurements import load
from engine.numbers.catalog.efficiency import grad_reduce_basis
from engine.numbers.errors import EngineError
from engine.numbers.plan import plan

# Llama 3.1 70B on 64 H100s, tensor parallel 8 x 8 data-parallel copies, ZeRO-1.
JOB = dict(model="llama-3.1-70b", hardware="h100-sxm", gpus=64, tp=8, task="train",
           seq_len=8192, sharding="zero1")
PARAMS = 70_553_706_496


def test_the_bytes_per_gradient_and_where_they_are_read():
    bf16, fp32 = grad_reduce_basis("bf16"), grad_reduce_basis("fp32")
    assert (bf16.value, fp32.value) == (2.0, 4.0)
    assert "NeMo" in bf16.source
    assert "Megatron-LM" in fp32.source and "torchtitan" in fp32.source


def test_fp32_gradients_double_the_data_parallel_traffic():
    def data(grad_reduce: str) -> float:
        train = plan(**JOB, grad_reduce=grad_reduce).train
        assert train is not None
        return next(t.bytes_per_step for t in train.expected.traffic if t.strategy == "data")
    # Each GPU reduce-scatters its 1/8 of the gradients once a step: 70.55e9 / 8 x 2 bytes =
    # 17.64 GB in bf16, 35.28 GB in fp32.
    assert data("bf16") == pytest.approx(PARAMS / 8 * 2)
    assert data("fp32") == pytest.approx(PARAMS / 8 * 4)


def test_the_optimiser_reads_the_wider_gradients_too():
    def adam_bytes(grad_reduce: str) -> float:
        train = plan(**JOB, grad_reduce=grad_reduce).train
        assert train is not None
        return next(o.bytes for o in train.expected.ops if o.name == "optimizer step (Adam)")
    # Per parameter of the GPU's shard: 14 bytes read + 14 written with 2-byte gradients,
    # 16 read + 14 written with 4-byte ones.
    assert adam_bytes("fp32") / adam_bytes("bf16") == pytest.approx(30 / 28)


def test_a_bad_choice_is_refused_by_name():
    with pytest.raises(EngineError) as e:
        plan(**JOB, grad_reduce="fp16")
    assert e.value.field == "grad_reduce"


def test_a_row_reducing_in_fp32_says_where_that_is_read():
    row = next(m for m in load() if m.id == "torchtitan-h100-llama31-8b-8gpus")
    assert row.grad_reduce == "fp32" and "torchtitan" in row.grad_reduce_basis
    assert_row_refuses(row, "grad_reduce_basis", "")
    assert_row_refuses(row, "grad_reduce", "fp16")
