import json
import subprocess
import sys
from pathlib import Path

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
    assert data["serve"]["decode_seconds_per_token"] == pytest.approx(4.5e-3, abs=0.1e-3)


def test_train_405b_json_numbers():
    data = json.loads(run("plan", "--model", "llama-3.1-405b", "--gpus", "16384", "--task",
                          "train", "--tokens", "15.6e12", "--mfu", "0.4", "--json").stdout)
    # Meta's 3.8e25 (Llama 3 paper, section 3.2.1) is 6 N D; the engine adds causal attention
    # at 4,096 tokens (12 x 126 x 16,384 x 4,097 / 2 per token, +2 %) and leaves out the
    # embedding.
    per_token = 6 * (405_853_388_800 - 128_256 * 16_384) + 6 * 126 * 16_384 * 4097
    assert data["train"]["model_flops"] == pytest.approx(per_token * 15.6e12, rel=1e-4)
    assert data["train"]["model_flops"] == pytest.approx(3.8e25, rel=0.05)
    assert 60 < data["train"]["seconds"] / 86400 < 75


def _plan_json(capsys, *args):
    assert main(["plan", "--model", "llama-3.1-8b", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_plan_json_prices_a_million_tokens_at_the_expected_speeds(capsys):
    # Two replicas of one GPU each share batch 16, each kept busy decoding its 8: a million
    # output tokens cost the hour of both GPUs over the tokens both decode in it.
    data = _plan_json(capsys, "--hardware", "h100-sxm", "--gpus", "2", "--tp", "1", "--task",
                      "serve", "--batch", "16")
    e, usd = data["serve"]["expected"], data["usd_per_gpu_hour"]
    busy_tokens_per_s = 2 * 8 / e["decode_seconds_per_token"]
    assert e["usd_per_million_output_tokens"] == pytest.approx(
        2 * usd / (busy_tokens_per_s * 3600) * 1e6)
    data = _plan_json(capsys, "--hardware", "h100-sxm", "--gpus", "8", "--task", "train",
                      "--sharding", "zero3")
    e = data["train"]["expected"]
    assert e["usd_per_million_tokens"] == pytest.approx(
        8 * data["usd_per_gpu_hour"] / (e["tokens_per_s"] * 3600) * 1e6)


@pytest.mark.parametrize("task", ["serve", "train"])
def test_plan_json_has_no_cost_per_token_without_a_price(task, capsys):
    data = _plan_json(capsys, "--hardware", "h800", "--gpus", "8", "--task", task,
                      "--sharding", "zero3") if task == "train" else _plan_json(
        capsys, "--hardware", "h800", "--task", task)
    assert data["usd_per_gpu_hour"] is None
    assert not {"usd_per_million_tokens", "usd_per_million_output_tokens"} & set(
        data[task]["expected"])


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


def test_a_reader_that_stops_early_gets_no_traceback():
    # As `python -m engine catalog --json | head -1`: the reader closes the pipe before the
    # command has written; it ends quietly, with the status a broken pipe gives (128 + 13).
    child = subprocess.Popen([sys.executable, "-m", "engine", "catalog", "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()
    errors = child.stderr.read()
    assert child.wait(timeout=60) == 141
    assert errors == b""


CONFIGS = "tests/fixtures/configs"


def test_inspect_json():
    r = run("inspect", f"{CONFIGS}/Qwen3-30B-A3B.json", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["name"] == "Qwen3-30B-A3B" and data["family"] == "Qwen3 MoE"
    # Qwen3-30B-A3B model card: 30.5B total, 3.3B activated.
    assert data["params"] == pytest.approx(30.5e9, rel=0.005)
    assert data["active_params"] == pytest.approx(3.3e9, rel=0.02)
    assert data["kv_cache_bytes_per_token"]["bf16"] == 2 * 48 * 4 * 128 * 2
    assert data["shapes"]["experts"] == 128 and data["left_out"]


def test_inspect_text_says_assumptions():
    r = run("inspect", f"{CONFIGS}/falcon-7b.json")
    assert r.returncode == 0, r.stderr
    assert "1 KV heads of 64 (multi-query)" in r.stdout
    assert "intermediate_size not given" in r.stdout


def test_plan_from_config_follows_the_model():
    r = run("plan", "--config", f"{CONFIGS}/Llama-3.1-8B.json", "--json")
    same = run("plan", "--model", "llama-3.1-8b", "--json")
    got, want = json.loads(r.stdout), json.loads(same.stdout)
    assert got["memory"] == want["memory"] and got["serve"] == want["serve"]
    assert got["model"]["name"] == "Llama-3.1-8B" and got["model"]["assumed"] == []


def test_plan_from_config_trains():
    r = run("plan", "--config", f"{CONFIGS}/DeepSeek-V3.json", "--task", "train", "--gpus",
            "2048", "--sharding", "zero3", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["model"]["active_params"] == pytest.approx(37e9, rel=0.02)
    assert data["train"]["tokens"] == pytest.approx(20 * data["model"]["params"])


@pytest.mark.parametrize(("args", "said"), [
    (["inspect", "/no/such/config.json"], "Cannot read"),
    (["inspect", f"{CONFIGS}/README.md"], "not valid JSON"),
    (["plan", "--config", f"{CONFIGS}/README.md"], "not valid JSON"),
    (["plan", "--config", f"{CONFIGS}/falcon-7b.json", "--model", "llama-3.1-8b"],
     "not more than one"),
])
def test_config_errors_exit_2(args, said, capsys):
    assert main([*args, "--json"]) == 2
    out, err = capsys.readouterr()
    assert said in json.loads(out)["error"] and said in err


def test_inspect_bounds_a_huge_file(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text("[" * 50_000 + "]" * 50_000)
    assert main(["inspect", str(path)]) == 2
    assert "nests more than" in capsys.readouterr().err


def test_inspect_refuses_a_50_MB_file_unread(tmp_path, capsys):
    path = tmp_path / "big.json"
    with open(path, "wb") as f:
        f.truncate(50_000_000)
    assert main(["inspect", str(path)]) == 2
    assert "50,000,000 bytes" in capsys.readouterr().err


def test_plan_from_config_text_lists_what_was_assumed():
    r = run("plan", "--config", f"{CONFIGS}/falcon-7b.json")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("falcon-7b on 1 × NVIDIA H100")
    assert "intermediate_size not given" in r.stdout


def test_a_file_called_config_json_is_named_after_its_folder(tmp_path):
    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "config.json").write_text(Path(CONFIGS, "pythia-1.4b.json").read_text())
    r = run("inspect", str(folder / "config.json"), "--json")
    data = json.loads(r.stdout)
    # Pythia README: 1,414,647,808 parameters for pythia-1.4b.
    assert data["name"] == "my-model" and data["params"] == 1_414_647_808


def test_plan_json_gives_the_memory_a_chip_is_sold_with(capsys):
    # Apple sells the iPhone 15 Pro's memory as 8 GB: eight binary gigabytes, 8 x 2^30 bytes
    # (the catalogue's memory_marketed_GB; the ladder's usable-memory line shows it).
    data = _plan_json(capsys, "--model", "llama-3.2-1b", "--hardware", "apple-a17-pro",
                      "--format", "int4", "--context", "4096")
    assert data["hardware"]["memory_marketed_GB"] == 8.0
    assert data["hardware"]["memory_marketed_bytes"] == 8_589_934_592.0
    # An H100 is sold as 80 GB, 80 x 2^30 bytes, of which CUDA hands out 79.11 GiB.
    data = _plan_json(capsys, "--hardware", "h100-sxm")
    assert data["hardware"]["memory_marketed_bytes"] == 85_899_345_920.0
    assert data["memory"]["capacity_bytes"] < data["hardware"]["memory_marketed_bytes"]
