"""The simulation's state and records: its constants (limits, kinds, defaults), the immutable
records (LogEntry, Job, JobProgress, GpuView, ClusterState, WayOut, ActionResult) and the
values derived from them at the cluster's clock (:func:`job_progress`, :func:`training_seconds`).
Every record is a frozen dataclass; every action returns new ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from engine.lesson.cluster.sizing import training_run_inputs
from engine.numbers import quantities
from engine.numbers.catalog import HardwareSpec, SystemSpec, get_system
from engine.numbers.errors import EngineError
from engine.numbers.formats import FormatId
from engine.numbers.records import JsonShape, Record
from engine.numbers.training_choices import Optimizer, Recompute, Sharding
from engine.numbers.training_run import TrainingRunInputs, TrainingSample, training_run_at

STATE_VERSION = 1
KINDS = ("serve", "train")
STATUSES = ("running", "finished", "stopped")
LOG_KINDS = ("info", "accepted", "refused", "finished", "stopped")
MAX_LOG_ENTRIES = 200  # the oldest entries are dropped beyond this
MAX_JOBS = 64  # running jobs are always kept; the oldest ended jobs are dropped beyond this
MAX_CLOCK_SECONDS = 1e15
MAX_TEXT = 1000
DEFAULT_TOKENS = 1e9
MAX_BATCH = int(quantities.DEPLOYMENT_BATCH.maximum)  # requests one deployment may ask for
# The request rates (requests/s) a reader may send to the deployment, one per notch.
TRAFFIC_RATES = (1.0, 2.0, 4.0, 6.0, 8.0, 12.0, 16.0, 20.0, 24.0, 32.0, 48.0, 64.0)
# The set-ups a reader may draw beside the deployment's latency-throughput curve: its weights
# in fp8, tensor parallel over twice its GPUs, the same on a B200 or an H200.
CURVE_BESIDE = ("fp8", "tp2", "b200", "h200")

ActionValue = str | int | float | tuple[int, ...]


# ------------------------------------------------------------------------------ records


@dataclass(frozen=True, slots=True)
class LogEntry(Record):
    """One line of the job log: simulated time (seconds since the cluster started)."""

    time_seconds: float
    kind: str
    message: str

    def __post_init__(self) -> None:
        if self.kind not in LOG_KINDS:
            raise EngineError(f"Log entry kind must be one of: {', '.join(LOG_KINDS)}.", "log")


@dataclass(frozen=True, slots=True)
class Job(Record):
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
    weight_format: FormatId = "bf16"
    context_tokens: int = 0
    batch: int = 0
    sharding: Sharding = "none"
    optimizer: Optimizer = "adam"
    recompute: Recompute = "selective"
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


@dataclass(frozen=True, slots=True)
class JobProgress(Record):
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


@dataclass(frozen=True, slots=True)
class GpuView(Record):
    """One GPU as an operator sees it: memory in use against capacity, and utilisation."""

    index: int
    name: str
    capacity_bytes: float
    used_bytes: float
    free_bytes: float
    utilisation: float
    jobs: tuple[str, ...]
    activity: str


@dataclass(frozen=True, slots=True)
class Traffic(Record):
    """Requests sent to the newest serving job: ``rate_per_s`` (one of
    :data:`TRAFFIC_RATES`), and whether the reader has it ``on``; ``curve_beside``: the
    set-up (one of :data:`CURVE_BESIDE`) drawn beside the deployment's latency-throughput
    curve once the reader has asked for the curve ("" until then, and left out of the JSON)."""

    rate_per_s: float
    on: bool
    curve_beside: str = ""

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"rate_per_s": self.rate_per_s, "on": self.on}
        if self.curve_beside:
            out["curve_beside"] = self.curve_beside
        return out


@dataclass(frozen=True, slots=True)
class ClusterState:
    """The whole simulated system: its clock, its jobs (running and past), its log, and the
    traffic the reader sends to it (None until they first start some)."""

    system_id: str
    clock_seconds: float
    next_job: int
    jobs: tuple[Job, ...]
    log: tuple[LogEntry, ...]
    traffic: Traffic | None = None

    @property
    def system(self) -> SystemSpec:
        return get_system(self.system_id)

    def running_jobs(self) -> tuple[Job, ...]:
        return tuple(j for j in self.jobs if j.running)

    def serving_job(self) -> Job | None:
        """The newest running serving job, the one traffic goes to (None when there is none)."""
        jobs = [j for j in self.running_jobs() if j.kind == "serve"]
        return max(jobs, key=lambda j: int(j.id.removeprefix("job-"))) if jobs else None

    def traffic_rate(self, job: Job) -> float | None:
        """The requests/s arriving at ``job`` (None when the traffic is off or goes to
        another job)."""
        t = self.traffic
        if t is None or not t.on or job.kind != "serve":
            return None
        newest = self.serving_job()
        return t.rate_per_s if newest is not None and newest.id == job.id else None

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

    def gpu_as_found(self, gpus: tuple[int, ...], apart_from: str | None = None
                     ) -> HardwareSpec:
        """The system's GPU as a job on ``gpus`` finds it: its memory that left free on the
        fullest of them by the running jobs other than ``apart_from`` (a job id)."""
        gpu = self.system.gpu
        held = [0.0] * self.system.gpu_count
        for j in self.jobs:
            if j.running and j.id != apart_from:
                for g in j.gpus:
                    held[g] += j.bytes_per_gpu
        most = max(held[g] for g in gpus)
        return replace(gpu, memory_bytes=gpu.memory_bytes - most) if most else gpu

    def progress(self, job: Job) -> JobProgress:
        return job_progress(self, job)

    def gpus(self, busy: Mapping[str, float] | None = None) -> tuple[GpuView, ...]:
        """Per-GPU memory and utilisation, for the operator's bars. ``busy``: job id -> the
        share of time a serving job under traffic is busy (the traffic's simulation, run by
        the caller; such a job's GPUs show it, and its words say the rate arriving)."""
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
                    rate = self.traffic_rate(j)
                    if rate is None:
                        words.append(f"serving {j.id} (idle, waiting for requests)")
                    else:
                        util += (busy or {}).get(j.id, 0.0)
                        words.append(f"serving {j.id} ({rate:g} requests/s arriving)")
            views.append(GpuView(
                index=g, name=sysspec.gpu.name, capacity_bytes=cap, used_bytes=used[g],
                free_bytes=cap - used[g], utilisation=min(util, 1.0),
                jobs=tuple(j.id for j in on), activity="; ".join(words) or "free",
            ))
        return tuple(views)

    def to_dict(self) -> dict[str, object]:
        """Plain JSON values. ``gpus`` and each job's ``progress`` are derived (for drawing);
        :func:`engine.lesson.cluster.from_dict.state_from_dict` reads the dict back,
        recomputing them and the memory of every job. ``traffic`` only once it is set."""
        out: dict[str, object] = {
            "version": STATE_VERSION,
            "system_id": self.system_id,
            "clock_seconds": self.clock_seconds,
            "next_job": self.next_job,
            "gpus": [g.to_dict() for g in self.gpus()],
            "jobs": [{**j.to_dict(), "progress": job_progress(self, j).to_dict()}
                     for j in self.jobs],
            "log": [e.to_dict() for e in self.log],
        }
        if self.traffic is not None:
            out["traffic"] = self.traffic.to_dict()
        return out


@dataclass(frozen=True, slots=True)
class WayOut(Record):
    """A change that would let a refused job run, with its memory per GPU.

    action: the keyword arguments to retry with (``kind`` says which function: 'serve' ->
    :func:`deploy`, 'train' -> :func:`launch_training`). fits_now: it fits the memory free at
    this moment on the GPUs it names (False when other jobs must stop first, or when no
    count of this system's GPUs is enough; the text says which)."""

    JSON = JsonShape(mappings=("action",))

    label: str
    text: str
    per_gpu_bytes: float
    fits_now: bool
    action: tuple[tuple[str, ActionValue], ...]


@dataclass(frozen=True, slots=True)
class ActionResult(Record):
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


# ------------------------------------------------------------------------- derived values


def _job_run(state: ClusterState, job: Job) -> TrainingRunInputs:
    return training_run_inputs(job.model_id, job.tokens, len(job.gpus), state.system.gpu.id,
                               job.mfu, job.recompute, job.seq_len)


def job_progress(state: ClusterState, job: Job) -> JobProgress:
    """Where ``job`` stands at ``state``'s clock (training as engine.numbers.training_run models it)."""
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


def training_seconds(state: ClusterState, job: Job) -> float:
    """How long training ``job`` runs from start to finish on ``state``'s GPUs (seconds)."""
    return _job_run(state, job).total_seconds
