"""The cheapest plan that meets a target: a search worked by hand on a small catalogue (two
chips, one model), training's deadline, and hostile targets refused at the command line."""

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest

from engine.cli import main
from engine.numbers.catalog import get_hardware, prices, resolve_model
from engine.numbers.load.load_request import load_request, serve_load
from engine.numbers.search.results import Outcome, SetUp, pareto_frontier
from engine.numbers.search.serve import search_serving, serve_search_request, simulate_capped
from engine.numbers.search.train import search_training, train_search_request
from engine.numbers.serve_request import serve_request

LLAMA_8B = resolve_model("llama-3.1-8b", None)
SMALL = (get_hardware("a100-40gb"), get_hardware("h100-sxm"))


def run_cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def test_the_cheapest_plan_on_two_chips_is_the_one_worked_by_hand() -> None:
    # By hand: Llama 3.1 8B's 8.03e9 bf16 weights are 16.1 GB; one decode step reads them all.
    # On one A100 40GB (1.555 TB/s) that is 10.3 ms a token at best: above a 9 ms TPOT
    # target, so no A100 on its own can meet it (the bound), whatever the load. Two A100s
    # at tp 2 read half each (5.2 ms); one H100 SXM (3.35 TB/s) 4.8 ms. Per hour: one H100
    # $2.99 < two A100s 2 x $1.84 = $3.68 < two H100s $5.98. At one request a second both
    # keep their p90 under the targets, so the H100 wins, the two A100s come next.
    s = serve_search_request(LLAMA_8B, prompt_tokens=1024, output_tokens=256, rate=1,
                             ttft_p90=0.5, tpot_p90=0.009, hardware=SMALL, gpu_counts=(1, 2),
                             formats=(("bf16", "bf16"),), batch_caps=(None,), keep=3)
    r = search_serving(s)
    a100 = prices().default_cloud("a100-40gb").usd_per_gpu_hour
    h100 = prices().default_cloud("h100-sxm").usd_per_gpu_hour
    assert a100 < h100 < 2 * a100 < 2 * h100
    assert r.best is not None
    assert (r.best.setup.hardware, r.best.setup.gpus) == ("h100-sxm", 1)
    assert r.best.usd_per_hour == pytest.approx(h100)
    assert r.next[0].setup == SetUp("a100-40gb", 2, 2)
    assert r.next[0].usd_per_hour == pytest.approx(2 * a100)
    bound = [x for x in r.rejected if x.stage == "bound"]
    assert [(x.setup.hardware, x.setup.tp) for x in bound] == [("a100-40gb", 1)]
    assert "TPOT 10.3 ms above the target 9 ms" in bound[0].reason
    for o in (r.best, *r.next):
        assert o.meets and o.requests == 200
        assert o.tpot_p90_seconds is not None and o.tpot_p90_seconds <= 0.009
    costs = [o.usd_per_hour for o in (r.best, *r.next)]
    assert costs == sorted(costs)


def test_a_target_no_set_up_meets_gives_no_plan_and_says_why() -> None:
    s = serve_search_request(LLAMA_8B, prompt_tokens=1024, output_tokens=256, rate=1,
                             ttft_p90=0.5, tpot_p90=0.001, hardware=SMALL, gpu_counts=(1, 2),
                             formats=(("bf16", "bf16"),), batch_caps=(None,))
    r = search_serving(s)
    assert r.best is None and r.next == ()
    assert {x.stage for x in r.rejected} <= {"bound", "ranking"}
    assert r.rejected


def test_a_chip_without_a_price_is_rejected_as_such() -> None:
    s = serve_search_request(LLAMA_8B, prompt_tokens=1024, output_tokens=256, rate=1,
                             ttft_p90=0.5, tpot_p90=0.05, hardware=(get_hardware("l4"),))
    r = search_serving(s)
    assert r.best is None
    assert [x.stage for x in r.rejected] == ["price"]


def test_the_capped_simulation_at_the_default_cap_is_serve_load() -> None:
    hw = get_hardware("h100-sxm")
    serve = serve_request(LLAMA_8B, hw, gpus=1, serve_tp=None, batch=1, weight_format="bf16",
                          kv_format="bf16", context_tokens=8192, prompt_tokens=512,
                          output_tokens=64)
    a = serve_load(serve, load_request(rate=3, requests=30))
    b = simulate_capped(LLAMA_8B, hw, tp=1, replicas=1, weight_format="bf16",
                        kv_format="bf16", prompt_tokens=512, output_tokens=64,
                        concurrency=None, rate=3.0, requests=30, max_running=None)
    assert a.to_dict() == b.to_dict()


