"""The formatting of quantities for people: one formatter per quantity.

GB = 10^9 bytes, TB/s = 10^12 bytes/s, TFLOP/s = 10^12 FLOP/s throughout; GiB only where named.
"""

from __future__ import annotations

from engine.numbers.units import (
    GB,
    KB,
    MB,
    SECONDS_PER_DAY,
    SECONDS_PER_YEAR,
    TB,
    TERA,
)


def format_bytes(n_bytes: float) -> str:
    """'16.06 GB', '131.1 kB', '1.20 TB' in powers of 1000."""
    for unit, size in (("TB", TB), ("GB", GB), ("MB", MB), ("kB", KB)):
        if abs(n_bytes) >= size:
            return f"{n_bytes / size:,.{_decimals(n_bytes / size)}f} {unit}"
    return f"{n_bytes:,.0f} bytes"


def format_GB(n_bytes: float) -> str:
    """Always in GB, four significant figures at most, trailing zeros dropped.

    '16.06 GB', '128.5 GB', '80 GB', '1.07 GB', '0.151 GB', '1,440 GB'.
    """
    value = n_bytes / GB
    magnitude = abs(value)
    decimals = 0 if magnitude >= 1000 else 1 if magnitude >= 100 else 2 if magnitude >= 1 else 3
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text} GB"


def format_count(n: float) -> str:
    """'8.03 billion', '405 billion', '1.2 trillion', '4,096'."""
    for name, size in (("trillion", 1e12), ("billion", 1e9), ("million", 1e6)):
        if abs(n) >= size:
            return f"{n / size:,.{_decimals(n / size)}f} {name}"
    return f"{n:,.0f}"


def format_flops(flops: float) -> str:
    """A FLOP count in scientific notation: '3.80e+25 FLOPs' reads better as '3.8 x 10^25'."""
    if abs(flops) < 1e6:
        return f"{flops:,.0f} FLOPs"
    mantissa, exponent = f"{flops:.2e}".split("e")
    return f"{mantissa} × 10^{int(exponent)} FLOPs"


def format_bandwidth(bytes_per_s: float) -> str:
    """Bytes per second: TB/s from 1 TB/s, else GB/s; four significant figures at most,
    whole numbers from 1,000: '3.35 TB/s', '900 GB/s', '614.4 GB/s', '26.8 TB/s',
    '3,430 TB/s'."""
    value, unit = (bytes_per_s / TB, "TB/s") if abs(bytes_per_s) >= TB else (bytes_per_s / GB, "GB/s")
    text = f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"
    return f"{text} {unit}"


def format_tokens_per_s(tokens_per_s: float) -> str:
    """'209 tokens/s', '3.2 tokens/s'."""
    if tokens_per_s >= 10:
        return f"{tokens_per_s:,.0f} tokens/s"
    return f"{tokens_per_s:.1f} tokens/s"


def three_figures(value: float) -> str:
    """About three significant figures, thousands grouped: '989', '26.1', '1,033', '0.99'."""
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}".rstrip("0").rstrip(".")
    return f"{value:.2f}".rstrip("0").rstrip(".")


def format_percent(share: float) -> str:
    """A share (0.4 for 40 %) as a percentage, for every share the lesson writes (MFU,
    utilisation, progress, tolerances, shares of a peak or of a step).

    The rule: about three significant figures, as :func:`three_figures` rounds the
    percentage (whole from 100 %, thousands grouped; one decimal from 10 %; two decimals
    below), trailing zeros dropped, a space before the sign: '40 %', '66.9 %', '99.7 %',
    '100 %', '150 %', '4.74 %', '5 %', '0.35 %'. Three figures so that a share near a
    threshold (a break-even at 99.7 %) is never rounded onto it. A negative share keeps its
    minus sign: '-12.5 %'.
    """
    pct = share * 100.0
    text = three_figures(abs(pct))
    return f"{'-' if pct < 0 and text != '0' else ''}{text} %"


def format_percent_range(low: float, high: float, between: str = " to ") -> str:
    """Two shares as a range of percentages, each rounded as :func:`format_percent`, the
    sign once at the end: '35 to 55 %', with ``between="–"`` '35–55 %'."""
    return f"{format_percent(low)[:-2]}{between}{format_percent(high)}"


