"""The playground's "Your own chip": its small form drives every figure, a bad figure is
refused beside its box, its fields are read only while the choice is made, and the command
line the page gives, with the spec JSON it shows saved as my-chip.json, gives the same plan."""

from __future__ import annotations

import html
import io
import json
import os
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
import widget_text

from engine.cli import main
from engine.lesson.plans.fields import CHIP_FILE
from engine.numbers.errors import EngineError
from engine.widgets.playground import WIDGET

OWN = {"hardware": "own", "chip_memory": "48", "chip_bandwidth": "2", "chip_bf16": "400",
       "chip_fp8": "800"}


def render(**overrides: object) -> str:
    return widget_text.render(WIDGET.name, **overrides)


def test_the_form_is_in_the_address_after_the_hardware_select() -> None:
    names = list(WIDGET.url_state)
    at = names.index("hardware")
    assert names[at:at + 7] == ["hardware", "chip_memory", "chip_bandwidth", "chip_bf16",
                                "chip_fp8", "chip_int8", "chip_fp4"]
    hardware = next(c for c in WIDGET.controls if c.name == "hardware")
    assert ("own", "Your own chip (type its figures)") in hardware.options


def test_the_chips_figures_drive_the_plan() -> None:
    out = render(**OWN)
    assert "on 1 GPU (Your chip): it fits." in out
    assert "capacity 48 GB" in widget_text.text_of(out)
    assert "not the catalogue" in out
    spec = json.loads(html.unescape(re.search(r'<pre class="chip-spec"><code>(.*?)</code>',
                                              out, re.S).group(1)))  # type: ignore[union-attr]
    assert spec == {"name": "Your chip", "memory_GB": 48.0, "bandwidth_TB_per_s": 2.0,
                    "peak_TFLOP_per_s": {"bf16": 400.0, "fp8": 800.0}}
    # Half the bandwidth, twice the decode bound (the same bytes a token at half the rate).
    fast, slow = (float(re.search(r"([\d.]+) ms per token, [\d,]+ tokens/s per user at best",
                                  widget_text.text_of(render(**{**OWN, "chip_bandwidth": bw})))
                        .group(1))  # type: ignore[union-attr]
                  for bw in ("2", "1"))
    assert fast == 7.58  # 15.16 GB read a step (weights and the KV cache) / 2 TB/s
    assert slow == pytest.approx(2 * fast, abs=0.05)  # shown to three figures


@pytest.mark.parametrize(("field", "text"), [("chip_memory", "nan"), ("chip_memory", "0"),
                                             ("chip_bandwidth", "1e999"), ("chip_bf16", ""),
                                             ("chip_fp8", "abc"), ("chip_fp4", "-1")])
def test_a_bad_figure_is_refused_beside_its_box(field: str, text: str) -> None:
    with pytest.raises(EngineError) as caught:
        render(**{**OWN, field: text})
    assert caught.value.field == field


def test_the_form_is_not_read_while_a_catalogue_chip_is_chosen() -> None:
    assert "NVIDIA H100" in render(hardware="h100-sxm", chip_memory="nan", chip_bf16="")


def test_the_pages_command_line_gives_the_same_plan(tmp_path: Path) -> None:
    out = render(**OWN, batch="4")
    command = html.unescape(re.search(r"python -m engine plan[^<]*", out).group(0))  # type: ignore[union-attr]
    assert f"--hardware-spec {CHIP_FILE}" in command and "--hardware " not in command
    spec = html.unescape(re.search(r'<pre class="chip-spec"><code>(.*?)</code>', out,
                                   re.S).group(1))  # type: ignore[union-attr]
    (tmp_path / CHIP_FILE).write_text(spec, encoding="utf-8")
    args = command.split()[3:]
    stdout, stderr = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        os.chdir(tmp_path)
        with redirect_stdout(stdout), redirect_stderr(stderr):
            code = main([*args, "--json"])
    finally:
        os.chdir(here)
    assert code == 0, stderr.getvalue()
    data = json.loads(stdout.getvalue())
    assert data["hardware"]["name"] == "Your chip"
    assert data["memory"]["capacity_bytes"] == 48e9
    words = widget_text.text_of(out)
    assert data["answers"]["fits"] in words
