"""Tensor parallelism's collectives under the GEMMs (``tp_comm`` 'overlapped': Megatron-LM's
--tp-comm-overlap, torchtitan's async TP): each direction's all-reduces hidden beside that
direction's layer GEMMs, only what outlasts them exposed, and the GEMMs beside them slowed by
the SMs a collective takes. Hand-worked on Llama 3.1 70B at TP 8 on one DGX H100."""

import json

import pytest

from engine.cli import main
from engine.lesson.reality.measurements import Measurement
from engine.numbers.errors import EngineError
from engine.numbers.plan import plan
from engine.numbers.training_choices import TP_COMMS

# Llama 3.1 70B (80 layers, hidden 8,192) on 8 H100 SXMs at TP 8, 4,096-token sequences, one
# per micro-batch, the catalogue's 4,194,304-token batch: 1,024 micro-batches, no data
# parallelism (so no gradient reduction beside the layers).
SEVENTY = dict(model="llama-3.1-70b", hardware="h100-sxm", gpus=8, tp=8, task="train",
               seq_len=4096)
MICRO_BATCHES = 4_194_304 // 4096
# One all-reduce of a micro-batch's activations, 4,096 x 8,192 x 2 bytes = 67,108,864 B, over
# NVLink 4 at 360 GB/s each way per GPU (450 GB/s x the collective efficiency, hardware.toml),
# ring: 2 x 7/8 x bytes / bandwidth, plus NCCL's base latency 3.6 us and 14 steps of 0.47 us
# (NVIDIA/nccl src/graph/tuning.cc): 3.262236e-4 + 1.018e-5 s.
ALL_REDUCE_S = 2 * 7 / 8 * 67_108_864 / 360e9 + 3.6e-6 + 14 * 0.47e-6
# Four per layer (two forward, two backward), 80 layers, every micro-batch: 110.23 s a step.
TP_COMM_STEP_S = MICRO_BATCHES * 4 * 80 * ALL_REDUCE_S
# A collective beside compute takes 20 of 132 SMs (DeepSeek-V3, arXiv 2412.19437, 3.2.1): the
# GEMMs beside it take 1 / (1 - 0.1515) as long, 0.1515 / 0.8485 = 17.855 % more.
SLOWED = 0.1515 / (1 - 0.1515)


def _expected(**extra):
    expected = plan(**SEVENTY, **extra).train.expected
    assert expected is not None
    return expected


def test_on_the_critical_path_every_all_reduce_is_exposed():
    e = _expected()
    assert pytest.approx(3.36404e-4, rel=1e-5) == ALL_REDUCE_S
    assert e.accumulation == MICRO_BATCHES
    assert e.exposed_communication_seconds_per_step == pytest.approx(TP_COMM_STEP_S, rel=1e-9)
    assert pytest.approx(110.233, rel=1e-4) == TP_COMM_STEP_S


def test_under_the_gemms_only_the_sms_they_take_are_exposed():
    # Each direction's 160 all-reduces (53.8 ms a micro-batch) are shorter than its GEMMs (a
    # 70B layer's forward GEMMs alone are ~2 x 4,096 x 8.6e9 / 8 FLOPs, ~10 TFLOP at under
    # 989 TFLOP/s: over 10 ms, times 80 layers), so none outlasts them.
    e = _expected(tp_comm="overlapped")
    assert e.exposed_communication_seconds_per_step == pytest.approx(SLOWED * TP_COMM_STEP_S,
                                                                     rel=1e-9)
    assert pytest.approx(19.682, rel=1e-4) == SLOWED * TP_COMM_STEP_S
    names = [o.name for o in e.ops if o.limit == "communication"]
    assert names == ["compute beside collectives (the SMs they take)"]
    assert any(b.name.startswith("tensor-parallel all-reduces under the layers' GEMMs")
               and "--tp-comm-overlap" in b.source for b in e.basis)
    # The compute itself is the same op list either way: only the communication moves.
    assert e.compute_seconds_per_step == _expected().compute_seconds_per_step
    assert sum(o.seconds for o in e.ops) == pytest.approx(e.step_seconds, rel=1e-12)


def test_what_outlasts_a_directions_gemms_stays_exposed():
    # Llama 3.2 1B at TP 8: a layer's GEMMs on 1/8 of its weights are short beside two
    # all-reduces of 4,096 x 2,048 x 2 bytes, so part of the forward's collectives shows.
    small = dict(model="llama-3.2-1b", hardware="h100-sxm", gpus=8, tp=8, task="train",
                 seq_len=4096)
    exposed = plan(**small).train.expected
    overlapped = plan(**small, tp_comm="overlapped").train.expected
    not_hidden = [o for o in overlapped.ops
                  if o.name == "tensor-parallel all-reduces (not hidden)"]
    assert len(not_hidden) == 1 and not_hidden[0].seconds > 0
    full = next(o for o in exposed.ops if o.name == "tensor-parallel all-reduces").seconds
    assert not_hidden[0].seconds < full
    assert overlapped.step_seconds < exposed.step_seconds


@pytest.mark.parametrize("model", ["llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b"])
@pytest.mark.parametrize("tp", [2, 8])
def test_overlapping_never_slows_a_step_nor_beats_its_bound(model, tp):
    common = dict(model=model, hardware="h100-sxm", gpus=64, tp=tp, task="train",
                  seq_len=8192, sharding="zero1", pp=8 if model == "llama-3.1-405b" else 1)
    exposed = plan(**common).train.expected
    overlapped = plan(**common, tp_comm="overlapped").train.expected
    assert overlapped.step_seconds < exposed.step_seconds
    assert overlapped.seconds > overlapped.bound_seconds


def test_without_tensor_parallelism_there_is_nothing_to_overlap():
    one = dict(model="llama-3.1-8b", hardware="h100-sxm", gpus=8, task="train", seq_len=8192)
    assert (plan(**one, tp_comm="overlapped").train.expected.step_seconds
            == plan(**one).train.expected.step_seconds)


def test_an_unknown_choice_is_refused_by_name(capsys):
    with pytest.raises(EngineError) as refused:
        plan(**SEVENTY, tp_comm="sometimes")
    assert refused.value.field == "tp_comm"
    argv = ["plan", "--model", "llama-3.1-70b", "--gpus", "8", "--tp", "8", "--task", "train",
            "--tp-comm", "sometimes", "--json"]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert err.strip() == ("--tp-comm: Unknown tensor-parallel communication 'sometimes'; "
                           "choose one of: " + ", ".join(TP_COMMS) + ".")
    assert json.loads(out)["error"] == err.strip()


def test_a_row_that_overlapped_says_where_that_is_read_and_has_tensor_parallelism():
    fields = dict(id="x", group="train", task="train", model=None, params=1e9, model_note="m",
                  hardware="h100-sxm", hardware_note="", scope="system", note="",
                  gpus=8, metric="train_mfu", value=0.4, value_text="40 %",
                  stack="s", source="s 2024", tokens=1e12, seq_len=4096, global_batch_tokens=524288,
                  kernels_basis="not stated", tp_comm="overlapped")
    with pytest.raises(EngineError) as refused:
        Measurement(**fields, tp=8)
    assert refused.value.field == "tp_comm_basis"
    with pytest.raises(EngineError):
        Measurement(**fields, tp=1, tp_comm_basis="its README")
    assert Measurement(**fields, tp=8, tp_comm_basis="its README").tp_comm == "overlapped"
