"""A continuous-batching server simulated step by step, deterministic for its inputs.

``replicas`` copies of a deployment share the arrivals round-robin: request i goes to
replica i mod replicas (a closed loop gives each replica its share of the concurrency, the
first ones one more when it does not divide; at a concurrency below the replicas, only that
many replicas serve). Each replica runs its own
:class:`~engine.numbers.load.scheduler.Scheduler`: arrivals join its queue at the end of
the step under way; each step is scheduled, timed by
:meth:`~engine.numbers.load.step_time.StepTime.seconds` with the host's
:meth:`~engine.numbers.load.step_time.StepTime.host_seconds` (after it or beside it:
:meth:`~engine.numbers.load.step_time.StepTime.step_seconds`), and completed; an idle
replica waits for its next arrival.

With speculative decoding (``spec``) each step's decodes are verifications, timed with
their draft's cost added; with a shared prefix (``prefix``) each replica holds the prefix's
blocks from the start and a hit request starts with them computed.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence as Seq
from dataclasses import replace

from engine.numbers.errors import EngineError
from engine.numbers.load.decoding_front import DecodingFront
from engine.numbers.load.kv_blocks import blocks_for
from engine.numbers.load.prefix_cache import PrefixCache
from engine.numbers.load.results import (
    Goodput,
    LoadResult,
    StepEvent,
    counted_percentiles,
    percentiles,
)
from engine.numbers.load.scheduler import Scheduled, Scheduler, Sequence
from engine.numbers.load.snapshot import Phase, RunningRequest, StepSnapshot
from engine.numbers.load.speculative import SpecDecode
from engine.numbers.load.step_time import StepTime

TIMELINE_POINTS = 64


def _is_decode(seq: Sequence, tokens: int) -> bool:
    """Whether ``seq``'s ``tokens`` this step decode its next token (or verify a draft's),
    rather than compute a chunk of its prompt (or of its recomputation)."""
    return (tokens == 1 and seq.generated > 0) or seq.computed + tokens > seq.prompt + seq.generated


def _snapshot(sched: Scheduler, step: Scheduled | None, requests: int, not_arrived: int,
              start: float, seconds: float, time_seconds: float) -> StepSnapshot:
    """The replica of ``requests`` requests during ``step`` (scheduled, not yet completed;
    None: idle)."""
    work = step.work if step is not None else ()
    running = []
    held = 0
    # A step's work is a prefix of the running requests, in their order; the rest wait for
    # budget (paused).
    for seq, n in work:
        phase: Phase = "decode" if _is_decode(seq, n) else "prefill"
        running.append(RunningRequest(seq.index, seq.computed, seq.blocks, n, phase))
        held += seq.blocks
    for seq in sched.running[len(work):]:
        running.append(RunningRequest(seq.index, seq.computed, seq.blocks, 0, "paused"))
        held += seq.blocks
    return _record(sched, running, held, requests, not_arrived, start, seconds, time_seconds)


def _record(sched: Scheduler, running: list[RunningRequest], held: int, requests: int,
            not_arrived: int, start: float, seconds: float,
            time_seconds: float) -> StepSnapshot:
    queued = tuple(seq.index for seq in sched.waiting)
    return StepSnapshot(
        time_seconds=time_seconds, start_seconds=start, seconds=seconds,
        running=tuple(running), queued=queued,
        preempted=tuple(seq.index for seq in sched.waiting if seq.preemptions),
        finished=requests - not_arrived - len(running) - len(queued),
        not_arrived=not_arrived, kv_blocks=sched.total_blocks,
        shared_blocks=sched.total_blocks - sched.free_blocks - held,
        free_blocks=sched.free_blocks)


def _in_decode_run(sched: Scheduler, step: StepEvent, after: int, requests: int,
                   not_arrived: int) -> StepSnapshot:
    """The replica during ``step``, a step of a decode run just fast-forwarded
    (:func:`_decode_run`) that ``after`` more steps of the run followed, none of them taking
    a block: every running request decoded one token in it, into the blocks it holds now."""
    running = [RunningRequest(seq.index, seq.computed - 1 - after, seq.blocks, 1, "decode")
               for seq in sched.running]
    held = sum(r.blocks for r in running)
    return _record(sched, running, held, requests, not_arrived, step.start_seconds,
                   step.seconds, step.start_seconds)


def _first_fullest(events: list[StepEvent], start: int) -> int:
    """The first of ``events[start:]`` (steps whose blocks held only grow) that holds as
    many as the last."""
    most = events[-1].kv_blocks_used
    while events[start].kv_blocks_used < most:
        start += 1
    return start


def _decodes_next(sched: Scheduler, step: Scheduled, done: int) -> bool:
    """Whether the step after ``step`` (just completed, ``done`` requests finished in it),
    if nothing arrives before it, decodes one token for every running request and admits
    nobody: none waits, the budget holds them all, and ``step`` gave each its tokens and
    prefilled none only in part, so each has its prompt and all its tokens but the newest
    computed, the newest from ``step``. (Each holds the blocks for exactly its computed
    tokens, as without speculative decoding every running request does.)"""
    running = len(sched.running)
    return (not sched.waiting and 0 < running <= sched.max_batched_tokens
            and not step.partial_prefills and len(step.work) == running + done)


def _decode_run(step_time: StepTime, sched: Scheduler, t: float, finished: int,
                next_arrival: float, events: list[StepEvent], end_by: float) -> float:
    """Run on from a step after which every running sequence decodes next and nobody is
    admitted (a step of decodes alone that finished and admitted nobody, or one after which
    nobody waits: :func:`_decodes_next`), as long as the next step would be the same batch
    of decodes: until one step before the first of them finishes, an arrival is due, the
    blocks its decodes need run out, or a step would end after ``end_by`` (s; a snapshot's
    moment, left to the caller).
    Such a step admits nobody (nothing that kept the queue waiting has changed) and its
    decodes grow their blocks in a fixed pattern, so the steps are computed without
    scheduling them; the sequences and the pool end as the scheduler would leave them.
    Appends the steps to ``events``; returns the time after them."""
    if next_arrival <= t:
        return t
    running = sched.running
    batch = len(running)
    bt = sched.block_tokens
    # A decode of a sequence with c tokens computed takes a new block in the run's step k
    # (from 0) when c + k is a multiple of the block size.
    by_residue = [0] * bt
    first_done = math.inf  # the fewest tokens any of them has left to produce
    for s in running:
        by_residue[-s.computed % bt] += 1
        if s.output - s.generated < first_done:
            first_done = s.output - s.generated
    steps = first_done - 1
    if steps <= 0:
        return t
    run = step_time.decode_run([s.computed + 1 for s in running])
    free = sched.free_blocks
    used = sched.total_blocks - free
    waiting = len(sched.waiting)
    gaps = sched.gaps
    k = 0
    while k < steps and next_arrival > t:
        need = by_residue[k % bt]
        if need > free:
            break
        dt = step_time.step_seconds(run.seconds(k), batch)
        if t + dt > end_by:
            break
        free -= need
        used += need
        start = t
        t += dt
        gap = t - start
        gaps[gap] = gaps.get(gap, 0) + batch
        events.append(StepEvent(start, dt, batch, waiting, 0, batch, used, 0, finished))
        k += 1
    if k:
        sched.free_blocks = free
        for s in running:
            s.computed += k
            s.generated += k
            s.blocks = blocks_for(s.computed, bt) - s.cached // bt
            s.last_token = t
    return t


def _run_replica(step_time: StepTime, sched: Scheduler, seqs: list[Sequence],
                 concurrency: int | None, spec: SpecDecode | None = None,
                 until: float | None = None, fullest: bool = False
                 ) -> tuple[list[StepEvent], StepSnapshot | None]:
    """Run ``seqs`` (in arrival order; an open loop's carry their arrival times) on one
    replica to the end, or with ``until`` (s) only to the step under way then; their fields
    record what happened. Returns the steps and the replica's snapshot: with ``until`` at
    that moment; with ``fullest``, at the start of the first step that held the most KV
    blocks; else None. With ``spec``, decodes are verifications, and the fast-forward of
    decode runs (which assumes one token a step) is not used."""
    pending = deque(seqs)
    count = len(seqs)
    best: StepSnapshot | None = None
    best_used = -1
    if concurrency is not None:
        for _ in range(min(concurrency, len(pending))):
            sched.add(pending.popleft())
    events: list[StepEvent] = []
    t = 0.0
    finished = 0
    seconds, step_seconds = step_time.seconds, step_time.step_seconds
    # The oldest plain decodes kept as counts (see decoding_front), where nothing reads the
    # requests one by one between steps.
    front = (DecodingFront(sched.block_tokens)
             if spec is None and until is None and not fullest
             and not step_time.model.sliding_window else None)
    while True:
        if concurrency is None:
            while pending and pending[0].arrival <= t:
                sched.add(pending.popleft())
        if not sched.running and not sched.waiting and not front:
            if until is not None and (not pending or pending[0].arrival > until):
                return events, _snapshot(sched, None, count, len(pending), 0.0, 0.0, until)
            if not pending:
                return events, best
            t = pending[0].arrival
            continue
        ahead = 0  # the front's decodes this step
        if front:
            need = front.blocks_needed()
            if need <= sched.free_blocks and len(front) <= sched.max_batched_tokens:
                sched.free_blocks -= need
                ahead = len(front)
            else:
                front.release(sched)
        step = sched.schedule(ahead)
        if not step.work and not ahead:
            raise EngineError("A request does not fit the KV cache even alone.", "prompt_tokens")
        prefills = step.prefills
        decodes = step.decode_contexts
        if spec is None:
            steady = (not prefills and not step.preempted
                      and len(decodes) == len(sched.running))
            if front is not None:
                gpu = step_time.summed_seconds(
                    prefills, ahead + len(decodes),
                    (front.context_tokens() if ahead else 0) + sum(decodes))
            else:
                gpu = seconds(prefills, decodes)
            dt = step_seconds(gpu, ahead + len(step.work))
        else:
            steady = False
            dt = step_seconds(seconds(prefills, decodes, decode_tokens=spec.tokens + 1)
                              + spec.draft_seconds(prefills, decodes), len(step.work))
        if until is not None and t + dt > until:
            return events, _snapshot(sched, step, count, len(pending), t, dt, until)
        used = sched.total_blocks - sched.free_blocks
        if fullest and used > best_used:
            best, best_used = _snapshot(sched, step, count, len(pending), t, dt, t), used
        start = t
        t += dt
        done = len(sched.complete(step, t))
        if ahead:
            assert front is not None
            done += front.step_done(sched, t, start)
        finished += done
        if concurrency is not None:
            for _ in range(done):
                if pending:
                    nxt = pending.popleft()
                    nxt.arrival = t
                    sched.add(nxt)
        events.append(StepEvent(start, dt, ahead + len(step.work), len(sched.waiting),
                                step.prefill_tokens, ahead + len(decodes), used,
                                step.preempted, finished))
        # A decode run goes on from a step of decodes only that admitted nobody, or from
        # any step after which nobody waits and everyone running decodes next.
        if (steady and not done) or (front is None and spec is None
                                     and _decodes_next(sched, step, done)):
            if front is not None:
                front.release(sched)
            next_arrival = (pending[0].arrival if concurrency is None and pending
                            else math.inf)
            ran = len(events)
            t = _decode_run(step_time, sched, t, finished, next_arrival, events,
                            math.inf if until is None else until)
            # Within a run the blocks held only grow: its last step holds the most, and
            # the first step that holds as many is the one kept.
            if fullest and len(events) > ran and events[-1].kv_blocks_used > best_used:
                best_used = events[-1].kv_blocks_used
                first = _first_fullest(events, ran)
                best = _in_decode_run(sched, events[first], len(events) - 1 - first, count,
                                      len(pending))
        elif front is not None:
            running = sched.running
            joined = 0
            while joined < len(running) and front.joins(running[joined], t):
                joined += 1
            if joined:
                del running[:joined]


def _sequences(prompts: Seq[int], outputs: Seq[int], arrivals: Seq[float] | None,
               block_tokens: int, prefix: PrefixCache | None) -> list[Sequence]:
    """The requests in arrival order, a shared prefix's hits starting with it computed."""
    seqs = [Sequence(i, prompts[i], outputs[i], arrivals[i] if arrivals is not None else 0.0)
            for i in range(len(prompts))]
    if prefix is not None:
        for s in seqs:
            s.cached = s.computed = prefix.cached_tokens(s.index, s.prompt, block_tokens)
    return seqs


def _busy(replicas: int, concurrency: int | None) -> int:
    """Replicas that serve: a closed loop of fewer requests than replicas leaves the others
    idle."""
    return replicas if concurrency is None else min(replicas, concurrency)


def _share(concurrency: int | None, busy: int, replica: int) -> int | None:
    """A closed loop's requests at once on ``replica`` (None: an open loop)."""
    if concurrency is None:
        return None
    return concurrency // busy + (1 if replica < concurrency % busy else 0)


def _scheduler(max_running: int, max_batched_tokens: int, kv_blocks: int, block_tokens: int,
               spec: SpecDecode | None, prefix: PrefixCache | None) -> Scheduler:
    """One replica's scheduler, a shared prefix's blocks held from the start."""
    sched = Scheduler(max_running=max_running, max_batched_tokens=max_batched_tokens,
                      blocks=kv_blocks, block_tokens=block_tokens,
                      spec_tokens=spec.tokens if spec is not None else 0,
                      spec_tokens_per_step=(spec.tokens_per_step if spec is not None
                                            else 1.0))
    if prefix is not None and prefix.hit > 0:
        sched.free_blocks -= prefix.shared_blocks(block_tokens)
    return sched


def snapshot(step_time: StepTime, *, prompts: Seq[int], outputs: Seq[int],
             concurrency: int | None, arrivals: Seq[float] | None, replicas: int,
             max_running: int, max_batched_tokens: int, kv_blocks: int, block_tokens: int,
             time_seconds: float, replica: int = 0, spec: SpecDecode | None = None,
             prefix: PrefixCache | None = None) -> StepSnapshot:
    """Replica ``replica`` of the run :func:`simulate` makes of the same inputs, at
    ``time_seconds`` of simulated time: simulated only as far as the step under way then.
    Inputs are trusted, as :func:`simulate`'s."""
    seqs = _sequences(prompts, outputs, arrivals, block_tokens, prefix)
    busy = _busy(replicas, concurrency)
    sched = _scheduler(max_running, max_batched_tokens, kv_blocks, block_tokens, spec, prefix)
    mine = seqs[replica::busy] if replica < busy else []
    _, shot = _run_replica(step_time, sched, mine, _share(concurrency, busy, replica), spec,
                           until=time_seconds)
    assert shot is not None  # a run to a moment always ends in its snapshot
    return shot


def simulate(step_time: StepTime, *, prompts: Seq[int], outputs: Seq[int],
             concurrency: int | None, arrivals: Seq[float] | None, rate: float | None,
             replicas: int,
             max_running: int, max_batched_tokens: int, kv_blocks: int, block_tokens: int,
             ttft_target_seconds: float | None = None,
             tpot_target_seconds: float | None = None, spec: SpecDecode | None = None,
             prefix: PrefixCache | None = None, fullest: bool = False) -> LoadResult:
    """Serve requests of ``prompts[i]`` in and ``outputs[i]`` out: closed loop at
    ``concurrency`` or open loop at the ``arrivals`` times (s) of a ``rate`` (requests/s), on ``replicas`` replicas of
    ``step_time``'s deployment, each with the scheduler's limits and ``kv_blocks`` blocks of
    ``block_tokens`` tokens. Inputs are trusted (checked where they enter:
    :mod:`engine.numbers.load.load_request`). ``spec``: speculative decoding; ``prefix``:
    a shared prefix cached; ``fullest``: keep the first replica's
    :class:`~engine.numbers.load.snapshot.StepSnapshot` at its fullest step."""
    count = len(prompts)
    seqs = _sequences(prompts, outputs, arrivals, block_tokens, prefix)
    steps: list[tuple[StepEvent, ...]] = []
    gaps: dict[float, int] = {}  # every gap between two tokens of a request -> its count
    kept: StepSnapshot | None = None
    busy = _busy(replicas, concurrency)
    for r in range(replicas):
        if r >= busy:
            steps.append(())
            continue
        sched = _scheduler(max_running, max_batched_tokens, kv_blocks, block_tokens, spec,
                           prefix)
        events, shot = _run_replica(step_time, sched, seqs[r::busy],
                                    _share(concurrency, busy, r), spec,
                                    fullest=fullest and r == 0)
        steps.append(tuple(events))
        if shot is not None:
            kept = shot
        for gap, n in sched.gaps.items():
            gaps[gap] = gaps.get(gap, 0) + n
    start = min(s.arrival for s in seqs)
    end = max(s.last_token for s in seqs)
    duration = end - start
    ttft = [s.first_token - s.arrival for s in seqs]
    e2e = [s.last_token - s.arrival for s in seqs]
    tpot = [(s.last_token - s.first_token) / (s.output - 1) for s in seqs if s.output > 1]
    tokens = sum(outputs)
    gpus = step_time.gpus * replicas
    goodput = None
    if ttft_target_seconds is not None or tpot_target_seconds is not None:
        good = sum(1 for s in seqs
                   if (ttft_target_seconds is None
                       or s.first_token - s.arrival <= ttft_target_seconds)
                   and (tpot_target_seconds is None or s.output == 1
                        or (s.last_token - s.first_token) / (s.output - 1)
                        <= tpot_target_seconds))
        goodput = Goodput(ttft_target_seconds, tpot_target_seconds, good, good / duration)
    peak = max((e.kv_blocks_used for r in steps for e in r), default=0)
    result = LoadResult(
        concurrency=concurrency, rate=rate, requests=count, replicas=replicas, gpus=gpus,
        ttft_seconds=percentiles(ttft), tpot_seconds=percentiles(tpot),
        itl_seconds=counted_percentiles(gaps), e2e_seconds=percentiles(e2e),
        duration_seconds=duration, requests_per_s=count / duration,
        output_tokens_per_s=tokens / duration, output_tokens_per_s_per_gpu=tokens / duration / gpus,
        kv_cache_peak_fraction=peak / kv_blocks,
        preemptions=sum(s.preemptions for s in seqs), goodput=goodput, timeline=(),
        steps=tuple(steps), kv_blocks_per_replica=kv_blocks, block_tokens=block_tokens,
        fullest=kept,
    )
    points = []
    for k in range(TIMELINE_POINTS):
        t = start + duration * k / (TIMELINE_POINTS - 1)
        state = result.state_at(t)
        points.append((t, state.waiting, state.running))
    return replace(result, timeline=tuple(points))
