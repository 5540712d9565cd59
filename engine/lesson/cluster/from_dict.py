"""Reading a state back from :meth:`ClusterState.to_dict`'s output, as untrusted input (the
browser keeps it in the page and sends it back): every field's type and range, job ids the
cluster gave out, each job's memory recomputed from its settings, end times, memory within
capacity and training jobs alone on their GPUs: :func:`state_from_dict`, and
:func:`check_state`, which every action applies to the state it is given.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import fields, replace

from engine.lesson.cluster.checks import (
    SERVE_BATCH,
    check_context,
    check_gpu_indexes,
    check_model,
    check_training_numbers,
)
from engine.lesson.cluster.log import settle
from engine.lesson.cluster.models import model_named
from engine.lesson.cluster.sizing import serve_memory, train_memory, training_run_inputs
from engine.lesson.cluster.state import (
    CURVE_BESIDE,
    KINDS,
    LOG_KINDS,
    MAX_CLOCK_SECONDS,
    MAX_JOBS,
    MAX_LOG_ENTRIES,
    MAX_TEXT,
    STATE_VERSION,
    STATUSES,
    TRAFFIC_RATES,
    ClusterState,
    Job,
    LogEntry,
    Traffic,
)
from engine.numbers import records, validate
from engine.numbers.catalog import SystemSpec, get_system
from engine.numbers.errors import EngineError
from engine.numbers.formats import get_format
from engine.numbers.training_choices import OPTIMIZERS, RECOMPUTE, SHARDINGS, checked
from engine.words.format import format_GB

_JOB_ID = re.compile(r"job-([1-9][0-9]{0,8})")
# Besides the state's own fields: its version and the per-GPU views drawn from it.
_STATE_KEYS = {f.name for f in fields(ClusterState)} | {"version", "gpus"}
# The fields each kind of job reads; a job's fields for the other kind keep their defaults.
_SERVE_FIELDS = ("weight_format", "context_tokens", "batch")
_TRAIN_FIELDS = ("sharding", "optimizer", "recompute", "seq_len", "micro_batch", "tokens", "mfu")


def _expect(cond: bool, message: str) -> None:
    if not cond:
        raise EngineError(message, "state")


def _text(value: object, what: str, limit: int = MAX_TEXT) -> str:
    _expect(isinstance(value, str) and len(value) <= limit, f"{what} must be text.")
    assert isinstance(value, str)
    return value


def state_from_dict(data: object) -> ClusterState:
    """A state from :meth:`ClusterState.to_dict`'s output, checked as untrusted input: wrong
    types, unknown models, impossible GPU indexes, overlapping training, memory beyond
    capacity or any other inconsistency raise EngineError (field 'state', never another
    exception). Each job's memory is recomputed from its settings, not taken from the dict."""
    try:
        return _read_state(data)
    except EngineError as err:
        raise EngineError(f"Cluster state rejected: {err.message}", "state") from None
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError,
            RecursionError) as err:
        raise EngineError(f"Cluster state rejected: malformed ({type(err).__name__}).",
                          "state") from None


def check_state(state: object) -> ClusterState:
    """The state an action was given: a ClusterState as it is, a mapping (what the browser
    sends back) read by :func:`state_from_dict`."""
    if isinstance(state, ClusterState):
        return state
    if isinstance(state, Mapping):
        return state_from_dict(state)
    raise EngineError("Expected a cluster state (from new_cluster or a previous action).",
                      "state")


def _read_state(data: object) -> ClusterState:
    _expect(isinstance(data, Mapping), "expected a mapping.")
    assert isinstance(data, Mapping)
    unknown = records.unknown_keys(data, _STATE_KEYS)
    _expect(not unknown, f"unknown field(s) {', '.join(unknown)}.")
    _expect(data.get("version") == STATE_VERSION, f"version must be {STATE_VERSION}.")
    system = get_system(data.get("system_id"))
    clock = validate.number(data.get("clock_seconds"), "clock_seconds", allow_minimum=True,
                            maximum=MAX_CLOCK_SECONDS)
    next_job = validate.integer(data.get("next_job"), "next_job", maximum=10**9)
    raw_jobs = data.get("jobs")
    raw_log = data.get("log")
    _expect(isinstance(raw_jobs, list | tuple) and len(raw_jobs) <= MAX_JOBS,
            f"jobs must be a list of at most {MAX_JOBS}.")
    _expect(isinstance(raw_log, list | tuple) and len(raw_log) <= MAX_LOG_ENTRIES,
            f"log must be a list of at most {MAX_LOG_ENTRIES} entries.")
    assert isinstance(raw_jobs, list | tuple) and isinstance(raw_log, list | tuple)

    log_fields: dict[str, Callable[[object], object]] = {
        "time_seconds": lambda v: validate.number(v, "time_seconds", allow_minimum=True,
                                                  maximum=clock),
        "kind": lambda v: validate.choice(v, "kind", LOG_KINDS),
        "message": lambda v: _text(v, "a log message"),
    }
    log = [records.from_dict(LogEntry, e, log_fields, what="log entry") for e in raw_log]

    base = ClusterState(system_id=system.id, clock_seconds=clock, next_job=next_job, jobs=(),
                        log=tuple(log), traffic=_traffic(data.get("traffic")))
    jobs: list[Job] = []
    seen: set[str] = set()
    for raw in raw_jobs:
        job = _job_from_dict(raw, system, clock, next_job)
        _expect(job.id not in seen, f"job {job.id} appears twice.")
        seen.add(job.id)
        jobs.append(job)
    state = replace(base, jobs=tuple(jobs))

    cap = system.gpu.memory_bytes
    for g, used in enumerate(state.used_bytes()):
        _expect(used <= cap, f"running jobs hold {format_GB(used)} on GPU {g}, more than its "
                f"{format_GB(cap)}.")
    for j in state.running_jobs():
        if j.kind == "train":
            other = [k.id for k in state.running_jobs()
                     if k.id != j.id and set(k.gpus) & set(j.gpus)]
            _expect(not other, f"training job {j.id} shares its GPUs with {', '.join(other)}.")
    return settle(state)


