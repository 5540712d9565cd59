"""Reader-facing names for the engine's memory parts (the engine keys them in snake_case).

Used by the five answers of `plan` and by every chart and table of the widgets.
"""

from __future__ import annotations

PART_LABELS = {
    "weights": "Weights",
    "kv_cache": "KV cache",
    "activations": "Activations",
    "runtime_overhead": "Runtime overhead",
    "gradients": "Gradients",
    "optimizer_states": "Optimizer states",
    "master_weights": "FP32 master weights",
    "fp32_gradients": "FP32 gradient copy",
    "first_moment": "Adam first moment",
    "second_moment": "Adam second moment",
    "momentum": "Momentum",
}


def part_label(key: str) -> str:
    return PART_LABELS.get(key, key.replace("_", " ").capitalize())


def labelled_parts(parts: dict[str, float]) -> list[tuple[str, float]]:
    """(label, bytes) pairs in the engine's order, for charts and tables."""
    return [(part_label(k), v) for k, v in parts.items()]
