"""Every case the engine is run on to prove a change or a runtime changed nothing: one place.

The cases: every widget at its defaults and with each control moved (every option of a
select, numbers scaled by 0.5, 2 and 10, a bad number, every action); the plan cases (saved
parity cases, plus a grid of models x chips x tasks x GPU counts); pasted config.json texts;
saved states that once killed the browser's runtime; every table; and a set of command lines.

Three callers run them: ``tools/snapshot.py`` (everything, in CPython, to diff before and
after a refactor), the build (:func:`browser_corpus_json` inside Pyodide, on the stock and on
the trimmed standard library: ``macros/runtime_bytecode.py`` copies this file there as a
top-level module) and the parity test (:func:`parity_json`, in CPython and in Pyodide). So
this module imports only the standard library and the engine, and only where it runs them:
what it imports at its top is loaded in the browser's runtime too, and ships with it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# plan() keyword arguments: the parity test compares each case's result in Pyodide.
PLAN_CASES: list[dict[str, Any]] = [
    {"model": "llama-3.1-8b", "hardware": "h100-sxm", "gpus": 1, "task": "serve"},
    {"model": "llama-3.1-70b", "hardware": "h100-sxm", "gpus": 1, "task": "serve"},
    {"model": "llama-3.1-70b", "hardware": "h200", "gpus": 2, "task": "serve"},
    {"model": "mixtral-8x7b", "hardware": "a100-80gb", "gpus": 2, "task": "serve"},
    {"model": "llama-3.1-8b", "hardware": "h100-sxm", "gpus": 1, "task": "train"},
    {
        "model": "llama-3.1-8b",
        "hardware": "h100-sxm",
        "gpus": 8,
        "task": "train",
        "sharding": "zero3",
    },
    {"params": 7.5e9, "hardware": "a100-80gb", "gpus": 64, "task": "train", "sharding": "zero3"},
    {
        "model": "llama-3.1-405b",
        "hardware": "h100-sxm",
        "gpus": 16384,
        "task": "train",
        "tokens": 15.6e12,
        "mfu": 0.4,
    },
    {
        "model": "gpt-3-175b",
        "hardware": "a100-40gb",
        "gpus": 1024,
        "task": "train",
        "tokens": 300e9,
    },
    {"model": "qwen2.5-7b", "hardware": "l4", "gpus": 1, "task": "serve"},
    {
        "model": "llama-3.1-405b",
        "hardware": "h100-sxm",
        "nodes": 2048,
        "task": "train",
        "tp": 8,
        "pp": 16,
        "interleave": 2,
        "global_batch_tokens": 16777216,
        "seq_len": 8192,
        "sharding": "zero1",
    },
    {"model": "llama-3.1-70b", "hardware": "h100-sxm", "gpus": 24, "tp": 8, "pp": 2,
     "task": "train"},
    # A batch kept running: the first token of a request joining the others.
    {"model": "llama-3.1-8b", "hardware": "h100-sxm", "gpus": 1, "task": "serve", "batch": 64},
    {"model": "gemma-2-9b", "hardware": "h200", "gpus": 1, "task": "serve", "batch": 16,
     "prompt_tokens": 6000},
]

# The grid after the parity cases: every pairing of these, on 1 and on 8 GPUs.
GRID_MODELS = ("llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "deepseek-v3", "mistral-7b")
GRID_HARDWARE = ("h100-sxm", "a100-80gb", "h200", "l4", "rtx-4090")
GRID_TASKS = ("serve", "train")
GRID_GPUS = (1, 8)

# config.json texts read by the engine (a Mixtral-shaped MoE, junk, 20,000 brackets): the
# playground parses pasted configs in the reader's browser, where Python's recursion limit
# is lower than CPython's.
CONFIG_CASES: list[str] = [
    json.dumps({"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336,
                "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000,
                "max_position_embeddings": 32768}),
    "{not json",
    "[" * 20_000 + "]" * 20_000,
    '{"a": ' * 5_000 + "1" + "}" * 5_000,
]

# Saved values that once killed the runtime in the browser (the WebAssembly stack overflowed
# parsing 20,000 nested brackets): each must come back as a message on its field.
HOSTILE_CASES: list[tuple[str, dict[str, str]]] = [
    ("dgx_panel", {"state": "[" * 20_000}),
    ("launch_training", {"state": "{" * 20_000}),
    ("drill_will_it_fit", {"state": "[" * 20_000}),
    ("drill_speed", {"state": "[" * 20_000}),
]

# Command lines for engine.cli.main, split on spaces (exit codes and both streams recorded).
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
    "roofline --model llama-3.1-8b --hardware h100-sxm",
    "roofline --model llama-3.1-70b --hardware l40s --gpus 8 --context 0 --batches 1,64 --json",
    "roofline --model llama-3.1-8b --batches 1,0 --json",
]

# A simulated server under load: (serving request keywords, load keywords). The parity test
# compares each run's results in Pyodide: a closed loop of fixed lengths (long runs of
# unchanged decode steps), an open loop of lognormal lengths that preempts, on a
# sliding-window model, a mixture of experts on two GPUs at a high concurrency;
# speculative decoding by a draft model beside a shared prefix, and by one-layer heads on
# the sliding-window model (its verifications cross the window).
LOAD_CASES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({"model": "llama-3.1-8b", "hardware": "h100-sxm", "gpus": 1, "prompt_tokens": 1024,
      "output_tokens": 256}, {"concurrency": 64, "requests": 1000}),
    ({"model": "mistral-7b", "hardware": "a100-80gb", "gpus": 1, "prompt_tokens": 6000,
      "output_tokens": 300}, {"rate": 5, "requests": 200, "length_dist": "lognormal"}),
    ({"model": "mixtral-8x7b", "hardware": "h100-sxm", "gpus": 2, "prompt_tokens": 1024,
      "output_tokens": 256}, {"concurrency": 256, "requests": 400, "length_dist": "lognormal",
                              "length_cv": 1.0, "seed": 7, "ttft_target": 1.0,
                              "tpot_target": 0.05}),
    ({"model": "llama-3.1-8b", "hardware": "h100-sxm", "gpus": 1, "prompt_tokens": 1024,
      "output_tokens": 256}, {"concurrency": 32, "requests": 200, "length_dist": "normal",
                              "spec_tokens": 4, "spec_accept": 0.8,
                              "draft_model": "llama-3.2-1b", "prefix_tokens": 512,
                              "prefix_hit": 0.5}),
    ({"model": "mistral-7b", "hardware": "a100-80gb", "gpus": 1, "prompt_tokens": 4000,
      "output_tokens": 200}, {"rate": 4, "requests": 100, "spec_tokens": 3,
                              "spec_accept": 0.7}),
]

# dgx-1 with a deployment (Llama 3.1 8B in bf16 on GPU 0) under traffic, through its widgets:
# (widget, rate in requests/s, action, set-up beside the curve). 24 requests/s saturates it,
# so its alternatives are simulated too; the curve beside fp8 weights follows, then the panel
# of the same state.
DEPLOYED_CASES: list[tuple[str, float, str, str]] = [
    ("dgx_traffic", 24.0, "start", "fp8"),
    ("dgx_traffic", 24.0, "curve", "fp8"),
    ("dgx_panel", 24.0, "", ""),
]

# The config library's models a widget's model select is run on (every select offers all of
# them; these two stand for the rest): a dense model with tied embeddings and a mixture of
# experts with sliding-window layers.
LIBRARY_CASES = ("meta-llama/Llama-3.2-1B", "openai/gpt-oss-20b")

# A number control's default is scaled by each of these (and set to NOT_A_NUMBER once).
NUMBER_FACTORS = (0.5, 2.0, 10.0)
NOT_A_NUMBER = "abc"


@dataclass(frozen=True)
class WidgetCase:
    """One run of a widget: ``label`` names it in the results (``defaults``,
    ``control=value``, ``action=name``); ``values`` are the form's texts; ``action`` is the
    action's name, or "" for a plain render."""

    label: str
    values: dict[str, str]
    action: str = ""


