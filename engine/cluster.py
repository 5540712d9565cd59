"""The simulated dgx-1: eight GPUs, the jobs on them, and a job log.

State is immutable (frozen dataclasses and tuples) and every action is a pure function
that returns a new state; the browser keeps ``state.to_dict()`` in the page (and in
``sessionStorage``) and sends it back with the next action, so :meth:`ClusterState.from_dict`
checks it as untrusted input.

Rules of the simulation (each stated where it applies):

- A job is admitted or refused **at submission**, by arithmetic: its memory per GPU
  (from :func:`engine.memory.serving_memory` / :func:`engine.memory.training_memory`) must
  fit in the memory still free on every GPU it asks for. A refusal changes nothing but the
  log, and the same request is refused again with the same arithmetic.
- A training job gets its GPUs to itself (as a batch scheduler allocates them); serving
  jobs may share a GPU with other serving jobs when the memory allows.
- Training progresses in simulated time (:func:`advance`) as :mod:`engine.training_run`
  models it (start-up, ramp, checkpoint pauses); its GPUs show that run's utilisation.
  A finished training job frees its memory.
- A serving job holds its memory until stopped; with no requests sent to it, its GPU
  shows 0 % utilisation (idle, waiting for requests).

Units: bytes (GB = 10^9 bytes), seconds of simulated time, tokens.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from typing import Any

from engine import validate
from engine.catalog import (
    HardwareSpec,
    ModelSpec,
    SystemSpec,
    get_hardware,
    get_model,
    get_system,
    list_models,
)
from engine.errors import EngineError
from engine.formats import FORMATS, get_format
from engine.memory import (
    OPTIMIZERS,
    RECOMPUTE,
    SHARDINGS,
    ServingMemory,
    TrainingMemory,
    min_gpus_to_serve,
    min_gpus_to_train,
    serving_memory,
    training_memory,
)
from engine.training_run import TrainingRunInputs, TrainingSample, training_run_at
from engine.units import format_count, format_seconds

STATE_VERSION = 1
KINDS = ("serve", "train")
STATUSES = ("running", "finished", "stopped")
LOG_KINDS = ("info", "accepted", "refused", "finished", "stopped")
MAX_LOG_ENTRIES = 200  # the oldest entries are dropped beyond this
MAX_JOBS = 64  # running jobs are always kept; the oldest ended jobs are dropped beyond this
MAX_CLOCK_SECONDS = 1e15
MAX_TEXT = 1000
TRAINING_FORMAT = "bf16"  # mixed-precision training: the maths runs at the bf16 peak
DEFAULT_TOKENS = 1e9
DEFAULT_MFU = 0.4
_JOB_ID = re.compile(r"job-([1-9][0-9]{0,8})")

ActionValue = str | int | float | tuple[int, ...]


def _gb(n_bytes: float) -> str:
    """'128.5 GB', '16.06 GB', '0.15 GB': the precision the lesson quotes."""
    value = n_bytes / 1e9
    if value == round(value):
        return f"{value:,.0f} GB"
    return f"{value:,.1f} GB" if abs(value) >= 100 else f"{value:,.2f} GB"


def _gpu_list(indexes: Sequence[int]) -> str:
    if len(indexes) == 1:
        return f"GPU {indexes[0]}"
    if list(indexes) == list(range(indexes[0], indexes[0] + len(indexes))):
        return f"GPUs {indexes[0]}-{indexes[-1]}"
    return "GPUs " + ", ".join(str(i) for i in indexes)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


# ------------------------------------------------------------------------------ records


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One line of the job log: simulated time (seconds since the cluster started)."""

    time_seconds: float
    kind: str
    message: str

    def __post_init__(self) -> None:
        if self.kind not in LOG_KINDS:
            raise EngineError(f"Log entry kind must be one of: {', '.join(LOG_KINDS)}.", "log")

    def to_dict(self) -> dict[str, object]:
        return {"time_seconds": self.time_seconds, "kind": self.kind, "message": self.message}


@dataclass(frozen=True, slots=True)
class Job:
    """A serving or training job. ``bytes_per_gpu`` is what it holds on each of ``gpus``.

    Serving jobs use weight_format, context_tokens, batch; training jobs use sharding,
    optimizer, recompute, seq_len, micro_batch, tokens (budget) and mfu. Times are simulated
    seconds; ``ended_seconds`` is None while running.
    """

    id: str
    kind: str
    model_id: str
    gpus: tuple[int, ...]
    bytes_per_gpu: float
    status: str
    started_seconds: float
    ended_seconds: float | None = None
    weight_format: str = "bf16"
    context_tokens: int = 0
    batch: int = 0
    sharding: str = "none"
    optimizer: str = "adam"
    recompute: str = "selective"
    seq_len: int = 0
    micro_batch: int = 0
    tokens: float = 0.0
    mfu: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise EngineError(f"Job kind must be one of: {', '.join(KINDS)}.", "kind")
        if self.status not in (*STATUSES, "refused"):
            raise EngineError(f"Job status must be one of: {', '.join(STATUSES)}.", "status")
        if not self.gpus or any(type(g) is not int for g in self.gpus):
            raise EngineError("A job needs at least one GPU, given by index.", "gpus")

    @property
    def running(self) -> bool:
        return self.status == "running"

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {f.name: getattr(self, f.name) for f in fields(self)}
        out["gpus"] = list(self.gpus)
        return out


@dataclass(frozen=True, slots=True)
class JobProgress:
    """Where a job stands at the cluster's clock (derived, never stored).

    phase: 'serving' for serving jobs; for training 'starting', 'ramping', 'training',
    'checkpointing', 'finished' or 'stopped'. progress: share of the token budget done.
    utilisation: busy share of each of its GPUs (0 for an idle serving job).
    """

    phase: str
    progress: float
    tokens_done: float
    tokens_per_s: float
    mfu: float
    utilisation: float
    seconds_left: float
    loss: float | None

    def to_dict(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, slots=True)
