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
    "bandwidth_ceiling",
    "capacity_gate",
    "cluster_training",
    "device_ladder",
    "five_questions",
    "parallelism_picture",
    "playground",
    "plan_search",
    "roofline_chart",
    "roofline_three_roofs",
    "serve_plan",
    "side_by_side",
    "training_at_scale",
)
# Words around a figure that is the lesson's, not the plan's (left out of the check, each
# with its reason): the ladder's caption compares the compute-optimal budget with the tokens
# Llama 3.1 was really trained on, a published count no plan computes; the roofline's notes
# give the share of each roof that real kernels reach in general, not a figure of this plan;
# the parallelism picture's note compares the server's two links (why tensor parallelism
# stays inside it), a property of the hardware that no plan prints.
NOT_THE_PLANS = {"device_ladder": re.compile(r"Llama 3\.1 really used about [\d.,]+ \w+"),
                 "roofline_chart": re.compile(r"real kernels reach about [\d-]+ %"),
                 "parallelism_picture": re.compile(r"gives each GPU \d+ times the bandwidth")}
# States per widget taken from the corpus's (its defaults and every control moved): the
# defaults and this many more, spread over the list.
STATES_PER_WIDGET = 6


def commanded_widgets() -> list[str]:
    return sorted(n for n in widget_names() if get_widget(n).command is not None)


def test_the_plan_widgets_are_the_ones_that_declare_a_command() -> None:
    assert commanded_widgets() == sorted(PLAN_WIDGETS)


# A log axis's tick label: a power of ten, as a count ('0.1', '1,000', '10k') or a time
# ('10.0 ms'), the drawing's scale rather than a figure of the plan.
_DECADE_TICK = re.compile(r"(?:0\.0*1|1(?:0|,000)*)(?:\.0+)?(?:[kMB]| ?(?:ns|µs|ms|s))?")


