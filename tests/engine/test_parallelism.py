"""Pipeline parallelism, servers and the step split: values worked by hand and the
Llama 3 paper's published runs."""

from __future__ import annotations

import json

import pytest

from engine.cli import main
from engine.lesson.plans.plan_json import plan_to_dict
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.communication import pipeline_bubble_fraction
from engine.numbers.errors import EngineError
from engine.numbers.memory import training_memory
from engine.numbers.plan import plan

H100 = "h100-sxm"
SEQ = 4096


def _train(**kw: object) -> dict:
    args: dict[str, object] = {"model": "llama-3.1-70b", "hardware": H100, "task": "train",
                               "tokens": 1e12, "seq_len": SEQ}
    args.update(kw)
    return plan_to_dict(plan(**args))["train"]  # type: ignore[return-value]


def test_bubble_fraction_by_hand():
    assert pipeline_bubble_fraction(1, 8) == 0.0
    assert pipeline_bubble_fraction(4, 8) == 3 / 11  # (p-1)/(m+p-1) = 3/11
    assert pipeline_bubble_fraction(16, 16) == 15 / 31


def test_one_pipeline_idles_its_bubble():
    # 32 GPUs = TP 8 x PP 4 x DP 1: no gradient all-reduce, so the step is (m + p - 1) stage
    # times, of which p - 1 idle: with 8 micro-batches (8 x 4,096 tokens), 3/11 of the step.
    t = _train(gpus=32, tp=8, pp=4, global_batch_tokens=8 * SEQ)
    step = t["expected"]["step"]
    assert t["pp"] == 4 and t["dp"] == 1 and t["expected"]["accumulation"] == 8
    # The optimiser step runs once, after the pipeline has drained.
    pipelined = step["seconds"] - step["optimizer_seconds"]
    assert step["bubble_seconds"] / pipelined == pytest.approx(3 / 11)
    assert step["compute_seconds"] + step["exposed_communication_seconds"] \
        + step["bubble_seconds"] + step["optimizer_seconds"] == pytest.approx(step["seconds"])


def test_interleaving_halves_the_bubble():
    one = _train(gpus=32, tp=8, pp=4, global_batch_tokens=8 * SEQ)["expected"]["step"]
    two = _train(gpus=32, tp=8, pp=4, global_batch_tokens=8 * SEQ,
                 interleave=2)["expected"]["step"]
    assert two["compute_seconds"] == pytest.approx(one["compute_seconds"])
    assert two["bubble_seconds"] < one["bubble_seconds"] / 1.9  # half, plus twice the sends


def test_no_pipeline_no_bubble_and_the_split_adds_up():
    t = _train(gpus=64, tp=8)
    step = t["expected"]["step"]
    assert t["pp"] == 1 and step["bubble_seconds"] == 0.0
    assert step["compute_seconds"] + step["exposed_communication_seconds"] \
        + step["optimizer_seconds"] == pytest.approx(step["seconds"])
    assert step["seconds"] == t["expected"]["step_seconds"]


def test_pipeline_divides_the_weights():
    # 80 layers in 2 stages of 40: each GPU holds half the weights of TP 8 alone.
    one = training_memory(get_model("llama-3.1-70b"), get_hardware(H100), gpus=8, tp=8)
    two = training_memory(get_model("llama-3.1-70b"), get_hardware(H100), gpus=16, tp=8, pp=2)
    assert two.parts["weights"] == pytest.approx(one.parts["weights"] / 2)
    assert two.parts["activations"] == pytest.approx(one.parts["activations"])  # 1F1B
    # Uneven: Llama 3.1 405B's 126 layers in 16 stages, the fullest holds 8 (8/126).
    m = training_memory(get_model("llama-3.1-405b"), get_hardware(H100), gpus=128, tp=8, pp=16)
    full = training_memory(get_model("llama-3.1-405b"), get_hardware(H100), gpus=8, tp=8)
    assert m.parts["weights"] == pytest.approx(full.parts["weights"] * 8 / 126)


