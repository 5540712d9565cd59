"""The fewest GPUs on which a layout fits (memory.min_gpus_to_train) agrees with
training_memory: at that count it fits, at the next smaller count the split allows it does
not, with context parallelism and a mixture's experts counted as training_memory counts them.
Under a pipeline the answer is searched through training_memory at each count, since at a
fixed global batch fewer copies hold more micro-batches in flight."""

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
    need = min_gpus_to_train(training_memory(m, H100, gpus=per_copy * dp_step, **layout),
                             lambda gpus: training_memory(m, H100, gpus=gpus, **layout))
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


META_16K_LAYOUT = dict(tp=8, pp=16, interleave=2, sharding="zero1", seq_len=8192,
                       global_batch_tokens=16_777_216)


@pytest.mark.parametrize("asked_gpus", [128, 8192, 16384, 32768])
def test_under_a_pipeline_the_answer_follows_the_micro_batches_each_copy_holds(asked_gpus):
    # Llama 3.1 405B, tp 8 x pp 16, 2 chunks, 16M tokens a step (2,048 sequences of 8,192).
    # On 16,384 GPUs (128 copies) each copy runs 16 micro-batches, all in flight at once:
    # it fits. On 16,256 (127 copies) each runs 17 (the batch rounded up), the first stage
    # holds all 17 at once, and it does not. Whatever count is asked about, the
    # answer is the same; the old answer, from the asked count's own activations, was 2,176
    # when asked on 16,384 and none on 8,192.
    m = get_model("llama-3.1-405b")
    def memory_at(gpus):
        return training_memory(m, H100, gpus=gpus, **META_16K_LAYOUT)
    assert memory_at(16384).fits and not memory_at(16384 - 128).fits
    assert min_gpus_to_train(memory_at(asked_gpus), memory_at) == 16384


def test_a_pipeline_needs_the_memory_at_other_counts():
    m = get_model("llama-3.1-405b")
    with pytest.raises(ValueError):
        min_gpus_to_train(training_memory(m, H100, gpus=16384, **META_16K_LAYOUT))


def test_where_more_copies_can_hold_more_every_smaller_count_is_tried():
    # Llama 3.1 405B on B200s, ZeRO-2, tp 8 x pp 4, 4 chunks, the embedding and the loss in
    # the cut, micro-batch 2: 576 GPUs fit (191.40 GB), 608 to 672 do not (a part-filled
    # last group of micro-batches leaves the fullest rank a little more), 704 fit again. A
    # search that assumed memory falls with every added copy answered 704.
    m = get_model("llama-3.1-405b")
    b200 = get_hardware("b200")
    layout = dict(tp=8, pp=4, interleave=4, sharding="zero2", micro_batch=2, seq_len=8192,
                  pipeline_split="embedding-and-loss")
    def memory_at(gpus):
        return training_memory(m, b200, gpus=gpus, **layout)
    assert memory_at(576).fits and not memory_at(640).fits and memory_at(704).fits
    need = min_gpus_to_train(memory_at(576), memory_at)
    assert need is not None and need <= 576 and memory_at(need).fits
    assert need == 32 or not memory_at(need - 32).fits
