"""A continuous-batching server's settings and host costs (data/server.toml): the
scheduler's limits as vLLM sets them by default, the KV-cache block size, and the host's time
between two steps, each with its source.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from engine.numbers.catalog._data import load
from engine.numbers.catalog.efficiency import Basis
from engine.numbers.catalog.hardware import HardwareSpec, device_memory_bytes
from engine.numbers.errors import EngineError


@dataclass(frozen=True, slots=True)
class SchedulerLimits:
    """What vLLM's scheduler allows in one step by default on a chip: at most
    ``max_running`` sequences, at most ``max_batched_tokens`` tokens (prefill chunks and
    decodes together), KV cache in blocks of ``block_tokens`` tokens."""

    max_running: int
    max_batched_tokens: int
    block_tokens: int
    source: str


@cache
def _data() -> dict[str, Any]:
    data = load("server")
    for key in ("per_step_seconds", "per_sequence_seconds"):
        if not float(data["host"][key]) >= 0:
            raise EngineError(f"server.toml host.{key} must be >= 0.")
    if not 0 < float(data["memory"]["default_gpu_memory_utilization"]) <= 1:
        raise EngineError("server.toml memory.default_gpu_memory_utilization must be in (0, 1].")
    return data


def scheduler_limits(hw: HardwareSpec) -> SchedulerLimits:
    """vLLM's OpenAI server defaults on ``hw``: the larger budget on a GPU of 70 GiB or more
    that is not an A100, the smaller on every other chip. vLLM reads the device's whole
    memory, so a GPU that other jobs partly fill keeps its own defaults."""
    s = _data()["scheduler"]
    large = (hw.kind == "gpu" and device_memory_bytes(hw) >= float(s["large_gpu_bytes"])
             and "a100" not in hw.id)
    size = "large" if large else "small"
    return SchedulerLimits(int(s[f"{size}_max_running"]), int(s[f"{size}_max_batched_tokens"]),
                           int(s["block_tokens"]), s["source"])


def default_memory_utilization() -> Basis:
    """vLLM's default share of each GPU's memory it may use (its KV cache takes what the
    weights and working space leave of that share); the lesson's caches use all of it."""
    m = _data()["memory"]
    return Basis("vLLM's default gpu_memory_utilization (share of GPU memory)",
                 float(m["default_gpu_memory_utilization"]), m["source"])


def host_seconds_per_step() -> Basis:
    """The host's fixed time between two steps (s), whatever the batch."""
    h = _data()["host"]
    return Basis("host time per step (sampling, output processing, scheduling; seconds)",
                 float(h["per_step_seconds"]), h["per_step_source"])


def host_seconds_per_sequence() -> Basis:
    """The host's time between two steps for each sequence in the batch (s)."""
    h = _data()["host"]
    return Basis("host time per sequence in a step (seconds)",
                 float(h["per_sequence_seconds"]), h["per_sequence_source"])
