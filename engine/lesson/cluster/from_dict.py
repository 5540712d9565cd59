"""Reading a state back from :meth:`ClusterState.to_dict`'s output, as untrusted input (the
browser keeps it in the page and sends it back): every field's type and range, job ids the
cluster gave out, each job's memory recomputed from its settings, end times, memory within
capacity and training jobs alone on their GPUs. :meth:`ClusterState.from_dict` wraps it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import fields, replace

from engine.lesson.cluster.checks import (
    SERVE_BATCH,
    _check_context,
    _check_gpu_indexes,
    _check_model,
    _check_training_numbers,
)
from engine.lesson.cluster.log import _settle
from engine.lesson.cluster.serving import _serve_memory
from engine.lesson.cluster.state import (
    KINDS,
    LOG_KINDS,
    MAX_CLOCK_SECONDS,
    MAX_JOBS,
    MAX_LOG_ENTRIES,
    MAX_TEXT,
    STATE_VERSION,
    STATUSES,
    ClusterState,
    Job,
    LogEntry,
    _run_inputs,
)
from engine.lesson.cluster.training import _train_memory
from engine.numbers import validate
from engine.numbers.catalog import SystemSpec, get_system
from engine.numbers.errors import EngineError
from engine.numbers.formats import get_format
from engine.numbers.memory import OPTIMIZERS, RECOMPUTE, SHARDINGS
from engine.words.format import format_GB

_JOB_ID = re.compile(r"job-([1-9][0-9]{0,8})")
_STATE_KEYS = {"version", "system_id", "clock_seconds", "next_job", "gpus", "jobs", "log"}
_JOB_KEYS = {f.name for f in fields(Job)} | {"progress"}


def _expect(cond: bool, message: str) -> None:
    if not cond:
        raise EngineError(message, "state")


def _text(value: object, what: str, limit: int = MAX_TEXT) -> str:
    _expect(isinstance(value, str) and len(value) <= limit, f"{what} must be text.")
    assert isinstance(value, str)
    return value


def _state_from_dict(data: object) -> ClusterState:
    _expect(isinstance(data, Mapping), "expected a mapping.")
    assert isinstance(data, Mapping)
    unknown = sorted(str(k)[:40] for k in data if k not in _STATE_KEYS)
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

    log: list[LogEntry] = []
    for e in raw_log:
        _expect(isinstance(e, Mapping) and set(e) == {"time_seconds", "kind", "message"},
                "each log entry needs time_seconds, kind and message.")
        t = validate.number(e["time_seconds"], "time_seconds", allow_minimum=True,
                            maximum=clock)
        kind = validate.choice(e["kind"], "kind", LOG_KINDS)
        log.append(LogEntry(t, kind, _text(e["message"], "a log message")))

    base = ClusterState(system_id=system.id, clock_seconds=clock, next_job=next_job, jobs=(),
                        log=tuple(log))
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
    return _settle(state)


def _job_from_dict(raw: object, system: SystemSpec, clock: float, next_job: int) -> Job:
    _expect(isinstance(raw, Mapping), "each job must be a mapping.")
    assert isinstance(raw, Mapping)
    unknown = sorted(str(k)[:40] for k in raw if k not in _JOB_KEYS)
    _expect(not unknown, f"unknown job field(s) {', '.join(unknown)}.")
    job_id = _text(raw.get("id"), "a job id", 20)
    match = _JOB_ID.fullmatch(job_id)
    _expect(match is not None and int(match.group(1)) < next_job,
            f"job id {job_id!r} is not one this cluster gave out.")
    kind = validate.choice(raw.get("kind"), "kind", KINDS)
    status = validate.choice(raw.get("status"), "status", STATUSES)
    model = _check_model(raw.get("model_id"))
    idx = _check_gpu_indexes(raw.get("gpus"), system)
    started = validate.number(raw.get("started_seconds"), "started_seconds", allow_minimum=True,
                              maximum=clock)
    ended_raw = raw.get("ended_seconds")
    ended: float | None = None
    if status == "running":
        _expect(ended_raw is None, f"running job {job_id} cannot have an end time.")
    else:
        ended = validate.number(ended_raw, "ended_seconds", minimum=started, allow_minimum=True,
                                maximum=clock)
    hw = system.gpu
    if kind == "serve":
        wf = get_format(raw.get("weight_format")).id
        ctx = _check_context(model, raw.get("context_tokens"))
        b = SERVE_BATCH.check_integer(raw.get("batch"), "batch", "Batch")
        mem = _serve_memory(model, hw, wf, ctx, b, len(idx))
        return Job(id=job_id, kind=kind, model_id=model.id, gpus=idx,
                   bytes_per_gpu=mem.per_gpu_bytes, status=status, started_seconds=started,
                   ended_seconds=ended, weight_format=wf, context_tokens=ctx, batch=b)
    shard = validate.choice(raw.get("sharding"), "sharding", SHARDINGS)
    opt = validate.choice(raw.get("optimizer"), "optimizer", OPTIMIZERS)
    rec = validate.choice(raw.get("recompute"), "recompute", RECOMPUTE)
    seq, mb, budget, eff = _check_training_numbers(
        model, raw.get("seq_len"), raw.get("micro_batch"), raw.get("tokens"), raw.get("mfu")
    )
    _expect(eff <= 0.95, "MFU above 95 %.")
    _run_inputs(model.id, budget, len(idx), hw.id, eff, rec, seq)
    tmem = _train_memory(model, hw, len(idx), shard, opt, rec, seq, mb)
    if status == "finished":
        total = _run_inputs(model.id, budget, len(idx), hw.id, eff, rec, seq).total_seconds
        assert ended is not None
        _expect(math.isclose(ended - started, total, rel_tol=1e-9, abs_tol=1e-6),
                f"finished job {job_id} has the wrong end time.")
    return Job(id=job_id, kind=kind, model_id=model.id, gpus=idx,
               bytes_per_gpu=tmem.per_gpu_bytes, status=status, started_seconds=started,
               ended_seconds=ended, sharding=shard, optimizer=opt, recompute=rec, seq_len=seq,
               micro_batch=mb, tokens=budget, mfu=eff)
