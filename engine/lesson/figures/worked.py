"""Figures for the worked problems that end each section of the lesson: the numbers of each
solution that the general figures do not already give (a matmul's intensity, a request's KV
cache, the days of a measured run, the replicas a request rate needs, a token's price)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from engine.lesson.dgx_load import capacity_per_s
from engine.numbers import memory, quantities
from engine.numbers.architecture import Component, layer_components
from engine.numbers.catalog import HardwareSpec, SystemSpec, get_hardware, get_system, resolve_model
from engine.numbers.code_paths import code_path, parse_path
from engine.numbers.compute import flops_per_token as model_flops_per_token
from engine.numbers.compute import training_flops_per_token, training_seconds
from engine.numbers.cost import cost_per_million_tokens_from_catalog
from engine.numbers.errors import EngineError
from engine.numbers.formats import get_format, parse_format
from engine.numbers.load.load_request import load_request, serve_load
from engine.numbers.load.results import LoadResult
from engine.numbers.serve_request import ServeRequest, serve_request
from engine.numbers.serving import DecodeStep, decode_step
from engine.words.format import (
    format_flops,
    format_flops_per_byte,
    format_GB,
    format_seconds,
    format_TFLOP_per_s,
    format_tokens_per_s,
    format_usd,
)

if TYPE_CHECKING:
    from engine.lesson.reality.measurements import Measurement


def _count(value: object, quantity: quantities.Quantity, field: str, label: str) -> int:
    return quantity.check_integer(value, field, label)


def _layer_matrix(model: str, component: str) -> Component:
    """One weight matrix of the model's usual layer, by its name ('mlp.up', 'attention.q')."""
    found = [c for c in layer_components(resolve_model(model_id=model))
             if c.kind == "matmul" and c.name == component]
    if not found:
        raise EngineError(f"No weight matrix {str(component)[:30]!r} in a layer of {model}.",
                          "component")
    return found[0]


def layer_matrix_shape(model: str, component: str = "mlp.up") -> str:
    """A layer's weight matrix as rows x columns: '4,096 × 14,336' for Llama 3.1 8B's MLP
    up-projection."""
    c = _layer_matrix(model, component)
    return f"{c.rows:,} × {c.cols:,}"


def layer_matmul_intensity(model: str, batch: int, component: str = "mlp.up",
                           format: str = "bf16") -> str:
    """FLOPs per byte of a (batch x rows) by (rows x cols) product with a layer's weight
    matrix, each of the three matrices read or written once in ``format``: 2 B D F FLOPs over
    (B D + D F + B F) numbers. '7.98 FLOP/byte' at batch 8 for Llama 3.1 8B's MLP
    up-projection in bf16: about the batch while it is small beside both widths."""
    c = _layer_matrix(model, component)
    b = _count(batch, quantities.BATCH, "batch", "Batch")
    size = get_format(parse_format(format)).bytes_per_number
    numbers = b * c.rows + c.rows * c.cols + b * c.cols
    return format_flops_per_byte(2 * b * c.rows * c.cols / (size * numbers))


def typical_lengths() -> str:
    """The load simulation's typical request: '1,024-token prompts and 256-token answers'."""
    return (f"{quantities.TYPICAL_PROMPT_TOKENS:,}-token prompts and "
            f"{quantities.TYPICAL_OUTPUT_TOKENS:,}-token answers")


def tokens_flops(model: str, tokens: int) -> str:
    """About 2 x parameters FLOPs for each of ``tokens`` tokens through the model: 2 per
    weight a token multiplies, so the input embedding (a lookup) is not counted, nor is
    attention: '3.00 × 10^13 FLOPs' for 2,000 tokens of Llama 3.1 8B (2 x 7.50 billion)."""
    n = _count(tokens, quantities.PROMPT_TOKENS, "tokens", "Tokens")
    return format_flops(model_flops_per_token(resolve_model(model_id=model)) * n)


