"""The playground's "Find the cheapest plan": the search runs only when its button is pressed,
its answer is the command line's (the same winner, runners-up and frontier), its "Copy as
command" line's ``--json`` output carries every figure it shows, and bad input is refused
naming the field."""

from __future__ import annotations

import contextlib
import io
import re
import shlex

import pytest
import test_widget_commands

from engine.cli import main
from engine.lesson.plans.search_html import search_json
from engine.registry import get_widget
from engine.render.fields import Values
from engine.widgets.plan_search import FLAGS, WIDGET, search_request, searched

# Searches worth a look: the defaults, an open loop priced per million tokens, a target no
# set-up meets, training, training per million tokens.
CASES = [
    ("serve", {}),
    ("rate-million", {"concurrency": "", "rate": "4", "cheapest": "million-tokens"}),
    ("unmet", {"tpot_p90": "0.002"}),
    ("train", {"task": "train"}),
    ("train-million", {"task": "train", "tokens": "2e11", "deadline_days": "10",
                       "cheapest": "million-tokens"}),
]
# The chart's tick labels are the axes' round numbers, not the search's figures.
_TICKS = re.compile(r'<g class="search-ticks">.*?</g>', re.S)


def test_it_is_found_and_runs_only_when_pressed() -> None:
    assert get_widget("plan_search") is WIDGET
    plain = WIDGET.run(WIDGET.defaults())
    assert "search-ready" in plain.html and plain.result_json is None
    pressed = WIDGET.run(WIDGET.defaults(), "search")
    assert 'data-searched="serve"' in pressed.html and pressed.result_json is not None


@pytest.mark.parametrize(("label", "inputs"), CASES, ids=[c[0] for c in CASES])
def test_the_command_prints_every_figure_it_shows(label, inputs, tmp_path) -> None:
    values = WIDGET.defaults(inputs)
    result = WIDGET.run(values, "search")
    command = WIDGET.command(Values(values)) if WIDGET.command else None
    assert command is not None
    outputs = test_widget_commands.run_lines(command, tmp_path)
    # The same search: the command's answer is the widget's (less its own timing).
    assert {k: v for k, v in outputs[0].items() if k != "seconds"} == result.result_json
    output = test_widget_commands.Output(outputs, command)
    shown = test_widget_commands.visible_text(_TICKS.sub("", result.html))
    unmatched = [d for d, v, h, u in test_widget_commands.figures(shown)
                 if not output.agrees(d, v, h, u)]
    assert unmatched == []


def test_the_answer_and_the_chart() -> None:
    result = WIDGET.run(WIDGET.defaults(), "search")
    answer = searched(search_request(Values(WIDGET.defaults())))
    assert answer.best is not None
    assert f"that meets the target: {answer.best.setup.setup}." in result.html
    assert result.html.count('data-plan="next"') == len(answer.next)
    # Wide and narrow drawings, the plan found ringed in each.
    assert result.html.count('class="search-best"') == 2
    assert 'class="chart chart-narrow search-frontier-narrow"' in result.html
    none = WIDGET.run(WIDGET.defaults({"tpot_p90": "0.002"}), "search").html
    assert 'data-found="false"' in none and "Why the others failed" in none


def test_the_command_names_only_the_chosen_tasks_inputs() -> None:
    assert WIDGET.command is not None
    serve = WIDGET.command(Values(WIDGET.defaults())).lines
    assert serve == ("python -m engine search --model llama-3.1-8b --task serve --prompt 1024 "
                     "--output 256 --concurrency 16 --ttft-p90 0.5 --tpot-p90 0.05 "
                     "--cheapest hour",)
    train = WIDGET.command(Values(WIDGET.defaults({"task": "train"}))).lines[0]
    assert "--tokens 1e12 --deadline-days 30" in train and "--prompt" not in train
    helped = io.StringIO()
    with contextlib.redirect_stdout(helped), pytest.raises(SystemExit):
        main(["search", "--help"])
    assert all(f"{flag} " in helped.getvalue() for flag in FLAGS.values())
    assert shlex.split(train)[3] == "search"


@pytest.mark.parametrize(("name", "text"), [
    ("ttft_p90", ""), ("ttft_p90", "0"), ("tpot_p90", "nan"), ("prompt_tokens", "abc"),
    ("ttft_p90", "1e9"), ("output_tokens", "0"), ("concurrency", "1e9"),
    ("tokens", "ten"), ("deadline_days", "-1"),
])
def test_bad_input_is_refused_naming_the_field(name, text) -> None:
    inputs = {name: text} if name not in ("tokens", "deadline_days") else \
        {name: text, "task": "train"}
    for action in ("", "search"):
        with pytest.raises(Exception) as refused:
            WIDGET.run(WIDGET.defaults(inputs), action)
        assert getattr(refused.value, "field", None) == name


def test_rate_and_concurrency_one_of_them() -> None:
    for inputs in ({"concurrency": "", "rate": ""}, {"concurrency": "8", "rate": "2"}):
        with pytest.raises(Exception, match="one of them") as refused:
            WIDGET.run(WIDGET.defaults(inputs))
        assert getattr(refused.value, "field", None) == "rate"


def test_the_json_leaves_out_only_the_wall_clock() -> None:
    answer = searched(search_request(Values(WIDGET.defaults({"task": "train"}))))
    assert set(answer.to_dict()) - set(search_json(answer)) == {"seconds"}