def test_the_frontier_keeps_only_the_set_ups_no_other_beats_on_both() -> None:
    def o(tps: float, tpot: float) -> Outcome:
        return Outcome(SetUp("h100-sxm", 1, 1), 1.0, 1.0, tps, True, tpot_p90_seconds=tpot)

    front = pareto_frontier([o(100, 0.01), o(200, 0.02), o(150, 0.03), o(300, 0.05)])
    assert [(x.tokens_per_s_per_gpu, x.tpot_p90_seconds) for x in front] == [
        (100, 0.01), (200, 0.02), (300, 0.05)]


def test_training_meets_its_deadline_at_the_fewest_gpus_of_the_cheapest_set_up() -> None:
    s = train_search_request(LLAMA_8B, tokens=1e11, deadline_days=10,
                             hardware=(get_hardware("h100-sxm"),), keep=2)
    r = search_training(s)
    assert r.best is not None and r.best.days is not None
    assert r.best.days <= 10
    slower = [x for x in r.rejected if x.stage == "expected"]
    assert all("days expected, above the deadline of 10" in x.reason for x in slower)
    assert r.best.usd_per_hour == pytest.approx(
        prices().default_cloud("h100-sxm").usd_per_gpu_hour * r.best.setup.gpus)


def test_cli_search_json_gives_the_plan_the_runners_up_the_rejected_and_the_frontier() -> None:
    code, out, _ = run_cli(["search", "--model", "llama-3.1-8b", "--prompt", "512",
                            "--output", "64", "--rate", "2", "--ttft-p90", "0.5",
                            "--tpot-p90", "0.05", "--keep", "2", "--json"])
    assert code == 0
    data = json.loads(out)
    assert data["best"]["meets"] is True
    assert "setup" in data["best"]["setup"]
    assert len(data["next"]) == 1
    assert data["frontier"] and data["seconds"] > 0
    assert data["ranking_requests"] == 48 and data["confirm_requests"] == 200


def test_cli_search_text_says_how_long_it_took() -> None:
    code, out, _ = run_cli(["search", "--model", "llama-3.1-8b", "--task", "train",
                            "--tokens", "1e11", "--deadline-days", "10"])
    assert code == 0
    assert out.startswith("Cheapest per hour that meets the target (train):")
    assert "Searched in " in out


@pytest.mark.parametrize("flag, value", [
    ("--ttft-p90", "-1"), ("--ttft-p90", "nan"), ("--tpot-p90", "inf"), ("--tpot-p90", "0"),
    ("--rate", "1e99"), ("--rate", "-4"), ("--prompt", "1e9"), ("--output", "nan"),
    ("--cheapest", "never"), ("--keep", "0"), ("--keep", "1e9"),
])
def test_cli_search_refuses_a_hostile_serving_target_naming_the_flag(flag: str,
                                                                     value: str) -> None:
    args = {"--rate": "4", "--ttft-p90": "0.5", "--tpot-p90": "0.05"}
    args[flag] = value
    code, out, err = run_cli(["search", "--model", "llama-3.1-8b", "--json",
                              *(x for pair in args.items() for x in pair)])
    assert code == 2
    assert err.startswith(flag + ":")
    assert json.loads(out)["error"].startswith(flag + ":")


@pytest.mark.parametrize("args, flag", [
    (["--tokens", "-1", "--deadline-days", "30"], "--tokens"),
    (["--tokens", "1e12", "--deadline-days", "nan"], "--deadline-days"),
    (["--tokens", "1e12", "--deadline-days", "1e99"], "--deadline-days"),
    (["--tokens", "1e12", "--deadline-days", "30", "--rate", "4"], "--rate"),
])
def test_cli_search_refuses_a_hostile_training_target_naming_the_flag(args: list[str],
                                                                      flag: str) -> None:
    code, _, err = run_cli(["search", "--model", "llama-3.1-8b", "--task", "train", *args])
    assert code == 2 and err.startswith(flag + ":")


def test_cli_search_refuses_both_a_rate_and_a_concurrency() -> None:
    code, _, err = run_cli(["search", "--model", "llama-3.1-8b", "--rate", "4",
                            "--concurrency", "8", "--ttft-p90", "1", "--tpot-p90", "1"])
    assert code == 2 and err.startswith("--rate:")
