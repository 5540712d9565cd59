"""``python -m engine roofline``: a chip's roof and a model's passes on it, the same numbers
as the engine's functions, and bad input refused with exit 2 naming the option."""

import json
import re
import shlex

import pytest

from engine.cli import main
from engine.lesson.plans.roofline_view import COMMAND
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.expected_serving import decode_parts
from engine.numbers.roofline import micro_batch_intensity, ridge_point
from engine.numbers.serving import decode_step, prefill
from engine.registry import get_widget
from engine.render.fields import Values


def roofline_json(capsys, *args: str) -> dict:
    assert main(["roofline", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_roof_and_each_pass_are_the_engines(capsys) -> None:
    data = roofline_json(capsys, "--model", "llama-3.1-8b", "--hardware", "h100-sxm",
                         "--context", "2048", "--prompt", "512", "--batches", "32,1,8")
    m, hw = get_model("llama-3.1-8b"), get_hardware("h100-sxm")
    assert data["ridge_point_flops_per_byte"] == ridge_point(hw) == pytest.approx(295.3, 0.01)
    assert data["peak_flops_per_s"] == hw.peak_flops_per_s("bf16")
    assert [d["batch"] for d in data["decode"]] == [1, 8, 32]  # sorted
    for point in data["decode"]:
        step = decode_step(m, hw, context_tokens=2048, batch=point["batch"])
        assert point["seconds"] == step.seconds and point["bound"] == step.bound
        assert point["arithmetic_intensity"] == step.arithmetic_intensity
        assert point["expected"]["seconds"] == decode_parts(
            m, hw, context_tokens=2048, batch=point["batch"]).seconds
        assert point["memory"]["context_tokens"] == 2048
    assert data["decode"][0]["tokens_per_s_against_batch_1"] == 1.0
    assert data["prefill"]["seconds"] == prefill(m, hw, prompt_tokens=512).seconds
    assert data["train_micro_batch"]["arithmetic_intensity"] == micro_batch_intensity(
        m, micro_batch=1, seq_len=4096)
    assert data["link"] is None and "one_gpu_seconds" not in data["decode"][0]["expected"]


def test_split_over_gpus_says_the_link_and_the_one_gpu_step(capsys) -> None:
    data = roofline_json(capsys, "--model", "llama-3.1-70b", "--hardware", "l40s", "--gpus",
                         "8", "--batches", "1")
    e = data["decode"][0]["expected"]
    assert "PCIe" in data["link"] and e["communication_seconds"] > 0
    assert e["speedup_over_one_gpu"] == pytest.approx(e["one_gpu_seconds"] / e["seconds"])


def test_context_0_is_the_weights_alone(capsys) -> None:
    data = roofline_json(capsys, "--model", "llama-3.1-8b", "--hardware", "l4", "--context",
                         "0", "--batches", "1", "--format", "int4")
    point = data["decode"][0]
    assert point["context_tokens"] == 0 and point["memory"]["context_tokens"] == 1
    assert data["model"]["looked_up_params"] > 0


def test_the_text_names_the_roof(capsys) -> None:
    assert main(["roofline", "--model", "llama-3.1-8b"]) == 0
    out = capsys.readouterr().out
    assert "ridge point 295 FLOP/byte" in out and "batch     512" in out


@pytest.mark.parametrize(("args", "flag"), [
    (["--hardware", "nope"], "--hardware"),
    (["--gpus", "3"], "--gpus"),  # 32 heads do not split three ways
    (["--gpus", "16"], "--gpus"),
    (["--format", "zz"], "--format"),
    (["--kv-format", "int4"], "--kv-format"),
    (["--context", "-1"], "--context"),
    (["--prompt", "0"], "--prompt"),
    (["--batches", "1,0"], "--batches"),
    (["--batches", "1,,8"], "--batches"),
    (["--batches", ",".join(str(b) for b in range(1, 100))], "--batches"),
    (["--micro-batch", "0"], "--micro-batch"),
    (["--seq-len", "lots"], "--seq-len"),
    (["--params", "7e9"], "--model"),  # with --model too
])
@pytest.mark.parametrize("as_json", [False, True])
def test_bad_input_is_refused_naming_the_option(args, flag, as_json, capsys) -> None:
    argv = ["roofline", "--model", "llama-3.1-8b", *args, *(["--json"] if as_json else [])]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert err.startswith(flag + ":") and len(err.strip().splitlines()) == 1
    assert (json.loads(out)["error"] == err.strip()) if as_json else out == ""


@pytest.mark.parametrize("inputs", [{}, {"format": "int4"}, {"model": "llama-3.1-70b"}])
def test_the_decode_ceilings_does_not_fit_is_its_commands(inputs, capsys) -> None:
    # Each device's bar is marked too big exactly where its command line says it does not fit.
    w = get_widget("bandwidth_ceiling")
    values = w.defaults(inputs)
    html = w.run(values).html
    assert w.command is not None
    for line in w.command(Values(values)).lines:
        data = roofline_json(capsys, *shlex.split(line)[len(COMMAND):])
        bar = re.search(rf'<g data-device="{data["hardware"]["id"]}">(.*?)</g>', html)
        assert bar is not None
        assert ("ceiling-nofit" in bar.group(1)) == (not data["decode"][0]["memory"]["fits"])
