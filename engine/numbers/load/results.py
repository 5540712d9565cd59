"""What a simulated server under load gives, one meaning per number.

The latencies are defined as vLLM's benchmark_serving (benchmarks/benchmark_serving.py)
defines them, from the moment a request arrives:

- TTFT, time to first token: arrival to the first output token (queue + prefill);
- TPOT, time per output token, one value per request of two or more output tokens:
  (end-to-end - TTFT) / (output tokens - 1);
- ITL, inter-token latency: every gap between two consecutive tokens of a request, all
  requests' gaps pooled;
- end-to-end: arrival to the last token.

Each as its p50, p90, p99 (linear between the nearest ranks, as numpy.percentile) and mean,
in seconds. Throughput is over the run's duration, from the first arrival to the last token:
requests/s and output tokens/s (in total and per GPU). Goodput: requests/s that met every
target given (TTFT and TPOT at most their targets), as benchmark_serving's ``--goodput``.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from engine.numbers.load.snapshot import StepSnapshot
from engine.numbers.records import JsonShape, Record


@dataclass(frozen=True, slots=True)
class Percentiles(Record):
    """p50, p90, p99 and mean of some latencies (s); all 0 when there are none."""

    p50: float
    p90: float
    p99: float
    mean: float


def _at_rank(count: int, q: float, value_at: Callable[[int], float]) -> float:
    """The ``q`` percentile (0-100) of ``count`` sorted values, ``value_at(rank)`` the value
    at a rank: linear between the two nearest ranks."""
    pos = (count - 1) * q / 100.0
    low = int(pos)
    high = min(low + 1, count - 1)
    below = value_at(low)
    return below + (value_at(high) - below) * (pos - low)


def percentile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` percentile (0-100) of the sorted ``ordered``, linear between ranks."""
    if not ordered:
        return 0.0
    return _at_rank(len(ordered), q, ordered.__getitem__)


def percentiles(values: Sequence[float]) -> Percentiles:
    """The :class:`Percentiles` of ``values``."""
    ordered = sorted(values)
    mean = math.fsum(ordered) / len(ordered) if ordered else 0.0
    return Percentiles(percentile(ordered, 50), percentile(ordered, 90),
                       percentile(ordered, 99), mean)


# From this count on, a value's repeats are summed as its doublings (fewer numbers).
_SPLIT_COUNT = 64


def _doublings(value: float, count: int) -> list[float]:
    """``value`` times each power of two in ``count``: each exact (a float times a power of
    two), together exactly ``value`` x ``count``. math.fsum, correctly rounded, gives the
    same sum of them as of ``value`` repeated ``count`` times (value x count would round)."""
    out = []
    power = 1.0
    while count:
        if count & 1:
            out.append(value * power)
        count >>= 1
        power *= 2.0
    return out


def counted_percentiles(counts: Mapping[float, int]) -> Percentiles:
    """The :class:`Percentiles` of the values that ``counts`` holds as value -> how many
    times it occurs: exactly those of the list with each value repeated that many times."""
    items = sorted(counts.items())
    values = [v for v, _ in items]
    ends = list(itertools.accumulate(c for _, c in items))
    count = ends[-1] if ends else 0
    if not count:
        return Percentiles(0.0, 0.0, 0.0, 0.0)

    def value_at(rank: int) -> float:
        return values[bisect.bisect_right(ends, rank)]

    mean = math.fsum(itertools.chain.from_iterable(
        itertools.repeat(v, c) if c < _SPLIT_COUNT else _doublings(v, c)
        for v, c in items)) / count
    return Percentiles(_at_rank(count, 50, value_at), _at_rank(count, 90, value_at),
                       _at_rank(count, 99, value_at), mean)


@dataclass(frozen=True, slots=True)
class StepEvent(Record):
    """One step of one replica: it starts at ``start_seconds`` and lasts ``seconds`` (GPU and
    host); ``running`` sequences computed ``prefill_tokens`` prompt tokens and
    ``decodes`` decodes; ``waiting`` were queued after scheduling; ``kv_blocks_used`` of the
    pool were held; ``preempted`` requests were preempted to make room; ``finished``
    requests had finished by its end (all steps so far)."""

    start_seconds: float
    seconds: float
    running: int
    waiting: int
    prefill_tokens: int
    decodes: int
    kv_blocks_used: int
    preempted: int
    finished: int


def _start(step: StepEvent) -> float:
    return step.start_seconds


@dataclass(frozen=True, slots=True)
class ServerState(Record):
    """The server at a simulated time (all replicas together): requests running, waiting,
    finished; KV blocks in use (of ``kv_blocks``)."""

    time_seconds: float
    running: int
    waiting: int
    finished: int
    kv_blocks_used: int
    kv_blocks: int


@dataclass(frozen=True, slots=True)
class Goodput(Record):
    """Requests/s that met the targets (a target of None is not checked)."""

    ttft_target_seconds: float | None
    tpot_target_seconds: float | None
    good_requests: int
    requests_per_s: float


@dataclass(frozen=True, slots=True)
class LoadResult(Record):
    """A server under load (``serve.load`` in the CLI's JSON): ``concurrency`` (closed loop)
    or ``rate`` (requests/s, open loop), ``requests`` simulated; latencies as
    :class:`Percentiles` (see the module's definitions); throughput; the KV cache's peak use
    as a fraction of its blocks; preemptions; ``timeline``: (time s, waiting, running)
    sampled evenly over the run; the KV cache of each replica, ``kv_blocks_per_replica``
    blocks of ``block_tokens`` tokens; ``steps``: every step of every replica (left out of the
    JSON; :meth:`state_at` reads them); ``fullest``, when asked for: the first replica at
    the start of its first step that held the most KV blocks (left out of the JSON)."""

    JSON = JsonShape(skip=("steps", "fullest"))

    concurrency: int | None
    rate: float | None
    requests: int
    replicas: int
    gpus: int
    ttft_seconds: Percentiles
    tpot_seconds: Percentiles
    itl_seconds: Percentiles
    e2e_seconds: Percentiles
    duration_seconds: float
    requests_per_s: float
    output_tokens_per_s: float
    output_tokens_per_s_per_gpu: float
    kv_cache_peak_fraction: float
    preemptions: int
    goodput: Goodput | None
    timeline: tuple[tuple[float, int, int], ...]
    steps: tuple[tuple[StepEvent, ...], ...]
    kv_blocks_per_replica: int
    block_tokens: int
    fullest: StepSnapshot | None = None

    def state_at(self, time_seconds: float) -> ServerState:
        """The server at ``time_seconds`` of simulated time: each replica as its step under
        way then (before its first step: empty; between steps, idle: nothing running or
        queued, a step starts as soon as anything waits; after its last: all finished)."""
        running = waiting = finished = used = 0
        for steps in self.steps:
            if not steps:
                continue
            i = bisect.bisect_right(steps, time_seconds, key=_start) - 1
            if i < 0:
                continue
            s = steps[i]
            if time_seconds >= s.start_seconds + s.seconds:
                finished += s.finished
                continue
            running += s.running
            waiting += s.waiting
            finished += steps[i - 1].finished if i else 0
            used += s.kv_blocks_used
        return ServerState(time_seconds, running, waiting, finished, used,
                           self.kv_blocks_per_replica * self.replicas)