class GpuView:
    """One GPU as an operator sees it: memory in use against capacity, and utilisation."""

    index: int
    name: str
    capacity_bytes: float
    used_bytes: float
    free_bytes: float
    utilisation: float
    jobs: tuple[str, ...]
    activity: str

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {f.name: getattr(self, f.name) for f in fields(self)}
        out["jobs"] = list(self.jobs)
        return out


@dataclass(frozen=True, slots=True)
class ClusterState:
    """The whole simulated system: its clock, its jobs (running and past) and its log."""

    system_id: str
    clock_seconds: float
    next_job: int
    jobs: tuple[Job, ...]
    log: tuple[LogEntry, ...]

    @property
    def system(self) -> SystemSpec:
        return get_system(self.system_id)

    def running_jobs(self) -> tuple[Job, ...]:
        return tuple(j for j in self.jobs if j.running)

    def find_job(self, job_id: object) -> Job:
        """The job called ``job_id``; EngineError naming the known ones if there is none."""
        for j in self.jobs:
            if j.id == job_id:
                return j
        known = ", ".join(j.id for j in self.jobs) or "none yet"
        shown = str(job_id)[:40]
        raise EngineError(f"No job called {shown!r} on {self.system_id}; jobs: {known}.", "job_id")

    def used_bytes(self) -> tuple[float, ...]:
        """Memory held on each GPU by running jobs (bytes)."""
        used = [0.0] * self.system.gpu_count
        for j in self.jobs:
            if j.running:
                for g in j.gpus:
                    used[g] += j.bytes_per_gpu
        return tuple(used)

    def free_bytes(self) -> tuple[float, ...]:
        cap = self.system.gpu.memory_bytes
        return tuple(cap - u for u in self.used_bytes())

    def progress(self, job: Job) -> JobProgress:
        return job_progress(self, job)

    def gpus(self) -> tuple[GpuView, ...]:
        """Per-GPU memory and utilisation, for the operator's bars."""
        sysspec = self.system
        cap = sysspec.gpu.memory_bytes
        used = self.used_bytes()
        views = []
        for g in range(sysspec.gpu_count):
            on = [j for j in self.jobs if j.running and g in j.gpus]
            util = 0.0
            words = []
            for j in on:
                p = job_progress(self, j)
                util += p.utilisation
                if j.kind == "train":
                    words.append(f"training {j.id} ({p.phase})")
                else:
                    words.append(f"serving {j.id} (idle, waiting for requests)")
            views.append(GpuView(
                index=g, name=sysspec.gpu.name, capacity_bytes=cap, used_bytes=used[g],
                free_bytes=cap - used[g], utilisation=min(util, 1.0),
                jobs=tuple(j.id for j in on), activity="; ".join(words) or "free",
            ))
        return tuple(views)

    def to_dict(self) -> dict[str, object]:
        """Plain JSON values. ``gpus`` and each job's ``progress`` are derived (for drawing);
        :meth:`from_dict` recomputes them and the memory of every job."""
        return {
            "version": STATE_VERSION,
            "system_id": self.system_id,
            "clock_seconds": self.clock_seconds,
            "next_job": self.next_job,
            "gpus": [g.to_dict() for g in self.gpus()],
            "jobs": [{**j.to_dict(), "progress": job_progress(self, j).to_dict()}
                     for j in self.jobs],
            "log": [e.to_dict() for e in self.log],
        }

    @classmethod
    def from_dict(cls, data: object) -> ClusterState:
        """A state from :meth:`to_dict`'s output, checked as untrusted input: wrong types,
        unknown models, impossible GPU indexes, overlapping training, memory beyond capacity
        or any other inconsistency raise EngineError (never another exception). Each job's
        memory is recomputed from its settings, not taken from the dict."""
        try:
            return _state_from_dict(data)
        except EngineError as err:
            raise EngineError(f"Cluster state rejected: {err.message}", "state") from None
        except (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError,
                RecursionError) as err:
            raise EngineError(f"Cluster state rejected: malformed ({type(err).__name__}).",
                              "state") from None


@dataclass(frozen=True, slots=True)
class WayOut:
    """A change that would let a refused job run, with its memory per GPU.

    action: the keyword arguments to retry with (``kind`` says which function: 'serve' ->
    :func:`deploy`, 'train' -> :func:`launch_training`). fits_now: it fits the memory free at
    this moment on the GPUs it names (False when other jobs must stop first, or when no
    count of this system's GPUs is enough; the text says which)."""

    label: str
    text: str
    per_gpu_bytes: float
    fits_now: bool
    action: tuple[tuple[str, ActionValue], ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "label": self.label,
            "text": self.text,
            "per_gpu_bytes": self.per_gpu_bytes,
            "fits_now": self.fits_now,
            "action": {k: list(v) if isinstance(v, tuple) else v for k, v in self.action},
        }


@dataclass(frozen=True, slots=True)
class ActionResult:
    """What an action did: accepted or refused, why (``arithmetic``, one line per step),
    the new state, the job concerned, for refusals the ways out, and the assumptions the
    memory figures rest on. For a refusal ``job`` is the job as it would have been, with
    status 'refused' and no id: refused jobs are not kept, only the log records them."""

    accepted: bool
    message: str
    arithmetic: tuple[str, ...]
    state: ClusterState
    job: Job | None = None
    ways_out: tuple[WayOut, ...] = ()
    assumptions: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "accepted": self.accepted,
            "message": self.message,
            "arithmetic": list(self.arithmetic),
            "state": self.state.to_dict(),
            "job": self.job.to_dict() if self.job is not None else None,
            "ways_out": [w.to_dict() for w in self.ways_out],
            "assumptions": list(self.assumptions),
        }


# ------------------------------------------------------------------------- derived values


