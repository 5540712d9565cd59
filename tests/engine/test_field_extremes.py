"""Every widget, every field, every mode, fed extreme values: a message naming an input, or a
result with no "inf", "nan", "None" or Python repr in it. Never an internal failure.

The modes are the choices that change which fields a widget reads (task, mode, a typed
parameter count). The values are what a reader can type or a link can carry: text, empty,
NaN, infinities, 1e-320, 1e308, negative, zero, 400 digits; hypothesis adds any finite float.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.numbers.errors import EngineError
from engine.registry import get_widget, widget_names
from engine.render.options import CUSTOM_MODEL
from engine.render.widget import Widget

EXTREMES = (
    "1e-320", "1e-308", "-1e-308", "0", "-0", "-1", "0.5", "1e15", "1e308", "-1e308",
    "9" * 400, "-" + "9" * 400, "1e400", "nan", "NaN", "inf", "-inf", "Infinity", "", "abc",
)
MODE_FIELDS = ("task", "mode")
NOT_NUMBERS = re.compile(r"\b(inf|Infinity|nan|NaN|None)\b")
REPR = re.compile(r"object at 0x|Traceback|<engine\.|\b[A-Z]\w+\(\w+=")


def modes(widget: Widget) -> Iterator[dict[str, str]]:
    """The defaults, and each option of a field that decides what else is read."""
    base = widget.defaults()
    yield base
    for control in widget.controls:
        if control.name in MODE_FIELDS:
            for value, _ in control.options:
                if value != base[control.name]:
                    yield {**base, control.name: value}
        if control.name == "model" and CUSTOM_MODEL in {v for v, _ in control.options}:
            yield {**base, "model": CUSTOM_MODEL}


def check(widget: Widget, values: dict[str, str]) -> None:
    names = {f.name for f in widget.fields} | {"action"}
    try:
        rendered = widget.run(values)
    except EngineError as error:
        assert error.message.strip(), (widget.name, values)
        assert error.field in names, (widget.name, error.field, error.message)
        return
    html = rendered.html
    found = NOT_NUMBERS.search(re.sub(r"<[^>]+>", " ", html)) or NOT_NUMBERS.search(html)
    assert found is None, (widget.name, values, html[max(0, found.start() - 80) : found.end() + 80])
    assert REPR.search(html) is None, (widget.name, values)


# Hidden fields too: a stored or linked value reaches the engine like a typed one.
CASES = [(name, f.name) for name in widget_names() for f in get_widget(name).fields]


@pytest.mark.parametrize(("name", "field"), CASES)
def test_every_field_in_every_mode_refuses_extremes_with_a_message(name: str, field: str) -> None:
    widget = get_widget(name)
    for values in modes(widget):
        for typed in EXTREMES:
            check(widget, {**values, field: typed})


@settings(max_examples=300, deadline=None)
@given(
    case=st.sampled_from(CASES),
    number=st.one_of(
        st.floats(allow_nan=False, allow_infinity=False),
        st.integers(min_value=-(10**400), max_value=10**400),
    ),
    mode=st.integers(min_value=0, max_value=10),
)
def test_any_finite_number_in_any_field_gives_a_message_or_a_clean_result(
    case: tuple[str, str], number: float | int, mode: int
) -> None:
    name, field = case
    widget = get_widget(name)
    all_modes = list(modes(widget))
    values = all_modes[mode % len(all_modes)]
    check(widget, {**values, field: repr(number)})
