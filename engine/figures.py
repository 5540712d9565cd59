"""Named numbers for prose: `{{ figure("weights", model="llama-3.1-8b") }}` in a page.

Each figure is a function of keyword arguments (text or numbers, as an author writes them)
returning the number formatted for reading. Prose that uses them cannot drift from the engine.
"""

from __future__ import annotations

from collections.abc import Callable

from engine import memory
from engine.architecture import layer_components
from engine.catalog import get_hardware, resolve_model
from engine.compute import flops_per_token as _flops_per_token
from engine.errors import EngineError
from engine.serving import request_timeline
from engine.units import format_bytes, format_count, format_GB, format_seconds

Figure = Callable[..., str]


def params(model: str) -> str:
    """'8.03 billion'."""
    return format_count(resolve_model(model_id=model).params)


def params_exact(model: str) -> str:
    """'8,030,261,248'."""
    return f"{resolve_model(model_id=model).params:,}"


def weights(model: str, format: str = "bf16") -> str:
    """Size of the weights: '16.06 GB'."""
    return format_GB(memory.weights_bytes(resolve_model(model_id=model).params, format))


def capacity(hardware: str) -> str:
    """A chip's memory: '80 GB'."""
    return format_GB(get_hardware(hardware).memory_bytes)


def serve_total(
    model: str,
    hardware: str = "h100-sxm",
    format: str = "bf16",
    approx: bool = False,
) -> str:
    """The default serving plan's memory on one GPU: '18.79 GB', or '19 GB' with ``approx``."""
    plan = memory.serving_memory(
        resolve_model(model_id=model), get_hardware(hardware), weight_format=format
    )
    if approx:
        return f"{round(plan.per_gpu_bytes / 1e9):,} GB"
    return format_GB(plan.per_gpu_bytes)


def flops_per_token(model: str) -> str:
    """'16.1 billion FLOPs'."""
    return f"{format_count(_flops_per_token(resolve_model(model_id=model)))} FLOPs"


def kv_per_token(model: str, format: str = "bf16") -> str:
    """'131,072 bytes (131.1 kB)'."""
    n = memory.kv_cache_bytes_per_token(resolve_model(model_id=model), format)
    return f"{n:,.0f} bytes ({format_bytes(n)})"


def layers(model: str) -> str:
    """'32'."""
    return f"{resolve_model(model_id=model).layers:,}"


def layer_params(model: str) -> str:
    """Parameters of one layer (the model's usual kind): '218 million'."""
    return format_count(sum(c.params for c in layer_components(resolve_model(model_id=model))))


def train_bytes_per_param(optimizer: str = "adam", convention: str = "mixed-16") -> str:
    """Training state per parameter: '16 bytes'."""
    return f"{sum(memory.training_state_bytes_per_param(optimizer, convention).values()):g} bytes"


def train_state(model: str, optimizer: str = "adam", convention: str = "mixed-16") -> str:
    """Training state of the whole model before activations: '128.5 GB'."""
    per_param = sum(memory.training_state_bytes_per_param(optimizer, convention).values())
    return format_GB(resolve_model(model_id=model).params * per_param)


def time_per_token(
    model: str, hardware: str = "h100-sxm", prompt_tokens: int = 1000, output_tokens: int = 300
) -> str:
    """Mean decode-step time of one request: '4.84 ms'."""
    run = request_timeline(
        resolve_model(model_id=model),
        get_hardware(hardware),
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
    )
    return format_seconds(run.tpot_seconds)


FIGURES: dict[str, Figure] = {
    f.__name__: f
    for f in (
        params,
        params_exact,
        weights,
        capacity,
        serve_total,
        flops_per_token,
        kv_per_token,
        layers,
        layer_params,
        train_bytes_per_param,
        train_state,
        time_per_token,
    )
}


def get_figure(name: object) -> Figure:
    if isinstance(name, str) and name in FIGURES:
        return FIGURES[name]
    raise EngineError(
        f"Unknown figure {str(name)[:40]!r}; known figures: {', '.join(sorted(FIGURES))}.", "figure"
    )
