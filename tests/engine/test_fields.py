"""The field vocabulary: one declaration per quantity, from which a widget's control, the
parsing of typed text, the command line's flags and the address keys all follow."""

from __future__ import annotations

import math
import re

import pytest

from engine.cli import main
from engine.lesson.plans.fields import PLAN_FIELDS
from engine.lesson.plans.own_chip import CHIP_FIELDS
from engine.numbers import quantities
from engine.numbers.catalog import get_model
from engine.numbers.errors import EngineError
from engine.numbers.quantities import Quantity, show
from engine.registry import get_widget, widget_names
from engine.render.fields import Amount, Choice, Count, OptionalAmount, Values
from engine.render.options import CONTEXT
from engine.render.widget import Widget

WIDGETS = [get_widget(n) for n in widget_names()]


@pytest.mark.parametrize("widget", WIDGETS, ids=lambda w: w.name)
def test_every_fields_default_is_in_its_own_range(widget: Widget) -> None:
    # A field read only in another mode (the MFU calculator's throughput) is checked too.
    for f in widget.fields:
        f.parse(f.default)


def test_every_quantity_has_a_finite_range_and_a_reason() -> None:
    found = [q for q in vars(quantities).values() if isinstance(q, Quantity)]
    assert len(found) >= 20
    for q in found:
        assert math.isfinite(q.minimum) and math.isfinite(q.maximum) and q.minimum <= q.maximum
        assert len(q.reason) > 20


def test_context_is_declared_once_for_widgets_plan_memory_and_the_cli() -> None:
    # Three caps once (1 M, 10 M, 100 M); now the widgets' field, plan() and the CLI agree.
    assert CONTEXT.quantity is quantities.CONTEXT_TOKENS
    assert PLAN_FIELDS["context_tokens"].quantity is quantities.CONTEXT_TOKENS  # type: ignore[attr-defined]
    from engine.numbers.plan import plan

    with pytest.raises(EngineError, match="from 1 to 10,000,000 tokens") as engine_error:
        plan(model="llama-3.1-8b", context_tokens=20_000_000)
    with pytest.raises(EngineError, match="from 1 to 10,000,000 tokens") as field_error:
        CONTEXT.parse("20000000")
    assert engine_error.value.field == "context_tokens" and field_error.value.field == "context"


@pytest.mark.parametrize(
    ("typed", "words"),
    [
        ("", "is empty: type one from 1 to 10,000,000 tokens."),
        ("abc", "must be a number, not 'abc': type one from 1 to 10,000,000 tokens."),
        ("NaN", "must be a number, not NaN"),
        ("inf", ": inf is too large; give a value from 1 to 10,000,000 tokens (the longest context"),
        ("9" * 400, ": 99999999999999999999... is too large; give a value from 1 to 10,000,000"),
        ("1e308", ": 1e308 is too large"),
        ("-5", ": -5 is too small"),
        ("0", ": 0 is too small"),
        ("1e-320", "must be a whole number from 1 to 10,000,000 tokens."),
        ("2.5", "must be a whole number"),
    ],
)
def test_a_count_refuses_with_the_range_that_makes_sense(typed: str, words: str) -> None:
    with pytest.raises(EngineError) as error:
        CONTEXT.parse(typed)
    assert error.value.message.startswith("Context per request")
    assert words in error.value.message
    assert error.value.field == "context"


def test_a_count_reads_what_readers_type() -> None:
    assert CONTEXT.parse(" 8,192 ") == 8192
    assert CONTEXT.parse("8e3") == 8000
    assert isinstance(CONTEXT.parse("8e3"), int)


def test_an_amount_with_a_floor_above_zero_refuses_tiny_values() -> None:
    mfu = Amount("mfu", "MFU", "0.4", quantity=quantities.MFU)
    assert mfu.parse("0.4") == 0.4
    for tiny in ("1e-308", "1e-320", "0", "0.001"):
        with pytest.raises(EngineError) as error:
            mfu.parse(tiny)
        assert error.value.message.startswith(
            f"MFU: {tiny} is too small; give a value from 0.01 to 1 (MFU is the share of peak"
        )


