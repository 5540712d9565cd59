"""The simulated dgx-1: eight GPUs, the jobs on them, and a job log.

State is immutable (frozen dataclasses and tuples) and every action is a pure function
that returns a new state; the browser keeps ``state.to_dict()`` in the page (and in
``sessionStorage``) and sends it back with the next action, so :func:`state_from_dict`
checks it as untrusted input.

Rules of the simulation (each stated where it applies):

- A job is admitted or refused **at submission**, by arithmetic: its memory per GPU
  (from :func:`engine.numbers.memory.serving_memory` / :func:`engine.numbers.memory.training_memory`) must
  fit in the memory still free on every GPU it asks for. A refusal changes nothing but the
  log, and the same request is refused again with the same arithmetic.
- A training job gets its GPUs to itself (as a batch scheduler allocates them); serving
  jobs may share a GPU with other serving jobs when the memory allows.
- Training progresses in simulated time (:func:`advance`) as :mod:`engine.numbers.training_run`
  models it (start-up, ramp, checkpoint pauses); its GPUs show that run's utilisation.
  A finished training job frees its memory.
- A serving job holds its memory until stopped; with no requests sent to it, its GPU
  shows 0 % utilisation (idle, waiting for requests).

Units: bytes (GB = 10^9 bytes), seconds of simulated time, tokens.

The package, one subject a module, each importing only those before it in this list:
:mod:`~engine.lesson.cluster.models` (the models jobs name, by id),
:mod:`~engine.lesson.cluster.words` (how messages name GPUs),
:mod:`~engine.lesson.cluster.sizing` (a job's memory and run from its settings alone),
:mod:`~engine.lesson.cluster.state` (constants, records, values derived at the clock),
:mod:`~engine.lesson.cluster.log` (the log and the clock's bookkeeping),
:mod:`~engine.lesson.cluster.checks` (action arguments),
:mod:`~engine.lesson.cluster.from_dict` (a state sent back by the browser),
:mod:`~engine.lesson.cluster.admission` (the rules serving and training share),
:mod:`~engine.lesson.cluster.serving` (:func:`deploy`),
:mod:`~engine.lesson.cluster.training` (:func:`launch_training`) and
:mod:`~engine.lesson.cluster.actions` (the other actions). Code outside the package imports
only ``engine.lesson.cluster`` and the names below.
"""

from __future__ import annotations

from engine.lesson.cluster.actions import (
    advance,
    new_cluster,
    reset,
    set_traffic,
    stop,
    try_way_out,
)
from engine.lesson.cluster.checks import SERVE_BATCH
from engine.lesson.cluster.from_dict import state_from_dict
from engine.lesson.cluster.models import model_named
from engine.lesson.cluster.serving import deploy
from engine.lesson.cluster.sizing import serve_kv_blocks
from engine.lesson.cluster.state import (
    CURVE_BESIDE,
    DEFAULT_TOKENS,
    MAX_LOG_ENTRIES,
    TRAFFIC_RATES,
    ActionResult,
    ActionValue,
    ClusterState,
    GpuView,
    Job,
    JobProgress,
    LogEntry,
    Traffic,
    WayOut,
    job_progress,
)
from engine.lesson.cluster.training import DEFAULT_SEQ_LEN, launch_training
from engine.lesson.cluster.words import gpu_list
from engine.numbers.compute import DEFAULT_MFU

__all__ = [
    "CURVE_BESIDE",
    "DEFAULT_MFU",
    "DEFAULT_SEQ_LEN",
    "DEFAULT_TOKENS",
    "MAX_LOG_ENTRIES",
    "SERVE_BATCH",
    "TRAFFIC_RATES",
    "ActionResult",
    "ActionValue",
    "ClusterState",
    "GpuView",
    "Job",
    "JobProgress",
    "LogEntry",
    "Traffic",
    "WayOut",
    "advance",
    "deploy",
    "gpu_list",
    "job_progress",
    "launch_training",
    "model_named",
    "new_cluster",
    "reset",
    "serve_kv_blocks",
    "set_traffic",
    "state_from_dict",
    "stop",
    "try_way_out",
]
