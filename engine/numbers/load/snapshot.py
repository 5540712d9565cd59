"""One replica of a simulated server at a moment: what its scheduler holds during the step
under way then (continuous batching and the paged KV cache as they happen).

Its counts are those the same step's :class:`~engine.numbers.load.results.StepEvent`
records (the requests given tokens, the queue after scheduling, the blocks held); a snapshot
adds who they are: each running request's tokens in the KV cache, its blocks, and whether
the step prefills a chunk of its prompt or decodes its next token.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from engine.numbers.records import Record

Phase = Literal["prefill", "decode", "paused"]


@dataclass(frozen=True, slots=True)
class RunningRequest(Record):
    """A request in the running batch during a step: ``index`` (its number in arrival order,
    from 0), ``tokens`` in its KV cache when the step starts, ``blocks`` of the pool it holds
    (its own: a shared prefix's are counted once, apart), ``step_tokens`` the step computes
    for it and ``phase``: "prefill" (a chunk of its prompt, or of its recomputation after a
    preemption), "decode" (its next token; with speculative decoding, a verification) or
    "paused" (running but given no tokens: the step's token budget ran out before it)."""

    index: int
    tokens: int
    blocks: int
    step_tokens: int
    phase: Phase


@dataclass(frozen=True, slots=True)
class StepSnapshot(Record):
    """One replica during the step under way at ``time_seconds`` (it starts at
    ``start_seconds`` and lasts ``seconds``; both 0 when the replica is idle then):
    ``running`` in the order they started; ``queued``: the requests waiting after
    scheduling, front first (``preempted``: those of them put back there by a preemption,
    this step or before, their blocks freed, to be recomputed); how many have ``finished`` and how many have not arrived
    (the replica's last ``not_arrived`` in arrival order); the pool of ``kv_blocks``
    blocks, ``shared_blocks`` of them a shared prefix's, ``free_blocks`` free."""

    time_seconds: float
    start_seconds: float
    seconds: float
    running: tuple[RunningRequest, ...]
    queued: tuple[int, ...]
    preempted: tuple[int, ...]
    finished: int
    not_arrived: int
    kv_blocks: int
    shared_blocks: int
    free_blocks: int

    @property
    def kv_blocks_used(self) -> int:
        """Blocks held: every running request's and the shared prefix's."""
        return self.kv_blocks - self.free_blocks

    @property
    def computing(self) -> int:
        """Running requests the step gives tokens (a StepEvent's ``running``)."""
        return sum(1 for r in self.running if r.phase != "paused")
