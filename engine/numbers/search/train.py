"""The cheapest training set-up that finishes ``tokens`` within a deadline (expected days).

The space: every priced chip × tensor parallel (1, 2, 4, 8, inside a server) × pipeline
stages (1, 2, 4) × ZeRO-1 or ZeRO-3, each at GPU counts that are powers of two times
tp × pp; bf16 mixed precision, Adam, selective recomputation, micro-batch 1, sequences of
4,096 tokens, the catalogue's global batch (plan()'s defaults).

Pruned before timing: no price; a set-up's fewest GPUs is the power of two at which the bound
(every FLOP at the dense peak) meets the deadline, so the counts below it are never tried.
Each set-up then climbs from there, doubling, to the first count whose expected time meets
the deadline (plan()'s op-by-op model; a count whose memory does not fit is passed by): more
GPUs of the same set-up cost more per hour. Set-ups are taken cheapest floor first (the
hourly price of that fewest count; per million tokens, the run at the bound) and the search
stops once it holds ``keep`` plans and the next floor costs more than the last of them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from engine.numbers import quantities, validate
from engine.numbers.catalog import HardwareSpec, ModelSpec, list_hardware, prices
from engine.numbers.compute import training_flops_per_token
from engine.numbers.errors import EngineError
from engine.numbers.plan import plan
from engine.numbers.search.results import (
    OBJECTIVES,
    Objective,
    Outcome,
    Rejection,
    SearchResult,
    SetUp,
    pareto_frontier,
)
from engine.numbers.search.serve import KEEP, KEEP_PLANS, best_first
from engine.numbers.units import SECONDS_PER_DAY, SECONDS_PER_HOUR

TENSOR_PARALLEL = (1, 2, 4, 8)
PIPELINE = (1, 2, 4)
SHARDINGS = ("zero1", "zero3")
SEQ_LEN = 4096
MOST_DOUBLINGS = 12  # a set-up climbs at most 4,096 times its fewest GPUs
MAX_TIMED = 100


@dataclass(frozen=True, slots=True)
class TrainSearch:
    """A checked training search: ``tokens`` within ``deadline_days`` (expected), the cost to
    minimise, how many plans to keep, the chips searched."""

    model: ModelSpec
    tokens: float
    deadline_days: float
    objective: Objective
    keep: int
    hardware: tuple[HardwareSpec, ...]


def train_search_request(model: ModelSpec, *, tokens: object, deadline_days: object,
                         objective: object = "hour", keep: object = KEEP,
                         hardware: Sequence[HardwareSpec] | None = None) -> TrainSearch:
    """The checked search; EngineError naming the field at fault otherwise."""
    return TrainSearch(
        model=model,
        tokens=quantities.TRAINING_TOKENS.check(tokens, "tokens", "Training tokens"),
        deadline_days=quantities.TARGET_DAYS.check(deadline_days, "deadline_days", "Deadline"),
        objective=validate.choice(objective, "objective", OBJECTIVES),  # type: ignore[arg-type]
        keep=KEEP_PLANS.check_integer(keep, "keep", "Plans kept"),
        hardware=tuple(list_hardware() if hardware is None else hardware),
    )


@dataclass(frozen=True, slots=True)
class _Family:
    """One set-up at every GPU count from ``fewest`` up, and its cost floors."""

    hardware: HardwareSpec
    usd_per_gpu_hour: float
    tp: int
    pp: int
    sharding: str
    fewest: int
    floor_usd_per_hour: float
    floor_usd_per_million: float


def _families(s: TrainSearch, rejected: list[Rejection]) -> list[_Family]:
    out = []
    model_flops = training_flops_per_token(s.model, SEQ_LEN, "selective").model * s.tokens
    for hw in s.hardware:
        if not prices().cloud_for(hw.id):
            rejected.append(Rejection(SetUp(hw.id, 0, 0), "price",
                                      f"no price for {hw.name} in the catalogue (every "
                                      "set-up on it)"))
            continue
        price = prices().default_cloud(hw.id).usd_per_gpu_hour
        peak, _ = hw.compute_peak("bf16")
        bound_gpus = model_flops / (s.deadline_days * SECONDS_PER_DAY * peak)
        per_million = price * model_flops / (peak * SECONDS_PER_HOUR) / s.tokens * 1e6
        for tp in TENSOR_PARALLEL:
            for pp in PIPELINE:
                fewest = tp * pp
                while fewest < bound_gpus:
                    fewest *= 2
                for sharding in SHARDINGS:
                    out.append(_Family(hw, price, tp, pp, sharding, fewest, price * fewest,
                                       per_million))
    return out


def search_training(s: TrainSearch) -> SearchResult:
    """The cheapest training set-ups of ``s``'s space that meet its deadline."""
    start = time.perf_counter()
    rejected: list[Rejection] = []
    families = _families(s, rejected)
    timed: list[Outcome] = []

    def time_it(f: _Family) -> Outcome | None:
        gpus = f.fewest
        for _ in range(MOST_DOUBLINGS + 1):
            u = SetUp(f.hardware.id, gpus, f.tp, f.pp, sharding=f.sharding)
            try:
                p = plan(model=s.model, hardware=f.hardware, gpus=gpus, task="train",
                         tokens=s.tokens, tp=f.tp, pp=f.pp, sharding=f.sharding,
                         seq_len=SEQ_LEN)
            except EngineError as exc:
                rejected.append(Rejection(u, "split", exc.message))
                return None
            if not p.memory.fits:
                rejected.append(Rejection(u, "memory", (
                    f"does not fit: {p.memory.per_gpu_bytes / 1e9:,.1f} GB per GPU of "
                    f"{p.memory.capacity_bytes / 1e9:,.1f} GB")))
                gpus *= 2
                continue
            assert p.train is not None
            e = p.train.expected
            days = e.seconds / SECONDS_PER_DAY
            per_hour = f.usd_per_gpu_hour * gpus
            o = Outcome(u, per_hour, per_hour * e.seconds / SECONDS_PER_HOUR / s.tokens * 1e6,
                        e.tokens_per_s / gpus, days <= s.deadline_days, days=days, mfu=e.mfu)
            timed.append(o)
            if o.meets:
                return o
            rejected.append(Rejection(u, "expected", (
                f"too slow: {days:,.1f} days expected, above the deadline of "
                f"{s.deadline_days:,.3g}")))
            gpus *= 2
        return None

    def floor(f: _Family) -> float:
        return f.floor_usd_per_hour if s.objective == "hour" else f.floor_usd_per_million

    def cost(o: Outcome) -> float:
        return o.usd_per_hour if s.objective == "hour" else o.usd_per_million_tokens

    kept, taken = best_first(families, s.keep, floor, cost, time_it, MAX_TIMED)
    kept = kept[:s.keep]
    return SearchResult("train", s.objective, kept[0] if kept else None, tuple(kept[1:]),
                        tuple(rejected), pareto_frontier(timed), len(families), taken,
                        len(families) - taken, None, None, time.perf_counter() - start,
                        taken >= MAX_TIMED and taken < len(families))
