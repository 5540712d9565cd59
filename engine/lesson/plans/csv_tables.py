"""The command line's tables as CSV (``--csv``): a sweep's loads, two plans' figures, a
search's set-ups. One header row of names that carry their units (``ttft_p50_s``,
``usd_per_hour``), then one row per load, figure or set-up; numbers at full precision (as
``--json`` gives them), an empty cell where a value does not apply, true/false for yes/no.

A plan alone is a record rather than a table: ``--json`` is its machine form.

The rows are written here rather than by the standard library's ``csv`` (whose minimal
quoting they follow: a cell holding a comma, a double quote or a line break is quoted, its
quotes doubled), so the browser, which downloads these tables too, ships no ``csv`` module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: the browser ships none of these for a table
    from engine.numbers.compare import PlanComparison
    from engine.numbers.load.results import LoadResult
    from engine.numbers.search.results import Outcome, Rejection, SearchResult

Cell = str | int | float | bool | None


def _cell(value: Cell) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _quoted(text: str) -> str:
    """A cell as CSV writes it: quoted, its quotes doubled, when it holds a comma, a double
    quote or a line break; as it is otherwise."""
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _table(header: Sequence[str], rows: Sequence[Sequence[Cell]]) -> str:
    lines = [header, *([_cell(c) for c in row] for row in rows)]
    return "\n".join(",".join(_quoted(text) for text in line) for line in lines)


SWEEP_HEADER = (
    "concurrency", "rate_requests_per_s", "requests", "gpus",
    "ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "tpot_p50_s", "tpot_p90_s", "tpot_p99_s",
    "itl_p50_s", "itl_p99_s", "e2e_p50_s", "e2e_p99_s", "duration_s",
    "requests_per_s", "output_tokens_per_s", "output_tokens_per_s_per_gpu",
    "kv_cache_peak_fraction", "preemptions", "goodput_requests_per_s",
)


def sweep_csv(runs: Sequence[LoadResult]) -> str:
    """One row per load of a sweep (latencies in seconds, throughput per second)."""
    rows = [(
        r.concurrency, r.rate, r.requests, r.gpus,
        r.ttft_seconds.p50, r.ttft_seconds.p90, r.ttft_seconds.p99,
        r.tpot_seconds.p50, r.tpot_seconds.p90, r.tpot_seconds.p99,
        r.itl_seconds.p50, r.itl_seconds.p99, r.e2e_seconds.p50, r.e2e_seconds.p99,
        r.duration_seconds, r.requests_per_s, r.output_tokens_per_s,
        r.output_tokens_per_s_per_gpu, r.kv_cache_peak_fraction, r.preemptions,
        None if r.goodput is None else r.goodput.requests_per_s,
    ) for r in runs]
    return _table(SWEEP_HEADER, rows)


COMPARE_HEADER = ("figure", "label", "unit", "plan_a", "plan_b", "b_over_a", "differs")


def comparison_csv(comparison: PlanComparison) -> str:
    """One row per figure of two plans: A's value, B's, B / A, whether they differ (the
    figure's unit in its own column: GB, s, USD...)."""
    rows = [(d.name, d.label, d.unit, d.a, d.b, d.ratio, d.differs) for d in comparison.figures]
    return _table(COMPARE_HEADER, rows)


SEARCH_HEADER = (
    "role", "hardware", "gpus", "tp", "pp", "weight_format", "kv_format", "max_running",
    "sharding", "usd_per_hour", "usd_per_million_tokens", "tokens_per_s_per_gpu",
    "ttft_p90_s", "tpot_p90_s", "requests_simulated", "days", "mfu", "meets_targets",
    "rejected_at", "reason",
)


def _outcome_row(role: str, o: Outcome) -> tuple[Cell, ...]:
    s = o.setup
    return (role, s.hardware, s.gpus, s.tp, s.pp, s.weight_format, s.kv_format, s.max_running,
            s.sharding, o.usd_per_hour, o.usd_per_million_tokens, o.tokens_per_s_per_gpu,
            o.ttft_p90_seconds, o.tpot_p90_seconds, o.requests, o.days, o.mfu, o.meets,
            None, None)


def _rejection_row(x: Rejection) -> tuple[Cell, ...]:
    s = x.setup
    return ("rejected", s.hardware, s.gpus, s.tp, s.pp, s.weight_format, s.kv_format,
            s.max_running, s.sharding, *([None] * 9), x.stage, x.reason)


def search_csv(r: SearchResult) -> str:
    """Every set-up a search names, one row each, its role first: 'best', 'next' (the
    runners-up), 'frontier' (throughput per GPU against latency), 'rejected' (with the stage
    and the reason)."""
    rows = [*([_outcome_row("best", r.best)] if r.best else []),
            *(_outcome_row("next", o) for o in r.next),
            *(_outcome_row("frontier", o) for o in r.frontier),
            *(_rejection_row(x) for x in r.rejected)]
    return _table(SEARCH_HEADER, rows)
