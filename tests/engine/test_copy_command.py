"""'Copy as command': a plan widget writes the ``python -m engine plan``
line for its inputs, and that line, run through the command line, gives the numbers the
widget shows. Also the frame's 'Copy link' and what a link carries."""

from __future__ import annotations

import contextlib
import html
import io
import json
import re
import shlex
from pathlib import Path

import pytest

from engine.cli import main
from engine.lesson.plans.fields import COMMAND, CONFIG_FILE, plan_command, shell_quote
from engine.numbers.errors import EngineError
from engine.registry import get_widget, widget_names
from engine.render.fields import Values
from engine.render.widget import render_page_widget

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
COMMAND_RE = re.compile(r'<code class="widget-command-text">(.*?)</code>', re.S)


def shown_command(widget: str, overrides: dict[str, str]) -> tuple[str, str]:
    """The widget's result HTML and the first command line it shows, unescaped (a training
    plan's second line leaves out --mfu)."""
    w = get_widget(widget)
    result = w.run(w.defaults(overrides)).html
    found = COMMAND_RE.search(result)
    assert found, f"{widget} shows no command"
    return result, html.unescape(found.group(1)).split("\n")[0]


def run_cli(command: str, tmp_path: Path) -> dict[str, object]:
    """The command line's --json answer to ``command``, run in ``tmp_path`` as a reader's
    shell would (words split by shlex)."""
    words = shlex.split(command)
    assert tuple(words[: len(COMMAND)]) == COMMAND
    out = io.StringIO()
    with contextlib.chdir(tmp_path), contextlib.redirect_stdout(out):
        status = main([*words[len(COMMAND) - 1:], "--json"])
    assert status == 0, out.getvalue()
    data: dict[str, object] = json.loads(out.getvalue())
    return data


PLAYGROUND_CASES = [
    {},
    {"model": "llama-3.1-70b", "hardware": "h200", "gpus": "4", "format": "fp8",
     "kv_format": "fp8", "context": "32,768", "batch": "16", "prompt": "4000", "output": "900"},
    {"task": "train", "model": "custom", "params": "7.5e9", "tokens": "1e12", "price": "2.5",
     "sharding": "zero3", "gpus": "64", "mfu": "0.35", "target_days": "30"},
    {"task": "train", "model": "llama-3.1-70b", "gpus": "64", "tp": "8", "pp": "2",
     "interleave": "2", "global_batch": "4e6", "optimizer": "adam", "recompute": "full",
     "micro_batch": "2", "seq_len": "8192", "convention": "mixed-16"},
    {"task": "train", "model": "llama-3.1-8b", "nodes": "2", "hardware": "h100-sxm"},
]


FIVE_CASES = [
    {},
    {"task": "train", "model": "llama-3.1-405b", "gpus": "16384", "tokens": "15.6e12",
     "mfu": "0.42", "sharding": "zero3", "hardware": "h100-sxm"},
    {"model": "custom", "params": "13e9", "weight_format": "int4", "context_tokens": "4096",
     "usd_per_gpu_hour": "1.75"},
]
CASES = [("playground", o) for o in PLAYGROUND_CASES] + [("five_questions", o) for o in FIVE_CASES]


def assert_answers_shown(data: dict[str, object], result: str) -> None:
    """The command line's five answers, word for word (every number in them), are on show."""
    answers = data["answers"]
    assert isinstance(answers, dict) and len(answers) == 5
    shown = html.unescape(result)
    for words in answers.values():
        assert words in shown, words


@pytest.mark.parametrize(("widget", "overrides"), CASES)
def test_the_command_gives_the_answers_the_widget_shows(widget, overrides, tmp_path) -> None:
    result, command = shown_command(widget, overrides)
    assert_answers_shown(run_cli(command, tmp_path), result)


@pytest.mark.parametrize("widget", ["playground", "five_questions"])
def test_a_pasted_config_becomes_a_config_file_flag(widget, tmp_path) -> None:
    text = (FIXTURES / "configs" / "Llama-3.1-8B.json").read_text()
    result, command = shown_command(widget, {"model": "config", "config": text})
    assert f" --config {CONFIG_FILE} " in command
    (tmp_path / CONFIG_FILE).write_text(text)
    assert_answers_shown(run_cli(command, tmp_path), result)


def test_serving_leaves_out_training_flags_and_training_always_gives_the_mfu() -> None:
    _, serve = shown_command("playground", {})
    assert "--mfu" not in serve and "--tp" not in serve and "--sharding" not in serve
    assert "--context 8192" in serve and "--model llama-3.1-8b" in serve
    _, train = shown_command("playground", {"task": "train"})
    # Without --mfu the command line models the MFU; the widget uses the one typed.
    assert "--mfu 0.4" in train and "--context" not in train
    assert "--tokens" not in train  # empty: the command line's default is empty too


@pytest.mark.parametrize("word", ["plain", "a b", "it's", "$(rm -rf ~)", "`x`", "", "a\nb",
                                  "--flag=1,2", "ü", '"q"', "semi;colon"])
def test_shell_quote_is_shlex_quote(word: str) -> None:
    assert shell_quote(word) == shlex.quote(word)
    assert shlex.split(shell_quote(word)) == [word]


def test_hostile_text_in_a_plan_field_never_reaches_the_command() -> None:
    # The command is written only for inputs the engine accepted, and each word is quoted.
    w = get_widget("five_questions")
    with pytest.raises(EngineError, match="hardware"):
        w.run(w.defaults({"hardware": "h100-sxm; rm -rf ~"}))
    command = plan_command(Values(w.defaults({"usd_per_gpu_hour": " 2.5 "})), {})
    assert shlex.split(command)[4:] == ["--model", "llama-3.1-8b"]


def test_every_widget_frame_with_inputs_to_carry_has_a_copy_link_naming_them() -> None:
    for name in widget_names():
        w = get_widget(name)
        page = render_page_widget(w, "w-x-1", {})
        assert 'role="status"' in page, name
        carried = set(w.link_inputs)
        visible = {c.name for c in w.controls if c.kind != "hidden"}
        assert carried == (set(w.url_state) or visible), name
        if carried:
            assert 'data-copy="link"' in page, name
            assert 'class="widget-copy-text"' in page and " hidden" in page, name
            assert f'data-link-inputs="{",".join(w.link_inputs)}"' in page, name
        else:
            # A link that carried nothing would reopen the widget as the page opens it, after
            # saying "Copied.": no Copy link is offered.
            assert 'data-copy="link"' not in page and "data-link-inputs" not in page, name
    assert get_widget("dgx_panel").link_inputs == ()
    # A drill's link carries its question (the seed), not the reader's answer.
    assert get_widget("drill_will_it_fit").link_inputs == ("seed",)
    assert "hardware" in get_widget("serve_plan").link_inputs
