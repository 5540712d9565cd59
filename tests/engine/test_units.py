"""engine/words/format.py: how numbers are written in the engine's sentences."""

from __future__ import annotations

import pytest

from engine.words.format import a_or_an, format_flops_per_byte, format_percent, format_percent_range


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


# Hand-worked: share × 100, then whole from 100, one decimal from 10, two below, trailing
# zeros dropped, a space before the sign.
@pytest.mark.parametrize(
    ("share", "text"),
    [
        (0.4, "40 %"),  # 40.0 -> 40
        (0.669, "66.9 %"),
        (0.3743, "37.4 %"),  # 37.43 -> 37.4
        (0.35549, "35.5 %"),  # 35.549 -> 35.5, not 36
        (0.997, "99.7 %"),  # not rounded onto 100
        (0.99996, "100 %"),  # 99.996 -> 100.0 -> 100
        (0.116, "11.6 %"),
        (0.0474, "4.74 %"),  # below 10: two decimals
        (0.05, "5 %"),  # 5.00 -> 5
        (0.03125, "3.12 %"),  # 3.125 is exact in binary: the half rounds to even
        (0.0035, "0.35 %"),
        (0.00004, "0 %"),  # 0.004 -> 0.00 -> 0
        (1.0, "100 %"),
        (1.5, "150 %"),
        (12.3456, "1,235 %"),  # whole, thousands grouped
        (0.0, "0 %"),
        (-0.125, "-12.5 %"),
        (-0.00001, "0 %"),  # rounds to nothing: no sign
    ],
)
def test_format_percent_rounds_to_about_three_figures(share: float, text: str) -> None:
    assert format_percent(share) == text


def test_format_percent_range_writes_the_sign_once() -> None:
    assert format_percent_range(0.35, 0.55) == "35 to 55 %"
    assert format_percent_range(0.35, 0.55, between="–") == "35–55 %"


# Hand-worked: about three significant figures, as for percentages.
@pytest.mark.parametrize(
    ("flops_per_byte", "text"),
    [
        (295.34, "295 FLOP/byte"),  # whole from 100
        (1032.6, "1,033 FLOP/byte"),  # grouped
        (26.12, "26.1 FLOP/byte"),  # one decimal from 10
        (18.0, "18 FLOP/byte"),  # 18.0 -> 18
        (18.34, "18.3 FLOP/byte"),
        (0.9301, "0.93 FLOP/byte"),  # two decimals below 10
        (1.0, "1 FLOP/byte"),
        (9.996, "10 FLOP/byte"),  # 10.00 -> 10
    ],
)
def test_format_flops_per_byte_rounds_to_about_three_figures(flops_per_byte: float, text: str) -> None:
    assert format_flops_per_byte(flops_per_byte) == text