@lru_cache(maxsize=256)
def _run_inputs(model_id: str, tokens: float, gpus: int, hardware_id: str, mfu: float,
                recompute: str) -> TrainingRunInputs:
    model = get_model(model_id)
    system_gpu = get_hardware(hardware_id)
    return TrainingRunInputs(
        params=model.params, tokens=tokens, gpus=gpus,
        peak_flops_per_s=system_gpu.peak_flops_per_s(TRAINING_FORMAT), mfu=mfu,
        flops_per_token_factor=8.0 if recompute == "full" else 6.0,
    )


def _job_run(state: ClusterState, job: Job) -> TrainingRunInputs:
    return _run_inputs(job.model_id, job.tokens, len(job.gpus), state.system.gpu.id, job.mfu,
                       job.recompute)


def job_progress(state: ClusterState, job: Job) -> JobProgress:
    """Where ``job`` stands at ``state``'s clock (training as engine.training_run models it)."""
    if job.kind == "serve":
        return JobProgress(phase="serving" if job.running else job.status, progress=0.0,
                           tokens_done=0.0, tokens_per_s=0.0, mfu=0.0, utilisation=0.0,
                           seconds_left=0.0, loss=None)
    end = state.clock_seconds if job.ended_seconds is None else job.ended_seconds
    s: TrainingSample = training_run_at(_job_run(state, job), max(end - job.started_seconds, 0.0))
    phase = "stopped" if job.status == "stopped" else s.phase
    busy = job.running and s.phase != "finished"
    return JobProgress(
        phase=phase, progress=s.fraction_done, tokens_done=s.tokens_done,
        tokens_per_s=s.tokens_per_s if busy else 0.0, mfu=s.mfu if busy else 0.0,
        utilisation=s.utilisation if busy else 0.0,
        seconds_left=s.seconds_left if job.running else 0.0, loss=s.loss,
    )


def _training_total_seconds(state: ClusterState, job: Job) -> float:
    return _job_run(state, job).total_seconds


# --------------------------------------------------------------------------- validation


def _check_state(state: object) -> ClusterState:
    if isinstance(state, ClusterState):
        return state
    if isinstance(state, Mapping):
        return ClusterState.from_dict(state)
    raise EngineError("Expected a cluster state (from new_cluster or a previous action).",
                      "state")


def _check_gpu_indexes(gpus: object, system: SystemSpec) -> tuple[int, ...]:
    count = system.gpu_count
    where = f"{system.id} has GPUs 0-{count - 1}"
    items: list[object]
    if isinstance(gpus, int | str) and not isinstance(gpus, bool):
        items = [gpus]
    elif isinstance(gpus, list | tuple):
        items = list(gpus)
    else:
        raise EngineError(f"GPUs must be a list of GPU numbers; {where}.", "gpus")
    if not items:
        raise EngineError(f"Choose at least one GPU; {where}.", "gpus")
    if len(items) > count:
        raise EngineError(f"{_plural(len(items), 'GPU')} asked for; {where}.", "gpus")
    out: list[int] = []
    for item in items:
        if isinstance(item, str) and not item.strip().isdigit():
            raise EngineError(f"There is no GPU {item[:20]!r}: {where}.", "gpus")
        try:
            g = validate.integer(item, "gpus", label="GPU number", minimum=0, maximum=count - 1)
        except EngineError:
            shown = str(item)[:20]
            raise EngineError(f"There is no GPU {shown}: {where}.", "gpus") from None
        if g in out:
            raise EngineError(f"GPU {g} is listed twice.", "gpus")
        out.append(g)
    return tuple(sorted(out))


def _check_model(model_id: object) -> ModelSpec:
    if not isinstance(model_id, str):
        raise EngineError("Model must be a catalogue model id such as 'llama-3.1-8b'.",
                          "model_id")
    return get_model(model_id)


def _check_context(model: ModelSpec, context_tokens: object) -> int:
    ctx = validate.integer(context_tokens, "context_tokens", label="Context (tokens)",
                           maximum=100_000_000)
    if ctx > model.max_context:
        raise EngineError(f"{model.name} reads at most {model.max_context:,} tokens of context; "
                          f"{ctx:,} asked for.", "context_tokens")
    return ctx


# ---------------------------------------------------------------------------- the log


def _with_log(state: ClusterState, *entries: LogEntry) -> ClusterState:
    log = (*state.log, *entries)
    return replace(state, log=log[-MAX_LOG_ENTRIES:])


def _trim_jobs(jobs: tuple[Job, ...]) -> tuple[Job, ...]:
    if len(jobs) <= MAX_JOBS:
        return jobs
    drop = len(jobs) - MAX_JOBS
    kept = []
    for j in jobs:
        if drop and not j.running:
            drop -= 1
            continue
        kept.append(j)
    return tuple(kept)


def _settle(state: ClusterState) -> ClusterState:
    """Mark training jobs whose run has ended by the clock as finished (memory freed)."""
    jobs = list(state.jobs)
    entries: list[LogEntry] = []
    for i, j in enumerate(jobs):
        if j.kind != "train" or not j.running:
            continue
        end = j.started_seconds + _training_total_seconds(state, j)
        if end <= state.clock_seconds:
            jobs[i] = replace(j, status="finished", ended_seconds=end)
            model = get_model(j.model_id)
            entries.append(LogEntry(
                end, "finished",
                f"{j.id} finished: {model.name} trained on {format_count(j.tokens)} tokens in "
                f"{format_seconds(end - j.started_seconds)}; {_gpu_list(j.gpus)} freed."))
    if not entries:
        return state
    entries.sort(key=lambda e: e.time_seconds)
    return _with_log(replace(state, jobs=tuple(jobs)), *entries)


# ------------------------------------------------------------------------------ actions


def new_cluster(system_id: str = "dgx-1") -> ClusterState:
    """A fresh system with no jobs, its clock at 0 s."""
    system = get_system(system_id)
    hello = LogEntry(0.0, "info", (
        f"{system.id} ready: {system.gpu_count} × {system.gpu.name}, "
        f"{_gb(system.gpu.memory_bytes)} each ({_gb(system.gpu_memory_bytes)} in all)."))
    return ClusterState(system_id=system.id, clock_seconds=0.0, next_job=1, jobs=(),
                        log=(hello,))