def format_flops_per_byte(flops_per_byte: float) -> str:
    """Arithmetic intensity (FLOPs per byte moved), the roofline's x axis, wherever the
    lesson writes it (a chip's ridge point, a decode step, a workload).

    The rule: about three significant figures, as :func:`three_figures` rounds (whole from
    100, thousands grouped; one decimal from 10; two decimals below), trailing zeros
    dropped: '295 FLOP/byte', '1,033 FLOP/byte', '26.1 FLOP/byte', '18 FLOP/byte',
    '0.93 FLOP/byte'.
    """
    return f"{three_figures(flops_per_byte)} FLOP/byte"


def format_flops_per_s(flops_per_s: float) -> str:
    """A compute rate in the unit that suits it: '989 TFLOP/s', '120 GFLOP/s', '16.2 EFLOP/s'.

    For rates of different sizes side by side (a roofline, a cluster against one chip);
    tables of chips use :func:`format_TFLOP_per_s`, one unit for every row.
    """
    for scale, unit in ((1e18, "EFLOP/s"), (1e15, "PFLOP/s"), (1e12, "TFLOP/s"), (1e9, "GFLOP/s")):
        if flops_per_s >= scale:
            return f"{three_figures(flops_per_s / scale)} {unit}"
    return f"{three_figures(flops_per_s / 1e6)} MFLOP/s"


def format_TFLOP_per_s(flops_per_s: float) -> str:
    """A chip's compute rate in TFLOP/s with one decimal, one unit for every row of a table of
    chips: '989.4 TFLOP/s', '114.7 TFLOP/s'."""
    return f"{flops_per_s / TERA:,.1f} TFLOP/s"


def format_usd(usd: float) -> str:
    """US dollars: '$270,000', '$12.29', '$0.162', '$0.0042'."""
    a = abs(usd)
    if a >= 100:
        return f"${usd:,.0f}"
    if a >= 1:
        return f"${usd:,.2f}"
    if a == 0:
        return "$0"
    return f"${usd:.3g}"


def format_elapsed(seconds: float) -> str:
    """A clock reading: '0 s' before it starts, otherwise :func:`format_seconds`."""
    return "0 s" if seconds <= 0 else format_seconds(seconds)


def plural(n: int, word: str) -> str:
    """A count and its noun: '1 GPU', '8 GPUs', '1,024 GPUs'."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def format_seconds(seconds: float) -> str:
    """Time in the unit a person would use: '4.8 ms', '12 s', '3.2 hours', '71 days', '6,300 years'."""
    s = abs(seconds)
    if s < 1e-3:
        return f"{seconds * 1e6:,.{_decimals(seconds * 1e6)}f} µs"
    if s < 1:
        return f"{seconds * 1e3:,.{_decimals(seconds * 1e3)}f} ms"
    if s < 120:
        return f"{seconds:,.{_decimals(seconds)}f} s"
    if s < 2 * 3600:
        return f"{seconds / 60:,.{_decimals(seconds / 60)}f} minutes"
    if s < 2 * SECONDS_PER_DAY:
        return f"{seconds / 3600:,.{_decimals(seconds / 3600)}f} hours"
    if s < 2 * SECONDS_PER_YEAR:
        return f"{seconds / SECONDS_PER_DAY:,.{_decimals(seconds / SECONDS_PER_DAY)}f} days"
    return f"{seconds / SECONDS_PER_YEAR:,.{_decimals(seconds / SECONDS_PER_YEAR)}f} years"


def _decimals(value: float) -> int:
    """Three significant figures for small values, none past 100."""
    v = abs(value)
    if v >= 100:
        return 0
    if v >= 10:
        return 1
    return 2


def a_or_an(n: int) -> str:
    """'a' or 'an' before the whole number ``n`` written in figures, as it is read aloud:
    an 8,192-token context, an 11,000-word page, a 1,024-token prompt, a 128,000-token one.

    The number is read by its leading group of thousands: "an" when that group is read
    starting with a vowel sound (eight, eighty..., eight hundred..., eleven, eighteen).
    """
    leading = abs(int(n))
    while leading >= 1000:
        leading //= 1000
    return "an" if str(leading).startswith("8") or leading in (11, 18) else "a"


def format_ratio(ratio: float, whole_from: float = 100) -> str:
    """GPU side / CPU side: '4.3×' (whole from ``whole_from`` up: '148×'), or for a ratio
    under 1 how much more the CPUs have."""
    if ratio >= 1:
        return f"{ratio:,.1f}×" if ratio < whole_from else f"{ratio:,.0f}×"
    return f"{ratio:.2g}× (the CPUs have {1 / ratio:,.1f}× more)"