def server_peak(system: str = "dgx-1", side: str = "cpu", path: str = "matrix") -> str:
    """All of a server's CPUs (``side`` 'cpu', through ``path``) or GPUs ('gpu', tensor cores
    in bf16) at their dense peak: '229.4 TFLOP/s' for dgx-1's two Xeons' AMX units."""
    chip, count = _side(get_system(system), side)
    return format_TFLOP_per_s(code_path(chip, parse_path(path)).peak_flops_per_s * count)


def _side(server: SystemSpec, side: str) -> tuple[HardwareSpec, int]:
    """A server's CPUs ('cpu') or GPUs ('gpu'): the chip and how many."""
    if side == "cpu":
        return server.cpu, server.cpu_count
    if side == "gpu":
        return server.gpu, server.gpu_count
    raise EngineError(f"A server's side is 'cpu' or 'gpu', not {str(side)[:20]!r}.", "side")


def server_tokens_time(model: str, tokens: int, system: str = "dgx-1", side: str = "cpu",
                       path: str = "matrix") -> str:
    """``tokens`` tokens through ``model`` (about 2 x parameters FLOPs each, as
    :func:`tokens_flops`) on all of a server's CPUs or GPUs at their dense peak, the bound:
    '131 ms' for 2,000 tokens of Llama 3.1 8B on dgx-1's two Xeons."""
    chip, count = _side(get_system(system), side)
    n = _count(tokens, quantities.PROMPT_TOKENS, "tokens", "Tokens")
    flops = model_flops_per_token(resolve_model(model_id=model)) * n
    return format_seconds(flops / (code_path(chip, parse_path(path)).peak_flops_per_s * count))


def kv_per_request(model: str, context: int, format: str = "bf16") -> str:
    """The KV cache of one request of ``context`` tokens: '10.74 GB' for Llama 3.1 70B at
    32,768 tokens in bf16."""
    c = _count(context, quantities.CONTEXT_TOKENS, "context", "Context")
    return format_GB(memory.kv_cache_bytes(resolve_model(model_id=model), c,
                                           parse_format(format)))


def serve_concurrent(model: str, context: int, hardware: str = "h100-sxm", gpus: int = 1,
                     format: str = "bf16") -> str:
    """How many requests of ``context`` tokens the KV cache holds at once, on ``gpus`` GPUs
    (tensor parallel) after the weights in ``format`` and working space: '35'."""
    plan = memory.serving_memory(
        resolve_model(model_id=model), get_hardware(hardware),
        weight_format=parse_format(format),
        context_tokens=_count(context, quantities.CONTEXT_TOKENS, "context", "Context"),
        gpus=_count(gpus, quantities.GPUS, "gpus", "GPU count"))
    return f"{plan.max_concurrent_requests:,}"


def serve_kv_room(model: str, hardware: str = "h100-sxm", gpus: int = 1,
                  format: str = "bf16") -> str:
    """What each GPU gives the KV cache once its share of the weights in ``format``, the
    working space and the runtime overhead are in (as vLLM sizes it): '64.98 GB' for Llama
    3.1 70B in bf16 over 8 H100s."""
    return format_GB(memory.kv_cache_room_bytes(
        resolve_model(model_id=model), get_hardware(hardware),
        weight_format=parse_format(format),
        gpus=_count(gpus, quantities.GPUS, "gpus", "GPU count")))


def kv_per_request_per_gpu(model: str, context: int, gpus: int, format: str = "bf16") -> str:
    """One request's KV cache of ``context`` tokens split over ``gpus`` GPUs (tensor
    parallel splits its KV heads evenly): '1.34 GB' for Llama 3.1 70B at 32,768 tokens on 8."""
    c = _count(context, quantities.CONTEXT_TOKENS, "context", "Context")
    g = _count(gpus, quantities.GPUS, "gpus", "GPU count")
    return format_GB(memory.kv_cache_bytes(resolve_model(model_id=model), c,
                                           parse_format(format)) / g)


def state_gpu_count(model: str, hardware: str = "h100-sxm") -> int:
    """The fewest GPUs whose memory holds the model's training state (16 bytes a parameter,
    mixed precision and Adam, fully sharded) before activations: 77 for Llama 3.1 405B on
    H100s."""
    state = resolve_model(model_id=model).params * memory.training_bytes_per_param()
    return math.ceil(state / get_hardware(hardware).memory_bytes)


