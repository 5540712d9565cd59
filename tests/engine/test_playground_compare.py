"""The playground's compare: "Pin as A" keeps the inputs on screen as plan A, the result then
sets A beside the plan on screen (B), computed by the engine's compare, and its command is the
command line's ``compare`` line that prints the same JSON; "Unpin A" clears it. A pinned A the
engine cannot read (changed by hand, from another version, an input out of range) is refused
in the result, by name, and B's plan stands."""

from __future__ import annotations

import base64
import contextlib
import html
import io
import json
import re
import shlex
from pathlib import Path

import pytest
import test_widget_commands

from engine.cli import main
from engine.lesson.plans.pinned import PINNED
from engine.render.fields import Values
from engine.widgets.playground import WIDGET

CONFIG = (Path(__file__).parent.parent / "fixtures" / "configs" / "Llama-3.1-8B.json").read_text()
OWN = {"hardware": "own", "chip_memory": "48", "chip_bandwidth": "2", "chip_bf16": "400",
       "chip_fp8": "800"}


def pinned(**a: str) -> str:
    """The text "Pin as A" keeps for the playground's defaults with ``a`` changed."""
    rendered = WIDGET.run(WIDGET.defaults(a), "pin")
    return rendered.set_inputs[PINNED.name]


def cli_json(values: dict[str, str], tmp_path: Path) -> dict[str, object]:
    """What the widget's command's first line prints with --json, run in ``tmp_path`` with its files."""
    assert WIDGET.command is not None
    command = WIDGET.command(Values(values))
    for name, text in command.files:
        (tmp_path / name).write_text(text)
    words = shlex.split(command.lines[0])
    assert words[:4] == ["python", "-m", "engine", "compare"]
    out = io.StringIO()
    with contextlib.chdir(tmp_path), contextlib.redirect_stdout(out):
        assert main([*words[3:], "--json"]) == 0, out.getvalue()
    data: dict[str, object] = json.loads(out.getvalue())
    return data


# (plan A's changes from the defaults, plan B's): a chip, GPUs and formats, a price given then
# left empty, a task switched both ways (a training --tp must not reach B's serving), models,
# a pasted config against a catalogue model, two chips of one's own.
PAIRS = [
    ({}, {"hardware": "h200"}),
    ({}, {"gpus": "2", "format": "fp8", "kv_format": "fp8", "batch": "8"}),
    ({"price": "3"}, {}),
    ({"task": "train", "gpus": "8", "tp": "2"}, {"gpus": "8"}),
    ({}, {"task": "train", "gpus": "64", "mfu": "0.45"}),
    ({"task": "train", "gpus": "8"}, {"task": "train", "gpus": "16", "sharding": "zero3"}),
    ({"model": "llama-3.1-70b", "gpus": "4"}, {"model": "mixtral-8x7b", "gpus": "2"}),
    ({"model": "config", "config": CONFIG}, {"hardware": "a100-80gb"}),
    (OWN, {**OWN, "chip_memory": "96"}),
]


def but_provenance(data: object) -> dict[str, object]:
    """Compare JSON without what says where a model or chip came from: the command line
    names a pasted model by its file's folder and describes a chip of one's own whole, as
    read from its file; the playground's plan JSON does neither (as for one plan alone)."""
    assert isinstance(data, dict)
    out = json.loads(json.dumps(data))
    for side in ("a", "b"):
        out[side]["model"].pop("name")
        out[side]["hardware"] = {k: out[side]["hardware"][k] for k in ("id", "name")}
    return out


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[str(i) for i in range(len(PAIRS))])
def test_the_widgets_compare_is_the_command_lines(a, b, tmp_path) -> None:
    values = WIDGET.defaults({**b, PINNED.name: pinned(**a)})
    rendered = WIDGET.run(values)
    assert 'data-pinned="shown"' in rendered.html
    printed = cli_json(values, tmp_path)
    if "config" in a or b.get("hardware") == "own":
        assert but_provenance(rendered.result_json) == but_provenance(printed)
    else:
        assert rendered.result_json == printed
    assert WIDGET.command is not None
    line = WIDGET.command(Values(values)).lines[0]
    assert html.escape(line) in rendered.html


