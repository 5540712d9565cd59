"""Cases run both in CPython and inside Pyodide; their JSON must be identical.

Covers plan() for serving and training across models, chips and options, and every widget's
rendered HTML for its default inputs. Kept free of test-only dependencies so it runs in
Pyodide with nothing but the engine wheel.
"""

from __future__ import annotations

import json
from typing import Any

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
]

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


def results() -> dict[str, Any]:
    from engine.lesson.plans.plan_json import plan_to_dict
    from engine.numbers.errors import EngineError
    from engine.numbers.plan import plan
    from engine.registry import get_widget, widget_names

    out: dict[str, Any] = {"plans": [], "widgets": {}}
    for case in PLAN_CASES:
        try:
            out["plans"].append(plan_to_dict(plan(**case)))
        except EngineError as error:
            out["plans"].append(error.to_dict())
    for name in widget_names():
        widget = get_widget(name)
        out["widgets"][name] = widget.run(widget.defaults()).html
    out["hostile"] = hostile()
    from engine.lesson.plans.config_model import inspect_to_dict
    from engine.numbers.catalog.hf_config import model_from_config

    out["configs"] = []
    for text in CONFIG_CASES:
        try:
            out["configs"].append(inspect_to_dict(model_from_config(text)))
        except EngineError as error:
            out["configs"].append(error.to_dict())
    playground = get_widget("playground")
    out["pasted"] = playground.run(playground.defaults({"model": "config",
                                                        "config": CONFIG_CASES[0]})).html
    return out


# Saved values that once killed the runtime in the browser (the WebAssembly stack overflowed
# parsing 20,000 nested brackets): each must come back as a message on its field.
HOSTILE_CASES: list[tuple[str, dict[str, str]]] = [
    ("dgx_panel", {"state": "[" * 20_000}),
    ("launch_training", {"state": "{" * 20_000}),
    ("drill_will_it_fit", {"state": "[" * 20_000}),
    ("drill_speed", {"state": "[" * 20_000}),
]


def hostile() -> list[Any]:
    from engine.browser import update

    return [json.loads(update(name, json.dumps(inputs))) for name, inputs in HOSTILE_CASES]


def results_json() -> str:
    return json.dumps(results(), sort_keys=True)