def state_gpus(model: str, hardware: str = "h100-sxm") -> str:
    """:func:`state_gpu_count` as prose: '77'."""
    return f"{state_gpu_count(model, hardware):,}"


def _measured_mfu(measurement: str) -> Measurement:
    """A published training run's row of "How good are these numbers?", by id, whose metric
    is its MFU."""
    # Imported here: only the build reads the measurements file; the browser never does.
    from engine.lesson.reality.measurements import load

    for m in load():
        if m.id == measurement and m.metric == "train_mfu" and m.model is not None:
            return m
    raise EngineError(f"No measured training MFU {str(measurement)[:40]!r}.", "measurement")


def _run_flops(m: Measurement) -> float:
    """The model FLOPs of a published run: 6 x parameters x tokens plus attention at the
    run's own sequence length."""
    return training_flops_per_token(resolve_model(model_id=m.model), m.seq_len).model * m.tokens


def measured_run_days(measurement: str) -> str:
    """A published training run's time at its own measured MFU, GPUs and tokens: the model
    FLOPs over GPUs x bf16 peak x MFU: '68.6 days' for Llama 3.1 405B on 16,384 H100s at 41 %."""
    m = _measured_mfu(measurement)
    peak = get_hardware(m.hardware).peak_flops_per_s("bf16")
    return format_seconds(training_seconds(_run_flops(m), m.gpus, peak, m.value))


def measured_run_gpus(measurement: str) -> str:
    """The GPUs of a published training run: '16,384'."""
    return f"{_measured_mfu(measurement).gpus:,}"


def measured_run_flops(measurement: str) -> str:
    """The model FLOPs of a published training run: '3.94 × 10^25 FLOPs'."""
    return format_flops(_run_flops(_measured_mfu(measurement)))


def _decode(model: str, batch: object, context: object, hardware: str) -> DecodeStep:
    return decode_step(resolve_model(model_id=model), get_hardware(hardware),
                       batch=_count(batch, quantities.BATCH, "batch", "Batch"),
                       context_tokens=(_count(context, quantities.CONTEXT_TOKENS, "context",
                                              "Context") if context else 0))


def decode_throughput(model: str, batch: int = 1, context: int = 0,
                      hardware: str = "h100-sxm") -> str:
    """Tokens/s of one GPU decoding ``batch`` requests at ``context`` tokens each, at the
    bound (datasheet bandwidth or dense peak, whichever is slower): '223 tokens/s' at batch 1."""
    return format_tokens_per_s(_decode(model, batch, context, hardware).tokens_per_s)


def decode_price(model: str, batch: int = 1, context: int = 0,
                 hardware: str = "h100-sxm") -> str:
    """A million output tokens of that decode on one GPU rented at the catalogue's price,
    busy all the time: '$3.72'."""
    cost = cost_per_million_tokens_from_catalog(
        tokens_per_s=_decode(model, batch, context, hardware).tokens_per_s,
        hardware_id=get_hardware(hardware).id)
    return format_usd(cost.usd_per_million_tokens)


LOAD_REQUESTS = 400  # simulated requests at a rate: p99 rests on four of them
MOST_REPLICAS = 64  # the search for a replica count stops here


def _replicas(model: str, hardware: str, replicas: int) -> ServeRequest:
    """``replicas`` one-GPU copies of ``model`` in bf16, serving typical prompts and answers
    (the load simulation's defaults)."""
    prompt, output = quantities.TYPICAL_PROMPT_TOKENS, quantities.TYPICAL_OUTPUT_TOKENS
    return serve_request(
        resolve_model(model_id=model), get_hardware(hardware), gpus=replicas, serve_tp=1,
        batch=replicas, weight_format="bf16", kv_format="bf16",
        context_tokens=prompt + output, prompt_tokens=prompt, output_tokens=output)