@pytest.mark.parametrize(("gpus", "published_mfu"), [
    # Llama 3 Herd of Models (arXiv 2407.21783), Table 4: TP 8, PP 16, 16M tokens per batch,
    # sequences of 8,192: 8,192 GPUs (DP 64) 43 % BF16 MFU; 16,384 GPUs (DP 128) 41 %.
    (8192, 0.43),
    (16384, 0.41),
])
def test_llama3_405b_at_its_published_parallelism(gpus, published_mfu):
    # Llama 3 ran an interleaved schedule (section 3.3.2, Figure 6); 2 chunks per GPU assumed.
    t = _train(model="llama-3.1-405b", gpus=gpus, tp=8, pp=16, interleave=2, seq_len=8192,
               sharding="zero1", global_batch_tokens=16 * 2**20, tokens=15.6e12)
    e = t["expected"]
    assert abs(e["mfu"] / published_mfu - 1) < 0.25
    assert e["step"]["bubble_seconds"] > 0
    assert e["seconds"] > t["bound_seconds"]  # the bound is never beaten


def test_plain_1f1b_at_16k_gpus_is_bubble_bound():
    # 16 micro-batches over 16 stages: 15/31 of the step idle, MFU far below the published 41 %.
    e = _train(model="llama-3.1-405b", gpus=16384, tp=8, pp=16, seq_len=8192,
               sharding="zero1", global_batch_tokens=16 * 2**20)["expected"]
    assert e["accumulation"] == 16
    assert e["mfu"] < 0.41 * 0.8


def test_servers_give_the_gpu_count():
    p = plan(model="llama-3.1-70b", hardware=H100, task="train", nodes=4, tp=8, pp=2)
    assert p.gpus == 32
    assert plan(model="llama-3.1-8b", hardware="rtx-4090", nodes=2).gpus == 8  # 4 per box


@pytest.mark.parametrize(("kw", "field", "words"), [
    ({"gpus": 16, "tp": 16}, "tp", "would cross servers"),
    ({"gpus": 24, "tp": 8, "pp": 2}, "pp", "8 × 2 = 16"),
    ({"gpus": 12, "tp": 8}, "tp", "multiple of the tensor-parallel size"),
    ({"gpus": 96, "tp": 8, "pp": 96}, "pp", "80 layers"),
    ({"gpus": 6, "tp": 6}, "tp", "attention heads"),
    ({"gpus": 8, "nodes": 4}, "nodes", "hold 32 GPUs, not 8"),
    ({"gpus": 320, "tp": 8, "pp": 40, "interleave": 4}, "interleave", "chunks"),
    ({"gpus": 8, "pp": 0}, "pp", "Pipeline stages"),
    ({"gpus": 8, "pp": "x"}, "pp", "Pipeline stages"),
    ({"gpus": 8, "global_batch_tokens": -1}, "global_batch_tokens", "Global batch"),
])
def test_splits_that_cannot_work_are_refused(kw, field, words):
    with pytest.raises(EngineError) as e:
        _train(**kw)
    assert e.value.field == field
    assert words in e.value.message


def test_cli_pipeline_and_servers(capsys):
    assert main(["plan", "--model", "llama-3.1-70b", "--hardware", H100, "--task", "train",
                 "--nodes", "4", "--tp", "8", "--pp", "2", "--tokens", "1e12", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["gpus"] == 32 and d["train"]["pp"] == 2 and d["train"]["dp"] == 2
    assert set(d["train"]["expected"]["step"]) == {
        "seconds", "compute_seconds", "exposed_communication_seconds", "bubble_seconds",
        "optimizer_seconds"}
    assert main(["plan", "--model", "llama-3.1-70b", "--task", "train", "--gpus", "16",
                 "--tp", "16", "--json"]) == 2
    assert "cross servers" in json.loads(capsys.readouterr().out)["error"]


def test_cli_serve_step_split(capsys):
    assert main(["plan", "--model", "llama-3.1-70b", "--hardware", H100, "--gpus", "4",
                 "--batch", "8", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)["serve"]
    step = s["expected"]["step"]
    assert step["seconds"] == s["expected"]["decode_seconds_per_token"]
    assert step["exposed_communication_seconds"] == s["communication_seconds_per_token"] > 0
    assert step["bubble_seconds"] == 0.0
