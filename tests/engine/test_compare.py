"""Two plans compared: the engine's figures and differences, and the CLI's ``compare``."""

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest

from engine.cli import main
from engine.numbers.compare import compare_plans, plan_figures
from engine.numbers.plan import plan


def run_cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def test_a_plan_against_itself_differs_nowhere() -> None:
    a = plan(model="llama-3.1-8b", hardware="h100-sxm")
    c = compare_plans(a, a)
    assert c.differences == ()
    assert all(f.ratio in (None, 1.0) for f in c.figures)


def test_two_gpus_for_one_double_the_cost_per_hour_and_halve_the_weights_per_gpu() -> None:
    a = plan(model="llama-3.1-8b", hardware="h100-sxm", gpus=1)
    b = plan(model="llama-3.1-8b", hardware="h100-sxm", gpus=2)
    d = {f.name: f for f in compare_plans(a, b).differences}
    assert d["usd_per_hour"].a == pytest.approx(2.99)
    assert d["usd_per_hour"].ratio == pytest.approx(2.0)
    assert d["gpus"].a == 1 and d["gpus"].b == 2
    assert "capacity_per_gpu_gb" not in d  # the same chip
    assert d["memory_per_gpu_gb"].ratio is not None and d["memory_per_gpu_gb"].ratio < 0.75


def test_a_figure_one_plan_lacks_is_none_with_no_ratio() -> None:
    a = plan(model="llama-3.1-8b", hardware="h100-sxm")
    b = plan(model="llama-3.1-8b", hardware="l4", weight_format="int4")  # no price for an L4
    d = {f.name: f for f in compare_plans(a, b).figures}
    assert d["usd_per_hour"].b is None and d["usd_per_hour"].ratio is None
    assert d["fits"].a is True


def test_serving_against_training_lists_both_tasks_figures() -> None:
    a = plan(model="llama-3.1-8b", hardware="h100-sxm", gpus=8)
    b = plan(model="llama-3.1-8b", hardware="h100-sxm", gpus=8, task="train", tokens=1e9)
    names = [f.name for f in compare_plans(a, b).figures]
    assert "ttft_seconds" in names and "expected_days" in names
    assert [f.name for f in plan_figures(a)][:5] == names[:5]


def test_cli_compare_json_names_each_difference_with_both_values_and_the_ratio() -> None:
    code, out, _ = run_cli(["compare", "--model", "llama-3.1-8b", "--hardware", "h100-sxm",
                            "--json", "--vs", "--hardware", "h200", "--format", "fp8"])
    assert code == 0
    data = json.loads(out)
    assert data["a"]["hardware"]["id"] == "h100-sxm"
    assert data["b"]["hardware"]["id"] == "h200"
    assert data["b"]["serve"]["weight_format"] == "fp8"
    d = {x["name"]: x for x in data["differences"]}
    assert d["usd_per_hour"]["a"] == pytest.approx(2.99)
    assert d["usd_per_hour"]["b"] == data["b"]["usd_per_gpu_hour"]
    assert d["usd_per_hour"]["ratio"] == pytest.approx(data["b"]["usd_per_gpu_hour"] / 2.99)
    assert "fits" in data["same"]


def test_cli_compare_with_a_load_compares_its_p90_latencies() -> None:
    code, out, _ = run_cli(["compare", "--model", "llama-3.1-8b", "--rate", "2",
                            "--requests", "40", "--json", "--vs", "--gpus", "2", "--tp", "1"])
    assert code == 0
    data = json.loads(out)
    assert "load" in data["a"]["serve"] and "load" in data["b"]["serve"]
    names = {x["name"] for x in data["differences"]}
    assert "load_ttft_p90_seconds" in names


def test_cli_compare_text_puts_a_and_b_side_by_side() -> None:
    code, out, _ = run_cli(["compare", "--model", "llama-3.1-8b", "--vs", "--model",
                            "llama-3.1-70b", "--gpus", "4"])
    assert code == 0
    assert out.startswith("A: Llama 3.1 8B on 1 ×")
    assert "B: Llama 3.1 70B on 4 ×" in out
    assert "figures differ." in out


@pytest.mark.parametrize("args, said", [
    (["compare", "--model", "llama-3.1-8b"], "--vs"),
    (["compare", "--model", "llama-3.1-8b", "--vs"], "--vs"),
    (["compare", "--vs", "--gpus", "1", "--vs", "--gpus", "2"], "--vs"),
    (["compare", "--model", "llama-3.1-8b", "--vs", "--gpus", "-1"], "plan B: --gpus"),
    (["compare", "--model", "llama-3.1-8b", "--gpus", "nan", "--vs", "--gpus", "2"],
     "plan A: --gpus"),
])
def test_cli_compare_refuses_bad_input_naming_the_plan_and_flag(args: list[str],
                                                                said: str) -> None:
    code, out, err = run_cli([*args, "--json"])
    assert code == 2
    assert said in err and said in json.loads(out)["error"]