def reset(state: ClusterState | Mapping[str, object]) -> ClusterState:
    """The same system, fresh: every job gone, clock at 0 s, log restarted."""
    st = _check_state(state)
    return new_cluster(st.system_id)


def advance(state: ClusterState | Mapping[str, object], seconds: object) -> ClusterState:
    """Move the clock ``seconds`` forward: training progresses and may finish."""
    st = _check_state(state)
    s = validate.number(seconds, "seconds", label="Seconds to advance", allow_minimum=True,
                        maximum=MAX_CLOCK_SECONDS)
    clock = min(st.clock_seconds + s, MAX_CLOCK_SECONDS)
    return _settle(replace(st, clock_seconds=clock))


def stop(state: ClusterState | Mapping[str, object], job_id: object) -> ActionResult:
    """Stop a running job: its memory is freed; a training job keeps its progress so far."""
    st = _settle(_check_state(state))
    job = st.find_job(job_id)
    if not job.running:
        raise EngineError(f"{job.id} is not running: it has {job.status}.", "job_id")
    stopped = replace(job, status="stopped", ended_seconds=st.clock_seconds)
    jobs = tuple(stopped if j.id == job.id else j for j in st.jobs)
    model = get_model(job.model_id)
    message = f"Stopped {job.id} ({model.name}); {_gb(job.bytes_per_gpu)} freed on " \
              f"{_plural(len(job.gpus), 'GPU') if len(job.gpus) > 1 else _gpu_list(job.gpus)}."
    if job.kind == "train":
        p = job_progress(replace(st, jobs=jobs), stopped)
        message += f" It had trained on {format_count(p.tokens_done)} tokens ({p.progress:.0%})."
    new = _with_log(replace(st, jobs=jobs), LogEntry(st.clock_seconds, "stopped", message))
    return ActionResult(accepted=True, message=message, arithmetic=(), state=new, job=stopped)


_RULES = (
    "Admission by arithmetic: a job's memory per GPU must fit the memory still free on each "
    "of its GPUs, checked before it starts.",
    "A training job gets its GPUs to itself; serving jobs may share a GPU when the memory "
    "allows.",
)


def _accept(st: ClusterState, job: Job, message: str, arithmetic: Sequence[str],
            assumptions: Sequence[str]) -> ActionResult:
    new = replace(st, jobs=_trim_jobs((*st.jobs, job)), next_job=st.next_job + 1)
    new = _with_log(new, LogEntry(st.clock_seconds, "accepted", message))
    return ActionResult(accepted=True, message=message, arithmetic=tuple(arithmetic), state=new,
                        job=job, assumptions=(*_RULES, *assumptions))


def _refuse(st: ClusterState, job: Job, message: str, arithmetic: Sequence[str],
            ways_out: Sequence[WayOut], assumptions: Sequence[str]) -> ActionResult:
    refused = replace(job, id="", status="refused")
    new = _with_log(st, LogEntry(st.clock_seconds, "refused", message))
    return ActionResult(accepted=False, message=message, arithmetic=tuple(arithmetic),
                        state=new, job=refused, ways_out=tuple(ways_out),
                        assumptions=(*_RULES, *assumptions))


def _memory_verdict(st: ClusterState, gpus: tuple[int, ...], per_gpu: float
                    ) -> tuple[int | None, str]:
    """The first GPU on which ``per_gpu`` bytes do not fit, and the comparison in words."""
    cap = st.system.gpu.memory_bytes
    free = st.free_bytes()
    for g in gpus:
        if per_gpu > free[g]:
            held = cap - free[g]
            if held > 0:
                holders = ", ".join(j.id for j in st.running_jobs() if g in j.gpus)
                room = (f"the {_gb(free[g])} free on GPU {g} ({_gb(cap)} less {_gb(held)} "
                        f"held by {holders})")
            else:
                room = f"the {_gb(free[g])} free on GPU {g}"
            return g, f"{_gb(per_gpu)} per GPU > {room}"
    return None, f"{_gb(per_gpu)} per GPU fits on {_gpu_list(gpus)}"


def _busy_with_training(st: ClusterState, gpus: Sequence[int]) -> Job | None:
    for j in st.running_jobs():
        if j.kind == "train" and set(j.gpus) & set(gpus):
            return j
    return None


def _busy_with_any(st: ClusterState, gpus: Sequence[int]) -> Job | None:
    for j in st.running_jobs():
        if set(j.gpus) & set(gpus):
            return j
    return None


# ------------------------------------------------------------------------------- serving


def _serve_lines(mem: ServingMemory) -> list[str]:
    m = mem.model
    fmt = get_format(mem.weight_format)
    split = f" / {mem.gpus} GPUs" if mem.gpus > 1 else ""
    kv_total = mem.kv_cache_bytes_per_token * mem.context_tokens * mem.batch
    return [
        f"Weights: {format_count(m.params)} params × {fmt.bytes_per_number:g} bytes "
        f"({fmt.id}) = {_gb(m.params * fmt.bytes_per_number)}{split}"
        + (f" = {_gb(mem.parts['weights'])} per GPU" if split else "") + ".",
        f"KV cache: {mem.kv_cache_bytes_per_token:,.0f} bytes/token × "
        f"{mem.context_tokens:,} tokens × {_plural(mem.batch, 'request')} = {_gb(kv_total)}"
        f"{split}" + (f" = {_gb(mem.parts['kv_cache'])} per GPU" if split else "") + ".",
        f"Activations (transient buffers): {_gb(mem.parts['activations'])}.",
        f"Runtime overhead (CUDA context, workspaces): {_gb(mem.parts['runtime_overhead'])}.",
        f"Total: {_gb(mem.per_gpu_bytes)} per GPU.",
    ]


def _serve_memory(model: ModelSpec, hw: HardwareSpec, weight_format: str, context_tokens: int,
                  batch: int, gpus: int) -> ServingMemory:
    return serving_memory(model, hw, weight_format=weight_format, kv_format="bf16",
                          context_tokens=context_tokens, batch=batch, gpus=gpus)


