"""ceil_div: the fewest whole units that cover an amount."""

from __future__ import annotations

import math

from engine.numbers.rounding import ceil_div


def test_counts_round_up_and_exact_fits_do_not() -> None:
    assert ceil_div(80, 8) == 10
    assert ceil_div(81, 8) == 11
    assert ceil_div(128.5e9, 80e9) == 2  # Llama 3.1 8B's training state on 80 GB GPUs


def test_large_integers_stay_exact_where_float_division_would_not() -> None:
    amount, per_each = 10**20 + 1, 10**10
    assert ceil_div(amount, per_each) == 10**10 + 1
    assert math.ceil(amount / per_each) == 10**10  # what the float route would have said
