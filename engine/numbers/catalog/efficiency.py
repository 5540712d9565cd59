"""Achievable efficiencies (data/efficiency.toml): what a well-tuned stack reaches of the
datasheet, each a named, sourced value. The engine's *expected* times use them; its *bounds*
never do.

Every lookup returns a :class:`Basis` (name, value, source) so that an expected time can say
exactly which efficiencies it used, and where a chip has no measurement, which default
applied and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from engine.numbers.catalog._data import load
from engine.numbers.catalog.hardware import HardwareSpec
from engine.numbers.errors import EngineError
from engine.numbers.formats import get_format
from engine.numbers.records import Record

# The compute format -> the row of [matmul.*] it is measured under.
_MATMUL_KEY = {"bf16": "bf16", "fp16": "bf16", "fp8": "fp8", "int8": "fp8", "fp4": "fp8",
               "fp32": "fp32", "tf32": "fp32"}


@dataclass(frozen=True, slots=True)
class Basis(Record):
    """One efficiency or cost an expected value rests on: ``value`` (a fraction, or seconds
    when the name says so) and where it comes from."""

    name: str
    value: float
    source: str

    def __post_init__(self) -> None:
        if not self.value >= 0:
            raise EngineError(f"Efficiency {self.name!r} must be >= 0.")


@cache
def _data() -> dict[str, Any]:
    data = load("efficiency")
    for kind, row in data["memory"].items():
        for key, v in row.items():
            if key.startswith("fraction") and not 0 < float(v) <= 1:
                raise EngineError(f"efficiency.toml memory.{kind}.{key} must be in (0, 1].")
    for chip, row in data["matmul"].items():
        for key, v in row.items():
            if key not in ("source", "formats") and not 0 < float(v) <= 1:
                raise EngineError(f"efficiency.toml matmul.{chip}.{key} must be in (0, 1].")
    return data


def matmul_fraction(hw: HardwareSpec, compute_format: str, weight_format: str = "") -> Basis:
    """Fraction of ``hw``'s dense peak in ``compute_format`` that large matmuls reach.

    llama.cpp's formats (``weight_format`` q4_0, q8_0...) multiplied in int8 run its own
    kernels, whose measured rate applies on every chip ([matmul.ggml])."""
    key = _MATMUL_KEY.get(compute_format, "bf16")
    table = _data()["matmul"]
    ggml = table["ggml"]
    if weight_format in ggml["formats"] and compute_format in ggml:
        return Basis(f"matmul efficiency (llama.cpp's {compute_format} kernels for "
                     f"{weight_format})", float(ggml[compute_format]), ggml["source"])
    row = table.get(hw.id, {})
    if compute_format in row and compute_format != key:  # a chip-specific row, e.g. fp16
        key = compute_format
    if key in row:
        return Basis(f"matmul efficiency ({key}, {hw.name})", float(row[key]), row["source"])
    d = table["default"]
    if "bf16" in row:
        # Measured in bf16 only: the other format keeps the ratio the measured chips show.
        value = float(row["bf16"]) * float(d[key]) / float(d["bf16"])
        return Basis(f"matmul efficiency ({key}, {hw.name}: its bf16 figure x {d[key]} / "
                     f"{d['bf16']}, no {key} measurement)", value,
                     f"{row['source']}; {d['source']}")
    return Basis(f"matmul efficiency ({key}, default: no measurement for this chip)",
                 float(d[key]), d["source"])


@cache
def _power_table() -> dict[str, Any]:
    return dict(load("kernel_rates")["power"])


def power_cap_scale(hw: HardwareSpec) -> Basis:
    """What ``hw``'s compute-bound rates are multiplied by because it runs below the power
    its measured rates assume: runs_at_W / peak_assumes_W (kernel_rates.toml
    [power.cap_rule]), at most 1; exactly 1 (with an empty source) for a chip run at the
    power its rates assume. Training's kernel rates and serving's efficiencies both take it
    through :func:`under_power_cap`."""
    table = _power_table()
    row = table.get(hw.id)
    if row is None or "runs_at_W" not in row:
        return Basis(f"power cap ({hw.name}: none)", 1.0, "")
    cap = float(row["runs_at_W"])
    rated = float(row["peak_assumes_W"])
    if not 0 < cap <= rated:
        raise EngineError(f"kernel_rates.toml power.{hw.id}: runs_at_W must be in "
                          f"(0, peak_assumes_W].")
    rule = table["cap_rule"]
    return Basis(f"compute-bound rates under a {cap:g} W power cap ({hw.name}: {cap:g} / "
                 f"{rated:g} W of its measured rates)", cap / rated,
                 f"{row['source']}; {rule['source']}")


def under_power_cap(hw: HardwareSpec, basis: Basis) -> Basis:
    """``basis``, a compute-bound fraction, as it runs under ``hw``'s power cap (if any)."""
    scale = power_cap_scale(hw)
    if scale.value == 1.0:
        return basis
    return Basis(f"{basis.name}, x {scale.value:.3f} under a power cap", basis.value * scale.value,
                 f"{basis.source}; {scale.source}")


