"""dgx-1 under load: requests at the reader's rate sent to its newest serving job, simulated by
:func:`engine.numbers.load.load_request.serve_load` (continuous batching, paged KV cache),
shown as frames of simulated time and the run's figures; whether it keeps up, and what would
fix it when it does not, each alternative simulated the same way.

The deployment is served as the CLI's ``plan --task serve`` serves it: its model, weight
format, GPUs (tensor parallel over them), batch and context, the KV cache in bf16, and
requests of :data:`PROMPT_TOKENS` in and :data:`OUTPUT_TOKENS` out, :data:`REQUESTS` of them
arriving as a Poisson process (seed 0). As vLLM does, the KV cache takes the memory the
weights and a full step's working space leave on the GPUs as the job finds them
(:func:`job_gpu`: less what other jobs there hold), the figure the deployment's "room for N
tokens" says (:func:`engine.lesson.cluster.sizing.serve_kv_blocks`).

**Saturation.** The most requests/s a set-up completes is measured by the same simulation as
a closed loop with its batch always full, on every replica: as many requests at once as its
KV cache holds whole (at most vLLM's limit on running requests; more only wait or are
preempted, and complete no faster), twice that many requests in all. Traffic above it is
saturated: the queue grows by the difference every second, without bound, and so does the
time to first token. The same closed loops, at fewer requests at once, draw the
latency-throughput curve (:mod:`engine.lesson.dgx_curve`), whose last point this is.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, replace
from functools import lru_cache

from engine.lesson import cluster
from engine.lesson.dgx_batch import batch_html
from engine.numbers import quantities
from engine.numbers.catalog import HardwareSpec, get_hardware
from engine.numbers.catalog.server import scheduler_limits
from engine.numbers.formats import FORMATS, FormatId
from engine.numbers.load.kv_blocks import blocks_for, kv_cache_blocks
from engine.numbers.load.load_request import LoadRequest, load_request, serve_load
from engine.numbers.load.results import LoadResult, StepEvent
from engine.numbers.serve_request import ServeRequest, serve_request
from engine.render.html import definition_list, esc, tag
from engine.render.plot import stacked_bar
from engine.render.svg import rect, svg
from engine.words.format import format_percent, format_seconds, format_tokens_per_s, plural

REQUESTS = 200  # simulated at the reader's rate: p99 rests on two requests
PROMPT_TOKENS = quantities.TYPICAL_PROMPT_TOKENS
OUTPUT_TOKENS = quantities.TYPICAL_OUTPUT_TOKENS
KV_FORMAT: FormatId = "bf16"
FRAMES = 24  # states shown, at even steps of simulated time from the first arrival to the end
FRAME_MS = 250  # real milliseconds each frame shows while the browser plays them
BIGGER_GPU = "b200"
BAR_WIDTH = 240
BAR_HEIGHT = 12


def serving_job(state: cluster.ClusterState) -> cluster.Job | None:
    """The newest running serving job, the one traffic goes to (None when there is none)."""
    return state.serving_job()


def job_gpu(state: cluster.ClusterState, job: cluster.Job) -> HardwareSpec:
    """The system's GPU as ``job`` finds it: its memory less what the other jobs on its GPUs
    hold (the fullest of them); the system's own GPU when it has them to itself."""
    return state.gpu_as_found(job.gpus, apart_from=job.id)


def deployment(job: cluster.Job, hardware: HardwareSpec, *, replicas: int = 1,
               weight_format: FormatId | None = None, tp: int | None = None) -> ServeRequest:
    """``job``'s deployment as a checked serving request: ``replicas`` copies of it on
    ``hardware``, its weights in ``weight_format`` (the job's own when None), each tensor
    parallel over ``tp`` GPUs (the job's own count when None)."""
    tp = tp or len(job.gpus)
    return serve_request(
        cluster.model_named(job.model_id), hardware, gpus=tp * replicas, serve_tp=tp,
        batch=job.batch * replicas, weight_format=weight_format or job.weight_format,
        kv_format=KV_FORMAT, context_tokens=job.context_tokens, prompt_tokens=PROMPT_TOKENS,
        output_tokens=OUTPUT_TOKENS)


@lru_cache(maxsize=32)
def _open_loop(serve: ServeRequest, rate: float) -> LoadResult:
    return serve_load(serve, _load(rate=rate, requests=REQUESTS), fullest=True)


def forget_runs() -> None:
    """Empty the simulations kept for the next render (for benchmarks: a first press)."""
    _open_loop.cache_clear()
    _closed_loop_of_one.cache_clear()