def _pick_gpus(st: ClusterState, n: int, prefer: Sequence[int], *, exclusive: bool
               ) -> tuple[int, ...]:
    """``n`` GPUs for a way out: usable ones with the most free memory, the requested ones
    first among equals."""
    running = st.running_jobs()

    def usable(g: int) -> bool:
        return not any(g in j.gpus and (exclusive or j.kind == "train") for j in running)

    free = st.free_bytes()
    order = sorted(range(st.system.gpu_count),
                   key=lambda g: (not usable(g), -free[g], g not in prefer, g))
    return tuple(sorted(order[:n]))


def _fits_now(st: ClusterState, gpus: Sequence[int], per_gpu: float, *, exclusive: bool
              ) -> bool:
    free = st.free_bytes()
    blocker = _busy_with_any(st, gpus) if exclusive else _busy_with_training(st, gpus)
    return blocker is None and all(per_gpu <= free[g] for g in gpus)


def _serve_action(model_id: str, gpus: tuple[int, ...], weight_format: str, context: int,
                  batch: int) -> tuple[tuple[str, ActionValue], ...]:
    return (("kind", "serve"), ("model_id", model_id), ("gpus", gpus),
            ("weight_format", weight_format), ("context_tokens", context), ("batch", batch))


def _serve_ways_out(st: ClusterState, model: ModelSpec, gpus: tuple[int, ...], wf: str,
                    ctx: int, batch: int) -> list[WayOut]:
    system = st.system
    hw = system.gpu
    count = system.gpu_count
    out: list[WayOut] = []
    mem = _serve_memory(model, hw, wf, ctx, batch, len(gpus))

    if mem.fits:  # it fits an empty GPU: other GPUs may have the room
        pick = _pick_gpus(st, len(gpus), gpus, exclusive=False)
        if pick != gpus and _fits_now(st, pick, mem.per_gpu_bytes, exclusive=False):
            out.append(WayOut(
                label="Other GPUs",
                text=f"The same job on {_gpu_list(pick)}, which have the room: "
                f"{_gb(mem.per_gpu_bytes)} per GPU.",
                per_gpu_bytes=mem.per_gpu_bytes, fits_now=True,
                action=_serve_action(model.id, pick, wf, ctx, batch)))

    need = min_gpus_to_serve(mem)
    if need is not None and need > len(gpus):
        n = need
        while n <= count and model.heads % n:
            n += 1
        if n <= count:
            pick = _pick_gpus(st, n, gpus, exclusive=False)
            m2 = _serve_memory(model, hw, wf, ctx, batch, n)
            ok = _fits_now(st, pick, m2.per_gpu_bytes, exclusive=False)
            out.append(WayOut(
                label=f"{n} GPUs (tensor parallel)",
                text=f"Split over {n} GPUs ({_gpu_list(pick)}): {_gb(m2.per_gpu_bytes)} per GPU"
                + ("" if ok else " (other jobs must stop first)")
                + (f"; {n} because tensor parallelism needs a count that divides the "
                   f"{model.heads} attention heads" if n != need else "") + ".",
                per_gpu_bytes=m2.per_gpu_bytes, fits_now=ok,
                action=_serve_action(model.id, pick, wf, ctx, batch)))
        else:
            out.append(WayOut(
                label="More GPUs than this system has",
                text=f"Even split over all {count} GPUs it needs more memory than they have: "
                f"at least {need} GPUs, more than one {system.id}.",
                per_gpu_bytes=_serve_memory(model, hw, wf, ctx, batch, count).per_gpu_bytes,
                fits_now=False, action=()))

    current = get_format(wf).bytes_per_number
    for fid in ("fp8", "int4"):
        if FORMATS[fid].bytes_per_number >= current:
            continue
        m2 = _serve_memory(model, hw, fid, ctx, batch, len(gpus))
        if _fits_now(st, gpus, m2.per_gpu_bytes, exclusive=False):
            room = min(st.free_bytes()[g] for g in gpus) - m2.per_gpu_bytes
            extra = int(room * len(gpus) // mem.kv_cache_bytes_per_token)
            out.append(WayOut(
                label=f"{fid} weights",
                text=f"Weights in {fid} ({FORMATS[fid].bytes_per_number:g} bytes each): "
                f"{_gb(m2.per_gpu_bytes)} per GPU on {_gpu_list(gpus)}, leaving room for "
                f"{extra:,} more tokens of KV cache (quantised weights can cost some quality).",
                per_gpu_bytes=m2.per_gpu_bytes, fits_now=True,
                action=_serve_action(model.id, gpus, fid, ctx, batch)))
            break

    free_min = min(st.free_bytes()[g] for g in gpus)
    fixed = mem.per_gpu_bytes - mem.parts["kv_cache"]
    kv_per_token_per_gpu = mem.kv_cache_bytes_per_token * batch / len(gpus)
    if fixed < free_min and ctx > 1:
        fit_ctx = int((free_min - fixed) // kv_per_token_per_gpu)
        fit_ctx = (fit_ctx // 1024) * 1024 if fit_ctx >= 1024 else fit_ctx
        if 1 <= fit_ctx < ctx:
            m2 = _serve_memory(model, hw, wf, fit_ctx, batch, len(gpus))
            if _fits_now(st, gpus, m2.per_gpu_bytes, exclusive=False):
                out.append(WayOut(
                    label="Shorter context",
                    text=f"Context of {fit_ctx:,} tokens instead of {ctx:,}: "
                    f"{_gb(m2.per_gpu_bytes)} per GPU on {_gpu_list(gpus)}.",
                    per_gpu_bytes=m2.per_gpu_bytes, fits_now=True,
                    action=_serve_action(model.id, gpus, wf, fit_ctx, batch)))

    for other in sorted(list_models(), key=lambda m: -m.params):
        if other.params >= model.params or ctx > other.max_context:
            continue
        m2 = _serve_memory(other, hw, wf, ctx, batch, len(gpus))
        if _fits_now(st, gpus, m2.per_gpu_bytes, exclusive=False):
            out.append(WayOut(
                label="A smaller model",
                text=f"{other.name} ({format_count(other.params)} params): "
                f"{_gb(m2.per_gpu_bytes)} per GPU on {_gpu_list(gpus)}.",
                per_gpu_bytes=m2.per_gpu_bytes, fits_now=True,
                action=_serve_action(other.id, gpus, wf, ctx, batch)))
            break
    return out


def deploy(
    state: ClusterState | Mapping[str, object],
    model_id: str = "llama-3.1-8b",
    gpus: Sequence[int] | int = (0,),
    weight_format: str = "bf16",
    context_tokens: int = 8192,
    batch: int = 1,
) -> ActionResult:
    """Deploy ``model_id`` as a serving job on ``gpus`` (tensor parallel when several),
    sized for ``batch`` concurrent requests of ``context_tokens`` tokens each (KV cache in
    bf16). Refused at submission, with the arithmetic, if it does not fit the memory free on
    each GPU or a GPU is held by a training job."""
    st = _settle(_check_state(state))
    system = st.system
    model = _check_model(model_id)
    idx = _check_gpu_indexes(gpus, system)
    wf = get_format(weight_format).id
    ctx = _check_context(model, context_tokens)
    b = validate.integer(batch, "batch", label="Batch (concurrent requests)", maximum=4096)
    mem = _serve_memory(model, system.gpu, wf, ctx, b, len(idx))
    job = Job(id=f"job-{st.next_job}", kind="serve", model_id=model.id, gpus=idx,
              bytes_per_gpu=mem.per_gpu_bytes, status="running",
              started_seconds=st.clock_seconds, weight_format=wf, context_tokens=ctx, batch=b)
    lines = _serve_lines(mem)
    where = _gpu_list(idx)
    bad_gpu, comparison = _memory_verdict(st, idx, mem.per_gpu_bytes)
    lines.append(comparison[0].upper() + comparison[1:] + ".")
    if bad_gpu is not None:
        message = (f"Refused before it starts: serving {model.name} ({wf}) on {where} needs "
                   f"{comparison}. Retrying cannot help: the arithmetic will not change.")
        return _refuse(st, job, message, lines, _serve_ways_out(st, model, idx, wf, ctx, b),
                       mem.assumptions)
    holder = _busy_with_training(st, idx)
    if holder is not None:
        message = (f"Refused: {_gpu_list(holder.gpus)} belong to training job {holder.id}, "
                   "which has its GPUs to itself; stop it or choose other GPUs.")
        return _refuse(st, job, message, lines, _serve_ways_out(st, model, idx, wf, ctx, b),
                       mem.assumptions)
    # Tokens of KV cache the memory still free on these GPUs holds (this job's own included).
    room = min(st.free_bytes()[g] for g in idx) - (mem.per_gpu_bytes - mem.parts["kv_cache"])
    fit_tokens = int(room * len(idx) // mem.kv_cache_bytes_per_token)
    message = (f"{job.id}: serving {model.name} ({wf}) on {where}: "
               f"{_gb(mem.per_gpu_bytes)} of {_gb(mem.capacity_bytes)} per GPU; room for "
               f"{fit_tokens:,} tokens of context "
               f"({_plural(fit_tokens // ctx, 'request')} of {ctx:,} tokens).")
    return _accept(st, job, message, lines, mem.assumptions)


# ------------------------------------------------------------------------------ training


def _train_memory(model: ModelSpec, hw: HardwareSpec, gpus: int, sharding: str,
                  optimizer: str, recompute: str, seq_len: int, micro_batch: int
                  ) -> TrainingMemory:
    return training_memory(model, hw, gpus=gpus, sharding=sharding, optimizer=optimizer,
                           recompute=recompute, seq_len=seq_len, micro_batch=micro_batch)


def _sharding_words(sharding: str, gpus: int) -> str:
    if sharding == "none" or gpus == 1:
        return "on each GPU (not sharded)" if gpus > 1 else "on one GPU"
    return f"ZeRO stage {sharding[-1]} over {gpus} GPUs"


def _train_lines(mem: TrainingMemory) -> list[str]:
    bpp = mem.bytes_per_param_total
    state = mem.parts["weights"] + mem.parts["gradients"] + mem.parts["optimizer_states"]
    first = (f"Training state: {bpp:g} bytes/param × {format_count(mem.model.params)} params = "
             f"{_gb(mem.state_bytes_total)}")
    if state < mem.state_bytes_total * (1 - 1e-12):
        first += f"; {_sharding_words(mem.sharding, mem.gpus)}: {_gb(state)} per GPU"
    elif mem.gpus > 1:
        first += f" {_sharding_words(mem.sharding, mem.gpus)}"
    parts = ", ".join(f"{k.replace('_', ' ')} {v:g}" for k, v in mem.bytes_per_param.items())
    return [
        first + f" ({parts} bytes; {mem.optimizer}).",
        f"Activations (sequence {mem.seq_len:,} × micro-batch {mem.micro_batch}, "
        f"{mem.recompute} recomputation): {_gb(mem.parts['activations'])}.",
        f"Runtime overhead: {_gb(mem.parts['runtime_overhead'])}.",
        f"Total: {_gb(mem.per_gpu_bytes)} per GPU.",
    ]


def _train_action(model_id: str, gpus: tuple[int, ...], sharding: str, optimizer: str,
                  recompute: str, seq_len: int, micro_batch: int, tokens: float, mfu: float
                  ) -> tuple[tuple[str, ActionValue], ...]:
    return (("kind", "train"), ("model_id", model_id), ("gpus", gpus), ("sharding", sharding),
            ("optimizer", optimizer), ("recompute", recompute), ("seq_len", seq_len),
            ("micro_batch", micro_batch), ("tokens", tokens), ("mfu", mfu))


def _train_ways_out(st: ClusterState, model: ModelSpec, gpus: tuple[int, ...], sharding: str,
                    optimizer: str, recompute: str, seq_len: int, micro_batch: int,
                    tokens: float, mfu: float) -> list[WayOut]:
    system = st.system
    hw = system.gpu
    count = system.gpu_count
    out: list[WayOut] = []

    def way(label: str, text: str, m: ModelSpec, pick: tuple[int, ...], mem: TrainingMemory,
            shard: str, opt: str, rec: str) -> WayOut:
        ok = _fits_now(st, pick, mem.per_gpu_bytes, exclusive=True)
        state_per_gpu = mem.state_bytes
        return WayOut(
            label=label,
            text=f"{text}: {_gb(mem.per_gpu_bytes)} per GPU (state {_gb(state_per_gpu)} + "
            f"activations {_gb(mem.parts['activations'])} + overhead "
            f"{_gb(mem.parts['runtime_overhead'])}) on {_gpu_list(pick)}"
            + ("" if ok else "; other jobs must stop first") + ".",
            per_gpu_bytes=mem.per_gpu_bytes, fits_now=ok,
            action=_train_action(m.id, pick, shard, opt, rec, seq_len, micro_batch, tokens, mfu))

    same = _train_memory(model, hw, len(gpus), sharding, optimizer, recompute, seq_len,
                         micro_batch)
    if same.fits:  # it fits idle GPUs: other GPUs may be free
        pick = _pick_gpus(st, len(gpus), gpus, exclusive=True)
        if pick != gpus and _fits_now(st, pick, same.per_gpu_bytes, exclusive=True):
            out.append(way("Other GPUs", f"The same job on {_gpu_list(pick)}, which are free",
                           model, pick, same, sharding, optimizer, recompute))

    one = _train_memory(model, hw, 1, "zero3", optimizer, recompute, seq_len, micro_batch)
    need = min_gpus_to_train(one)
    if need is not None and need <= count:
        counts = sorted({max(need, 2), count})
        for n in counts:
            if n == len(gpus) and sharding == "zero3":
                continue
            pick = _pick_gpus(st, n, gpus, exclusive=True)
            mem = _train_memory(model, hw, n, "zero3", optimizer, recompute, seq_len,
                                micro_batch)
            if mem.fits:
                least = " (the fewest that fit)" if n == need and n != count else ""
                out.append(way(f"{n} GPUs with ZeRO-3", f"{n} GPUs with ZeRO-3{least}", model,
                               pick, mem, "zero3", optimizer, recompute))
    else:
        fixed_words = (f"its activations alone ({_gb(one.parts['activations'])} per GPU at "
                       f"sequence {seq_len:,}) do not fit one GPU; it needs tensor and pipeline "
                       f"parallelism across more GPUs than one {system.id} has"
                       if need is None else f"it needs at least {need} GPUs, more than one "
                       f"{system.id} has (a multi-server cluster)")
        out.append(WayOut(
            label="More GPUs than this system has",
            text=f"Even sharded with ZeRO-3 over all {count} GPUs it does not fit: "
            f"{fixed_words}.",
            per_gpu_bytes=_train_memory(model, hw, count, "zero3", optimizer, recompute,
                                        seq_len, micro_batch).per_gpu_bytes,
            fits_now=False, action=()))

    if optimizer in ("adam", "adamw"):
        mem = _train_memory(model, hw, len(gpus), sharding, "adam-8bit", recompute, seq_len,
                            micro_batch)
        if mem.fits:
            out.append(way("8-bit Adam", f"8-bit Adam moments ({mem.bytes_per_param_total:g} "
                           "bytes/param instead of 16)", model, gpus, mem, sharding,
                           "adam-8bit", recompute))

    if recompute != "full":
        mem = _train_memory(model, hw, len(gpus), sharding, optimizer, "full", seq_len,
                            micro_batch)
        if mem.fits:
            out.append(way("Full recomputation", "Full activation recomputation (about a "
                           "third more compute: 8 instead of 6 FLOPs per parameter per token)",
                           model, gpus, mem, sharding, optimizer, "full"))

    for other in sorted(list_models(), key=lambda m: -m.params):
        if other.params >= model.params or seq_len > other.max_context:
            continue
        mem = _train_memory(other, hw, len(gpus), sharding, optimizer, recompute, seq_len,
                            micro_batch)
        if mem.fits:
            out.append(way("A smaller model", f"{other.name} ({format_count(other.params)} "
                           "params)", other, gpus, mem, sharding, optimizer, recompute))
            break
    return out


DEFAULT_SEQ_LEN = 4096


def launch_training(
    state: ClusterState | Mapping[str, object],
    model_id: str = "llama-3.1-8b",
    gpus: Sequence[int] | int = (0,),
    sharding: str = "none",
    tokens: float = DEFAULT_TOKENS,
    mfu: float = DEFAULT_MFU,
    optimizer: str = "adam",
    recompute: str = "selective",
    seq_len: int | None = None,
    micro_batch: int = 1,
) -> ActionResult:
    """Launch a training job of ``model_id`` on ``gpus`` for a budget of ``tokens`` tokens.

    ``seq_len`` defaults to 4,096 tokens, or the model's maximum context if that is shorter.

    Mixed-precision training (bf16 maths, 16 bytes of state per parameter with Adam), state
    sharded by ``sharding`` ('none', 'zero1', 'zero2', 'zero3') over the GPUs, speed from
    ``mfu`` against the GPUs' dense bf16 peak. Refused at submission, with the arithmetic and
    the ways out, if the memory per GPU exceeds what is free on any of its GPUs, or if any
    of its GPUs runs another job (training gets its GPUs to itself).
    """
    st = _settle(_check_state(state))
    system = st.system
    model = _check_model(model_id)
    idx = _check_gpu_indexes(gpus, system)
    shard = validate.choice(sharding, "sharding", SHARDINGS)
    opt = validate.choice(optimizer, "optimizer", OPTIMIZERS)
    rec = validate.choice(recompute, "recompute", RECOMPUTE)
    if seq_len is None:
        seq_len = min(DEFAULT_SEQ_LEN, model.max_context)
    seq = validate.integer(seq_len, "seq_len", label="Sequence length", maximum=model.max_context)
    mb = validate.integer(micro_batch, "micro_batch", label="Micro-batch", maximum=1024)
    budget = validate.number(tokens, "tokens", label="Token budget", minimum=1.0,
                             allow_minimum=True, maximum=1e15)
    eff = validate.fraction(mfu, "mfu", label="MFU")
    if eff > 0.95:
        raise EngineError("MFU above 95 % is not achievable; 35-55 % is good for large runs.",
                          "mfu")
    _run_inputs(model.id, budget, len(idx), system.gpu.id, eff, rec)  # validates the run length
    mem = _train_memory(model, system.gpu, len(idx), shard, opt, rec, seq, mb)
    job = Job(id=f"job-{st.next_job}", kind="train", model_id=model.id, gpus=idx,
              bytes_per_gpu=mem.per_gpu_bytes, status="running",
              started_seconds=st.clock_seconds, sharding=shard, optimizer=opt, recompute=rec,
              seq_len=seq, micro_batch=mb, tokens=budget, mfu=eff)
    lines = _train_lines(mem)
    where = _gpu_list(idx)
    bad_gpu, comparison = _memory_verdict(st, idx, mem.per_gpu_bytes)
    lines.append(comparison[0].upper() + comparison[1:] + ".")
    if bad_gpu is not None:
        free = st.free_bytes()[bad_gpu]
        state_here = mem.state_bytes
        if state_here > free:
            why = (f"the training state alone, {mem.bytes_per_param_total:g} bytes/param × "
                   f"{format_count(model.params)} params = {_gb(mem.state_bytes_total)}"
                   + (f" ({_gb(state_here)} per GPU)" if state_here < mem.state_bytes_total
                      else "")
                   + f", is more than the {_gb(free)} free on GPU {bad_gpu}")
        else:
            why = f"it needs {comparison}"
        message = (f"Refused before it starts: training {model.name} on {where}: {why}. "
                   "Out of memory is decided by arithmetic, so retrying cannot help.")
        ways = _train_ways_out(st, model, idx, shard, opt, rec, seq, mb, budget, eff)
        return _refuse(st, job, message, lines, ways, mem.assumptions)
    holder = _busy_with_any(st, idx)
    if holder is not None:
        message = (f"Refused: a training job needs its GPUs to itself, and "
                   f"{_gpu_list(tuple(sorted(set(holder.gpus) & set(idx))))} "
                   f"{'runs' if len(set(holder.gpus) & set(idx)) == 1 else 'run'} {holder.id}; "
                   "stop it or choose other GPUs.")
        ways = _train_ways_out(st, model, idx, shard, opt, rec, seq, mb, budget, eff)
        return _refuse(st, job, message, lines, ways, mem.assumptions)
    run = _run_inputs(model.id, budget, len(idx), system.gpu.id, eff, rec)
    lines.append(f"Speed: {len(idx)} × {run.peak_flops_per_s / 1e12:,.1f} TFLOP/s × {eff:.0%} "
                 f"MFU / ({run.flops_per_token_factor:g} × {format_count(model.params)}) = "
                 f"{run.steady_tokens_per_s:,.0f} tokens/s; about "
                 f"{format_seconds(run.total_seconds)} for "
                 f"{format_count(budget)} tokens.")
    message = (f"{job.id}: training {model.name} on {where}: {_gb(mem.per_gpu_bytes)} of "
               f"{_gb(mem.capacity_bytes)} per GPU; {format_count(budget)} tokens in about "
               f"{format_seconds(run.total_seconds)}.")
    return _accept(st, job, message, lines, (*mem.assumptions, *run.assumptions))


# ----------------------------------------------------------------------- from_dict checks


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
        _expect(used <= cap, f"running jobs hold {_gb(used)} on GPU {g}, more than its "
                f"{_gb(cap)}.")
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
        b = validate.integer(raw.get("batch"), "batch", maximum=4096)
        mem = _serve_memory(model, hw, wf, ctx, b, len(idx))
        return Job(id=job_id, kind=kind, model_id=model.id, gpus=idx,
                   bytes_per_gpu=mem.per_gpu_bytes, status=status, started_seconds=started,
                   ended_seconds=ended, weight_format=wf, context_tokens=ctx, batch=b)
    shard = validate.choice(raw.get("sharding"), "sharding", SHARDINGS)
    opt = validate.choice(raw.get("optimizer"), "optimizer", OPTIMIZERS)
    rec = validate.choice(raw.get("recompute"), "recompute", RECOMPUTE)
    seq = validate.integer(raw.get("seq_len"), "seq_len", maximum=model.max_context)
    mb = validate.integer(raw.get("micro_batch"), "micro_batch", maximum=1024)
    budget = validate.number(raw.get("tokens"), "tokens", minimum=1.0, allow_minimum=True,
                             maximum=1e15)
    eff = validate.fraction(raw.get("mfu"), "mfu")
    _expect(eff <= 0.95, "MFU above 95 %.")
    _run_inputs(model.id, budget, len(idx), hw.id, eff, rec)
    tmem = _train_memory(model, hw, len(idx), shard, opt, rec, seq, mb)
    if status == "finished":
        total = _run_inputs(model.id, budget, len(idx), hw.id, eff, rec).total_seconds
        assert ended is not None
        _expect(math.isclose(ended - started, total, rel_tol=1e-9, abs_tol=1e-6),
                f"finished job {job_id} has the wrong end time.")
    return Job(id=job_id, kind=kind, model_id=model.id, gpus=idx,
               bytes_per_gpu=tmem.per_gpu_bytes, status=status, started_seconds=started,
               ended_seconds=ended, sharding=shard, optimizer=opt, recompute=rec, seq_len=seq,
               micro_batch=mb, tokens=budget, mfu=eff)



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
