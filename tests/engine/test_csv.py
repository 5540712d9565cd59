"""``--csv`` for the command line's tables (sweep, compare, search): a header row of names
with their units, one row per load, figure or set-up, each value the one ``--json`` gives."""

import csv
import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest

from engine.cli import main
from engine.lesson.plans.csv_tables import SEARCH_HEADER, SWEEP_HEADER, search_csv
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.search.serve import search_serving, serve_search_request


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def table(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


SWEEP = ("sweep", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--concurrency",
         "1,8,32", "--requests", "60")


def test_a_sweep_as_csv_is_its_json_a_row_per_load() -> None:
    code, out, _ = run_cli(*SWEEP, "--csv")
    assert code == 0
    assert out.splitlines()[0] == ",".join(SWEEP_HEADER)
    # Units in the names: seconds, per second, a fraction.
    assert {"ttft_p50_s", "tpot_p99_s", "output_tokens_per_s_per_gpu",
            "kv_cache_peak_fraction"} <= set(SWEEP_HEADER)
    rows = table(out)
    loads = json.loads(run_cli(*SWEEP, "--json")[1])
    assert [r["concurrency"] for r in rows] == ["1", "8", "32"]
    for row, load in zip(rows, loads, strict=True):
        assert float(row["ttft_p50_s"]) == load["ttft_seconds"]["p50"]
        assert float(row["tpot_p90_s"]) == load["tpot_seconds"]["p90"]
        assert float(row["output_tokens_per_s"]) == load["output_tokens_per_s"]
        assert int(row["preemptions"]) == load["preemptions"]
        assert row["rate_requests_per_s"] == "" and row["goodput_requests_per_s"] == ""


def test_a_comparison_as_csv_has_every_figure_with_its_unit() -> None:
    args = ("compare", "--model", "llama-3.1-8b", "--vs", "--hardware", "h200")
    code, out, _ = run_cli(*args, "--csv")
    assert code == 0
    rows = table(out)
    data = json.loads(run_cli(*args, "--json")[1])
    differ = {d["name"]: d for d in data["differences"]}
    assert {r["figure"] for r in rows if r["differs"] == "true"} == set(differ)
    assert {r["figure"] for r in rows if r["differs"] == "false"} == set(data["same"])
    cost = next(r for r in rows if r["figure"] == "usd_per_hour")
    assert cost["unit"] == "USD"
    assert float(cost["plan_a"]) == differ["usd_per_hour"]["a"]
    assert float(cost["b_over_a"]) == differ["usd_per_hour"]["ratio"]


def test_a_search_as_csv_names_each_set_up_by_its_role() -> None:
    # The two-chip search of test_search.py: one H100 wins, two A100s next, one A100 is
    # turned down at the bound.
    s = serve_search_request(
        get_model("llama-3.1-8b"), prompt_tokens=1024, output_tokens=256, rate=1,
        ttft_p90=0.5, tpot_p90=0.009,
        hardware=(get_hardware("a100-40gb"), get_hardware("h100-sxm")), gpu_counts=(1, 2),
        formats=(("bf16", "bf16"),), batch_caps=(None,), keep=3)
    r = search_serving(s)
    text = search_csv(r)
    assert text.splitlines()[0] == ",".join(SEARCH_HEADER)
    rows = table(text)
    best = rows[0]
    assert best["role"] == "best" and (best["hardware"], best["gpus"]) == ("h100-sxm", "1")
    assert r.best is not None and float(best["usd_per_hour"]) == r.best.usd_per_hour
    assert best["meets_targets"] == "true" and best["reason"] == ""
    assert rows[1]["role"] == "next" and (rows[1]["hardware"], rows[1]["tp"]) == ("a100-40gb", "2")
    rejected = [x for x in rows if x["role"] == "rejected"]
    assert len(rejected) == len(r.rejected)
    assert any(x["rejected_at"] == "bound" and "TPOT 10.3 ms" in x["reason"] for x in rejected)


def test_the_training_search_on_the_command_line_gives_csv() -> None:
    code, out, _ = run_cli("search", "--model", "llama-3.1-8b", "--task", "train", "--tokens",
                           "1T", "--deadline-days", "30", "--csv")
    assert code == 0
    rows = table(out)
    assert rows[0]["role"] == "best" and float(rows[0]["days"]) <= 30


@pytest.mark.parametrize("args", [
    (*SWEEP, "--csv", "--json"),
    ("plan", "--model", "llama-3.1-8b", "--csv"),  # a plan is a record: --json
])
def test_csv_where_it_does_not_apply_is_refused(args: tuple[str, ...]) -> None:
    code, _, err = run_cli(*args)
    assert code == 2 and err.startswith("error:")
