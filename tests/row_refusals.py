"""A reality row's own check, seen from a test: changing one field of a loaded row to a
value it must not take raises an EngineError naming that field."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine.lesson.reality.measurements import Measurement
from engine.numbers.errors import EngineError


def assert_row_refuses(row: Measurement, field: str, value: object) -> None:
    """``row`` with ``field`` set to ``value`` is refused, the error naming ``field``."""
    with pytest.raises(EngineError) as refused:
        replace(row, **{field: value})
    assert refused.value.field == field
