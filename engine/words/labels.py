"""Reader-facing names: the engine's memory parts (keyed in snake_case by the numbers layer)
and chips counted in a sentence. Used by the answers of `plan` and by every chart and table.
"""

from __future__ import annotations

from engine.numbers.catalog import HardwareSpec

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


def side_name(chip: HardwareSpec, count: int) -> str:
    """'2 × Intel Xeon Platinum 8480C (one socket)' reads oddly: drop the per-socket note."""
    name = chip.name.replace(" (one socket)", "")
    return name if count == 1 else f"{count} × {name}"
