"""The roofline: is a workload limited by compute or by memory bandwidth?

Arithmetic intensity = FLOPs / bytes moved to and from memory. A chip's ridge point =
peak FLOP/s / bandwidth (bytes/s): about 295 FLOP/byte for an H100 SXM in bf16
(989.4e12 / 3.35e12). Below the ridge a workload is memory-bound and attains
intensity x bandwidth; above it, compute-bound at the peak (Williams et al. 2009).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers.catalog import HardwareSpec, ModelSpec
from engine.numbers.compute import training_flops_per_token
from engine.numbers.formats import FormatId
from engine.numbers.memory import training_bytes_per_param
from engine.numbers.records import JsonShape, Record
from engine.numbers.serving import decode_step, gathered_bytes, gathered_table_params, prefill
from engine.numbers.training_choices import Convention, Optimizer


def ridge_point(hardware: HardwareSpec, format_id: str = "bf16") -> float:
    """FLOPs per byte at which ``hardware`` turns compute-bound for maths in ``format_id`` (a
    format id, or the compute format of a pass; EngineError naming 'format' when the chip has
    no peak for it)."""
    return hardware.peak_flops_per_s(format_id) / hardware.bandwidth_bytes_per_s


def bound(intensity: float, hardware: HardwareSpec, format_id: FormatId = "bf16") -> str:
    """'compute' if ``intensity`` (FLOP/byte) reaches the ridge point, else 'memory'."""
    return "compute" if intensity >= ridge_point(hardware, format_id) else "memory"


def attainable_flops_per_s(intensity: float, hardware: HardwareSpec,
                           format_id: FormatId = "bf16") -> float:
    """min(peak, intensity x bandwidth): the roof at that intensity, FLOP/s."""
    return min(hardware.peak_flops_per_s(format_id), intensity * hardware.bandwidth_bytes_per_s)


def decode_intensity(model: ModelSpec, hardware: HardwareSpec, *, batch: int = 1,
                     context_tokens: int = 1024, weight_format: FormatId = "bf16",
                     kv_format: FormatId = "bf16") -> float:
    """FLOPs per byte of one decode step (about batch x 2 N / (2 N + KV) in bf16, N the
    weights streamed (an untied input embedding is looked up, not read whole): ~1 at
    batch 1)."""
    return decode_step(model, hardware, batch=batch, context_tokens=context_tokens,
                       weight_format=weight_format, kv_format=kv_format).arithmetic_intensity


def prefill_intensity(model: ModelSpec, hardware: HardwareSpec, *, prompt_tokens: int = 1024,
                      batch: int = 1, weight_format: FormatId = "bf16") -> float:
    """FLOPs per byte of a prefill (about the prompt length in bf16: hundreds to thousands)."""
    return prefill(model, hardware, prompt_tokens=prompt_tokens, batch=batch,
                   weight_format=weight_format).arithmetic_intensity


def train_step_intensity(model: ModelSpec, *, tokens_per_step: float = 4_194_304,
                         optimizer: Optimizer = "adam", convention: Convention = "mixed-16"
                         ) -> float:
    """FLOPs per byte of a training step: model FLOPs per token (about 6 x active N) x
    tokens / (2 x state bytes), i.e. every byte of training state read and written once per
    step (activation traffic ignored)."""
    state = training_bytes_per_param(optimizer, convention)
    return (training_flops_per_token(model).model * tokens_per_step
            / (2.0 * state * model.params))


# Bytes of weight traffic per parameter in one micro-batch, bf16 throughout: the weights
# read in the forward pass (2) and again in the backward pass (2), and the gradient buffer
# read and written as this micro-batch's gradients are added in (2 + 2).
MICRO_BATCH_BYTES_PER_PARAM = 8.0
# A looked-up table (an untied input embedding, learned positions) is not read whole: the
# forward pass reads its tokens' rows and the backward pass adds into their gradients
# without reading it; its gradient buffer is dense, read and written whole (2 + 2).
LOOKED_UP_GRADIENT_BYTES_PER_PARAM = 4.0
ACTIVATION_ROW_BYTES_PER_NUMBER = 2.0


def micro_batch_intensity(model: ModelSpec, *, micro_batch: int = 1, seq_len: int = 4096
                          ) -> float:
    """FLOPs per byte of one micro-batch of ``micro_batch`` sequences of ``seq_len`` tokens:
    model FLOPs per token (about 6 x active N, attention included) x tokens / weight traffic,
    8 bytes per parameter (a looked-up table: 4, its gradients, plus the rows the tokens
    read).

    The weights are re-read for every micro-batch, so this, not the state read once per
    optimiser step, is the intensity the GPU sees: about 0.75 x the micro-batch's tokens
    (Llama 3.1 8B: a little more, its untied input embedding being looked up).
    Activation traffic is left out (it lowers the intensity a little more).
    """
    flops, traffic = micro_batch_work(model, micro_batch=micro_batch, seq_len=seq_len)
    return flops / traffic


def micro_batch_work(model: ModelSpec, *, micro_batch: int = 1, seq_len: int = 4096
                     ) -> tuple[float, float]:
    """The two sides of :func:`micro_batch_intensity`: (model FLOPs, bytes of weight traffic)
    of one micro-batch of ``micro_batch`` sequences of ``seq_len`` tokens. Llama 3.1 8B at
    1 x 4,096: 48.25e9 x 4,096 = 1.98e14 FLOPs over 62.17e9 bytes."""
    tokens = micro_batch * seq_len
    flops = training_flops_per_token(model, seq_len).model * tokens
    table = gathered_table_params(model)
    traffic = (MICRO_BATCH_BYTES_PER_PARAM * (model.params - table)
               + LOOKED_UP_GRADIENT_BYTES_PER_PARAM * table
               + gathered_bytes(model, ACTIVATION_ROW_BYTES_PER_NUMBER, tokens))
    return flops, traffic


@dataclass(frozen=True, slots=True)
class RooflinePoint(Record):
    """One workload on the chart: FLOP/byte, attainable FLOP/s and its bound."""

    name: str
    intensity: float
    attainable_flops_per_s: float
    bound: str


@dataclass(frozen=True, slots=True)
class Roofline(Record):
    """A chip's roof (peak FLOP/s, bandwidth, ridge) and workloads placed under it."""

    JSON = JsonShape(rename={"hardware_id": "hardware", "format_id": "format"})

    hardware_id: str
    format_id: FormatId
    peak_flops_per_s: float
    bandwidth_bytes_per_s: float
    ridge_point: float
    points: tuple[RooflinePoint, ...]