def _traffic(raw: object) -> Traffic | None:
    """The traffic settings, absent (None) or a rate of :data:`TRAFFIC_RATES` and on/off."""
    if raw is None:
        return None

    def rate(value: object) -> float:
        _expect(type(value) in (int, float) and value in TRAFFIC_RATES,
                "the traffic's rate must be one of the rates offered.")
        return float(value)  # type: ignore[arg-type]

    def on(value: object) -> bool:
        _expect(type(value) is bool, "the traffic's on must be true or false.")
        return bool(value)

    def beside(value: object) -> str:
        _expect(value in CURVE_BESIDE, "the set-up beside the curve must be one of those "
                "offered.")
        return str(value)

    return records.from_dict(Traffic, raw, {"rate_per_s": rate, "on": on,
                                            "curve_beside": beside}, what="traffic",
                             require=("rate_per_s", "on"))


def _job_fields(kind: str, system: SystemSpec, clock: float, next_job: int
                ) -> dict[str, Callable[[object], object]]:
    """How each field of a job of ``kind`` is read; the other kind's fields are dropped, and
    the numbers whose range depends on the model are checked once the model is known."""
    def job_id(value: object) -> str:
        text = _text(value, "a job id", 20)
        match = _JOB_ID.fullmatch(text)
        _expect(match is not None and int(match.group(1)) < next_job,
                f"job id {text!r} is not one this cluster gave out.")
        return text

    def ended(value: object) -> float | None:
        if value is None:
            return None
        return validate.number(value, "ended_seconds", allow_minimum=True, maximum=clock)

    shared: dict[str, Callable[[object], object]] = {
        "id": job_id,
        "kind": lambda v: validate.choice(v, "kind", KINDS),
        "model_id": lambda v: check_model(v).id,
        "gpus": lambda v: check_gpu_indexes(v, system),
        "bytes_per_gpu": lambda v: 0.0,  # recomputed from the job's settings
        "status": lambda v: validate.choice(v, "status", STATUSES),
        "started_seconds": lambda v: validate.number(v, "started_seconds", allow_minimum=True,
                                                     maximum=clock),
        "ended_seconds": ended,
    }
    if kind == "serve":
        return shared | {
            "weight_format": lambda v: get_format(v).id,
            "batch": lambda v: SERVE_BATCH.check_integer(v, "batch", "Batch"),
        }
    return shared | {
        "sharding": lambda v: checked(v, "sharding", SHARDINGS),
        "optimizer": lambda v: checked(v, "optimizer", OPTIMIZERS),
        "recompute": lambda v: checked(v, "recompute", RECOMPUTE),
    }


def _job_from_dict(raw: object, system: SystemSpec, clock: float, next_job: int) -> Job:
    _expect(isinstance(raw, Mapping), "each job must be a mapping.")
    assert isinstance(raw, Mapping)
    kind = validate.choice(raw.get("kind"), "kind", KINDS)
    own, other = (_SERVE_FIELDS, _TRAIN_FIELDS) if kind == "serve" else (_TRAIN_FIELDS,
                                                                          _SERVE_FIELDS)
    job = records.from_dict(Job, {k: v for k, v in raw.items() if k not in other},
                            _job_fields(kind, system, clock, next_job), what="job",
                            ignore=("progress",), require=own)
    if job.running:
        _expect(job.ended_seconds is None, f"running job {job.id} cannot have an end time.")
    else:
        _expect(job.ended_seconds is not None and job.ended_seconds >= job.started_seconds,
                f"job {job.id} must end after it started.")
    model = model_named(job.model_id)
    hw = system.gpu
    if kind == "serve":
        ctx = check_context(model, job.context_tokens)
        mem = serve_memory(model, hw, job.weight_format, ctx, job.batch, len(job.gpus))
        return replace(job, context_tokens=ctx, bytes_per_gpu=mem.per_gpu_bytes)
    seq, mb, budget, eff = check_training_numbers(model, job.seq_len, job.micro_batch,
                                                   job.tokens, job.mfu)
    _expect(eff <= 0.95, "MFU above 95 %.")
    run = training_run_inputs(model.id, budget, len(job.gpus), hw.id, eff, job.recompute, seq)
    tmem = train_memory(model, hw, len(job.gpus), job.sharding, job.optimizer, job.recompute,
                         seq, mb)
    if job.status == "finished":
        assert job.ended_seconds is not None
        _expect(math.isclose(job.ended_seconds - job.started_seconds, run.total_seconds,
                             rel_tol=1e-9, abs_tol=1e-6),
                f"finished job {job.id} has the wrong end time.")
    return replace(job, seq_len=seq, micro_batch=mb, tokens=budget, mfu=eff,
                   bytes_per_gpu=tmem.per_gpu_bytes)