def test_an_optional_amount_is_none_when_empty() -> None:
    price = OptionalAmount("price", "Price", "", quantity=quantities.USD_PER_GPU_HOUR)
    assert price.parse("  ") is None
    assert price.parse("2.99") == 2.99
    with pytest.raises(EngineError, match="Price: 1e-308 is too small"):
        price.parse("1e-308")


def test_a_choice_names_its_options_and_an_unknown_link_value() -> None:
    task = Choice("task", "Task", "serve", options=(("serve", "Serve"), ("train", "Train")))
    assert task.parse("train") == "train"
    with pytest.raises(EngineError, match=re.escape("Unknown task 'fly'; choose one of: serve, train.")):
        task.parse("fly")
    with pytest.raises(EngineError, match="No task chosen"):
        task.parse("")


def test_within_narrows_the_range_and_says_why() -> None:
    model = get_model("gpt-3-175b")
    narrowed = CONTEXT.but(quantity=quantities.context_for(model))
    assert narrowed.parse("2048") == 2048
    with pytest.raises(EngineError, match=r"from 1 to 2,048 tokens \(GPT-3 175B reads at most"):
        narrowed.parse("2049")
    assert CONTEXT.parse("2049") == 2049  # the shared declaration is unchanged


def test_values_parse_a_field_only_when_read() -> None:
    gpus = Count("gpus", "GPUs", "1", quantity=quantities.GPUS)
    values = Values({"context": "abc", "gpus": "8"})
    assert values[gpus] == 8  # the bad context blocks nothing that does not read it
    with pytest.raises(EngineError) as error:
        values[CONTEXT]
    assert error.value.field == "context"


def test_a_field_builds_the_control_the_page_shows() -> None:
    control = CONTEXT.but(hint="Serving.").control
    assert (control.name, control.label, control.kind, control.default) == (
        "context",
        "Context per request",
        "number",
        "8192",
    )
    assert (control.unit, control.hint) == ("tokens", "Serving.")
    slider = get_widget("roofline_chart").control("batch_log2")
    assert (slider.kind, slider.minimum, slider.maximum, slider.step) == ("range", 0, 11, "1")


def test_bounds_read_as_a_reader_writes_them() -> None:
    assert [show(x) for x in (1, 0.01, 8192, 1e9, 1e12, 1.5e16)] == [
        "1", "0.01", "8,192", "1,000,000,000", "1e12", "1.5e16",
    ]


def test_the_cli_flags_are_the_playgrounds_fields(capsys: pytest.CaptureFixture[str]) -> None:
    playground = {f.name for f in get_widget("playground").fields}
    # The pasted config.json is the command line's --config (a path to one); the own chip's
    # form, its --hardware-spec (a file of those figures); a plan pinned as A, compare's
    # flags before --vs.
    own_chip = {f.name for f in CHIP_FIELDS}
    assert playground == ({f.name for f in PLAN_FIELDS.values()} | {"config", "pinned"}
                          | own_chip)
    with pytest.raises(SystemExit):  # --help exits through argparse
        main(["plan", "--help"])
    helptext = capsys.readouterr().out
    for f in PLAN_FIELDS.values():
        assert "--" + f.name.replace("_", "-") in helptext
    assert "--config" in helptext and "--hardware-spec" in helptext
    assert ("from 1 to 10,000,000 tokens; 8k is 8,000 (not 8,192), 1.5M and 2e12 read too "
            "(default 8192)") in " ".join(helptext.split())


def test_a_cli_error_opens_with_its_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", "llama-3.1-8b", "--task", "train", "--mfu", "1e-308"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("--mfu: MFU: 1e-308 is too small; give a value from 0.01 to 1")