def memory_fraction(hw: HardwareSpec, weight_format: str) -> Basis:
    """Fraction of ``hw``'s datasheet bandwidth that decode's memory-bound kernels reach.

    On CPUs and SoCs (llama.cpp) 8-bit and 4-bit weights reach less: dequantising them is the
    limit there, not memory. GPUs' quantised kernels (Marlin, TensorRT-LLM) keep up.
    """
    row = _data()["memory"][hw.kind]
    b = get_format(weight_format).bytes_per_number
    key = "fraction"
    if hw.kind in ("cpu", "soc") and b < 0.75:
        key = "fraction_4bit"
    elif hw.kind in ("cpu", "soc") and b < 1.5:
        key = "fraction_8bit"
    label = {"fraction": "", "fraction_8bit": ", 8-bit weights",
             "fraction_4bit": ", 4-bit weights"}[key]
    return Basis(f"memory bandwidth efficiency ({hw.kind}{label})", float(row[key]),
                 row["source"])


def per_kernel_seconds() -> Basis:
    """Fixed time of one kernel however little it does (seconds): its ramp-up and drain."""
    k = _data()["kernels"]
    return Basis("fixed cost per kernel (seconds)", float(k["per_kernel_seconds"]),
                 k["per_kernel_source"])


def kernel_seconds_per_layer() -> Basis:
    """Fixed time per layer of a decode step or prefill: kernels x per-kernel latency (s)."""
    k = _data()["kernels"]
    n = int(k["per_layer"])
    each = float(k["per_kernel_seconds"])
    return Basis(f"kernel overhead per layer ({n} kernels x {each * 1e6:g} us, seconds)",
                 n * each, f"{k['per_kernel_source']}; {k['per_layer_source']}")


def prefill_host_seconds_per_layer() -> Basis:
    """Host time to dispatch one layer of an eager (not graph-captured) prefill (s): the floor
    of a short prompt's prefill."""
    p = _data()["prefill"]
    return Basis("host dispatch per layer of an eager prefill (seconds)",
                 float(p["host_seconds_per_layer"]), p["source"])


@cache  # read on every kernel's time: the simulation calls it thousands of times a run
def overlap_exponent() -> Basis:
    """p of (t_memory^p + t_maths^p)^(1/p): how a kernel's streaming and maths add up (1: not
    at all overlapped; the larger p, the nearer the roofline's max)."""
    o = _data()["overlap"]
    value = float(o["exponent"])
    if not value >= 1:
        raise EngineError("efficiency.toml overlap.exponent must be >= 1.")
    return Basis("overlap of streaming and maths: (memory^p + maths^p)^(1/p), p", value,
                 o["source"])


def attention_fraction() -> Basis:
    """Fraction of the dense peak attention kernels (FlashAttention) reach."""
    a = _data()["attention"]
    return Basis("attention efficiency (FlashAttention)", float(a["fraction"]), a["source"])


def forward_matmul_share() -> Basis:
    """Share of a forward pass's time spent in matmuls and attention (the rest: norms,
    activations, rotary embedding, residual adds)."""
    f = _data()["forward"]
    return Basis("matmul share of a forward pass", float(f["matmul_share"]), f["source"])


