"""Saved and linked JSON is bounded in size and depth before it is parsed:
'['.repeat(20000) in sessionStorage killed the runtime in the browser, where the WebAssembly
stack overflows before Python's RecursionError."""

from __future__ import annotations

import json

import pytest

from engine.browser import update
from engine.lesson.dgx_view import load_state
from engine.lesson.drills.core import Score
from engine.numbers.bounded_json import loads, nesting_depth
from engine.numbers.errors import EngineError

DEEP = "[" * 20_000


def test_depth_counts_brackets_outside_strings_only() -> None:
    assert nesting_depth('{"a": [1, {"b": 2}]}') == 3
    assert nesting_depth('{"a": "[[[[{{{{"}') == 1
    assert nesting_depth(r'{"a": "\"[[[["}') == 1
    assert nesting_depth("") == 0
    assert nesting_depth(DEEP) == 20_000


def test_loads_refuses_deep_long_and_broken_text_with_messages() -> None:
    assert loads('{"a": [1]}', what="It", field="f", max_chars=100) == {"a": [1]}
    with pytest.raises(EngineError, match="nested too deeply") as deep:
        loads(DEEP, what="It", field="f", max_chars=100_000)
    assert deep.value.field == "f"
    with pytest.raises(EngineError, match="too long"):
        loads("[" + "1," * 100 + "1]", what="It", field="f", max_chars=100)
    with pytest.raises(EngineError, match="not valid JSON"):
        loads("{nope", what="It", field="f", max_chars=100)


def test_a_deeply_nested_dgx_state_is_refused_not_fatal() -> None:
    with pytest.raises(EngineError, match="nested too deeply") as error:
        load_state(DEEP)
    assert error.value.field == "state"
    assert "fresh dgx-1" in error.value.message


@pytest.mark.parametrize("widget", ["dgx_panel", "launch_training", "deploy_model"])
def test_the_browser_entry_reports_a_deep_state_on_the_state_field(widget: str) -> None:
    reply = json.loads(update(widget, json.dumps({"state": DEEP})))
    assert reply.get("field") == "state" and "internal" not in reply


def test_deep_inputs_and_deep_drill_scores_are_refused() -> None:
    reply = json.loads(update("model_size", DEEP))
    assert reply["field"] == "widget" and "internal" not in reply
    with pytest.raises(EngineError, match="not valid JSON"):
        Score.from_text("[" * 500)
