"""Where ZeRO-1/2's all-gather of the updated weights runs (``param_gather``): it needs the
optimiser's step, so it cannot share the backward pass with the gradients' reduce-scatter.
'overlapped': beside the next step's first forward pass, 1/3 of a micro-batch's compute
(Megatron-LM's --overlap-param-gather); 'after-step': exposed (DeepSpeed's ZeRO-1/2 gathers
at the end of step()). Hand-worked on Llama 3.1 8B over two DGX H100s."""

import json

import pytest

from engine.cli import main
from engine.lesson.reality.measurements import Measurement
from engine.numbers.errors import EngineError
from engine.numbers.plan import plan
from engine.numbers.training_choices import PARAM_GATHERS

# Llama 3.1 8B (8,030,261,248 parameters) on 16 H100 SXMs in two servers, ZeRO-1, one
# 8,192-token sequence per GPU and a batch of 16 of them: one micro-batch a step.
EIGHT = dict(model="llama-3.1-8b", hardware="h100-sxm", gpus=16, task="train", seq_len=8192,
             sharding="zero1", global_batch_tokens=16 * 8192)
# The gather of the 16-bit weights over the 16 GPUs: ring, 15/16 x 2 bytes x parameters at
# 320 GB/s each way per GPU (8 x 400 Gb/s ConnectX-7 a server, x the collective efficiency,
# hardware.toml), plus NCCL's 3.6 us base latency, 14 NVLink steps of 0.47 us and one network
# step of 2.7 us (NVIDIA/nccl src/graph/tuning.cc): 0.0470523 + 1.288e-5 s.
GATHER_S = 15 / 16 * 2 * 8_030_261_248 / 320e9 + 3.6e-6 + 14 * 0.47e-6 + 2.7e-6
# A collective beside compute slows it by 0.1515 / 0.8485 (DeepSeek-V3, arXiv 2412.19437).
SLOWED = 0.1515 / (1 - 0.1515)


def _expected(**extra):
    e = plan(**EIGHT, **extra).train.expected
    assert e is not None
    return e


def _op(e, name):
    return next((o.seconds for o in e.ops if o.name == name), 0.0)


def test_after_the_step_the_whole_gather_is_exposed():
    e = _expected(param_gather="after-step")
    assert e.accumulation == 1
    assert pytest.approx(0.0470652, rel=1e-6) == GATHER_S
    assert _op(e, "data-parallel weight gather (not hidden)") == pytest.approx(GATHER_S,
                                                                              rel=1e-9)
    assert any(b.name.startswith("ZeRO-1/2 all-gather of the updated weights after the "
                                 "optimiser step") and "stage_1_and_2.py" in b.source
               for b in e.basis)


def test_beside_the_next_forward_pass_it_hides_in_a_third_of_the_compute():
    # One micro-batch's compute is ~0.81 s, so a third of it (~0.27 s) hides the 0.047 s
    # gather: none of it is exposed, and the forward beside it pays the SMs it takes.
    e = _expected()
    after = _expected(param_gather="after-step")
    assert e.compute_seconds_per_step / 3 > GATHER_S
    assert _op(e, "data-parallel weight gather (not hidden)") == 0.0
    assert (after.exposed_communication_seconds_per_step
            - e.exposed_communication_seconds_per_step) == pytest.approx(
                GATHER_S * (1 - SLOWED), rel=1e-9)
    assert any(b.name.startswith("ZeRO-1/2 all-gather of the updated weights beside the next")
               for b in e.basis)
    assert sum(o.seconds for o in e.ops) == pytest.approx(e.step_seconds, rel=1e-12)


def test_the_reduction_and_the_gather_together_move_an_all_reduces_bytes():
    # A ring all-reduce is a reduce-scatter then an all-gather: the same bytes at the same
    # bandwidth, one base latency more (3.6 us).
    zero1 = _expected()
    ddp = plan(**{**EIGHT, "sharding": "none"}).train.expected
    assert (zero1.communication_seconds_per_step - ddp.communication_seconds_per_step
            == pytest.approx(3.6e-6, rel=1e-6))


@pytest.mark.parametrize("sharding", ["none", "zero3"])
def test_only_zero_1_and_2_gather_after_the_step(sharding):
    common = {**EIGHT, "sharding": sharding}
    assert (plan(**common, param_gather="after-step").train.expected.step_seconds
            == plan(**common).train.expected.step_seconds)


def test_an_unknown_placement_is_refused_by_name(capsys):
    with pytest.raises(EngineError) as refused:
        plan(**EIGHT, param_gather="later")
    assert refused.value.field == "param_gather"
    argv = ["plan", "--model", "llama-3.1-8b", "--gpus", "16", "--task", "train",
            "--sharding", "zero1", "--param-gather", "later", "--json"]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert err.strip() == ("--param-gather: Unknown parameter gather 'later'; choose one of: "
                           + ", ".join(PARAM_GATHERS) + ".")
    assert json.loads(out)["error"] == err.strip()


def test_a_row_gathering_after_the_step_is_zero_1_or_2_and_says_where_that_is_read():
    fields = dict(id="x", group="train", task="train", model=None, params=1e9, model_note="m",
                  hardware="h100-sxm", hardware_note="", scope="system", note="",
                  gpus=8, metric="train_mfu", value=0.4, value_text="40 %",
                  stack="s", source="s 2022", tokens=1e12, seq_len=2048, global_batch_tokens=524288,
                  kernels_basis="not stated", param_gather="after-step")
    with pytest.raises(EngineError) as refused:
        Measurement(**fields, sharding="zero1")
    assert refused.value.field == "param_gather_basis"
    with pytest.raises(EngineError):
        Measurement(**fields, sharding="zero3", param_gather_basis="DeepSpeed")
    assert Measurement(**fields, sharding="zero1",
                       param_gather_basis="DeepSpeed").param_gather == "after-step"