class _VisibleText(HTMLParser):
    """The text a reader sees in a result: every text node outside the command block, a
    chart's hover titles (``<title>`` on a piece of a drawing: the request timeline's groups
    of decode steps, which the command line does not list; it prints the request's totals)
    and the tick labels of its log axes (:data:`_DECADE_TICK`)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0  # depth inside the command block
        self._depth = 0
        self._in_svg_text = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("input", "br", "img", "hr", "meta", "link"):
            return
        self._in_svg_text = tag == "text"
        self._depth += 1
        classes = dict(attrs).get("class") or ""
        if self._skipping or "widget-copy-command" in classes.split() or tag == "title":
            self._skipping += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("input", "br", "img", "hr", "meta", "link"):
            return
        self._in_svg_text = False
        self._depth -= 1
        if self._skipping:
            self._skipping -= 1

    def handle_data(self, data: str) -> None:
        if not self._skipping and not (self._in_svg_text
                                       and _DECADE_TICK.fullmatch(data.strip())):
            self.parts.append(data)


def visible_text(result_html: str) -> str:
    parser = _VisibleText()
    parser.feed(result_html)
    return " ".join(parser.parts)


_NUMBER = re.compile(r"(?<![\w.^])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?"
                     r"(?:e([+-]?\d+)| × 10\^([+-]?\d+))?(?![\w])"
                     r"(?: ?(%|[kMGTP]?B|bytes|ms|µs|s|min|h|hours?|days?|years?|tokens/s"
                     r"|[kMGTPE]?FLOP/s|[kMGT]B/s|million|billion|trillion)(?![\w/]))?")
# A unit shown after a figure -> what it is in the output's units (seconds, bytes, FLOP/s,
# a count), and which of the output's numbers it is compared with.
_TIME = {"µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0, "hour": 3600.0,
         "hours": 3600.0, "day": 86400.0, "days": 86400.0, "year": 365.25 * 86400.0,
         "years": 365.25 * 86400.0}
_SCALE = {"B": 1.0, "bytes": 1.0, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15,
          "FLOP/s": 1.0, "kFLOP/s": 1e3, "MFLOP/s": 1e6, "GFLOP/s": 1e9, "TFLOP/s": 1e12,
          "PFLOP/s": 1e15, "EFLOP/s": 1e18, "kB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9,
          "TB/s": 1e12, "million": 1e6, "billion": 1e9, "trillion": 1e12}


def figures(text: str) -> Iterator[tuple[str, float, float, str]]:
    """Each number in ``text``: its digits as shown, its value, half its last digit (the
    rounding it was shown at) and the unit after it ('' for none)."""
    for found in _NUMBER.finditer(text):
        whole, fraction = found.group(1), found.group(2) or ""
        exponent = found.group(3) or found.group(4)
        value = float(whole.replace(",", "") + fraction)
        half = 0.5 * 10.0 ** -(len(fraction) - 1 if fraction else 0)
        if exponent is not None:
            value *= 10.0 ** int(exponent)
            half *= 10.0 ** int(exponent)
        digits = found.group(0)[: found.end(4 if found.group(4) else 3 if found.group(3)
                                               else 2 if found.group(2) else 1)
                                  - found.start()]
        yield digits, value, half, found.group(5) or ""


def _numbers(data: object, key: str = "") -> Iterator[tuple[str, float]]:
    """Each number in ``data`` with the key it is under (one under a key ending in _GB, such
    as the memory a chip is sold with, in bytes)."""
    if isinstance(data, bool):
        return
    if isinstance(data, int | float):
        yield key, float(data) * (1e9 if key.endswith("_GB") else 1.0)
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


def _sorted(values: Iterator[float]) -> list[float]:
    return sorted({abs(v) for v in values if v})


def _within(values: list[float], value: float, half: float) -> bool:
    i = bisect.bisect_left(values, value - half * (1 + 1e-9))
    return i < len(values) and values[i] <= value + half * (1 + 1e-9)


class Output:
    """What a command's lines printed with --json: its numbers (and each times the plan's
    GPU count), its times in seconds (a key naming seconds or days), their reciprocals (a
    rate), and the digits of every text."""

    def __init__(self, outputs: list[dict[str, object]], command: Command) -> None:
        gpus = [1.0, *{float(g) for o in outputs if isinstance(g := o.get("gpus"), int)}]
        numbers = [(k, n) for o in outputs for k, n in _numbers(o)]
        numbers += [("share", n) for o in outputs for n in _shares(o)]
        numbers += [("parts", n) for o in outputs for n in _part_pairs(o)]
        self.plain = _sorted(n * g for _, n in numbers for g in gpus)
        times = [n * 86400.0 if "days" in k else n for k, n in numbers
                 if "seconds" in k or "days" in k]
        self.seconds = _sorted(n * g for n in times for g in gpus)
        self.rates = _sorted(1.0 / n for n in times if n)
        self.digits = {d for o in outputs for t in _texts(o) for d, *_ in figures(t)}
        self.digits |= {d for line in command.lines for d, *_ in figures(line)}
        self.digits = {d.replace(",", "") for d in self.digits}

    def agrees(self, digits: str, value: float, half: float, unit: str = "") -> bool:
        if digits.replace(",", "") in self.digits or value == 0:
            return True
        if unit in _TIME:
            return _within(self.seconds, value * _TIME[unit], half * _TIME[unit])
        if unit == "%":
            return (_within(self.plain, value / 100, half / 100)
                    or _within(self.plain, value, half))
        if unit in ("tokens/s", ""):  # a rate may be shown without its unit ("about 153")
            return _within(self.plain, value, half) or _within(self.rates, value, half)
        scale = _SCALE.get(unit, 1.0)
        return _within(self.plain, value * scale, half * scale)


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
    shown = visible_text(result)
    if widget in NOT_THE_PLANS:
        shown = NOT_THE_PLANS[widget].sub("", shown)
    return [digits for digits, value, half, unit in figures(shown)
            if not output.agrees(digits, value, half, unit)]


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


# Training in the two plan calculators (their corpus states above are serving ones).
TRAINING = [(w, f"train-{i}", get_widget(w).defaults(o)) for w in ("playground", "five_questions")
            for i, o in enumerate(({"task": "train"}, {"task": "train", "gpus": "64", "tp": "8"}
                                   if w == "playground" else {"task": "train", "gpus": "64"}))]
# Layers left in host memory, in the playground (its corpus states keep every layer on the GPU).
OFFLOAD = [("playground", "offload", get_widget("playground").defaults(
    {"gpu_layers": "16", "hardware": "rtx-4090"}))]
CASES = [(w, label, values) for w in PLAN_WIDGETS for label, values in states(w)] + TRAINING \
    + OFFLOAD


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
    assert [d for d, v, h, u in figures(shown) if not output.agrees(d, v, h, u)] == ["123,457"]
