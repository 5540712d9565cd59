"""A chip of the user's own (--hardware-spec FILE.json): hostile files end in exit 2 with a
message naming the key, never a traceback; a spec with the catalogue H100's figures plans as
the H100 does; half the bandwidth doubles the decode bound's time per token."""

import io
import json
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cli import main
from engine.numbers.catalog import get_hardware
from engine.numbers.catalog.links import get_links
from engine.numbers.catalog.user_hardware import (
    MAX_SPEC_CHARS,
    USER_HARDWARE_ID,
    user_hardware_from_text,
)
from engine.numbers.errors import EngineError
from engine.numbers.plan import plan

fast = settings(max_examples=120, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10**6), max_value=10**6),
              st.floats(allow_nan=False), st.text(max_size=10)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                  max_size=4),
    max_leaves=12,
)
TINY = {"name": "Tiny", "memory_GB": 24, "bandwidth_TB_per_s": 1.0,
        "peak_TFLOP_per_s": {"bf16": 165}}


def h100_spec(**changes: Any) -> dict[str, Any]:
    """The catalogue H100 SXM's figures, written as a user's spec."""
    hw, links = get_hardware("h100-sxm"), get_links("h100-sxm")
    peaks = {k: v / 1e12 for k, v in hw.peaks if k in ("bf16", "fp16", "fp8", "int8", "fp4")}
    spec: dict[str, Any] = {
        "name": "My H100", "memory_GB": hw.memory_bytes / 1e9,
        "bandwidth_TB_per_s": hw.bandwidth_bytes_per_s / 1e12, "peak_TFLOP_per_s": peaks,
        "power_W": hw.power_W,
        "links": {"gpus_per_server": links.chips_per_server,
                  "scale_up_GB_per_s_each_way": links.scale_up_bytes_per_s / 1e9,
                  "scale_up_kind": "nvlink",
                  "scale_out_GB_per_s_each_way": links.scale_out_bytes_per_s / 1e9}}
    spec.update(changes)
    return spec


def write(tmp_path: Path, spec: object, name: str = "chip.json") -> str:
    path = tmp_path / name
    path.write_text(spec if isinstance(spec, str) else json.dumps(spec), encoding="utf-8")
    return str(path)


def run_cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def plan_json(*args: str) -> dict[str, Any]:
    code, out, err = run_cli(["plan", "--model", "llama-3.1-8b", *args, "--json"])
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


# ------------------------------------------------------------------ hostile files


SPEC_KEYS = st.sampled_from(["name", "memory_GB", "bandwidth_TB_per_s", "peak_TFLOP_per_s",
                             "power_W", "usd_per_gpu_hour", "links", "source", "bf16",
                             "memory_bytes", "id", ""])
RAW_VALUES = st.sampled_from(["NaN", "Infinity", "-Infinity", "9" * 5000, "1" + "0" * 400,
                              "1e999", "-1e999", "0.5e-400", '"85 GB"', "[" * 50 + "]" * 50,
                              '{"bf16": NaN}', '{"bf16": "989"}', '{"gpus_per_server": 1e30,'
                              ' "scale_up_GB_per_s_each_way": 1}', "-0", "true", "null"])


