"""engine/units.py: how numbers are written in the engine's sentences."""

from __future__ import annotations

import pytest

from engine.words.format import a_or_an


@pytest.mark.parametrize(
    ("n", "article"),
    [
        (8_192, "an"),  # eight thousand
        (8, "an"),
        (80_000, "an"),  # eighty thousand
        (800, "an"),  # eight hundred
        (11_000, "an"),  # eleven thousand
        (18_432, "an"),  # eighteen thousand
        (1_024, "a"),  # one thousand
        (4_096, "a"),
        (128_000, "a"),  # a hundred and twenty-eight thousand
        (110, "a"),  # a hundred and ten
        (181, "a"),
        (1, "a"),
        (2_048, "a"),
        (32_768, "a"),
        (8_000_000, "an"),
    ],
)
def test_a_or_an_follows_how_the_number_is_read(n: int, article: str) -> None:
    assert a_or_an(n) == article
