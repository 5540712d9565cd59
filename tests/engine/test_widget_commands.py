"""Every plan widget's "Copy as command": its lines, run through the command line with
``--json``, print every figure the widget shows.

A figure is a number in the result's visible text (the command block itself left out). It
agrees with the command's output when the same digits appear in one of the output's texts
(an answer, an assumption), or when a number of the output, in another unit (a power of ten:
bytes as GB, seconds as ms; seconds as minutes, hours, days or years; a fraction as a
percentage), its reciprocal (seconds per token as tokens/s) or times the plan's GPU count
(a per-GPU figure as the whole set's) rounds to it at the precision shown; so does a part of
a time as a share of its record's whole (a step's compute as a percentage of the step) and
two parts of a memory added up. A figure no line
can give fails the test, naming the widget, its inputs and the figure.
"""

from __future__ import annotations

import bisect
import contextlib
import html
import io
import json
import math
import re
import shlex
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from engine.cli import main
from engine.lesson.plans.fields import COMMAND
from engine.registry import get_widget, widget_names
from engine.render.widget import Command
from macros.corpus import widget_cases

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

# The widgets whose question is a plan, each declaring its command.
PLAN_WIDGETS = (
    "capacity_gate",
    "cluster_training",
    "device_ladder",
    "five_questions",
    "parallelism_picture",
    "playground",
    "serve_plan",
    "training_at_scale",
)
# States per widget taken from the corpus's (its defaults and every control moved): the
# defaults and this many more, spread over the list.
STATES_PER_WIDGET = 6


def commanded_widgets() -> list[str]:
    return sorted(n for n in widget_names() if get_widget(n).command is not None)


def test_the_plan_widgets_are_the_ones_that_declare_a_command() -> None:
    assert commanded_widgets() == sorted(PLAN_WIDGETS)


class _VisibleText(HTMLParser):
    """The text a reader sees in a result: every text node outside the command block and a
    chart's hover titles (``<title>`` on a piece of a drawing: the request timeline's groups
    of decode steps, which the command line does not list; it prints the request's totals)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0  # depth inside the command block
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("input", "br", "img", "hr", "meta", "link"):
            return
        self._depth += 1
        classes = dict(attrs).get("class") or ""
        if self._skipping or "widget-copy-command" in classes.split() or tag == "title":
            self._skipping += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("input", "br", "img", "hr", "meta", "link"):
            return
        self._depth -= 1
        if self._skipping:
            self._skipping -= 1

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def visible_text(result_html: str) -> str:
    parser = _VisibleText()
    parser.feed(result_html)
    return " ".join(parser.parts)


_NUMBER = re.compile(r"(?<![\w.^])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?"
                     r"(?:e([+-]?\d+)| × 10\^([+-]?\d+))?(?![\w])")


def figures(text: str) -> Iterator[tuple[str, float, float]]:
    """Each number in ``text``: its digits as shown, its value, and half its last digit (the
    rounding it was shown at)."""
    for found in _NUMBER.finditer(text):
        whole, fraction = found.group(1), found.group(2) or ""
        exponent = found.group(3) or found.group(4)
        value = float(whole.replace(",", "") + fraction)
        half = 0.5 * 10.0 ** -(len(fraction) - 1 if fraction else 0)
        if exponent is not None:
            value *= 10.0 ** int(exponent)
            half *= 10.0 ** int(exponent)
        yield found.group(0), value, half


def _numbers(data: object, key: str = "") -> Iterator[tuple[str, float]]:
    """Each number in ``data`` with the key it is under."""
    if isinstance(data, bool):
        return
    if isinstance(data, int | float):
        yield key, float(data)
    elif isinstance(data, dict):
        for name, value in data.items():
            yield from _numbers(value, str(name))
    elif isinstance(data, list):
        for value in data:
            yield from _numbers(value, key)


def _shares(data: object) -> Iterator[float]:
    """Each part of a time as a share of its record's whole (a step's compute as a fraction
    of the step): a number beside ``seconds`` in the same record, divided by it."""
    if isinstance(data, dict):
        whole = data.get("seconds")
        for key, value in data.items():
            if isinstance(whole, float) and whole and key.endswith("seconds") and key != "seconds" \
                    and isinstance(value, int | float):
                yield value / whole
            yield from _shares(value)
    elif isinstance(data, list):
        for value in data:
            yield from _shares(value)


def _part_pairs(data: object) -> Iterator[float]:
    """Each two parts of a memory added up (activations and runtime overhead, shown as one)."""
    if isinstance(data, dict):
        parts = data.get("parts")
        if isinstance(parts, dict):
            sizes = [v for v in parts.values() if isinstance(v, float)]
            yield from (a + b for i, a in enumerate(sizes) for b in sizes[i + 1:])
        for value in data.values():
            yield from _part_pairs(value)
    elif isinstance(data, list):
        for value in data:
            yield from _part_pairs(value)


def _texts(data: object) -> Iterator[str]:
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for key, value in data.items():
            yield str(key)
            yield from _texts(value)
    elif isinstance(data, list):
        for value in data:
            yield from _texts(value)


# The units a number of the output may be shown in: a count, bytes or FLOPs by SI prefix
# (GB, TFLOP/s), a fraction as a percentage; a time (a key naming seconds or days) also by
# the clock (ms, minutes, hours, days, years), and as a rate (seconds per token as tokens/s).
_PREFIXES = tuple(1000.0 ** k for k in range(-5, 6))
_SCALES = (*_PREFIXES, 100.0)
_CLOCK = (1.0, 60.0, 3600.0, 86400.0, 365.25 * 86400.0, 365.0 * 86400.0)


def _shown_as(key: str, n: float) -> Iterator[float]:
    if "days" in key:
        key, n = "seconds", n * 86400.0
    if "seconds" in key:
        for clock in _CLOCK:
            yield from (n / clock * prefix for prefix in _PREFIXES)
        yield from (prefix / n for prefix in _PREFIXES)
    else:
        yield from (n * scale for scale in _SCALES)


class Output:
    """What a command's lines printed with --json: every number and the digits of every text."""

    def __init__(self, outputs: list[dict[str, object]], command: Command) -> None:
        gpus = {float(g) for o in outputs if isinstance(g := o.get("gpus"), int)}
        numbers = {(k, n) for o in outputs for k, n in _numbers(o) if n}
        numbers |= {("share", n) for o in outputs for n in _shares(o)}
        numbers |= {("parts", n) for o in outputs for n in _part_pairs(o)}
        self.shown = sorted({abs(v) for k, n in numbers
                             for base in (n, *(n * g for g in gpus)) for v in _shown_as(k, base)})
        self.digits = {d for o in outputs for t in _texts(o) for d, _, _ in figures(t)}
        self.digits |= {d for line in command.lines for d, _, _ in figures(line)}
        self.digits |= {d.replace(",", "") for d in self.digits}

    def agrees(self, digits: str, value: float, half: float) -> bool:
        if digits.replace(",", "") in self.digits or value == 0:
            return True
        low = value - half * (1 + 1e-9)
        i = bisect.bisect_left(self.shown, low)
        return i < len(self.shown) and self.shown[i] <= value + half * (1 + 1e-9)


