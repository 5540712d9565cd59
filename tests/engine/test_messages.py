"""Messages in a reader's words, beside the input they are about: a huge number said as
1e308 (never hundreds of digits), no Python words (None, Infinity, 1e+30), a refusal beside
the input the reader changed, and notes (not refusals) beside values the engine accepted but
a reader should know about: the other task's junk, kept; a context beyond the model's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engine.browser import update
from engine.numbers import validate
from engine.numbers.catalog import get_system
from engine.numbers.catalog.hf_config import model_from_config
from engine.numbers.errors import EngineError
from engine.numbers.plan import plan
from engine.render.widget import render_page_widget
from engine.widgets.playground import WIDGET as PLAYGROUND

CONFIG = Path(__file__).parents[1] / "fixtures" / "configs" / "Qwen3-30B-A3B.json"
LONG_DIGITS = re.compile(r"\d[\d,]{20,}")
PYTHON_WORDS = re.compile(r"\b(None|Infinity|inf|nan|NaN)\b|\de\+\d")


def config_refusal(**changes: object) -> str:
    data = json.loads(CONFIG.read_text())
    data.update(changes)
    with pytest.raises(EngineError) as caught:
        model_from_config(json.dumps(data))
    return caught.value.message


def config_text_refusal(text: str) -> str:
    with pytest.raises(EngineError) as caught:
        model_from_config(text)
    return caught.value.message


def plain(message: str) -> None:
    assert LONG_DIGITS.search(message) is None, message
    assert PYTHON_WORDS.search(message) is None, message


def test_a_huge_size_in_a_config_is_said_as_a_reader_writes_it() -> None:
    message = config_refusal(hidden_size=1e308)
    assert "hidden_size: 1e308 is absurdly large (at most 1,048,576)" in message
    plain(message)
    message = config_refusal(sliding_window=1e300, use_sliding_window=True)
    assert "sliding_window: 1e300 is absurdly large" in message
    plain(message)
    message = config_refusal(vocab_size=-1e200)
    assert "vocab_size: -1e200 is too small" in message
    plain(message)
    # An integer of 400 digits (under the 4,300 Python converts) beyond any float.
    plain(config_refusal(intermediate_size=10**400))
    # Small numbers keep their digits.
    assert "hidden_size: 2,000,000 is absurdly large" in config_refusal(hidden_size=2_000_000)


def test_an_overflowing_number_in_a_config_is_far_too_large_not_infinity() -> None:
    message = config_text_refusal('{"model_type": "llama", "hidden_size": 1e400}')
    assert "hidden_size: far too large (at most 1,048,576)" in message
    plain(message)
    message = config_text_refusal('{"model_type": "llama", "hidden_size": -1e400}')
    assert "hidden_size: far too small (at least 1)" in message
    plain(message)
    message = config_text_refusal('{"model_type": "llama", "tie_word_embeddings": 1e400}')
    assert "must be true or false, not a number far too large" in message
    plain(message)


def test_a_missing_choice_asks_for_one_instead_of_naming_none() -> None:
    with pytest.raises(EngineError, match=r"^Choose a system: one of dgx-1\.$"):
        get_system(None)  # type: ignore[arg-type]
    with pytest.raises(EngineError, match=r"^Unknown system 5; choose one of"):
        get_system(5)  # type: ignore[arg-type]
    with pytest.raises(EngineError, match=r"^Choose a task: one of serve, train\.$"):
        validate.choice(None, "task", ("serve", "train"))
    with pytest.raises(EngineError, match=r"^Unknown task \(true or false\); choose one of"):
        validate.choice(True, "task", ("serve", "train"))
    # A typed word is still quoted as typed.
    with pytest.raises(EngineError, match=r"^Unknown system 'dgx-9'; choose one of"):
        get_system("dgx-9")
    state = json.dumps({"version": 1, "clock_seconds": 0, "next_job": 1, "jobs": [], "log": []})
    reply = json.loads(update("dgx_panel", json.dumps({"state": state})))
    assert "Choose a system" in reply["error"]
    plain(reply["error"])


def test_a_bound_is_written_as_a_reader_writes_it() -> None:
    with pytest.raises(EngineError) as caught:
        validate.number(1e31, "flops")
    assert caught.value.message == "Flops must be at most 1e30."
    with pytest.raises(EngineError) as caught:
        validate.number(2e6, "width", maximum=1e6)
    assert caught.value.message == "Width must be at most 1,000,000."
    assert validate.show_number(10**5000) == "a number of 5,001 digits"
    assert validate.show_number(float("inf")) == "infinity"


def test_a_nan_where_a_name_was_expected_is_refused_by_name() -> None:
    # Found by Hypothesis: NaN as the optimiser's name reached int() inside the message.
    assert validate.show_number(float("nan")) == "NaN (not a number)"
    with pytest.raises(EngineError) as caught:
        plan(model="llama-3.1-8b", task="train", optimizer=float("nan"))
    assert caught.value.field == "optimizer"
    assert "not a number" in caught.value.message


def test_servers_the_heads_cannot_share_are_refused_beside_the_servers() -> None:
    with pytest.raises(EngineError) as caught:
        PLAYGROUND.run(PLAYGROUND.defaults({"nodes": "5"}))
    assert "40 GPUs cannot share evenly" in caught.value.message
    assert caught.value.field == "nodes"
    # The GPU count typed as such is still at fault itself.
    with pytest.raises(EngineError) as caught:
        PLAYGROUND.run(PLAYGROUND.defaults({"gpus": "40"}))
    assert caught.value.field == "gpus"
    # And a tensor-parallel size given on its own is: plan()'s serve_tp.
    with pytest.raises(EngineError) as caught:
        plan(model="llama-3.1-8b", hardware="h100-sxm", gpus=5, serve_tp=5)
    assert caught.value.field == "tp"


@pytest.mark.parametrize(("task", "field", "junk", "reader"), [
    ("serve", "mfu", "abc", "training"),
    ("serve", "micro_batch", "-1", "training"),
    ("serve", "sharding", "zero9", "training"),
    ("train", "batch", "lots", "serving"),
    ("train", "context", "1e400", "serving"),
])
def test_junk_in_the_other_tasks_field_is_kept_and_said_beside_it(
        task: str, field: str, junk: str, reader: str) -> None:
    values = PLAYGROUND.defaults({"task": task, field: junk})
    rendered = PLAYGROUND.run(values)
    note = rendered.notes[field]
    chosen = "serving" if task == "serve" else "training"
    assert note.startswith(f"Unused while {chosen}, and {reader} would refuse it: ")
    assert note.endswith("Your text is kept.")
    plain(note)
    assert set(rendered.notes) == {field}
    # Switched to that task, the same text is refused beside the same field.
    with pytest.raises(EngineError) as caught:
        PLAYGROUND.run({**values, "task": "train" if task == "serve" else "serve"})
    assert caught.value.field == field
    assert caught.value.message in note


def test_the_other_tasks_good_values_and_the_defaults_have_no_notes() -> None:
    for task in ("serve", "train"):
        assert not PLAYGROUND.run(PLAYGROUND.defaults({"task": task})).notes
    reply = json.loads(update("playground", "{}"))
    assert "notes" not in reply


def test_a_context_beyond_the_models_maximum_is_noted_beside_it_not_refused() -> None:
    rendered = PLAYGROUND.run(PLAYGROUND.defaults({"context": "200000", "prompt": "150000"}))
    for field, tokens in (("context", "200,000"), ("prompt", "150,000")):
        assert rendered.notes[field] == (
            f"{tokens} tokens is beyond Llama 3.1 8B's maximum context of 131,072: the figures "
            "are for a runtime that extends it (RoPE scaling, for example); the model as "
            "released was trained for 131,072.")
    assert "fits" in rendered.html
    train = PLAYGROUND.run(PLAYGROUND.defaults({"task": "train", "seq_len": "262144"}))
    assert set(train.notes) == {"seq_len"}
    assert "262,144 tokens is beyond Llama 3.1 8B's maximum context" in train.notes["seq_len"]
    at_most = PLAYGROUND.run(PLAYGROUND.defaults({"context": "131072"}))
    assert not at_most.notes
    reply = json.loads(update("playground", json.dumps({"context": "200000"})))
    assert set(reply["notes"]) == {"context"}


def test_a_note_is_written_beside_its_input_at_build_time_too() -> None:
    html = render_page_widget(PLAYGROUND, "pg", {"context": "200000"})
    slot = re.search(r'<span class="widget-error widget-note" id="pg-context-error"[^>]*>([^<]*)<',
                     html)
    assert slot is not None
    assert slot.group(1).startswith("200,000 tokens is beyond")
    # The other slots stay empty, as a note-free page writes them.
    assert html.count("widget-note\"") == 1

