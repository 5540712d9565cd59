"""Whole counts: how many GPUs, servers, stages or steps it takes to cover an amount."""

from __future__ import annotations


def ceil_div(amount: float, per_each: float) -> int:
    """The fewest whole ``per_each`` that cover ``amount`` (both positive, in the same unit).

    Floor division of the negatives, not ``math.ceil(amount / per_each)``: for integers it is
    exact however large they are, and for floats it rounds the way every count here always has.
    """
    return int(-(-amount // per_each))
