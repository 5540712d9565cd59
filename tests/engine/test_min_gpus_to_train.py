"""The fewest GPUs on which a layout fits (memory.min_gpus_to_train) agrees with
training_memory: at that count it fits, at the next smaller count the split allows it does
not, with context parallelism and a mixture's experts counted as training_memory counts them.
Each layout starts from one copy, whose pipeline is full of micro-batches, so its activations
are those of every smaller count too."""

from __future__ import annotations

import pytest

from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.memory import min_gpus_to_train, training_memory

H100 = get_hardware("h100-sxm")

CASES = [
    # model, layout; the data-parallel size steps by ep (the expert-parallel GPUs are
    # data-parallel ranks).
    ("llama-3.1-70b", dict(tp=8, cp=2, sharding="zero3", seq_len=8192), 1),
    ("llama-3.1-70b", dict(tp=8, pp=1, sharding="zero1", seq_len=8192), 1),
    ("llama-3.1-405b", dict(tp=8, pp=16, sharding="zero1", seq_len=8192), 1),
    ("mixtral-8x7b", dict(tp=2, pp=2, sharding="zero1", seq_len=4096, ep=8), 8),
    ("deepseek-v3", dict(tp=8, pp=4, sharding="zero1", seq_len=4096, ep=8), 8),
]


@pytest.mark.parametrize(("model_id", "layout", "dp_step"), CASES)
def test_the_answer_fits_and_one_step_fewer_does_not(model_id, layout, dp_step):
    m = get_model(model_id)
    per_copy = layout["tp"] * layout.get("pp", 1) * layout.get("cp", 1)
    need = min_gpus_to_train(training_memory(m, H100, gpus=per_copy * dp_step, **layout))
    assert need is not None and need % (per_copy * dp_step) == 0
    assert training_memory(m, H100, gpus=need, **layout).fits
    fewer = need - per_copy * dp_step
    if fewer >= per_copy * dp_step:
        assert not training_memory(m, H100, gpus=fewer, **layout).fits


def test_context_parallel_gpus_share_the_state():
    # Llama 3.1 70B, ZeRO-3, tp 8 x cp 2: 16 GPUs fit (83.3 of 84.9 GB), so the answer is 16,
    # not 32 (the state splits over dp x cp = 2 GPUs, not dp = 1).
    m = get_model("llama-3.1-70b")
    layout = dict(tp=8, cp=2, sharding="zero3", seq_len=8192)
    assert training_memory(m, H100, gpus=16, **layout).fits
    assert min_gpus_to_train(training_memory(m, H100, gpus=64, **layout)) == 16
