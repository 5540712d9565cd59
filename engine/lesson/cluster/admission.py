"""The admission rules serving and training share: the memory verdict (does the job fit the
memory still free on each of its GPUs), which running job holds a GPU, accepting or refusing
a job (with the rules stated as assumptions), and for the ways out, which GPUs to propose and
whether a job fits them now.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from engine.lesson.cluster.log import trim_jobs, with_log
from engine.lesson.cluster.state import ActionResult, ClusterState, Job, LogEntry, WayOut
from engine.lesson.cluster.words import gpu_list
from engine.words.format import format_GB

_RULES = (
    "Admission by arithmetic: a job's memory per GPU must fit the memory still free on each "
    "of its GPUs, checked before it starts.",
    "A training job gets its GPUs to itself; serving jobs may share a GPU when the memory "
    "allows.",
)


def accept(st: ClusterState, job: Job, message: str, arithmetic: Sequence[str],
            assumptions: Sequence[str]) -> ActionResult:
    """``job`` admitted: added to ``st`` (the next job id taken) and logged as accepted."""
    new = replace(st, jobs=trim_jobs((*st.jobs, job)), next_job=st.next_job + 1)
    new = with_log(new, LogEntry(st.clock_seconds, "accepted", message))
    return ActionResult(accepted=True, message=message, arithmetic=tuple(arithmetic), state=new,
                        job=job, assumptions=(*_RULES, *assumptions))


def refuse(st: ClusterState, job: Job, message: str, arithmetic: Sequence[str],
            ways_out: Sequence[WayOut], assumptions: Sequence[str]) -> ActionResult:
    """``job`` refused: only the log changes; the result carries the job as it would have
    been (status 'refused', no id) and the ways out."""
    refused = replace(job, id="", status="refused")
    new = with_log(st, LogEntry(st.clock_seconds, "refused", message))
    return ActionResult(accepted=False, message=message, arithmetic=tuple(arithmetic),
                        state=new, job=refused, ways_out=tuple(ways_out),
                        assumptions=(*_RULES, *assumptions))


def memory_verdict(st: ClusterState, gpus: tuple[int, ...], per_gpu: float
                    ) -> tuple[int | None, str]:
    """The first GPU on which ``per_gpu`` bytes do not fit, and the comparison in words."""
    cap = st.system.gpu.memory_bytes
    free = st.free_bytes()
    for g in gpus:
        if per_gpu > free[g]:
            held = cap - free[g]
            if held > 0:
                holders = ", ".join(j.id for j in st.running_jobs() if g in j.gpus)
                room = (f"the {format_GB(free[g])} free on GPU {g} ({format_GB(cap)} less {format_GB(held)} "
                        f"held by {holders})")
            else:
                room = f"the {format_GB(free[g])} free on GPU {g}"
            return g, f"{format_GB(per_gpu)} per GPU > {room}"
    return None, f"{format_GB(per_gpu)} per GPU fits on {gpu_list(gpus)}"


def busy_with_training(st: ClusterState, gpus: Sequence[int]) -> Job | None:
    """The running training job that holds one of ``gpus``, if any."""
    for j in st.running_jobs():
        if j.kind == "train" and set(j.gpus) & set(gpus):
            return j
    return None


def busy_with_any(st: ClusterState, gpus: Sequence[int]) -> Job | None:
    """A running job (of either kind) that holds one of ``gpus``, if any."""
    for j in st.running_jobs():
        if set(j.gpus) & set(gpus):
            return j
    return None


def pick_gpus(st: ClusterState, n: int, prefer: Sequence[int], *, exclusive: bool
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


def fits_now(st: ClusterState, gpus: Sequence[int], per_gpu: float, *, exclusive: bool
              ) -> bool:
    """Whether ``per_gpu`` bytes fit the memory free now on each of ``gpus``, none of them
    held by training (or, ``exclusive``, by any job)."""
    free = st.free_bytes()
    blocker = busy_with_any(st, gpus) if exclusive else busy_with_training(st, gpus)
    return blocker is None and all(per_gpu <= free[g] for g in gpus)