def test_the_command_prints_every_figure_the_widget_shows_beside_a(tmp_path,
                                                                   monkeypatch) -> None:
    # The count of figures that differ is the length of the JSON's list of them.
    monkeypatch.setitem(test_widget_commands.NOT_THE_PLANS, WIDGET.name,
                        re.compile(r"[\d,]+ of [\d,]+ figures differ"))
    for a, b in ({"gpus": "2"}, {"hardware": "h200"}), ({}, {"task": "train", "gpus": "8"}):
        values = WIDGET.defaults({**b, PINNED.name: pinned(**a)})
        assert test_widget_commands.unmatched(WIDGET.name, values, tmp_path) == []


def test_two_files_of_one_name_are_named_apart(tmp_path) -> None:
    values = WIDGET.defaults({**OWN, "chip_bf16": "500", PINNED.name: pinned(**OWN)})
    assert WIDGET.command is not None
    command = WIDGET.command(Values(values))
    assert [name for name, _ in command.files] == ["a-my-chip.json", "my-chip.json"]
    assert "--hardware-spec a-my-chip.json" in command.lines[0]


def test_pin_then_unpin() -> None:
    text = pinned(gpus="2")
    assert json.loads(text)["gpus"] == "2"
    assert PINNED.name not in json.loads(text)
    rendered = WIDGET.run(WIDGET.defaults({"gpus": "4", PINNED.name: text}))
    table = re.search(r'<table data-compare="figures".*?</table>', rendered.html, re.S)
    assert table is not None and "compare-differs" in table.group(0)
    cleared = WIDGET.run(WIDGET.defaults({"gpus": "4", PINNED.name: text}), "unpin")
    assert cleared.set_inputs == {PINNED.name: ""}
    assert "data-pinned" not in cleared.html
    assert WIDGET.command is not None
    assert WIDGET.command(Values(WIDGET.defaults({PINNED.name: text}), "unpin")).lines[0] \
        .startswith("python -m engine plan ")


def test_the_address_carries_a() -> None:
    assert PINNED.name in WIDGET.url_state
    assert {"pin", "unpin"} <= {a.name for a in WIDGET.actions}


@pytest.mark.parametrize(("text", "words"), [
    ("{", "Plan A, as pinned is not valid JSON."),
    ("[1]", "is not a set of named inputs"),
    ("[" * 5000, "nested too deeply"),
    ("x" * 200_000, "too long to be real"),
    ('{"gpu_count": "2"}', "names an input this widget does not have ('gpu_count'"),
    ('{"pinned": "{}"}', "names an input this widget does not have ('pinned'"),
    ('{"gpus": 2}', "Plan A's input 'gpus' is not text"),
    ('{"gpus": "-4"}', "GPUs (or chips): -4 is too small"),
    ('{"model": "nope"}', "Plan A is not shown: "),
])
def test_a_bad_a_is_refused_by_name_and_b_stands(text, words) -> None:
    values = WIDGET.defaults({"gpus": "2", PINNED.name: text})
    rendered = WIDGET.run(values)
    refused = re.search(r'data-pinned="refused"><p[^>]*>(.*?)</p>', rendered.html)
    assert refused is not None
    assert words in html.unescape(refused.group(1))
    section = re.search(r'<section[^>]*data-pinned="refused".*?</section>', rendered.html)
    assert section is not None
    alone = WIDGET.run({**values, PINNED.name: ""})
    assert rendered.html.replace(section.group(0), "") == alone.html
    # B's plan is whole: its JSON, its command.
    assert rendered.result_json == alone.result_json
    assert WIDGET.command is not None
    assert WIDGET.command(Values(values)).lines[0].startswith("python -m engine plan ")


def test_the_table_downloads_as_the_command_lines_csv(tmp_path) -> None:
    values = WIDGET.defaults({"hardware": "h200", PINNED.name: pinned(price="3")})
    found = re.search(r'href="data:text/csv;base64,([^"]+)" download="compare.csv"',
                      WIDGET.run(values).html)
    assert found is not None
    assert WIDGET.command is not None
    words = shlex.split(WIDGET.command(Values(values)).lines[0])
    out = io.StringIO()
    with contextlib.chdir(tmp_path), contextlib.redirect_stdout(out):
        assert main([*words[3:], "--csv"]) == 0
    assert base64.b64decode(found.group(1)).decode() == out.getvalue()
