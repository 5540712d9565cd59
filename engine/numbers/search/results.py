"""What a search finds: the plans that meet the target (cheapest first), the set-ups it
rejected and why, and the throughput-per-GPU against latency frontier.

A set-up is said in one line (its ``setup`` text, e.g. '2 × h100-sxm, tp 1 × 2 replicas,
fp8, batch cap 64') and carried as its fields, so a page can lay it out its own way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from engine.numbers.records import JsonShape, Record

Objective = Literal["hour", "million-tokens"]
OBJECTIVES: tuple[Objective, ...] = ("hour", "million-tokens")
# Where a set-up was rejected: by the catalogue (no price), its split, the memory model, the
# bound (too slow even at raw peak), the ranking simulation or the confirming one.
Stage = Literal["price", "split", "memory", "bound", "ranking", "confirmation", "expected"]


@dataclass(frozen=True, slots=True)
class SetUp(Record):
    """One candidate: ``gpus`` of ``hardware`` as ``tp`` tensor parallel × ``pp`` pipeline
    stages (training) or as replicas of ``tp`` GPUs (serving); ``weight_format`` and
    ``kv_format`` (serving), ``max_running`` (serving: the scheduler's cap on sequences in a
    step, None for its default), ``sharding`` (training)."""

    JSON = JsonShape(derived=("setup",))

    hardware: str
    gpus: int
    tp: int
    pp: int = 1
    weight_format: str = "bf16"
    kv_format: str = "bf16"
    max_running: int | None = None
    sharding: str | None = None

    @property
    def setup(self) -> str:
        """The set-up in one line ('every set-up on l4' when ``gpus`` is 0)."""
        if self.gpus == 0:
            return f"every set-up on {self.hardware}"
        if self.sharding is not None:
            dp = self.gpus // (self.tp * self.pp)
            return (f"{self.gpus:,} × {self.hardware}, tp {self.tp} × pp {self.pp} × dp "
                    f"{dp:,}, {self.sharding}")
        cap = "default batch cap" if self.max_running is None else \
            f"batch cap {self.max_running}"
        return (f"{self.gpus:,} × {self.hardware}, tp {self.tp} × {self.gpus // self.tp} "
                f"replica{'s' if self.gpus > self.tp else ''}, {self.weight_format} weights, "
                f"{self.kv_format} KV, {cap}")


@dataclass(frozen=True, slots=True)
class Outcome(Record):
    """A set-up that was timed: its cost (``usd_per_hour``; ``usd_per_million_tokens`` of
    output when serving, of training tokens when training) and speed. Serving: p90 TTFT
    and TPOT (s) and output tokens/s per GPU from ``requests`` simulated requests.
    Training: expected ``days`` and MFU, training tokens/s per GPU. ``meets``: every target
    met."""

    setup: SetUp
    usd_per_hour: float
    usd_per_million_tokens: float
    tokens_per_s_per_gpu: float
    meets: bool
    ttft_p90_seconds: float | None = None
    tpot_p90_seconds: float | None = None
    requests: int | None = None
    days: float | None = None
    mfu: float | None = None


@dataclass(frozen=True, slots=True)
class Rejection(Record):
    """A set-up the search turned down at ``stage``, and ``reason`` in a sentence."""

    setup: SetUp
    stage: Stage
    reason: str


@dataclass(frozen=True, slots=True)
class SearchResult(Record):
    """The search's answer: ``best`` (None when no set-up meets the target) and ``next`` (the
    runners-up, cheapest first), both confirmed; ``rejected``: each set-up turned down and
    why; ``frontier``: the timed set-ups no other beats on both throughput per GPU and
    latency (p90 TPOT serving, expected days training), fastest first; ``candidates``: the
    set-ups left after the cheap prunes (price, split, memory, bound); ``timed``: those timed (simulated or expected); ``not_timed``: those
    left untimed because cheaper ones already met the target; ``ranking_requests`` and
    ``confirm_requests``: the simulation's sizes (serving); ``seconds``: the search's own
    wall-clock time; ``budget_reached``: it stopped at its budget of timings with cheaper
    plans perhaps left untimed. ``rejected_by_stage`` (derived): how many were turned down at
    each stage, in the order first met."""

    JSON = JsonShape(derived=("rejected_by_stage",), after={"rejected_by_stage": "rejected"})

    task: str
    objective: Objective
    best: Outcome | None
    next: tuple[Outcome, ...]
    rejected: tuple[Rejection, ...]
    frontier: tuple[Outcome, ...]
    candidates: int
    timed: int
    not_timed: int
    ranking_requests: int | None
    confirm_requests: int | None
    seconds: float
    budget_reached: bool = False

    @property
    def rejected_by_stage(self) -> dict[str, int]:
        """Stage -> how many set-ups were turned down there, in the order first met."""
        counts: dict[str, int] = {}
        for x in self.rejected:
            counts[x.stage] = counts.get(x.stage, 0) + 1
        return counts


def pareto_frontier(outcomes: Sequence[Outcome]) -> tuple[Outcome, ...]:
    """The outcomes no other beats on both counts: more tokens/s per GPU and lower latency
    (p90 TPOT when serving, days when training), ordered from the lowest latency."""
    def latency(o: Outcome) -> float:
        value = o.tpot_p90_seconds if o.tpot_p90_seconds is not None else o.days
        assert value is not None
        return value

    ordered = sorted(outcomes, key=lambda o: (latency(o), -o.tokens_per_s_per_gpu))
    front: list[Outcome] = []
    for o in ordered:
        if not front or o.tokens_per_s_per_gpu > front[-1].tokens_per_s_per_gpu:
            front.append(o)
    return tuple(front)
