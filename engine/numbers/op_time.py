"""The time of one operation on one GPU: the larger of its FLOPs over the rate its kernel
reaches and its bytes over the bandwidth a stream reaches, plus a fixed cost per kernel.

An :class:`Op` is what a step's breakdown shows (summed over layers and micro-batches): its
name, seconds, and what limits it: 'compute' (the maths took longer than the bytes),
'memory' (the bytes took longer) or 'communication' (a collective or a send the GPU waits
for; a pipeline's bubble is counted here too: the stage waits for its neighbours' sends).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from engine.numbers.records import Record

OpLimit = Literal["compute", "memory", "communication"]


@dataclass(frozen=True, slots=True)
class Op(Record):
    """One operation of a step on the busiest GPU: ``seconds`` in all (every layer and
    micro-batch it runs in), ``limit`` what bounds it, ``flops`` and ``bytes`` what it does
    (0 for communication, whose bytes are in the step's traffic)."""

    name: str
    seconds: float
    limit: OpLimit
    flops: float = 0.0
    bytes: float = 0.0


@dataclass(frozen=True, slots=True)
class Work:
    """One kernel's work, before timing: ``flops`` at ``flops_per_s`` (peak x the kernel's
    efficiency), ``bytes`` at ``bytes_per_s`` (bandwidth x stream efficiency), ``kernels``
    launches each costing ``seconds_per_kernel``, ``times`` repeats (layers, micro-batches)."""

    name: str
    flops: float
    bytes: float
    flops_per_s: float
    bytes_per_s: float
    kernels: float
    seconds_per_kernel: float
    times: float = 1.0

    @property
    def maths_seconds(self) -> float:
        return self.flops / self.flops_per_s if self.flops else 0.0

    @property
    def memory_seconds(self) -> float:
        return self.bytes / self.bytes_per_s

    @property
    def seconds(self) -> float:
        """All repeats: max(maths, memory) + kernels x fixed cost, times ``times``."""
        return self.times * (max(self.maths_seconds, self.memory_seconds)
                             + self.kernels * self.seconds_per_kernel)

    @property
    def limit(self) -> OpLimit:
        return "compute" if self.maths_seconds >= self.memory_seconds else "memory"


def ops_of(work: Iterable[Work], times: float = 1.0) -> tuple[Op, ...]:
    """Work summed by name, in first-seen order, each repeated ``times`` more; an op's limit
    is its larger part's (the one with more seconds across its kernels)."""
    seconds: dict[str, float] = {}
    flops: dict[str, float] = {}
    moved: dict[str, float] = {}
    compute_bound: dict[str, float] = {}
    for w in work:
        seconds[w.name] = seconds.get(w.name, 0.0) + w.seconds * times
        flops[w.name] = flops.get(w.name, 0.0) + w.flops * w.times * times
        moved[w.name] = moved.get(w.name, 0.0) + w.bytes * w.times * times
        lean = w.seconds if w.limit == "compute" else -w.seconds
        compute_bound[w.name] = compute_bound.get(w.name, 0.0) + lean
    return tuple(Op(n, s, "compute" if compute_bound[n] >= 0 else "memory", flops[n], moved[n])
                 for n, s in seconds.items())


def scaled(ops: Iterable[Op], factor: float) -> tuple[Op, ...]:
    """``ops`` with their seconds times ``factor`` (an MFU given instead of the model)."""
    return tuple(Op(o.name, o.seconds * factor, o.limit, o.flops, o.bytes) for o in ops)


def repeated(ops: Iterable[Op], times: float) -> tuple[Op, ...]:
    """``ops`` run ``times`` times (a micro-batch's ops over a step's micro-batches)."""
    return tuple(Op(o.name, o.seconds * times, o.limit, o.flops * times, o.bytes * times)
                 for o in ops)
