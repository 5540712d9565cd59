"""Numbers typed as practitioners type them: 8k, 128K, 1.5M, 2B, 15T (powers of 1,000) and
2e12, read by the one parser every number field goes through (the widgets' fields, the
command line's flags, plan()'s keywords), junk refused naming the field, and what a
shorthand was read as said beside it in a widget."""

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.cli import main
from engine.numbers import validate
from engine.numbers.errors import EngineError
from engine.numbers.quantities import CONTEXT_TOKENS, TRAINING_TOKENS
from engine.registry import get_widget


@pytest.mark.parametrize(("text", "read"), [
    ("8k", 8_000), ("8K", 8_000), ("128K", 128_000), ("1.5M", 1_500_000), ("2e12", 2e12),
    ("2B", 2e9), ("15T", 15e12), ("1.1k", 1_100), (".5k", 500), (" 32 k ", 32_000),
    ("1,000", 1_000), ("+2k", 2_000),
])
def test_shorthand_is_read_as_powers_of_a_thousand(text: str, read: float) -> None:
    assert validate.to_float(text, "context", "Context") == read


@pytest.mark.parametrize(("text", "said"), [
    ("8kk", "must be a number, not '8kk' (it may end in k, M, B or T"),
    ("1e", "must be a number, not '1e' (it may end in k, M, B or T"),
    ("2m", "not '2m' (it may end in k, M, B or T"),  # milli or million: refused, not guessed
    ("k", "must be a number, not 'k': type one from 1 to 10,000,000 tokens."),
    ("-3k", "-3k is too small"),
    ("NaN", "must be a number, not NaN"),
    ("1e400", "1e400 is too large"),
    ("9" * 400 + "k", "is too large"),
    ("1.0005k", "must be a whole number"),
])
def test_junk_is_refused_naming_the_field(text: str, said: str) -> None:
    with pytest.raises(EngineError) as caught:
        CONTEXT_TOKENS.check_integer(text, "context", "Context per request")
    assert caught.value.field == "context"
    assert caught.value.message.startswith("Context per request")
    assert said in caught.value.message


@given(st.integers(0, 10**6), st.sampled_from(sorted(validate.SHORTHAND_EXPONENTS)))
def test_a_whole_number_and_a_suffix_are_exact(n: int, suffix: str) -> None:
    exponent = validate.SHORTHAND_EXPONENTS[suffix]
    assert validate.to_float(f"{n}{suffix}", "x", "X") == float(n * 10**exponent)


@given(st.text(max_size=12))
def test_any_text_is_a_finite_number_or_refused(text: str) -> None:
    try:
        number = TRAINING_TOKENS.check(text, "tokens", "Training tokens")
    except EngineError as error:
        assert error.field == "tokens"
    else:
        assert math.isfinite(number)


def cli_json(*args: str) -> dict[str, object]:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*args, "--json"]) == 0
    data: dict[str, object] = json.loads(out.getvalue())
    return data


def test_the_command_line_reads_shorthand_as_the_plain_number() -> None:
    short = cli_json("plan", "--model", "llama-3.1-8b", "--context", "32k", "--prompt", "1.5k",
                     "--output", "0.5k")
    plain = cli_json("plan", "--model", "llama-3.1-8b", "--context", "32000", "--prompt",
                     "1500", "--output", "500")
    assert short == plain
    train = cli_json("plan", "--model", "llama-3.1-8b", "--task", "train", "--gpus", "1k",
                     "--tokens", "15T")
    assert train == cli_json("plan", "--model", "llama-3.1-8b", "--task", "train", "--gpus",
                             "1000", "--tokens", "15e12")


def test_the_command_line_refuses_junk_by_its_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", "llama-3.1-8b", "--context", "8kk"]) == 2
    assert capsys.readouterr().err.startswith("--context: Context per request must be a number")


def test_the_help_says_k_is_a_thousand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["plan", "--help"])
    assert "8k is 8,000 (not 8,192)" in " ".join(capsys.readouterr().out.split())


def test_a_widget_says_what_a_shorthand_was_read_as() -> None:
    widget = get_widget("playground")
    short = widget.run(widget.defaults({"context": "32k", "batch": "4"}))
    plain = widget.run(widget.defaults({"context": "32000", "batch": "4"}))
    assert short.notes == {"context": "Read as 32,000 tokens."}
    assert short.html == plain.html and plain.notes == {}