def widget_cases(name: str) -> list[WidgetCase]:
    """The widget's defaults, then each control moved (every option of a select, of the
    config library's only LIBRARY_CASES; a number scaled by each of NUMBER_FACTORS, and made
    NOT_A_NUMBER), then each action."""
    from engine.numbers.catalog.config_library import is_library_id
    from engine.registry import get_widget

    widget = get_widget(name)
    base = widget.defaults()
    cases = [WidgetCase("defaults", base)]
    for control in widget.controls:
        if control.kind == "select":
            for value, _label in control.options:
                if is_library_id(value) and value not in LIBRARY_CASES:
                    continue
                cases.append(WidgetCase(f"{control.name}={value}", {**base, control.name: value}))
        elif control.kind == "number":
            for factor in NUMBER_FACTORS:
                try:
                    value = repr(float(control.default) * factor)
                except ValueError:
                    continue
                cases.append(WidgetCase(f"{control.name}={value}", {**base, control.name: value}))
            cases.append(WidgetCase(f"{control.name}=bad", {**base, control.name: NOT_A_NUMBER}))
    for action in widget.actions:
        cases.append(WidgetCase(f"action={action.name}", base, action.name))
    return cases


def widget_case_count() -> int:
    """How many widget cases :func:`widget_results` runs, over every widget."""
    from engine.registry import widget_names

    return sum(len(widget_cases(name)) for name in widget_names())


