"""Input checks shared by every public entry point.

Each function takes a raw value (a number, or text typed by a reader), checks it and
returns a clean ``float`` or ``int``, or raises :class:`~engine.numbers.errors.EngineError`
naming the field. NaN, infinity, booleans and non-numeric text never get through.

The lesson's own quantities (a context, a GPU count, an MFU...) are checked against their
one declaration in :mod:`engine.numbers.quantities`, whose messages state the sensible range;
the functions here guard the arithmetic's other arguments.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TypeVar

from engine.numbers.errors import EngineError

# Far beyond any real workload (1e30 FLOPs is ~100,000 x the largest training runs),
# yet small enough that products of two such values stay finite in a float.
HUGE = 1e30


def to_float(value: object, field: str, label: str, hint: str = "") -> float:
    """A number, or text as typed ('7e9', '7,000,000,000'), as a float; an infinity when it
    is beyond any float ('inf', 400 digits: the caller says "too large"). Booleans, words and
    NaN are refused, the message ending with ``hint`` (e.g. the range that makes sense)."""
    end = f": {hint}" if hint else "."
    if isinstance(value, bool) or value is None:
        raise EngineError(f"{label} must be a number{end}", field)
    if isinstance(value, str):
        text = value.strip().replace(",", "").replace("_", "")
        if not text:
            raise EngineError(f"{label} is empty: {hint or 'type a number.'}", field)
        try:
            number = float(text)
        except ValueError:
            shown = value if len(value) <= 20 else value[:20] + "..."
            raise EngineError(f"{label} must be a number, not {shown!r}{end}", field) from None
    elif isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:  # an int beyond any float
            number = math.inf if value > 0 else -math.inf
    else:
        raise EngineError(f"{label} must be a number{end}", field)
    if math.isnan(number):
        raise EngineError(f"{label} must be a number, not NaN{end}", field)
    return number


def _parse(value: object, field: str, label: str) -> float:
    number = to_float(value, field, label)
    if math.isinf(number):  # "inf", or 400 digits
        raise EngineError(f"{label} is too {'large' if number > 0 else 'small'}.", field)
    return number


def number(
    value: object,
    field: str,
    *,
    label: str | None = None,
    minimum: float = 0.0,
    maximum: float = HUGE,
    allow_minimum: bool = False,
) -> float:
    """A finite float above ``minimum`` (or equal to it if ``allow_minimum``) and at most ``maximum``."""
    label = label or field.replace("_", " ").capitalize()
    result = _parse(value, field, label)
    if result < minimum or (result == minimum and not allow_minimum):
        relation = "at least" if allow_minimum else "more than"
        raise EngineError(f"{label} must be {relation} {_show(minimum)}.", field)
    if result > maximum:
        raise EngineError(f"{label} must be at most {_show(maximum)}.", field)
    return result


def integer(
    value: object,
    field: str,
    *,
    label: str | None = None,
    minimum: int = 1,
    maximum: int = 10**15,
) -> int:
    """A whole number between ``minimum`` and ``maximum`` inclusive."""
    label = label or field.replace("_", " ").capitalize()
    result = _parse(value, field, label)
    if result != math.floor(result):
        raise EngineError(f"{label} must be a whole number.", field)
    if result < minimum:
        raise EngineError(f"{label} must be at least {minimum:,}.", field)
    if result > maximum:
        raise EngineError(f"{label} must be at most {maximum:,}.", field)
    return int(result)


def fraction(value: object, field: str, *, label: str | None = None) -> float:
    """A share strictly above 0 and at most 1 (MFU, utilisation), written as 0.4 for 40 %."""
    return number(value, field, label=label, minimum=0.0, maximum=1.0)


def choice(value: object, field: str, options: Iterable[str], *, label: str | None = None) -> str:
    """One of ``options``; the message lists them."""
    label = label or field.replace("_", " ").capitalize()
    allowed = list(options)
    if isinstance(value, str) and value in allowed:
        return value
    shown = str(value)
    shown = shown if len(shown) <= 40 else shown[:40] + "..."
    raise EngineError(f"Unknown {label.lower()} {shown!r}; choose one of: {', '.join(allowed)}.", field)


T = TypeVar("T")


def lookup(value: object, table: Mapping[str, T], what: str, field: str) -> T:
    """``table[value]`` when ``value`` is one of its keys (a catalogue id, a format's name);
    otherwise EngineError 'Unknown {what} ...; choose one of: {the keys}.' for ``field``."""
    if isinstance(value, str) and value in table:
        return table[value]
    shown = str(value)[:40]
    raise EngineError(f"Unknown {what} {shown!r}; choose one of: {', '.join(table)}.", field)


def _show(x: float) -> str:
    return f"{x:g}" if abs(x) < 1e6 else f"{x:.3g}"