def run_lines(command: Command, tmp_path: Path) -> list[dict[str, object]]:
    """Each line's --json output, run in ``tmp_path`` with the command's files there, its
    words split as a POSIX shell splits them."""
    for name, text in command.files:
        (tmp_path / name).write_text(text)
    outputs = []
    for line in command.lines:
        words = shlex.split(line)
        assert tuple(words[: len(COMMAND) - 1]) == COMMAND[:-1], line
        out = io.StringIO()
        with contextlib.chdir(tmp_path), contextlib.redirect_stdout(out):
            status = main([*words[len(COMMAND) - 1:], "--json"])
        assert status == 0, (line, out.getvalue())
        outputs.append(json.loads(out.getvalue()))
    return outputs


def unmatched(widget: str, values: dict[str, str], tmp_path: Path) -> list[str]:
    """The figures the widget shows for ``values`` that its command's output does not give."""
    w = get_widget(widget)
    result = w.run(values).html
    assert w.command is not None
    from engine.render.fields import Values

    command = w.command(Values(values))
    assert html.escape("\n".join(command.lines), quote=False) in result
    output = Output(run_lines(command, tmp_path), command)
    return [digits for digits, value, half in figures(visible_text(result))
            if not output.agrees(digits, value, half)]


def states(widget: str) -> list[tuple[str, dict[str, str]]]:
    """The defaults and :data:`STATES_PER_WIDGET` more of the corpus's states that render."""
    w = get_widget(widget)
    rendering = []
    for case in widget_cases(widget):
        try:
            w.run(case.values)
        except Exception:
            continue
        rendering.append((case.label, case.values))
    step = max(1, math.ceil((len(rendering) - 1) / STATES_PER_WIDGET))
    return [rendering[0], *rendering[1::step]]


CASES = [(w, label, values) for w in PLAN_WIDGETS for label, values in states(w)]


@pytest.mark.parametrize(("widget", "label", "values"), CASES,
                         ids=[f"{w}-{label}" for w, label, _ in CASES])
def test_the_command_prints_every_figure_the_widget_shows(widget, label, values,
                                                          tmp_path) -> None:
    assert unmatched(widget, values, tmp_path) == []


@pytest.mark.parametrize("widget", PLAN_WIDGETS)
def test_a_pasted_config_is_a_file_to_download_that_the_command_names(widget,
                                                                      tmp_path) -> None:
    w = get_widget(widget)
    if "config" not in {c.name for c in w.controls}:
        pytest.skip("no pasted model")
    text = (FIXTURES / "configs" / "Llama-3.1-8B.json").read_text()
    values = w.defaults({"model": "config", "config": text})
    result = w.run(values).html
    assert 'download="config.json"' in result and "Download config.json" in result
    assert all(" --config config.json " in f" {line} "
               for line in html.unescape(result).split("python -m engine")[1:])
    assert unmatched(widget, values, tmp_path) == []


def test_a_figure_the_command_cannot_give_fails(tmp_path) -> None:
    # A result that also shows a number no line prints is caught.
    w = get_widget("serve_plan")
    values = w.defaults()
    assert w.command is not None
    from engine.render.fields import Values

    command = w.command(Values(values))
    output = Output(run_lines(command, tmp_path), command)
    shown = visible_text(w.run(values).html) + " and 123,457 tokens"
    assert [d for d, v, h in figures(shown) if not output.agrees(d, v, h)] == ["123,457"]