def roofline(model: ModelSpec, hardware: HardwareSpec, *, format_id: FormatId = "bf16",
             batches: tuple[int, ...] = (1, 8, 32, 128, 512), prompt_tokens: int = 1024,
             context_tokens: int = 1024, tokens_per_step: float = 4_194_304) -> Roofline:
    """The roofline of ``hardware`` with the model's prefill, decode at each batch size and
    a training step placed on it."""
    m, hw = model, hardware
    peak = hw.peak_flops_per_s(format_id)
    bw = hw.bandwidth_bytes_per_s
    ridge = peak / bw

    def point(name: str, i: float) -> RooflinePoint:
        return RooflinePoint(name, i, min(peak, i * bw), "compute" if i >= ridge else "memory")

    pts = [point(f"prefill ({prompt_tokens:,} tokens)",
                 prefill_intensity(m, hw, prompt_tokens=prompt_tokens, weight_format=format_id))]
    for b in batches:
        pts.append(point(f"decode, batch {b}", decode_intensity(
            m, hw, batch=b, context_tokens=context_tokens, weight_format=format_id,
            kv_format=format_id)))
    pts.append(point("training step", train_step_intensity(m, tokens_per_step=tokens_per_step)))
    return Roofline(hw.id, format_id, peak, bw, ridge, tuple(pts))
