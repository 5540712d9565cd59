"""The actions on the cluster as a whole: :func:`new_cluster`, :func:`reset`, :func:`advance`
(the clock), :func:`stop` (a running job), :func:`set_traffic` (requests sent to it), and :func:`try_way_out`, which submits the job a
refusal's way out proposes to :func:`deploy` or :func:`launch_training`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from engine.lesson.cluster.from_dict import check_state
from engine.lesson.cluster.log import settle, with_log
from engine.lesson.cluster.models import model_named
from engine.lesson.cluster.serving import deploy
from engine.lesson.cluster.state import (
    CURVE_BESIDE,
    KINDS,
    MAX_CLOCK_SECONDS,
    TRAFFIC_RATES,
    ActionResult,
    ClusterState,
    LogEntry,
    Traffic,
    WayOut,
    job_progress,
)
from engine.lesson.cluster.training import launch_training
from engine.lesson.cluster.words import gpu_list
from engine.numbers import validate
from engine.numbers.catalog import get_system
from engine.numbers.errors import EngineError
from engine.words.format import format_count, format_GB, format_percent, plural


def new_cluster(system_id: str = "dgx-1") -> ClusterState:
    """A fresh system with no jobs, its clock at 0 s."""
    system = get_system(system_id)
    hello = LogEntry(0.0, "info", (
        f"{system.id} ready: {format_GB(system.gpu.memory_bytes)} per GPU, "
        f"{format_GB(system.gpu_memory_bytes)} in all."))
    return ClusterState(system_id=system.id, clock_seconds=0.0, next_job=1, jobs=(),
                        log=(hello,))


def reset(state: ClusterState | Mapping[str, object]) -> ClusterState:
    """The same system, fresh: every job gone, clock at 0 s, log restarted."""
    st = check_state(state)
    return new_cluster(st.system_id)


def advance(state: ClusterState | Mapping[str, object], seconds: object) -> ClusterState:
    """Move the clock ``seconds`` forward: training progresses and may finish."""
    st = check_state(state)
    s = validate.number(seconds, "seconds", label="Seconds to advance", allow_minimum=True,
                        maximum=MAX_CLOCK_SECONDS)
    clock = min(st.clock_seconds + s, MAX_CLOCK_SECONDS)
    return settle(replace(st, clock_seconds=clock))


def set_traffic(state: ClusterState | Mapping[str, object], rate_per_s: object,
                on: bool, curve_beside: object = None) -> ClusterState:
    """The state with traffic at ``rate_per_s`` (one of :data:`TRAFFIC_RATES`) turned ``on``
    or off, and ``curve_beside`` (one of :data:`CURVE_BESIDE`) drawn beside its
    latency-throughput curve (None: as the state had it); the jobs, clock and log unchanged."""
    st = check_state(state)
    rate = validate.number(rate_per_s, "rate", label="Request rate")
    if rate not in TRAFFIC_RATES:
        offered = ", ".join(f"{r:g}" for r in TRAFFIC_RATES)
        raise EngineError(f"Request rate: {rate:g} is not one offered ({offered} requests/s).",
                          "rate")
    if curve_beside is None:
        beside = st.traffic.curve_beside if st.traffic is not None else ""
    else:
        beside = validate.choice(curve_beside, "curve_beside", CURVE_BESIDE,
                                 label="Beside the curve")
    return replace(st, traffic=Traffic(rate, on, beside))


def stop(state: ClusterState | Mapping[str, object], job_id: object) -> ActionResult:
    """Stop a running job: its memory is freed; a training job keeps its progress so far."""
    st = settle(check_state(state))
    job = st.find_job(job_id)
    if not job.running:
        raise EngineError(f"{job.id} is not running: it has {job.status}.", "job_id")
    stopped = replace(job, status="stopped", ended_seconds=st.clock_seconds)
    jobs = tuple(stopped if j.id == job.id else j for j in st.jobs)
    model = model_named(job.model_id)
    message = f"Stopped {job.id} ({model.name}); {format_GB(job.bytes_per_gpu)} freed on " \
              f"{plural(len(job.gpus), 'GPU') if len(job.gpus) > 1 else gpu_list(job.gpus)}."
    if job.kind == "train":
        p = job_progress(replace(st, jobs=jobs), stopped)
        message += f" It had trained on {format_count(p.tokens_done)} tokens ({format_percent(p.progress)})."
    new = with_log(replace(st, jobs=jobs), LogEntry(st.clock_seconds, "stopped", message))
    return ActionResult(accepted=True, message=message, arithmetic=(), state=new, job=stopped)


def try_way_out(state: ClusterState | Mapping[str, object],
                way_out: WayOut | Mapping[str, object]) -> ActionResult:
    """Submit the job a way out proposes (its ``action``, as :meth:`WayOut.to_dict` gives it
    or as the WayOut itself): 'serve' goes to :func:`deploy`, 'train' to
    :func:`launch_training`. Checked like any submission, so it may still be refused (when
    ``fits_now`` was False)."""
    if isinstance(way_out, WayOut):
        action: Mapping[str, object] = dict(way_out.action)
    elif isinstance(way_out, Mapping):
        raw = way_out.get("action", way_out)
        if not isinstance(raw, Mapping):
            raise EngineError("A way out's action must be a mapping of settings.", "action")
        action = raw
    else:
        raise EngineError("Expected a way out from a refused action.", "action")
    if not action:
        raise EngineError("This way out has no action to try: it needs more GPUs than this "
                          "system has.", "action")
    kind = validate.choice(action.get("kind"), "kind", KINDS)
    allowed = ({"kind", "model_id", "gpus", "weight_format", "context_tokens", "batch"}
               if kind == "serve" else
               {"kind", "model_id", "gpus", "sharding", "optimizer", "recompute", "seq_len",
                "micro_batch", "tokens", "mfu"})
    unknown = sorted(str(k)[:40] for k in action if k not in allowed)
    if unknown:
        raise EngineError(f"Unknown setting(s) for a {kind} job: {', '.join(unknown)}.",
                          "action")
    kwargs: dict[str, Any] = {str(k): v for k, v in action.items() if k != "kind"}
    if kind == "serve":
        return deploy(state, **kwargs)
    return launch_training(state, **kwargs)
