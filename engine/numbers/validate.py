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
import re
from collections.abc import Iterable, Mapping
from typing import TypeVar

from engine.numbers.errors import EngineError

# Far beyond any real workload (1e30 FLOPs is ~100,000 x the largest training runs),
# yet small enough that products of two such values stay finite in a float.
HUGE = 1e30


# Shorthand as practitioners type counts: a suffix is a power of 1,000, never of 1,024 (8k
# tokens are 8,000 tokens; 128K is 128,000). Lower-case m, b and t are refused: milli, bits?
SHORTHAND_EXPONENTS = {"k": 3, "K": 3, "M": 6, "B": 9, "T": 12}
SHORTHAND_WORDS = "it may end in k, M, B or T for thousand, million, billion, trillion: 8k is 8,000"
_SUFFIXED = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))\s*([A-Za-z]+)")


def shorthand_value(text: str) -> float | None:
    """The number ``text`` writes with a suffix ('8k' -> 8000.0, '1.5M' -> 1500000.0), or
    None when it is not written that way (plain digits included). The suffix becomes a decimal exponent before the
    text is read, so '1.1k' is exactly 1100."""
    match = _SUFFIXED.fullmatch(text.strip().replace(",", "").replace("_", ""))
    if match is None or match.group(2) not in SHORTHAND_EXPONENTS:
        return None
    return float(f"{match.group(1)}e{SHORTHAND_EXPONENTS[match.group(2)]}")


def to_float(value: object, field: str, label: str, hint: str = "") -> float:
    """A number, or text as typed ('7e9', '7,000,000,000', '8k', '1.5M': see
    :data:`SHORTHAND_EXPONENTS`, powers of 1,000), as a float; an infinity when it is beyond
    any float ('inf', 400 digits: the caller says "too large"). Booleans, words, NaN and
    unknown suffixes ('8kk', '1e', '2m') are refused, the message ending with ``hint`` (e.g.
    the range that makes sense)."""
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
            shorthand = shorthand_value(text)
            if shorthand is None:
                shown = value if len(value) <= 20 else value[:20] + "..."
                # Digits then letters: a shorthand gone wrong, so say which are read.
                why = f" ({SHORTHAND_WORDS})" if re.match(r"[+-]?[\d.]", text) else ""
                raise EngineError(f"{label} must be a number, not {shown!r}{why}{end}",
                                  field) from None
            number = shorthand
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
        raise EngineError(f"{label} must be {relation} {show_number(minimum)}.", field)
    if result > maximum:
        raise EngineError(f"{label} must be at most {show_number(maximum)}.", field)
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
    raise EngineError(_unknown(value, label.lower(), allowed), field)


T = TypeVar("T")


def lookup(value: object, table: Mapping[str, T], what: str, field: str) -> T:
    """``table[value]`` when ``value`` is one of its keys (a catalogue id, a format's name);
    otherwise EngineError 'Unknown {what} ...; choose one of: {the keys}.' for ``field``."""
    if isinstance(value, str) and value in table:
        return table[value]
    raise EngineError(_unknown(value, what, list(table), cut=""), field)


def _unknown(value: object, what: str, allowed: list[str], cut: str = "...") -> str:
    """'Unknown {what} 'x'; choose one of: ...', or 'Choose a {what}: ...' when none was given
    (a missing or null value: Python's 'None' means nothing to a reader)."""
    choices = ", ".join(allowed)
    if value is None or value == "":
        return f"Choose a {what}: one of {choices}."
    if isinstance(value, str):
        shown = repr(value if len(value) <= 40 else value[:40] + cut)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        shown = show_number(value)
    else:  # true/false, a list, an object: what kind it was, not Python's spelling of it
        shown = "true or false" if isinstance(value, bool) else "a " + type(value).__name__
        return f"Unknown {what} ({shown}); choose one of: {choices}."
    return f"Unknown {what} {shown}; choose one of: {choices}."


def show_number(x: float) -> str:
    """A number as a reader reads it in a message: 1, 0.01, 8,192, 1,000,000,000, 1e16,
    1e308 (never hundreds of digits), 'a number of 5,000 digits' beyond any float, and
    'infinity' for an infinite float, 'NaN (not a number)' for NaN."""
    if isinstance(x, float) and math.isnan(x):
        return "NaN (not a number)"
    if isinstance(x, float) and math.isinf(x):
        return "infinity" if x > 0 else "minus infinity"
    if isinstance(x, int) and x.bit_length() > 1000:  # beyond any float: count its digits
        digits = max(1, int(abs(x).bit_length() * 0.30103) + 1)
        return f"a number of {digits:,} digits"
    if x == math.floor(x) and abs(x) < 1e10:
        return f"{int(x):,}"
    if abs(x) >= 1e10:
        mantissa, _, exponent = f"{x:.3g}".partition("e")
        return f"{mantissa}e{int(exponent)}"
    return f"{x:g}"
