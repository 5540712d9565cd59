"""JSON from untrusted text (a saved state, a pasted config, the browser's inputs), bounded in
size and nesting depth *before* it is parsed.

CPython turns a too-deep document into a RecursionError, but in the browser the WebAssembly
stack overflows first (Pyodide 0.28: about 5,000 nested brackets kill the runtime, 2,000 do
not), so the depth is measured with a linear scan that recurses nowhere.
"""

from __future__ import annotations

import json

from engine.numbers.errors import EngineError

DEFAULT_MAX_DEPTH = 64


def nesting_depth(text: str) -> int:
    """The deepest nesting of [ and { in ``text``, brackets inside JSON strings not counted."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def loads(
    text: str,
    *,
    what: str,
    field: str,
    max_chars: int,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> object:
    """``json.loads(text)`` once ``text`` is at most ``max_chars`` long and ``max_depth`` deep.

    ``what`` names the thing for the reader ("The saved dgx-1 state"); every refusal is an
    EngineError on ``field`` that says what was wrong.
    """
    if len(text) > max_chars:
        raise EngineError(
            f"{what} is too long to be real ({len(text):,} characters; at most {max_chars:,}).",
            field,
        )
    if nesting_depth(text) > max_depth:
        raise EngineError(
            f"{what} is nested too deeply to be real (more than {max_depth} levels).", field
        )
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise EngineError(f"{what} is not valid JSON.", field) from None


def json_kind(value: object) -> str:
    """What a parsed JSON value is, in words for a refusal ("not an object", "not text")."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "text"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    return "a number"