def one_replica(serve: ServeRequest) -> ServeRequest:
    """One replica of ``serve`` (``batch`` is already each replica's)."""
    return replace(serve, replicas=1)


def whole_requests(serve: ServeRequest) -> int:
    """The requests whose KV caches (a prompt and answer of the typical lengths) one
    replica of ``serve`` holds whole at once, whatever vLLM's running limit."""
    limits = scheduler_limits(serve.hardware)
    blocks = kv_cache_blocks(serve.model, serve.hardware, weight_format=serve.weight_format,
                             kv_format=serve.kv_format, gpus=serve.tp,
                             max_running=limits.max_running, block_tokens=limits.block_tokens)
    # The last output token is never stored in the cache.
    per_request = blocks_for(serve.prompt_tokens + serve.output_tokens - 1, limits.block_tokens)
    return blocks // per_request


def full_batch(serve: ServeRequest) -> int:
    """The most requests one replica of ``serve`` runs at once with each one's KV cache
    whole (:func:`whole_requests`), at most vLLM's running limit."""
    return max(1, min(scheduler_limits(serve.hardware).max_running, whole_requests(serve)))


@lru_cache(maxsize=64)
def _closed_loop_of_one(one: ServeRequest, concurrency: int) -> LoadResult:
    return serve_load(one, _load(concurrency=concurrency, requests=2 * concurrency))


def closed_loop(serve: ServeRequest, concurrency: int) -> LoadResult:
    """One replica of ``serve`` kept at ``concurrency`` requests at once, twice that many in
    all (the CLI's ``--concurrency C --requests 2C``): simulated once for every count of
    replicas (the capacity of 4 replicas is 4 times the run of one)."""
    return _closed_loop_of_one(one_replica(serve), concurrency)


def capacity_per_s(serve: ServeRequest) -> float:
    """The most requests/s ``serve`` completes: a closed loop at one replica's
    :func:`full_batch` (see the module's note), times the replicas (each has its own
    scheduler and its share of the requests, so they add up)."""
    return closed_loop(serve, full_batch(serve)).requests_per_s * serve.replicas


def filling_words(serve: ServeRequest, requests_per_replica: int) -> str:
    """When one replica of ``serve``'s KV cache fills: with as many requests running as its
    blocks hold whole, as in the saturation run behind its capacity (:func:`full_batch`),
    unless vLLM's running limit comes first; and whether ``requests_per_replica``, the
    reader's run on each replica, can get there at any rate."""
    whole = whole_requests(serve)
    full = full_batch(serve)
    peak = format_percent(closed_loop(serve, full).kv_cache_peak_fraction)
    run = (f"the saturation run behind “at most {capacity_per_s(one_replica(serve)):,.1f} "
           f"requests/s” ({peak} at its fullest)")
    tokens = f"{serve.prompt_tokens + serve.output_tokens:,} tokens"
    if whole > full:
        return (f"vLLM runs at most {full:,} requests at once, fewer than the blocks hold "
                f"whole ({whole:,} of {tokens}), so the cache never fills, not even in {run}.")
    reach = (f"; this run's {requests_per_replica:,} requests never get there, at any rate"
             if requests_per_replica < full else "")
    return (f"The blocks hold {plural(whole, 'request')} of {tokens} whole, so the cache "
            f"fills only with about that many running at once, as in {run}{reach}.")


def _load(*, rate: float | None = None, concurrency: int | None = None,
          requests: int) -> LoadRequest:
    load = load_request(rate=rate, concurrency=concurrency, requests=requests)
    assert load is not None  # a rate or a concurrency is always given here
    return load


def under_load(serve: ServeRequest, rate: float) -> LoadResult:
    """``serve`` at ``rate`` requests/s: :data:`REQUESTS` requests, Poisson arrivals, seed 0
    (the CLI's ``--rate RATE --requests 200``)."""
    return _open_loop(serve, rate)


def busy_shares(state: cluster.ClusterState) -> dict[str, float]:
    """The serving job under traffic -> the share of the traffic's simulated time its
    server has a step under way (GPU work and the host's between steps); empty when no
    traffic runs."""
    job = state.serving_job()
    rate = state.traffic_rate(job) if job is not None else None
    if job is None or rate is None:
        return {}
    r = under_load(deployment(job, job_gpu(state, job)), rate)
    busy = math.fsum(step.seconds for step in r.steps[0])
    return {job.id: min(busy / r.duration_seconds, 1.0)}


