"""Unit constants: GB = 10^9 bytes, TB = 10^12 bytes, GiB = 2^30 bytes, TERA = 10^12, seconds per
hour, day and year. The numbers layer computes in bytes, FLOPs and seconds with these."""

from __future__ import annotations

KB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12
GiB = 2**30
TERA = 1e12
PETA = 1e15
SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86400.0
SECONDS_PER_YEAR = 365.25 * SECONDS_PER_DAY
HOURS_PER_YEAR = SECONDS_PER_YEAR / SECONDS_PER_HOUR
