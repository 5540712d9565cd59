"""The job log and the bookkeeping that writes to it: appending entries (the oldest dropped
beyond MAX_LOG_ENTRIES), trimming ended jobs beyond MAX_JOBS, and settling the clock (training
jobs whose run has ended are marked finished, their memory freed, and logged).
"""

from __future__ import annotations

from dataclasses import replace

from engine.lesson.cluster.models import model_named
from engine.lesson.cluster.state import (
    MAX_JOBS,
    MAX_LOG_ENTRIES,
    ClusterState,
    Job,
    LogEntry,
    training_seconds,
)
from engine.lesson.cluster.words import gpu_list
from engine.words.format import format_count, format_seconds


def with_log(state: ClusterState, *entries: LogEntry) -> ClusterState:
    """``state`` with ``entries`` appended to its log (the oldest dropped beyond
    MAX_LOG_ENTRIES)."""
    log = (*state.log, *entries)
    return replace(state, log=log[-MAX_LOG_ENTRIES:])


def trim_jobs(jobs: tuple[Job, ...]) -> tuple[Job, ...]:
    """``jobs`` less the oldest ended ones beyond MAX_JOBS (running jobs are always kept)."""
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


def settle(state: ClusterState) -> ClusterState:
    """Mark training jobs whose run has ended by the clock as finished (memory freed)."""
    jobs = list(state.jobs)
    entries: list[LogEntry] = []
    for i, j in enumerate(jobs):
        if j.kind != "train" or not j.running:
            continue
        end = j.started_seconds + training_seconds(state, j)
        if end <= state.clock_seconds:
            jobs[i] = replace(j, status="finished", ended_seconds=end)
            model = model_named(j.model_id)
            entries.append(LogEntry(
                end, "finished",
                f"{j.id} finished: {model.name} trained on {format_count(j.tokens)} tokens in "
                f"{format_seconds(end - j.started_seconds)}; {gpu_list(j.gpus)} freed."))
    if not entries:
        return state
    entries.sort(key=lambda e: e.time_seconds)
    return with_log(replace(state, jobs=tuple(jobs)), *entries)
