import json
import subprocess
import sys

import pytest

from engine.cli import main


def run(*args):
    return subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("args", [
    ["catalog", "--json"],
    ["plan", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--gpus", "1", "--task",
     "serve", "--json"],
    ["plan", "--params", "7.5e9", "--hardware", "a100-80gb", "--gpus", "64", "--task", "train",
     "--sharding", "zero3", "--json"],
    ["plan", "--model", "llama-3.1-405b", "--hardware", "h100-sxm", "--gpus", "16384",
     "--task", "train", "--tokens", "15.6e12", "--mfu", "0.4", "--json"],
])
def test_documented_commands(args):
    r = run(*args)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    if args[0] == "plan":
        mem = data["memory"]
        assert sum(mem["parts"].values()) == pytest.approx(mem["per_gpu_bytes"])
        assert "per_token" in data["flops"]


def test_serve_json_numbers():
    data = json.loads(run("plan", "--model", "llama-3.1-8b", "--json").stdout)
    assert 18.5e9 < data["memory"]["per_gpu_bytes"] < 19.5e9
    assert data["serve"]["decode_seconds_per_token"] == pytest.approx(4.8e-3, abs=0.1e-3)


def test_train_405b_json_numbers():
    data = json.loads(run("plan", "--model", "llama-3.1-405b", "--gpus", "16384", "--task",
                          "train", "--tokens", "15.6e12", "--mfu", "0.4", "--json").stdout)
    # Meta's 3.8e25 (Llama 3 paper, section 3.2.1) is 6 N D; the engine adds attention at
    # 4,096 tokens (12 x 126 x 16,384 x 4,096 per token, +4 %) and leaves out the embedding.
    per_token = 6 * (405_853_388_800 - 128_256 * 16_384) + 12 * 126 * 16_384 * 4096
    assert data["train"]["model_flops"] == pytest.approx(per_token * 15.6e12, rel=1e-4)
    assert data["train"]["model_flops"] == pytest.approx(3.8e25, rel=0.05)
    assert 60 < data["train"]["seconds"] / 86400 < 75


def test_human_output():
    r = run("plan", "--model", "llama-3.1-8b")
    assert r.returncode == 0 and "Does it fit?" in r.stdout and "Yes" in r.stdout


@pytest.mark.parametrize("args", [
    ["plan", "--model", "nope"],
    ["plan", "--model", "llama-3.1-8b", "--gpus", "-3"],
    ["plan", "--model", "llama-3.1-8b", "--context", "lots"],
    ["plan", "--frobnicate"],
    ["fly"],
    [],
])
@pytest.mark.parametrize("as_json", [False, True])
def test_bad_input_exit_2(args, as_json, capsys):
    argv = [*args, "--json"] if as_json else args
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert len(err.strip().splitlines()) == 1
    if as_json:
        assert "error" in json.loads(out)
    else:
        assert out == ""


def test_bad_input_subprocess():
    r = run("plan", "--model", "nope", "--json")
    assert r.returncode == 2 and json.loads(r.stdout)["error"]
    assert r.stderr.strip()
