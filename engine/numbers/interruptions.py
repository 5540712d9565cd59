"""Interruptions a training run should expect, from a published rate per GPU-day.

A synchronous training job stops when any one of its GPUs, hosts, links or switches fails,
so the interruptions it meets grow with the GPUs it spans and the days it runs. The rate is
the one Meta observed on 16,384 H100s (data/efficiency.toml [reliability]); applied to
another run it assumes failures scale with GPU-days, as independent parts' failures do, and
arrive as a Poisson process.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.numbers.catalog.efficiency import InterruptionRecord, interruption_record
from engine.numbers.records import Record
from engine.numbers.units import SECONDS_PER_DAY


@dataclass(frozen=True, slots=True)
class Interruptions(Record):
    """``expected``: interruptions a run of ``gpus`` GPUs for ``seconds`` should meet (the
    Poisson mean); ``chance_of_any``: 1 - exp(-expected); ``hours_between``: the mean time
    between them, hours; ``rate_per_gpu_day``: the rate used, from ``observed``."""

    gpus: int
    seconds: float
    expected: float
    chance_of_any: float
    hours_between: float
    rate_per_gpu_day: float
    observed: InterruptionRecord


def run_interruptions(gpus: int, seconds: float) -> Interruptions:
    """The interruptions a training run of ``gpus`` GPUs lasting ``seconds`` should expect at
    the catalogue's observed rate."""
    seen = interruption_record()
    rate = seen.interruptions / (seen.days * seen.gpus)
    per_day = rate * gpus
    expected = per_day * seconds / SECONDS_PER_DAY
    return Interruptions(gpus, seconds, expected, 1.0 - math.exp(-expected), 24.0 / per_day,
                         rate, seen)
