"""The five questions answered in one short line each: the headline of each of
:func:`engine.words.answers.answers`, with the same numbers in the same formats.

A widget shows these as the page opens and keeps the full answers (their workings) in closed
details: a reader sees the verdicts first and opens the arithmetic on purpose.
"""

from __future__ import annotations

from engine.numbers import cost
from engine.numbers.memory import ServingMemory
from engine.numbers.plan import Plan
from engine.numbers.plan_cost import serve_expected_cost
from engine.words.answers import price_note
from engine.words.format import format_GB, format_percent, format_seconds
from engine.words.sharding import parallel_layout


def answer_lines(p: Plan) -> dict[str, str]:
    """One line per question (same keys as :func:`engine.words.answers.answers`)."""
    return {
        "fits": _fits_line(p),
        "limit": _limit_line(p),
        "gpus": _gpus_line(p),
        "failure": _failure_line(p),
        "cost": _cost_line(p),
    }


def _per_chip(p: Plan) -> str:
    return "per GPU" if p.hardware.kind == "gpu" else "per chip"


def _fits_line(p: Plan) -> str:
    mem = p.memory
    used, capacity = format_GB(mem.per_gpu_bytes), format_GB(mem.capacity_bytes)
    if mem.fits:
        return f"Yes: {used} of {capacity} {_per_chip(p)}."
    return f"No: it needs {used}, {capacity} {_per_chip(p)}."


def _limit_line(p: Plan) -> str:
    if p.serve is not None:
        s = p.serve
        limit = "Memory bandwidth" if s.first_step.bound == "memory" else "Compute"
        # The speed's basis said beside it: the fit above is for the context field's tokens.
        return (f"{limit}: {format_seconds(s.tpot_seconds)} per token at best, about "
                f"{format_seconds(s.expected.decode_seconds_per_token)} expected "
                f"({s.prompt_tokens:,}-token prompt).")
    t = p.train
    assert t is not None
    expected = "" if t.expected.mfu_given else (
        f", about {format_seconds(t.expected.seconds)} expected"
    )
    return f"Compute: {format_seconds(t.seconds)} at {format_percent(t.mfu)} MFU{expected}."


def _gpus_line(p: Plan) -> str:
    if p.min_gpus is None:
        return "No number of GPUs fits this set-up."
    plural = "s" if p.min_gpus > 1 else ""
    if isinstance(p.memory, ServingMemory):
        return f"{p.min_gpus:,} GPU{plural} to hold it."
    return f"At least {p.min_gpus:,} GPU{plural} with {parallel_layout(p.memory.sharding, p.memory.tp)}."


def _failure_line(p: Plan) -> str:
    mem = p.memory
    if not mem.fits:
        return "Out of memory, decided by arithmetic before it starts."
    if isinstance(mem, ServingMemory):
        return (f"Past {mem.max_concurrent_requests:,} requests of {mem.context_tokens:,} "
                "tokens, the KV cache runs out.")
    return f"It fits with {format_GB(mem.headroom_bytes)} to spare."


def _cost_line(p: Plan) -> str:
    if p.usd_per_gpu_hour is None:
        return price_note(p)
    price = p.usd_per_gpu_hour
    if p.serve is not None:
        c = cost.cost_per_million_tokens(
            tokens_per_s=p.serve.decode_tokens_per_s, usd_per_gpu_hour=price, gpus=p.gpus
        )
        # The bound (raw peak) beside the expected cost at the same batch; batching cuts both.
        expected = serve_expected_cost(p)
        beside = (f", about ${expected.usd_per_million_tokens:,.2f} expected,"
                  if expected is not None else "")
        batch = p.serve.first_step.batch
        at_once = "one request" if batch == 1 else f"{batch:,} requests"
        return (f"At best ${c.usd_per_million_tokens:,.2f}{beside} per million output tokens at "
                f"${price:,.2f} per GPU-hour, {at_once} at a time; batching cuts it.")
    t = p.train
    assert t is not None
    tc = cost.training_run_cost(gpus=p.gpus, seconds=t.seconds, usd_per_gpu_hour=price)
    return f"${tc.usd:,.0f}: {tc.gpu_hours:,.0f} GPU-hours at ${price:,.2f}."
