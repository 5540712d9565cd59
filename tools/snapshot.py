"""A byte-for-byte snapshot of what the engine produces, to prove a refactor changed nothing.

Records, as one JSON document: every widget rendered at its defaults and with each control
moved to other values (every option of a select, numbers scaled up and down), every plan
case of the parity test plus a grid of models x chips x tasks, every table, and the CLI's
output for a set of command lines. Compare two snapshots with ``diff``; the built site is
compared separately (``diff -r`` of the HTML pages).

    .venv/bin/python tools/snapshot.py build/snapshot-before.json
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

CLI_LINES = [
    "catalog --json",
    "catalog",
    "plan --model llama-3.1-8b --hardware h100-sxm --gpus 1 --task serve",
    "plan --model llama-3.1-8b --hardware h100-sxm --gpus 1 --task serve --json",
    "plan --model llama-3.1-70b --hardware h100-sxm --gpus 4 --task serve --json",
    "plan --model llama-3.1-70b --hardware h200 --gpus 1 --task serve --json",
    "plan --model mixtral-8x7b --hardware a100-80gb --gpus 2 --task serve",
    "plan --params 7.5e9 --hardware a100-80gb --gpus 64 --task train --sharding zero3 --json",
    "plan --model llama-3.1-405b --hardware h100-sxm --gpus 16384 --task train --tokens 15.6e12 --mfu 0.4",
    "plan --model deepseek-v3 --hardware h100-sxm --gpus 2048 --task train --tokens 14.8e12 --json",
    "plan --model llama-3.1-8b --hardware h100-sxm --gpus 1 --task train",
    "plan --model nope --hardware h100-sxm --gpus 1 --task serve --json",
    "plan --model llama-3.1-8b --hardware h100-sxm --gpus -1 --task serve",
]


def _widgets() -> dict[str, Any]:
    from engine.registry import get_widget, widget_names

    out: dict[str, Any] = {}
    for name in widget_names():
        widget = get_widget(name)
        base = widget.defaults()
        cases: list[tuple[str, dict[str, str], str]] = [("defaults", base, "")]
        for control in widget.controls:
            if control.kind == "select":
                for value, _label in control.options:
                    cases.append((f"{control.name}={value}", {**base, control.name: value}, ""))
            elif control.kind == "number":
                for factor in (0.5, 2.0, 10.0):
                    try:
                        value = repr(float(control.default) * factor)
                    except ValueError:
                        continue
                    cases.append((f"{control.name}={value}", {**base, control.name: value}, ""))
                cases.append((f"{control.name}=bad", {**base, control.name: "abc"}, ""))
        for action in widget.actions:
            cases.append((f"action={action.name}", base, action.name))
        results = {}
        for label, values, action in cases:
            try:
                rendered = widget.run(values, action)
                results[label] = {"html": rendered.html, "set": rendered.set_inputs}
            except Exception as error:
                to_dict = getattr(error, "to_dict", None)
                results[label] = {"error": to_dict() if to_dict else repr(error)}
        out[name] = results
    return out


def _plans() -> list[Any]:
    import parity_cases

    from engine.lesson.plans.plan_json import plan_to_dict
    from engine.numbers.errors import EngineError
    from engine.numbers.plan import plan
    cases = list(parity_cases.PLAN_CASES)
    for model in ("llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "deepseek-v3", "mistral-7b"):
        for hw in ("h100-sxm", "a100-80gb", "h200", "l4", "rtx-4090"):
            for task in ("serve", "train"):
                for gpus in (1, 8):
                    cases.append({"model": model, "hardware": hw, "gpus": gpus, "task": task})
    out = []
    for case in cases:
        try:
            out.append(plan_to_dict(plan(**case)))
        except EngineError as error:
            out.append(error.to_dict())
    return out


def _tables() -> dict[str, str]:
    from engine.lesson.tables.registry import TABLES
    return {name: fn() for name, fn in TABLES.items()}


def _cli() -> dict[str, Any]:
    from engine.cli import main

    out = {}
    for line in CLI_LINES:
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                code = main(line.split())
            except SystemExit as exit_:
                code = exit_.code
        out[line] = {"code": code, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()}
    return out


def main() -> None:
    snapshot = {"widgets": _widgets(), "plans": _plans(), "tables": _tables(), "cli": _cli()}
    path = Path(sys.argv[1])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(snapshot, indent=1, sort_keys=True, default=str))
    print(f"{path}: {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
