"""The cheapest serving deployment that meets TTFT and TPOT targets at p90 under a load.

The space: every priced chip of the catalogue × GPU counts (1 to 32) × tensor-parallel sizes
that split the model inside one server (the rest of the GPUs are replicas) × weight formats
(bf16, fp8 with an fp8 KV cache, int4) × batch caps (the scheduler's default, 32 sequences).
Fixed lengths: every request reads ``prompt_tokens`` and writes ``output_tokens``.

Fast by pruning before simulating, in this order, each cheap and each a true bound:

1. no price in the catalogue: no cost to rank by;
2. the split: tensor parallel must divide the heads and stay inside a server;
3. memory: one request's weights, KV cache and working space must fit
   (:func:`engine.numbers.memory.serving_memory`, batch 1);
4. the bound: no request's TPOT beats one decode step reading the active weights at the
   datasheet bandwidth, nor its TTFT its prompt's FLOPs at the dense peak; a target below
   either cannot be met.

The rest are taken cheapest first (the cost per hour is known before simulating; the cost
per million tokens has a floor, the hourly cost over the most tokens/s the load allows), each
simulated with ``RANKING_REQUESTS`` requests; one that meets the targets is confirmed with
``CONFIRM_REQUESTS``. The search stops when it holds ``keep`` confirmed plans and the next
candidate's floor costs more than the last of them.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from engine.numbers import quantities, validate
from engine.numbers.architecture import check_tensor_parallel
from engine.numbers.catalog import HardwareSpec, ModelSpec, list_hardware, prices
from engine.numbers.catalog.server import scheduler_limits
from engine.numbers.errors import EngineError
from engine.numbers.formats import FormatId, get_format
from engine.numbers.load.arrivals import poisson_arrivals
from engine.numbers.load.kv_blocks import blocks_for, kv_cache_blocks
from engine.numbers.load.results import LoadResult
from engine.numbers.load.simulate import simulate
from engine.numbers.load.step_time import step_time_model
from engine.numbers.memory import serving_memory
from engine.numbers.search.results import (
    OBJECTIVES,
    Objective,
    Outcome,
    Rejection,
    SearchResult,
    SetUp,
    pareto_frontier,
)
from engine.numbers.units import SECONDS_PER_HOUR

RANKING_REQUESTS = 48  # enough to rank: p90 rests on the 5 slowest requests
CONFIRM_REQUESTS = 200  # a winner's p90 again, on the 20 slowest
SEED = 0
C = TypeVar("C")
GPU_COUNTS = (1, 2, 4, 8, 16, 32)
TENSOR_PARALLEL = (1, 2, 4, 8)
# Weight format and the KV cache's with it: fp8 weights come with an fp8 cache, as vLLM's
# fp8 deployments usually run; int4 (weight-only) keeps a 16-bit cache.
FORMATS: tuple[tuple[FormatId, FormatId], ...] = (("bf16", "bf16"), ("fp8", "fp8"),
                                                  ("int4", "bf16"))
BATCH_CAPS: tuple[int | None, ...] = (None, 32)
KEEP = 4
# The most set-ups simulated in one search: a closed loop's cost per million tokens has only a
# weak floor (more replicas can cut it), so without a budget it would simulate them all.
MAX_SIMULATED = 60
SEARCH_CONCURRENCY = quantities.CONCURRENCY.within(
    maximum=256, reason="the search simulates hundreds of deployments; sweep one plan for "
    "more requests in flight")
KEEP_PLANS = quantities.Quantity("integer", "plans", 1, 50,
                                 "the winner and up to 49 runners-up")


@dataclass(frozen=True, slots=True)
class ServeSearch:
    """A checked serving search: ``model``, fixed lengths, a closed loop at ``concurrency``
    or an open loop at ``rate`` requests/s, targets at p90 (s), the cost to minimise, how
    many plans to keep, and the space (``hardware``: the chips searched)."""

    model: ModelSpec
    prompt_tokens: int
    output_tokens: int
    concurrency: int | None
    rate: float | None
    ttft_p90_seconds: float
    tpot_p90_seconds: float
    objective: Objective
    keep: int
    hardware: tuple[HardwareSpec, ...]
    gpu_counts: tuple[int, ...] = GPU_COUNTS
    formats: tuple[tuple[FormatId, FormatId], ...] = FORMATS
    batch_caps: tuple[int | None, ...] = BATCH_CAPS


def _given(value: object) -> bool:
    return value is not None and value != ""


def serve_search_request(model: ModelSpec, *, prompt_tokens: object, output_tokens: object,
                         rate: object = None, concurrency: object = None,
                         ttft_p90: object, tpot_p90: object, objective: object = "hour",
                         keep: object = KEEP, hardware: Sequence[HardwareSpec] | None = None,
                         gpu_counts: Sequence[int] = GPU_COUNTS,
                         formats: Sequence[tuple[FormatId, FormatId]] = FORMATS,
                         batch_caps: Sequence[int | None] = BATCH_CAPS) -> ServeSearch:
    """The checked search; EngineError naming the field at fault otherwise. ``hardware``:
    the chips searched (default: the catalogue's)."""
    if _given(rate) == _given(concurrency):
        raise EngineError("Give a request rate (open loop) or a concurrency (closed loop), "
                          "one of them.", "rate")
    return ServeSearch(
        model=model,
        prompt_tokens=quantities.PROMPT_TOKENS.check_integer(prompt_tokens, "prompt_tokens",
                                                             "Prompt length"),
        output_tokens=quantities.OUTPUT_TOKENS.check_integer(output_tokens, "output_tokens",
                                                             "Answer length"),
        concurrency=(SEARCH_CONCURRENCY.check_integer(concurrency, "concurrency",
                                                      "Concurrency")
                     if _given(concurrency) else None),
        rate=quantities.REQUEST_RATE.check(rate, "rate", "Request rate") if _given(rate)
        else None,
        ttft_p90_seconds=quantities.LATENCY_TARGET_SECONDS.check(ttft_p90, "ttft_p90",
                                                                 "TTFT target at p90"),
        tpot_p90_seconds=quantities.LATENCY_TARGET_SECONDS.check(tpot_p90, "tpot_p90",
                                                                 "TPOT target at p90"),
        objective=validate.choice(objective, "objective", OBJECTIVES),  # type: ignore[arg-type]
        keep=KEEP_PLANS.check_integer(keep, "keep", "Plans kept"),
        hardware=tuple(list_hardware() if hardware is None else hardware),
        gpu_counts=tuple(gpu_counts), formats=tuple(formats), batch_caps=tuple(batch_caps),
    )


def simulate_capped(model: ModelSpec, hardware: HardwareSpec, *, tp: int, replicas: int,
                    weight_format: FormatId, kv_format: FormatId, prompt_tokens: int,
                    output_tokens: int, concurrency: int | None, rate: float | None,
                    requests: int, max_running: int | None, seed: int = SEED) -> LoadResult:
    """:func:`engine.numbers.load.load_request.serve_load` for fixed lengths, with the
    scheduler's ``max_running`` capped (None: its default). EngineError when the KV cache
    cannot hold one request."""
    limits = scheduler_limits(hardware)
    cap = limits.max_running if max_running is None else min(max_running, limits.max_running)
    blocks = kv_cache_blocks(model, hardware, weight_format=weight_format, kv_format=kv_format,
                             gpus=tp, max_running=cap, block_tokens=limits.block_tokens)
    if blocks_for(prompt_tokens + output_tokens - 1, limits.block_tokens) > blocks:
        raise EngineError("the KV cache left beside the weights cannot hold one request",
                          "gpus")
    rng = random.Random(seed)
    arrivals = poisson_arrivals(rng, rate, requests) if rate is not None else None
    step = step_time_model(model, hardware, weight_format=weight_format, kv_format=kv_format,
                           gpus=tp)
    return simulate(step, prompts=(prompt_tokens,) * requests,
                    outputs=(output_tokens,) * requests, concurrency=concurrency,
                    arrivals=arrivals, rate=rate, replicas=replicas, max_running=cap,
                    max_batched_tokens=limits.max_batched_tokens, kv_blocks=blocks,
                    block_tokens=limits.block_tokens)


def _requests(s: ServeSearch, least: int) -> int:
    """Requests to simulate: ``least``, and a closed loop's concurrency several times over."""
    return least if s.concurrency is None else max(least, 2 * s.concurrency)


def _most_tokens_per_s(s: ServeSearch, tpot_floor: float) -> float:
    """The most output tokens/s the load can draw: an open loop's arrivals' tokens over
    their span; a closed loop's requests in flight, each a token per decode step at best."""
    if s.concurrency is not None:
        return s.concurrency / tpot_floor
    most = 0.0
    for n in (_requests(s, RANKING_REQUESTS), _requests(s, CONFIRM_REQUESTS)):
        arrivals = poisson_arrivals(random.Random(SEED), s.rate or 1.0, n)
        span = arrivals[-1] - arrivals[0]
        most = max(most, math.inf if span <= 0 else n * s.output_tokens / span)
    return most


@dataclass(frozen=True, slots=True)
class _Candidate:
    setup: SetUp
    usd_per_hour: float
    floor_usd_per_million: float
    tpot_floor: float


def _floors(s: ServeSearch, hw: HardwareSpec, tp: int, wf: FormatId) -> tuple[float, float]:
    """The bound's TPOT (active weights at the datasheet bandwidth) and TTFT (the prompt's
    FLOPs at the dense peak) on ``tp`` GPUs of ``hw`` (s)."""
    m = s.model
    weights = m.active_params * get_format(wf).bytes_per_number
    tpot = weights / (tp * hw.bandwidth_bytes_per_s)
    peak, _ = hw.compute_peak(wf)
    ttft = 2.0 * m.active_params * s.prompt_tokens / (tp * peak)
    return tpot, ttft


def _candidates(s: ServeSearch, rejected: list[Rejection]) -> list[_Candidate]:
    """Every set-up of the space that survives the four prunes (the others in ``rejected``)."""
    out: list[_Candidate] = []
    m = s.model
    for hw in s.hardware:
        if not prices().cloud_for(hw.id):
            rejected.append(Rejection(SetUp(hw.id, 0, 0), "price",
                                      f"no price for {hw.name} in the catalogue (every "
                                      "set-up on it)"))
            continue
        price = prices().default_cloud(hw.id).usd_per_gpu_hour
        per_server = hw.link_spec().chips_per_server
        for tp in TENSOR_PARALLEL:
            counts = [g for g in s.gpu_counts if g >= tp and g % tp == 0]
            if not counts:
                continue
            try:
                check_tensor_parallel(m, tp)
                if tp > per_server:
                    raise EngineError(f"tensor parallel {tp} would cross servers of "
                                      f"{per_server}")
            except EngineError as exc:
                rejected.append(Rejection(SetUp(hw.id, tp, tp), "split", exc.message))
                continue
            for wf, kf in s.formats:
                probe = SetUp(hw.id, tp, tp, weight_format=wf, kv_format=kf)
                mem = serving_memory(m, hw, weight_format=wf, kv_format=kf,
                                     context_tokens=s.prompt_tokens + s.output_tokens,
                                     batch=1, gpus=tp)
                if not mem.fits:
                    rejected.append(Rejection(probe, "memory", (
                        f"does not fit: {mem.per_gpu_bytes / 1e9:,.1f} GB per GPU for one "
                        f"request, of {mem.capacity_bytes / 1e9:,.1f} GB")))
                    continue
                tpot, ttft = _floors(s, hw, tp, wf)
                slow = [f"{name} {v * 1e3:,.3g} ms above the target {t * 1e3:,.3g} ms"
                        for name, v, t in (("TPOT", tpot, s.tpot_p90_seconds),
                                           ("TTFT", ttft, s.ttft_p90_seconds)) if v > t]
                if slow:
                    rejected.append(Rejection(probe, "bound", "too slow even alone, at raw "
                                              "peak and bandwidth: " + "; ".join(slow)))
                    continue
                most = _most_tokens_per_s(s, tpot)
                for g in counts:
                    for cap in s.batch_caps:
                        per_hour = price * g
                        out.append(_Candidate(
                            SetUp(hw.id, g, tp, weight_format=wf, kv_format=kf,
                                  max_running=cap),
                            per_hour, per_hour / (most * SECONDS_PER_HOUR) * 1e6, tpot))
    return out


def _outcome(s: ServeSearch, c: _Candidate, requests: int) -> tuple[Outcome, int]:
    """``c`` simulated with ``requests`` requests, and the most sequences a step ran."""
    from engine.numbers.catalog import get_hardware

    u = c.setup
    run = simulate_capped(s.model, get_hardware(u.hardware), tp=u.tp, replicas=u.gpus // u.tp,
                          weight_format=u.weight_format,  # type: ignore[arg-type]
                          kv_format=u.kv_format,  # type: ignore[arg-type]
                          prompt_tokens=s.prompt_tokens, output_tokens=s.output_tokens,
                          concurrency=s.concurrency, rate=s.rate, requests=requests,
                          max_running=u.max_running)
    ttft, tpot = run.ttft_seconds.p90, run.tpot_seconds.p90
    running = max((e.running for steps in run.steps for e in steps), default=0)
    return Outcome(u, c.usd_per_hour,
                   c.usd_per_hour / (run.output_tokens_per_s * SECONDS_PER_HOUR) * 1e6,
                   run.output_tokens_per_s_per_gpu,
                   ttft <= s.ttft_p90_seconds and tpot <= s.tpot_p90_seconds,
                   ttft_p90_seconds=ttft, tpot_p90_seconds=tpot, requests=requests), running


def _miss(s: ServeSearch, o: Outcome) -> str:
    assert o.ttft_p90_seconds is not None and o.tpot_p90_seconds is not None
    said = [f"{name} p90 {v * 1e3:,.3g} ms above the target {t * 1e3:,.3g} ms"
            for name, v, t in (("TTFT", o.ttft_p90_seconds, s.ttft_p90_seconds),
                               ("TPOT", o.tpot_p90_seconds, s.tpot_p90_seconds)) if v > t]
    return f"too slow at p90 ({o.requests:,} requests simulated): " + "; ".join(said)


def best_first(candidates: Sequence[C], keep: int, floor: Callable[[C], float],
               cost: Callable[[Outcome], float], time_it: Callable[[C], Outcome | None],
               budget: int) -> tuple[list[Outcome], int]:
    """Take ``candidates`` by ``floor`` (a cost no outcome goes below), timing each; stop when
    ``keep`` outcomes are held and the next floor exceeds the dearest of them, or after
    ``budget`` timings. Returns the outcomes kept (cheapest first) and how many candidates
    were taken."""
    kept: list[Outcome] = []
    timed = 0
    for c in sorted(candidates, key=floor):
        if (len(kept) >= keep and floor(c) > cost(kept[keep - 1])) or timed >= budget:
            break
        timed += 1
        o = time_it(c)
        if o is not None:
            kept.append(o)
            kept.sort(key=cost)
    return kept, timed


def search_serving(s: ServeSearch) -> SearchResult:
    """The cheapest deployments of ``s``'s space that meet its targets (see the module)."""
    start = time.perf_counter()
    rejected: list[Rejection] = []
    candidates = _candidates(s, rejected)
    simulated: list[Outcome] = []

    # The most sequences each deployment ran at once under its scheduler's default cap: a
    # lower cap that was never reached changes nothing, and is not simulated again.
    most_running: dict[SetUp, int] = {}

    def time_it(c: _Candidate) -> Outcome | None:
        uncapped = replace(c.setup, max_running=None)
        if c.setup.max_running is not None and \
                most_running.get(uncapped, c.setup.max_running + 1) <= c.setup.max_running:
            return None
        try:
            ranked, running = _outcome(s, c, _requests(s, RANKING_REQUESTS))
        except EngineError as exc:
            rejected.append(Rejection(c.setup, "memory", f"does not fit: {exc.message}"))
            return None
        if c.setup.max_running is None:
            most_running[uncapped] = running
        simulated.append(ranked)
        if not ranked.meets:
            rejected.append(Rejection(c.setup, "ranking", _miss(s, ranked)))
            return None
        confirmed, _ = _outcome(s, c, _requests(s, CONFIRM_REQUESTS))
        if not confirmed.meets:
            rejected.append(Rejection(c.setup, "confirmation", _miss(s, confirmed)))
            return None
        return confirmed

    def floor(c: _Candidate) -> float:
        return c.usd_per_hour if s.objective == "hour" else c.floor_usd_per_million

    def cost(o: Outcome) -> float:
        return o.usd_per_hour if s.objective == "hour" else o.usd_per_million_tokens

    kept, timed = best_first(sorted(candidates, key=lambda c: c.tpot_floor), s.keep, floor,
                             cost, time_it, MAX_SIMULATED)
    kept = kept[:s.keep]
    return SearchResult("serve", s.objective, kept[0] if kept else None, tuple(kept[1:]),
                        tuple(rejected), pareto_frontier(simulated), len(candidates), timed,
                        len(candidates) - timed, _requests(s, RANKING_REQUESTS),
                        _requests(s, CONFIRM_REQUESTS), time.perf_counter() - start,
                        timed >= MAX_SIMULATED and timed < len(candidates))
