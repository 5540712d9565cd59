"""Prompt and answer lengths of simulated requests: fixed at the mean, drawn from a seeded
``random.Random`` (never the module's global one), or given as a list.

``uniform`` draws whole numbers from 1 to twice the mean; ``normal`` and ``lognormal`` take
a coefficient of variation ``cv`` (the spread as a fraction of the mean, 0.5 by default),
the lognormal's parameters chosen so that its mean and spread are the ones asked for. Every
draw is rounded to a whole token and kept from 1 to ``most`` (a normal's draws below 1 are
raised to 1, which moves its mean a little above the one asked for when cv is large).
"""

from __future__ import annotations

import math
import random
from typing import Literal

LengthDist = Literal["fixed", "uniform", "normal", "lognormal"]
LENGTH_DISTS: tuple[LengthDist, ...] = ("fixed", "uniform", "normal", "lognormal")
DEFAULT_CV = 0.5


def draw_lengths(rng: random.Random, dist: LengthDist, mean: int, count: int, *,
                 cv: float = DEFAULT_CV, most: int) -> tuple[int, ...]:
    """``count`` lengths of mean ``mean`` tokens from ``dist``, each from 1 to ``most``."""
    if dist == "fixed":
        return (min(mean, most),) * count
    if dist == "uniform":
        return tuple(min(rng.randint(1, 2 * mean), most) for _ in range(count))
    if dist == "normal":
        sigma = cv * mean
        return tuple(min(max(round(rng.gauss(mean, sigma)), 1), most) for _ in range(count))
    s2 = math.log(1.0 + cv * cv)
    mu = math.log(mean) - s2 / 2.0
    s = math.sqrt(s2)
    return tuple(min(max(round(rng.lognormvariate(mu, s)), 1), most) for _ in range(count))