def widget_results() -> dict[str, dict[str, Any]]:
    """Widget name -> case label -> ``{"html", "set"}`` (and ``"notes"`` when it has any) or
    ``{"error"}`` (the error's to_dict(), or its repr for an error that has none)."""
    from engine.registry import get_widget, widget_names

    out: dict[str, dict[str, Any]] = {}
    for name in widget_names():
        widget = get_widget(name)
        results: dict[str, Any] = {}
        for case in widget_cases(name):
            try:
                rendered = widget.run(case.values, case.action)
                results[case.label] = {"html": rendered.html, "set": rendered.set_inputs}
                if rendered.notes:
                    results[case.label]["notes"] = dict(rendered.notes)
            except Exception as error:
                to_dict = getattr(error, "to_dict", None)
                results[case.label] = {"error": to_dict() if to_dict else repr(error)}
        out[name] = results
    return out


def plan_cases() -> list[dict[str, Any]]:
    """PLAN_CASES, then the grid (models x chips x tasks x GPU counts, in that nesting)."""
    grid = [
        {"model": model, "hardware": hardware, "gpus": gpus, "task": task}
        for model in GRID_MODELS
        for hardware in GRID_HARDWARE
        for task in GRID_TASKS
        for gpus in GRID_GPUS
    ]
    return [*PLAN_CASES, *grid]


def _plan_results(cases: list[dict[str, Any]]) -> list[Any]:
    from engine.lesson.plans.plan_json import plan_to_dict
    from engine.numbers.errors import EngineError
    from engine.numbers.plan import plan

    out: list[Any] = []
    for case in cases:
        try:
            out.append(plan_to_dict(plan(**case)))
        except EngineError as error:
            out.append(error.to_dict())
    return out


def plan_results() -> list[Any]:
    """Each of :func:`plan_cases`' plans as JSON-ready data, or its error's to_dict()."""
    return _plan_results(plan_cases())


def table_results() -> dict[str, str]:
    """Every table's HTML, by name (the build's tables: CPython only)."""
    from engine.lesson.tables.registry import TABLES

    return {name: fn() for name, fn in TABLES.items()}


def cli_results() -> dict[str, dict[str, Any]]:
    """Each of CLI_LINES -> ``{"code", "stdout", "stderr"}`` (CPython only)."""
    import contextlib
    import io

    from engine.cli import main

    out: dict[str, dict[str, Any]] = {}
    for line in CLI_LINES:
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                code: object = main(line.split())
            except SystemExit as exit_:
                code = exit_.code
        out[line] = {"code": code, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()}
    return out


def hostile_results() -> list[Any]:
    """engine.browser.update's reply to each of HOSTILE_CASES, parsed."""
    from engine.browser import update

    return [json.loads(update(name, json.dumps(inputs))) for name, inputs in HOSTILE_CASES]


