"""When simulated requests arrive at a server.

Closed loop at concurrency N: N requests at time 0, then a new one each time one finishes
(the simulation issues those, :mod:`engine.numbers.load.simulate`). Open loop at a rate of
R requests/s: a Poisson process, the gaps between arrivals exponential with mean 1/R, drawn
from a seeded ``random.Random`` (as vLLM's benchmark_serving draws them at
``--request-rate``).
"""

from __future__ import annotations

import random


def poisson_arrivals(rng: random.Random, rate_per_s: float, count: int) -> tuple[float, ...]:
    """``count`` arrival times (s) of a Poisson process of ``rate_per_s``, the first after
    one gap from 0."""
    t = 0.0
    out = []
    for _ in range(count):
        t += rng.expovariate(rate_per_s)
        out.append(t)
    return tuple(out)