@st.composite
def hostile_specs(draw: st.DrawFn) -> str:
    spec: dict[str, Any] = dict(draw(st.sampled_from([TINY, h100_spec(), {}])))
    spec.update(draw(st.dictionaries(SPEC_KEYS, JSON_VALUES, max_size=4)))
    text = json.dumps(spec)
    if draw(st.booleans()):  # a value JSON's dumper would never write, as a key's value
        key, raw = draw(SPEC_KEYS), draw(RAW_VALUES)
        text = text[:-1] + (", " if spec else "") + f'"{key}": {raw}' + "}"
    return draw(st.sampled_from([text, "[" * 5000 + "]" * 5000, text + " " * MAX_SPEC_CHARS,
                                 text[: len(text) // 2], "", "null", "[]", text]))


@fast
@given(hostile_specs(), st.sampled_from(["serve", "train"]), st.sampled_from(["1", "8", "16"]),
       st.booleans())
def test_hostile_specs_end_in_exit_0_or_2_never_a_traceback(
        text: str, task: str, gpus: str, sweep: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder), text)
        args = (["sweep", "--concurrency", "1,4"] if sweep and task == "serve" else ["plan"])
        code, out, err = run_cli([*args, "--model", "llama-3.1-8b", "--hardware-spec", path,
                                  "--task", task, "--gpus", gpus, "--json"])
    assert code in (0, 2)
    assert "Traceback" not in out + err
    if code == 2:
        assert err.strip() and "error" in json.loads(out)
    else:
        json.loads(out)  # strict JSON: no NaN or Infinity reached the output


REFUSED = [
    ('{"name": "x", "memory_GB": NaN}', "holds NaN"),
    ('{"name": "x", "memory_GB": Infinity}', "holds Infinity"),
    ('{"name": "x", "memory_GB": 1e999, "bandwidth_TB_per_s": 1, "peak_TFLOP_per_s": '
     '{"bf16": 1}}', "'memory_GB': infinity is too large"),
    ('{"name": "x", "memory_GB": ' + "9" * 5000 + ', "bandwidth_TB_per_s": 1, '
     '"peak_TFLOP_per_s": {"bf16": 1}}', "'memory_GB': a number of 5,000 characters"),
    ('{"name": "x", "memory_GB": "85", "bandwidth_TB_per_s": 1, "peak_TFLOP_per_s": '
     '{"bf16": 1}}', "'memory_GB' must be a number from 0.1 to 100,000 GB, not text"),
    ('{"name": "x", "memory_GB": true, "bandwidth_TB_per_s": 1, "peak_TFLOP_per_s": '
     '{"bf16": 1}}', "not true or false"),
    ('{"name": "x", "memory_GB": 80, "bandwidth_TB_per_s": 0, "peak_TFLOP_per_s": '
     '{"bf16": 1}}', "'bandwidth_TB_per_s': 0 is too small"),
    ('{"name": "x", "memory_GB": 80, "bandwidth_TB_per_s": 1, "peak_TFLOP_per_s": '
     '{"fp8": 1}}', "needs a bf16 peak"),
    ('{"name": "x", "memory_GB": 80, "bandwidth_TB_per_s": 1, "peak_TFLOP_per_s": '
     '{"bf16": 1, "fp64": 1}}', "unknown keys in 'peak_TFLOP_per_s': fp64"),
    ('{"name": "x", "memory_GB": 80, "bandwidth_TB_per_s": 1, "peak_TFLOP_per_s": '
     '{"bf16": 1}, "memory_GiB": 80}', "unknown keys: memory_GiB"),
    ('{"name": "x", "memory_GB": 80, "bandwidth_TB_per_s": 1, "peak_TFLOP_per_s": '
     '{"bf16": 1}, "links": {"gpus_per_server": 1.5, "scale_up_GB_per_s_each_way": 1}}',
     "'links.gpus_per_server' must be a whole number"),
    ('{"name": "x", "memory_GB": 80, "bandwidth_TB_per_s": 1, "peak_TFLOP_per_s": '
     '{"bf16": 1}, "links": {"gpus_per_server": 8}}', "needs 'scale_up_GB_per_s_each_way'"),
    ('{"name": "x", "memory_GB": 80, "bandwidth_TB_per_s": 1, "peak_TFLOP_per_s": '
     '{"bf16": 1}, "links": {"gpus_per_server": 8, "scale_up_GB_per_s_each_way": 9, '
     '"scale_up_kind": "carrier pigeon"}}', "must be one of nvlink, pcie, xgmi"),
    ('{"name": "\\u0000", "memory_GB": 80, "bandwidth_TB_per_s": 1, "peak_TFLOP_per_s": '
     '{"bf16": 1}}', "'name' holds control characters"),
    ('{"memory_GB": 80}', "needs 'name'"),
    ("[" * 10_000 + "]" * 10_000, "is 20,000 bytes; a hardware spec is a few hundred"),
    ("[" * 100 + "]" * 100, "nests more than 4 levels"),
    ("[1, 2]", "must be a JSON object"),
    ("", "is empty"),
    ('{"name": "x",', "not valid JSON"),
]


@pytest.mark.parametrize(("text", "said"), REFUSED, ids=[said[:40] for _, said in REFUSED])
def test_each_hostile_spec_is_refused_with_the_key_named(
        tmp_path: Path, text: str, said: str) -> None:
    code, out, err = run_cli(["plan", "--hardware-spec", write(tmp_path, text), "--json"])
    assert code == 2
    assert err.startswith("--hardware-spec: ")
    assert said in err, err
    assert json.loads(out)["error"] == err.strip()


def test_a_file_of_10_MB_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with open(path, "wb") as f:
        f.write(b'{"name": "' + b"x" * 10_000_000 + b'"}')
    code, _out, err = run_cli(["plan", "--hardware-spec", str(path)])
    assert code == 2
    assert "10,000,012 bytes" in err


def test_text_is_bounded_before_it_is_parsed() -> None:
    with pytest.raises(EngineError, match="not UTF-8"):
        user_hardware_from_text(b"\xff\xfe{}")
    with pytest.raises(EngineError, match="is 10,001 characters long"):
        user_hardware_from_text(" " * (MAX_SPEC_CHARS + 1))
    with pytest.raises(EngineError, match="must be JSON text"):
        user_hardware_from_text(None)


def test_a_missing_file_and_both_hardware_flags_are_refused(tmp_path: Path) -> None:
    code, _out, err = run_cli(["plan", "--hardware-spec", str(tmp_path / "none.json")])
    assert (code, err.strip()) == (2, f"--hardware-spec: Cannot read "
                                      f"{str(tmp_path / 'none.json')!r}: No such file or "
                                      "directory.")
    code, _out, err = run_cli(["plan", "--hardware", "h200",
                               "--hardware-spec", write(tmp_path, TINY)])
    assert (code, err.strip()) == (2, "--hardware-spec: Give --hardware or --hardware-spec, "
                                      "not both.")


# ------------------------------------------------------------------ hand-worked values


@pytest.mark.parametrize("args", [("--task", "serve", "--gpus", "1"),
                                  ("--task", "serve", "--gpus", "8", "--batch", "16"),
                                  ("--task", "train", "--gpus", "64", "--tp", "8",
                                   "--sharding", "zero3", "--mfu", "0.4")])
def test_a_spec_with_the_h100s_figures_plans_as_the_h100_does(
        tmp_path: Path, args: tuple[str, ...]) -> None:
    ours = plan_json("--hardware-spec", write(tmp_path, h100_spec()), *args)
    theirs = plan_json("--hardware", "h100-sxm", *args)
    for key in ("flops", "min_gpus", "gpus", "task"):
        assert ours[key] == theirs[key], key
    # The same numbers; only the capacity's basis is worded as the user's figure.
    def numbers(memory: dict[str, Any]) -> dict[str, Any]:
        said = [a for a in memory["assumptions"] if not a.startswith("Capacity:")]
        return {**memory, "assumptions": said}

    assert numbers(ours["memory"]) == numbers(theirs["memory"])
    if "serve" in theirs:
        for key in ("decode_seconds_per_token", "ttft_seconds", "decode_bytes_per_step",
                    "communication_seconds_per_token", "output_tokens_per_s"):
            assert ours["serve"][key] == pytest.approx(theirs["serve"][key], rel=1e-12), key
    else:
        for key in ("bound_seconds", "model_flops", "global_batch_tokens"):
            assert ours["train"][key] == pytest.approx(theirs["train"][key], rel=1e-12), key
    # The expected figures use the catalogue's measured efficiencies of the H100 only for the
    # H100 itself; the user's chip gets the defaults, and says so.
    assert ours["hardware"]["figures"] == "user's"


def test_half_the_bandwidth_doubles_the_decode_bound(tmp_path: Path) -> None:
    full = h100_spec()
    half = h100_spec(bandwidth_TB_per_s=full["bandwidth_TB_per_s"] / 2)
    t_full = plan_json("--hardware-spec", write(tmp_path, full, "full.json"))["serve"]
    t_half = plan_json("--hardware-spec", write(tmp_path, half, "half.json"))["serve"]
    # Batch 1 decode reads every weight and the KV cache once a token: bytes / bandwidth, the
    # same bytes at half the rate.
    assert t_half["decode_seconds_per_token"] == pytest.approx(
        2 * t_full["decode_seconds_per_token"], rel=1e-12)
    assert t_half["decode_bytes_per_step"] == t_full["decode_bytes_per_step"]
    assert t_half["ttft_seconds"] == t_full["ttft_seconds"]  # prefill is compute-bound


def test_a_spec_without_links_is_one_card_on_pcie_and_says_whose_figures(
        tmp_path: Path) -> None:
    data = plan_json("--hardware-spec", write(tmp_path, TINY, "tiny.json"))
    hw = data["hardware"]
    assert (hw["id"], hw["name"], hw["figures"]) == (USER_HARDWARE_ID, "Tiny", "user's")
    assert "not the catalogue's" in hw["source"] and "tiny.json" in hw["source"]
    assert data["memory"]["capacity_bytes"] == 24e9  # decimal GB, as given
    assert hw["peak_flops_per_s"] == {"bf16": 165e12}
    links = hw["links"]
    assert (links["chips_per_server"], links["scale_up_bytes_per_s"]) == (1, 32e9)
    assert "PCI-SIG" in links["source"]
    assert data["usd_per_gpu_hour"] is None
    code, _out, err = run_cli(["plan", "--model", "llama-3.1-8b", "--hardware-spec",
                               write(tmp_path, TINY, "tiny.json"), "--task", "train",
                               "--gpus", "8", "--tp", "8"])
    assert code == 2 and "Tensor parallelism of 8 would cross servers" in err


def test_the_specs_price_is_used_unless_the_run_gives_one(tmp_path: Path) -> None:
    path = write(tmp_path, {**TINY, "usd_per_gpu_hour": 1.25})
    assert plan_json("--hardware-spec", path)["usd_per_gpu_hour"] == 1.25
    assert plan_json("--hardware-spec", path, "--price", "2")["usd_per_gpu_hour"] == 2.0


def test_a_user_chip_runs_every_expected_path_in_the_engine() -> None:
    chip = user_hardware_from_text(json.dumps(h100_spec())).hardware
    served = plan(model="llama-3.1-70b", hardware=chip, gpus=8, task="serve")
    trained = plan(model="llama-3.1-8b", hardware=chip, gpus=16, task="train", tp=8)
    assert served.serve is not None and trained.train is not None
    assert chip.link_spec().scale_up_bytes_per_s == 450e9


def test_sweep_takes_a_spec(tmp_path: Path) -> None:
    code, out, err = run_cli(["sweep", "--model", "llama-3.1-8b", "--hardware-spec",
                              write(tmp_path, h100_spec()), "--concurrency", "1,8"])
    assert code == 0, err
    assert "on 1 × My H100" in out


def test_compare_takes_a_spec_on_either_side(tmp_path: Path) -> None:
    path = write(tmp_path, TINY)
    for flags in (["--hardware-spec", path, "--vs", "--hardware", "h200"],
                  ["--hardware", "h200", "--vs", "--hardware-spec", path]):
        code, out, err = run_cli(["compare", "--model", "llama-3.1-8b", *flags, "--json"])
        assert code == 0, err
        sides = json.loads(out)
        names = {sides[s]["hardware"]["name"] for s in ("a", "b")}
        assert names == {"Tiny", "NVIDIA H200 SXM 141GB"}