def load_results() -> list[Any]:
    """Each of LOAD_CASES simulated: its results as JSON-ready data (the timeline reads
    every step), or its error's to_dict()."""
    from engine.numbers.catalog import get_hardware, get_model
    from engine.numbers.errors import EngineError
    from engine.numbers.load.load_request import load_request, serve_load
    from engine.numbers.serve_request import serve_request

    out: list[Any] = []
    for serve, load in LOAD_CASES:
        try:
            request = serve_request(
                get_model(serve["model"]), get_hardware(serve["hardware"]), gpus=serve["gpus"],
                serve_tp=None, batch=1, weight_format="bf16", kv_format="bf16",
                context_tokens=8192, prompt_tokens=serve["prompt_tokens"],
                output_tokens=serve["output_tokens"])
            checked = load_request(**load)
            assert checked is not None
            out.append(serve_load(request, checked).to_dict())
        except EngineError as error:
            out.append(error.to_dict())
    return out


def deployed_results() -> list[Any]:
    """Each of DEPLOYED_CASES in turn, every one on the state the one before it left:
    ``{"html", "set"}``."""
    from engine.lesson import cluster, dgx_view
    from engine.registry import get_widget

    state = dgx_view.dump_state(cluster.deploy(cluster.new_cluster("dgx-1"), "llama-3.1-8b",
                                               (0,), "bf16", 8192, 16).state)
    out: list[Any] = []
    for name, rate, action, beside in DEPLOYED_CASES:
        widget = get_widget(name)
        inputs: dict[str, object] = {"state": state}
        if name == "dgx_traffic":
            inputs.update(rate_notch=cluster.TRAFFIC_RATES.index(rate), curve_beside=beside)
        rendered = widget.run(widget.defaults(inputs), action)
        state = rendered.set_inputs.get("state", state)
        out.append({"html": rendered.html, "set": dict(rendered.set_inputs)})
    return out


def parity_results() -> dict[str, Any]:
    """What the parity test compares between CPython and Pyodide: PLAN_CASES' plans, every
    widget's default HTML, the hostile states' replies, CONFIG_CASES read, the playground's
    render of the first config pasted, LOAD_CASES simulated, and DEPLOYED_CASES rendered."""
    from engine.lesson.plans.config_model import inspect_to_dict
    from engine.numbers.catalog.hf_config import model_from_config
    from engine.numbers.errors import EngineError
    from engine.registry import get_widget, widget_names

    plans = _plan_results(PLAN_CASES)
    widgets = {}
    for name in widget_names():
        widget = get_widget(name)
        widgets[name] = widget.run(widget.defaults()).html
    hostile = hostile_results()
    configs: list[Any] = []
    for text in CONFIG_CASES:
        try:
            configs.append(inspect_to_dict(model_from_config(text)))
        except EngineError as error:
            configs.append(error.to_dict())
    playground = get_widget("playground")
    pasted = playground.run(playground.defaults({"model": "config", "config": CONFIG_CASES[0]}))
    return {
        "plans": plans,
        "widgets": widgets,
        "hostile": hostile,
        "configs": configs,
        "pasted": pasted.html,
        "loads": load_results(),
        "deployed": deployed_results(),
    }


def parity_json() -> str:
    """:func:`parity_results` as JSON text (sorted keys)."""
    return json.dumps(parity_results(), sort_keys=True)


def traceback_case() -> list[tuple[str, int | None]]:
    """An error raised inside the standard library, as the traceback module extracts it:
    Pyodide formats every Python error it hands to JavaScript this way, so the bytecode must
    keep what tracebacks need (functions and line numbers; the source lines, absent from the
    shipped runtime, are left out of the comparison)."""
    import traceback

    try:
        json.loads("{")
    except ValueError as error:
        frames = traceback.extract_tb(error.__traceback__)
        return [(frame.name, frame.lineno) for frame in frames]
    raise AssertionError("json.loads('{') parsed")


def browser_corpus_json() -> str:
    """What the build runs in Pyodide, on the stock and on the trimmed runtime, as one JSON
    text (identical runtimes give identical text): every widget case, every plan case, the
    parity results and the traceback case."""
    results = {
        "widgets": widget_results(),
        "plans": plan_results(),
        "parity": parity_results(),
        "traceback": traceback_case(),
    }
    return json.dumps(results, sort_keys=True, default=str)