def forward_source() -> str:
    """Why attention and the kernels outside matmuls keep their 16-bit time under fp8 or int8
    matmuls (data/efficiency.toml [forward] and [attention])."""
    f = _data()["forward"]
    return (f"{f['source']}; those kernels and FlashAttention work on 16-bit activations "
            f"whatever the weights are stored in; {_data()['attention']['source']}")


@dataclass(frozen=True, slots=True)
class TrainingDefaults:
    """Sourced assumptions of an expected training step."""

    global_batch_tokens: int
    global_batch_source: str
    grad_bytes_per_param: float
    grad_bytes_source: str
    overlap_source: str


@cache
def collective_sm_share() -> Basis:
    """Share of a GPU's streaming multiprocessors a collective running beside compute takes
    (the compute beside it runs on the rest, so it takes 1 / (1 - share) as long)."""
    t = _data()["training"]
    return Basis("share of the SMs a collective beside compute takes",
                 float(t["collective_sm_share"]), t["collective_sm_source"])


def tp_comm_overlap_source() -> str:
    """Where the rule that hides tensor parallelism's collectives under the layers' GEMMs
    comes from (training_choices.TpComm 'overlapped')."""
    return str(_data()["training"]["tp_comm_overlap_source"])


def grad_reduce_basis(grad_reduce: str) -> Basis:
    """Bytes per gradient the data-parallel reduction moves, and the optimiser step reads
    (training_choices.GradReduce): 2 in bf16 (the default), 4 in fp32."""
    t = _data()["training"]
    if grad_reduce == "fp32":
        return Basis("gradient bytes per parameter (reduced in fp32)", 4.0,
                     str(t["fp32_grad_bytes_source"]))
    return Basis("gradient bytes per parameter", float(t["grad_bytes_per_param"]),
                 str(t["grad_bytes_source"]))


def zero3_under_pipeline_source() -> str:
    """Where the rule that ZeRO-3 under a pipeline keeps each stage's gathered weights and
    unsharded gradients for the whole step comes from (engine.numbers.memory.sharding_stage)."""
    return str(_data()["training"]["zero3_under_pipeline_source"])


def pipeline_split_source() -> str:
    """Where the 'embedding-and-loss' pipeline split comes from
    (training_choices.PipelineSplit)."""
    return str(_data()["training"]["pipeline_split_source"])


def sharded_gradients_source() -> str:
    """Where the rule that sharded gradients (ZeRO-2) are reduce-scattered every micro-batch
    comes from (engine.numbers.expected_training)."""
    return str(_data()["training"]["sharded_gradients_source"])


def param_gather_basis(placement: str) -> Basis:
    """Where ZeRO-1/2's all-gather of the updated weights runs (training_choices.ParamGather),
    as a basis entry: 1 when beside the next step's forward pass, 0 when exposed."""
    t = _data()["training"]
    if placement == "overlapped":
        return Basis("ZeRO-1/2 all-gather of the updated weights beside the next step's first "
                     "forward pass (1/3 of a micro-batch's compute)", 1.0,
                     str(t["param_gather_overlapped_source"]))
    return Basis("ZeRO-1/2 all-gather of the updated weights after the optimiser step, "
                 "exposed", 0.0, str(t["param_gather_after_step_source"]))


def training_defaults() -> TrainingDefaults:
    t = _data()["training"]
    return TrainingDefaults(int(t["global_batch_tokens"]), t["global_batch_source"],
                            float(t["grad_bytes_per_param"]), t["grad_bytes_source"],
                            t["overlap_source"])


@dataclass(frozen=True, slots=True)
class InterruptionRecord(Record):
    """A published count of a training job's unexpected interruptions: ``interruptions`` in
    ``days`` days on ``gpus`` GPUs, with its ``source``."""

    interruptions: int
    days: float
    gpus: int
    source: str


@cache
def interruption_record() -> InterruptionRecord:
    """The observed interruptions of a large synchronous training run
    (data/efficiency.toml [reliability])."""
    r = _data()["reliability"]
    record = InterruptionRecord(int(r["unexpected_interruptions"]), float(r["observed_days"]),
                                int(r["observed_gpus"]), r["source"])
    if record.interruptions < 0 or record.days <= 0 or record.gpus <= 0:
        raise EngineError("efficiency.toml reliability: counts must be positive.")
    return record