@dataclass(frozen=True, slots=True)
class Outcome:
    """A set-up at the reader's rate: its run, the most it completes (requests/s), whether
    the rate is above that."""

    label: str
    gpus: int
    result: LoadResult
    capacity_per_s: float

    @property
    def saturated(self) -> bool:
        rate = self.result.rate
        return rate is not None and rate > self.capacity_per_s


def outcome(label: str, serve: ServeRequest, rate: float) -> Outcome:
    return Outcome(label, serve.gpus, under_load(serve, rate), capacity_per_s(serve))


def alternatives(job: cluster.Job, hardware: HardwareSpec, rate: float,
                 gpu_count: int) -> list[Outcome | str]:
    """What would keep up with ``rate``: more replicas (the fewest that do, within the
    system's ``gpu_count`` GPUs), fp8 weights, a bigger GPU; each simulated, or a sentence
    where it cannot be."""
    out: list[Outcome | str] = []
    tp = len(job.gpus)
    one = capacity_per_s(deployment(job, hardware))
    replicas = max(2, int(-(-rate // one)))
    if replicas * tp <= gpu_count:
        out.append(outcome(f"{replicas} replicas", deployment(job, hardware, replicas=replicas),
                           rate))
    else:
        out.append(f"More replicas: one completes {one:,.1f} requests/s, so {rate:g} need "
                   f"{replicas} of {plural(tp, 'GPU')}, more than dgx-1's {gpu_count}.")
    if FORMATS[job.weight_format].bytes_per_number > FORMATS["fp8"].bytes_per_number:
        out.append(outcome("fp8 weights", deployment(job, hardware, weight_format="fp8"), rate))
    bigger = get_hardware(BIGGER_GPU)
    if hardware.id != bigger.id:
        out.append(outcome(f"{bigger.name} instead", deployment(job, bigger), rate))
    return out


# ------------------------------------------------------------------------------- words


def _ms(seconds: float) -> str:
    return format_seconds(seconds)


# What the figures' terms mean, under them (the list's terms stay short for a phone).
LATENCY_KEY = ("p50: half the requests do better; p99: all but the slowest 1 %. Prompts "
               "arriving share the decode steps, so each output token takes longer under "
               "load. A preemption pauses a request for want of free KV cache blocks.")


def latency_words(r: LoadResult) -> list[tuple[str, str]]:
    """The run's figures as (term, value) pairs."""
    return [
        ("Time to first token", f"p50 {_ms(r.ttft_seconds.p50)}, p99 {_ms(r.ttft_seconds.p99)}"),
        ("Time per output token",
         f"p50 {_ms(r.tpot_seconds.p50)}, p99 {_ms(r.tpot_seconds.p99)}"),
        ("Output", f"{format_tokens_per_s(r.output_tokens_per_s)} "
                   f"({r.requests_per_s:,.1f} requests/s done)"),
        ("KV cache at its fullest", format_percent(r.kv_cache_peak_fraction)),
        ("Preemptions", f"{r.preemptions:,}"),
    ]


def verdict_words(o: Outcome) -> str:
    rate = o.result.rate or 0.0
    if o.saturated:
        return (f"Saturated: it completes at most {o.capacity_per_s:,.1f} requests/s and "
                f"{rate:g} arrive each second, so the queue grows by about "
                f"{rate - o.capacity_per_s:,.1f} a second, without bound; the time to first "
                f"token above is of the first {REQUESTS} requests and grows with every one "
                "after.")
    return (f"Keeps up: it completes at most {o.capacity_per_s:,.1f} requests/s and {rate:g} "
            f"arrive each second ({format_percent(rate / o.capacity_per_s)} of that).")


def _alternative_item(a: Outcome | str) -> str:
    if isinstance(a, str):
        return tag("li", esc(a))
    r = a.result
    keeps = "still saturated" if a.saturated else "keeps up"
    text = (f" on {plural(a.gpus, 'GPU')}: at most {a.capacity_per_s:,.1f} requests/s, "
            f"{keeps}; time to first token p99 {_ms(r.ttft_seconds.p99)}, per output token "
            f"p50 {_ms(r.tpot_seconds.p50)}, {format_tokens_per_s(r.output_tokens_per_s)}.")
    return tag("li", tag("strong", esc(a.label)) + esc(text))


# ------------------------------------------------------------------------------ frames


def _start(step: StepEvent) -> float:
    return step.start_seconds


def _step_under_way(r: LoadResult, t: float) -> tuple[int, int]:
    """Prompt tokens prefilling and sequences decoding in the steps under way at ``t``, all
    replicas together."""
    prefill = decodes = 0
    for steps in r.steps:
        i = bisect.bisect_right(steps, t, key=_start) - 1
        if i >= 0 and t < steps[i].start_seconds + steps[i].seconds:
            prefill += steps[i].prefill_tokens
            decodes += steps[i].decodes
    return prefill, decodes


def _kv_bar(used: int, total: int) -> str:
    track = rect(0, 0, BAR_WIDTH, BAR_HEIGHT, class_="track", rx=2)
    share = used / total if total else 0.0
    bar = stacked_bar([("part-0", share, f"{used:,} blocks")], x=0, y=0, height=BAR_HEIGHT,
                      units_per_value=BAR_WIDTH, limit=BAR_WIDTH)
    return svg(track + bar, css="dgx-bar", width=BAR_WIDTH, height=BAR_HEIGHT,
               label=f"KV cache: {used:,} of {total:,} blocks", fixed_size=True)


def frame_times(r: LoadResult) -> list[float]:
    """:data:`FRAMES` simulated times, evenly from the first arrival (0 s) to the last token."""
    return [r.duration_seconds * k / (FRAMES - 1) for k in range(FRAMES)]


def frames_html(r: LoadResult, animate: bool) -> str:
    """The run as frames of simulated time, the last one shown; ``animate``: the browser
    plays them from the first (docs/js/frames.js)."""
    items = []
    times = frame_times(r)
    for k, t in enumerate(times):
        s = r.state_at(t)
        prefill, decodes = _step_under_way(r, t)
        text = (f"{format_seconds(t) if t > 0 else '0 s'} simulated: {s.waiting:,} queued, "
                f"{s.running:,} in the running batch ({prefill:,} prompt tokens prefilling, "
                f"{decodes:,} decoding), {s.finished:,} of {r.requests:,} finished; KV cache "
                f"{s.kv_blocks_used:,} of {s.kv_blocks:,} blocks "
                f"({format_percent(s.kv_blocks_used / s.kv_blocks)}).")
        items.append(tag("li", esc(text) + _kv_bar(s.kv_blocks_used, s.kv_blocks),
                         data_frame=str(k), hidden=k != len(times) - 1 or None))
    return tag("ol", "".join(items), class_="dgx-load-frames", aria_live="off",
               data_frame_ms=str(FRAME_MS), data_frames_animate="true" if animate else None)


def traffic_html(state: cluster.ClusterState, animate: bool) -> str:
    """The traffic's result for ``state``: off, no deployment, or the run, its verdict and,
    when saturated, the alternatives."""
    traffic = state.traffic
    job = serving_job(state)
    if job is None:
        return tag("p", esc(f"No model is serving on {state.system_id}: deploy one above, "
                            "then start traffic."), class_="dgx-load-off")
    model = cluster.model_named(job.model_id).name
    where = cluster.gpu_list(job.gpus)
    if traffic is None or not traffic.on:
        return tag("p", esc(f"Traffic off: {job.id} ({model} on {where}) waits for requests. "
                            "Choose a rate and press Start."), class_="dgx-load-off")
    hardware = job_gpu(state, job)
    rate = traffic.rate_per_s
    main_serve = deployment(job, hardware)
    main = outcome("as deployed", main_serve, rate)
    r = main.result
    head = (f"{rate:g} requests/s to {job.id} ({model}, {job.weight_format}, on {where}): "
            f"{REQUESTS} requests of {PROMPT_TOKENS:,} tokens in, {OUTPUT_TOKENS:,} out, over "
            f"{format_seconds(r.duration_seconds)} of simulated time. The KV cache is kept in "
            f"blocks of {r.block_tokens:,} tokens.")
    out = tag("p", esc(head), class_="dgx-load-head")
    out += frames_html(r, animate)
    out += definition_list(latency_words(r))
    out += tag("p", esc(LATENCY_KEY), class_="dgx-load-key")
    if r.fullest is not None:
        requests = tuple(range(0, r.requests, r.replicas))
        out += batch_html(r.fullest, requests, r.block_tokens, r.preemptions,
                          filling_words(main_serve, len(requests)))
    out += tag("p", esc(verdict_words(main)),
               class_="widget-verdict " + ("refused" if main.saturated else "fits"),
               data_saturated="true" if main.saturated else "false")
    if main.saturated:
        items = "".join(_alternative_item(a)
                        for a in alternatives(job, hardware, rate, state.system.gpu_count))
        out += tag("p", esc("What would keep up, simulated the same way:"))
        out += tag("ul", items, class_="dgx-load-fixes")
    return out
