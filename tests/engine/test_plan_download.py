"""A plan widget's "Download the result as JSON" holds exactly what its copied command prints
with --json: the command line's contract, from the widget's own state."""

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

from engine.browser import update
from engine.cli import main
from engine.lesson.plans.fields import COMMAND, CONFIG_FILE

ROOT = Path(__file__).resolve().parents[2]
CONFIG_TEXT = (ROOT / "tests/fixtures/configs/Mixtral-8x7B-v0.1.json").read_text()

CASES = [
    ("playground", {}),
    ("playground", {"task": "train", "model": "llama-3.1-70b", "gpus": "64", "mfu": "0.35"}),
    ("playground", {"model": "config", "config": CONFIG_TEXT, "gpus": "2"}),
    ("five_questions", {}),
    ("five_questions", {"task": "train", "model": "llama-3.1-70b", "gpus": "64",
                        "sharding": "zero3"}),
]


def _downloaded_and_command(name: str, inputs: dict[str, str]) -> tuple[str, list[str]]:
    reply = json.loads(update(name, json.dumps(inputs)))
    assert "html" in reply, reply
    link = re.search(r'href="data:application/json;base64,([^"]+)" download="plan.json"',
                     reply["html"])
    command = re.search(r'class="widget-command-text">([^<]+)<', reply["html"])
    assert link and command, name
    # The download is the first line's answer (a training plan's second line models the MFU).
    first = html.unescape(command.group(1)).split("\n")[0]
    return base64.b64decode(link.group(1)).decode(), shlex.split(first)


@pytest.mark.parametrize(("name", "inputs"), CASES)
def test_the_download_is_what_the_command_prints_with_json(
    name: str, inputs: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    downloaded, words = _downloaded_and_command(name, inputs)
    assert words[: len(COMMAND)] == list(COMMAND)
    (tmp_path / CONFIG_FILE).write_text(inputs.get("config", ""))
    monkeypatch.chdir(tmp_path)  # a pasted model's command names the saved config.json
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*words[len(COMMAND) - 1:], "--json"]) == 0
    printed = out.getvalue()
    if "config" in inputs:
        # The command line names a model read from a file after its folder; the widget, after
        # its family. Nothing else may differ.
        cli_name = json.loads(printed)["model"]["name"]
        downloaded = downloaded.replace(json.loads(downloaded)["model"]["name"], cli_name)
    assert downloaded == printed
    assert json.loads(downloaded)["memory"]["per_gpu_bytes"] > 0