def _at_rate(model: str, hardware: str, replicas: int, rate: float) -> LoadResult:
    """The simulation of ``replicas`` at ``rate`` requests/s (Poisson arrivals, seed 0)."""
    load = load_request(rate=rate, requests=LOAD_REQUESTS)
    assert load is not None  # a rate is given
    return serve_load(_replicas(model, hardware, replicas), load)


def _capacity(model: str, hardware: str) -> float:
    """The most requests/s one one-GPU replica completes: dgx-1's saturation rate, the
    figure its traffic's verdict says (:func:`engine.lesson.dgx_load.capacity_per_s`)."""
    return capacity_per_s(_replicas(model, hardware, 1))


def _rate(rate: object) -> float:
    return quantities.REQUEST_RATE.check(rate, "rate", "Request rate")


def replica_capacity(model: str, hardware: str = "h100-sxm") -> str:
    """The most requests/s one one-GPU replica completes (typical prompts and answers):
    '19.9 requests/s'."""
    return f"{_capacity(model, hardware):,.1f} requests/s"


def _keeping_up(model: str, rate: float, hardware: str) -> int:
    """The fewest replicas whose capacity is at least ``rate``: fewer, and the queue grows
    without bound, however a short simulated run looks."""
    return math.ceil(rate / _capacity(model, hardware))


def _meeting(model: str, rate: float, ttft_s: object, hardware: str) -> int:
    """The fewest replicas that keep up and whose simulated p99 time to first token stays
    within ``ttft_s`` seconds."""
    target = quantities.LATENCY_TARGET_SECONDS.check(ttft_s, "ttft_s", "TTFT target")
    for replicas in range(_keeping_up(model, rate, hardware), MOST_REPLICAS + 1):
        if _at_rate(model, hardware, replicas, rate).ttft_seconds.p99 <= target:
            return replicas
    raise EngineError(f"No count up to {MOST_REPLICAS} replicas meets that target.", "ttft_s")


def replicas_from_capacity(model: str, rate: float, hardware: str = "h100-sxm") -> str:
    """``rate`` over one replica's capacity, rounded up: the replicas that keep the queue
    from growing without bound, before any latency target: '3' for Llama 3.1 8B at 50/s."""
    return f"{_keeping_up(model, _rate(rate), hardware):,}"


def replicas_needed(model: str, rate: float, ttft_s: float,
                    hardware: str = "h100-sxm") -> str:
    """The fewest one-GPU replicas that keep up with ``rate`` requests/s and whose simulated
    p99 time to first token stays within ``ttft_s`` seconds (:data:`LOAD_REQUESTS`
    requests): '4' for Llama 3.1 8B at 50/s within 0.05 s."""
    return f"{_meeting(model, _rate(rate), ttft_s, hardware):,}"


def replicas_ttft(model: str, rate: float, replicas: int = 0, ttft_s: float | None = None,
                  hardware: str = "h100-sxm", at: str = "p99") -> str:
    """The simulated time to first token (``at`` 'p50' or 'p99') at ``rate`` requests/s of
    ``replicas`` one-GPU replicas; 0: the fewest that keep up, or with ``ttft_s`` the fewest
    that also meet it (:func:`replicas_needed`): '66 ms'."""
    if at not in ("p50", "p99"):
        raise EngineError(f"A percentile is 'p50' or 'p99', not {str(at)[:10]!r}.", "at")
    r = _rate(rate)
    if replicas:
        n = _count(replicas, quantities.GPUS, "replicas", "Replicas")
    elif ttft_s is None:
        n = _keeping_up(model, r, hardware)
    else:
        n = _meeting(model, r, ttft_s, hardware)
    ttft = _at_rate(model, hardware, n, r).ttft_seconds
    return format_seconds(ttft.p50 if at == "p50" else ttft.p99)


WORKED_FIGURES = (layer_matrix_shape, layer_matmul_intensity, typical_lengths, tokens_flops, server_peak, server_tokens_time,
                  kv_per_request, serve_concurrent, serve_kv_room, kv_per_request_per_gpu,
                  state_gpus, measured_run_days,
                  measured_run_gpus, measured_run_flops, decode_throughput, decode_price,
                  replica_capacity, replicas_from_capacity, replicas_needed, replicas_ttft)
