"""A search's answer for the page: the plan found, the runners-up beside it, why the others
were turned down (counted by stage, the last few said, as the command line says them), the
frontier drawn, and what was searched. Every figure is one the command line's ``search
--json`` prints (:func:`search_json`)."""

from __future__ import annotations

from engine.lesson.plans.search_chart import frontier_chart
from engine.lesson.plans.search_view import SHOWN_REJECTIONS
from engine.numbers.search.results import Outcome, SearchResult
from engine.render.html import column_heads, esc, table_box, tag
from engine.words.format import format_percent, format_seconds, format_usd

# Where a set-up was turned down, said for people.
STAGE_WORDS = {
    "price": "no price", "split": "the split", "memory": "memory",
    "bound": "the bound (too slow even at raw peak)", "ranking": "the ranking simulation",
    "confirmation": "the confirming simulation", "expected": "the expected time",
}


def search_json(r: SearchResult) -> dict[str, object]:
    """What ``search --json`` prints for ``r``, less the search's own wall-clock time (which
    differs from run to run, and is not shown)."""
    data = r.to_dict()
    data.pop("seconds", None)
    return data


def _row(o: Outcome, role: str) -> tuple[str, ...]:
    speed: tuple[str, ...]
    if o.days is not None:
        speed = (f"{o.days:,.1f} days", format_percent(o.mfu or 0.0))
    else:
        assert o.ttft_p90_seconds is not None and o.tpot_p90_seconds is not None
        speed = (format_seconds(o.ttft_p90_seconds), format_seconds(o.tpot_p90_seconds))
    return (role, o.setup.setup, format_usd(o.usd_per_hour),
            format_usd(o.usd_per_million_tokens), *speed, f"{o.tokens_per_s_per_gpu:,.0f}")


def _plans_table(r: SearchResult) -> str:
    assert r.best is not None
    speed = ("Expected days", "MFU") if r.task == "train" else ("TTFT p90", "TPOT p90")
    heads = ("", "Set-up", "Per hour", "Per million tokens", *speed, "Tokens/s per GPU")
    rows = [_row(r.best, "Found"), *(_row(o, f"Next {i}") for i, o in enumerate(r.next, 1))]
    body = "".join(tag("tr", "".join(tag("td", esc(c)) for c in row),
                       data_plan="best" if i == 0 else "next") for i, row in enumerate(rows))
    return table_box(column_heads(heads), body, caption="The plan found and the runners-up, "
                     "each meeting the target", label="Plans that meet the target",
                     data_search="plans")


def _rejections(r: SearchResult) -> str:
    stages = r.rejected_by_stage
    if not stages:
        return tag("p", "No set-up was turned down.")
    counted = "; ".join(f"{n:,} at {STAGE_WORDS.get(stage, stage)}"
                        for stage, n in stages.items())
    shown = r.rejected[-SHOWN_REJECTIONS:]
    body = "".join(tag("tr", tag("td", esc(x.setup.setup)) + tag("td", esc(x.reason)))
                   for x in shown)
    more = len(r.rejected) - len(shown)
    caption = "The last set-ups turned down" + (
        " (the downloaded JSON lists every one)" if more else "")
    return (tag("p", esc(f"Turned down: {counted}."))
            + table_box(column_heads(("Set-up", "Why it failed")), body, caption=caption,
                        label="Set-ups turned down", data_search="rejected"))


def _searched(r: SearchResult) -> str:
    sims = ("" if r.ranking_requests is None else
            f"; ranked on {r.ranking_requests:,} simulated requests, winners confirmed on "
            f"{r.confirm_requests:,}")
    budget = "; it stopped at its budget of timings" if r.budget_reached else ""
    return tag("p", esc(f"Searched {r.candidates:,} set-ups left after the cheap prunes: "
                        f"{r.timed:,} timed, {r.not_timed:,} left untimed because cheaper "
                        f"ones already met the target{sims}{budget}."), class_="search-searched")


def search_html(r: SearchResult) -> str:
    """The answer of ``r`` as the page shows it."""
    per = "per hour" if r.objective == "hour" else "per million tokens"
    if r.best is None:
        found = tag("p", esc(f"None of the set-ups searched meets the target ({r.task})."),
                    class_="widget-verdict", data_found="false")
        plans = ""
    else:
        found = tag("p", esc(f"Cheapest {per} that meets the target: {r.best.setup.setup}."),
                    class_="widget-verdict", data_found="true")
        plans = _plans_table(r)
    return (found + plans
            + tag("h3", "Why the others failed") + _rejections(r)
            + tag("h3", "The frontier: throughput per GPU against latency")
            + tag("p", "The set-ups timed that no other beats on both counts, joined by the "
                  "line; the plan found is ringed, the runners-up hollow.")
            + frontier_chart(r) + _searched(r))
