"""A search's answer for people at a terminal: the plan found, the runners-up, why the
others were turned down (counted by stage, the cheapest few said), the frontier, and how
long the search took."""

from __future__ import annotations

from collections import Counter

from engine.numbers.search.results import Outcome, SearchResult
from engine.words.format import format_seconds

SHOWN_REJECTIONS = 8


def _outcome_line(o: Outcome) -> str:
    cost = f"${o.usd_per_hour:,.2f}/h, ${o.usd_per_million_tokens:,.3g} per million tokens"
    if o.days is not None:
        speed = f"{o.days:,.1f} days expected, MFU {o.mfu or 0:.0%}"
    else:
        assert o.ttft_p90_seconds is not None and o.tpot_p90_seconds is not None
        speed = (f"TTFT p90 {format_seconds(o.ttft_p90_seconds)}, TPOT p90 "
                 f"{format_seconds(o.tpot_p90_seconds)}")
    return f"{o.setup.setup}: {cost}; {speed}; {o.tokens_per_s_per_gpu:,.0f} tokens/s per GPU"


def search_text(r: SearchResult) -> str:
    """The search's answer in lines."""
    per = "per hour" if r.objective == "hour" else "per million tokens"
    lines = [f"Cheapest {per} that meets the target ({r.task}):"]
    lines.append("  " + (_outcome_line(r.best) if r.best else "none of the set-ups searched"))
    if r.next:
        lines.append("Next:")
        lines += ["  " + _outcome_line(o) for o in r.next]
    stages = Counter(x.stage for x in r.rejected)
    lines.append("Rejected: " + (", ".join(f"{n:,} at {stage}" for stage, n in stages.items())
                                 or "none"))
    lines += [f"  {x.setup.setup}: {x.reason}" for x in r.rejected[-SHOWN_REJECTIONS:]]
    if len(r.rejected) > SHOWN_REJECTIONS:
        lines.append(f"  ... and {len(r.rejected) - SHOWN_REJECTIONS:,} more (--json lists "
                     "every one)")
    lines.append("Frontier (throughput per GPU against latency, no set-up beats these on both):")
    lines += ["  " + _outcome_line(o) for o in r.frontier]
    sims = ("" if r.ranking_requests is None else
            f"; ranked on {r.ranking_requests:,} simulated requests, winners confirmed on "
            f"{r.confirm_requests:,}")
    budget = "; stopped at its budget of timings" if r.budget_reached else ""
    lines.append(f"Searched in {format_seconds(r.seconds)}: {r.candidates:,} set-ups after "
                 f"pruning, {r.timed:,} timed, {r.not_timed:,} left untimed{sims}{budget}.")
    return "\n".join(lines)
