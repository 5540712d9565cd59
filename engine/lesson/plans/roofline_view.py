"""A model's passes on one chip's roofline, for the command line's ``roofline``: the roof
(the peak in the maths' format, the bandwidth, the ridge point), the prefill of a prompt,
a decode step at each batch (its bound, the expected step and its three roofs, and the
memory each GPU needs) and a training micro-batch's intensity, as JSON and as lines.

Every number is the engine's: :func:`engine.numbers.serving.prefill` and
:func:`~engine.numbers.serving.decode_step` (the bound: the larger of bytes / bandwidth and
FLOPs / peak), :func:`engine.numbers.expected_serving.decode_parts` (the expected step, as
a tuned stack runs it), :func:`engine.numbers.memory.serving_memory` and
:mod:`engine.numbers.roofline` (the ridge point, a micro-batch's intensity). The widgets
that draw a roofline (the roofline, the decode ceiling, the three roofs) call the same
functions with the same inputs, so their command lines print what they show.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.lesson.plans.fields import (
    PLAN_FIELDS,
    cli_flag,
    flag_text,
    model_flags,
    shell_quote,
)
from engine.numbers import quantities, roofline
from engine.numbers.architecture import check_tensor_parallel
from engine.numbers.catalog import HardwareSpec, ModelSpec, get_hardware
from engine.numbers.errors import EngineError
from engine.numbers.expected_serving import DecodeParts, decode_parts
from engine.numbers.formats import FormatId, get_format
from engine.numbers.memory import ServingMemory, serving_memory
from engine.numbers.serving import (
    DecodeStep,
    Prefill,
    decode_step,
    gathered_table_params,
    prefill,
)
from engine.render.fields import Count, Field, Text, Values
from engine.render.widget import Command
from engine.words.format import (
    format_bandwidth,
    format_flops,
    format_flops_per_byte,
    format_flops_per_s,
    format_GB,
    format_seconds,
    format_tokens_per_s,
)

COMMAND = ("python", "-m", "engine", "roofline")
DEFAULT_BATCHES = "1,8,32,128,512"  # the roofline widget's marked batches
MOST_BATCHES = 64  # a list longer than this is refused (each batch is a row)

# The command's inputs (its flags are the fields' names), each checked where it enters.
ROOFLINE_FIELDS: dict[str, Field[Any]] = {
    "hardware": PLAN_FIELDS["hardware"],
    "gpus": Count("gpus", "Tensor-parallel GPUs", "1", unit="GPUs",
                  quantity=quantities.TENSOR_PARALLEL_IN_SERVER),
    "weight_format": PLAN_FIELDS["weight_format"],
    "kv_format": PLAN_FIELDS["kv_format"],
    "context_tokens": Count("context", "Context per request", "1024", unit="tokens",
                            quantity=quantities.DECODE_CONTEXT_TOKENS),
    "prompt_tokens": PLAN_FIELDS["prompt_tokens"],
    "batches": Text("batches", "Batches (comma-separated)", DEFAULT_BATCHES),
    "micro_batch": PLAN_FIELDS["micro_batch"],
    "seq_len": PLAN_FIELDS["seq_len"].but(default="4096"),
}
_BATCH = Count("batches", "Batch", "1", quantity=quantities.BATCH)


def batches_from_text(text: str) -> tuple[int, ...]:
    """The batches a comma-separated list names, in increasing order, each once."""
    words = [w.strip() for w in text.split(",")]
    if len(words) > MOST_BATCHES:
        raise EngineError(f"at most {MOST_BATCHES} batches, {len(words):,} given.", "batches")
    return tuple(sorted({_BATCH.parse(w) for w in words}))


@dataclass(frozen=True, slots=True)
class DecodePoint:
    """A decode step at one batch: its bound, the expected step's parts and the memory of
    each GPU for that batch (at least one token of context: the token being decoded)."""

    step: DecodeStep
    expected: DecodeParts
    memory: ServingMemory
    one_gpu: DecodeParts | None  # the same step expected on one GPU, when split over more


@dataclass(frozen=True, slots=True)
class RooflineView:
    """The model's prefill, decode steps and training micro-batch on one chip's roof."""

    model: ModelSpec
    hardware: HardwareSpec
    gpus: int
    weight_format: FormatId
    kv_format: FormatId
    compute_format: str
    peak_flops_per_s: float  # one GPU's dense peak in compute_format
    ridge_point: float  # FLOP/byte
    prefill: Prefill
    decode: tuple[DecodePoint, ...]
    single: DecodeStep  # batch 1, the basis of each batch's throughput gain
    micro_batch: int
    seq_len: int
    train_intensity: float  # FLOP/byte of a training micro-batch


def roofline_view(model: ModelSpec, values: Values,
                  fields: Mapping[str, Field[Any]] = ROOFLINE_FIELDS) -> RooflineView:
    """The view for ``values`` (text per field name, checked here)."""
    hw = get_hardware(values[fields["hardware"]])
    gpus = check_tensor_parallel(model, values[fields["gpus"]])
    wf = get_format(values[fields["weight_format"]]).id
    kf = get_format(values[fields["kv_format"]]).id
    context = values[fields["context_tokens"]]
    prompt = values[fields["prompt_tokens"]]
    batches = batches_from_text(values[fields["batches"]])
    micro_batch, seq_len = values[fields["micro_batch"]], values[fields["seq_len"]]

    def step(batch: int) -> DecodeStep:
        return decode_step(model, hw, context_tokens=context, batch=batch, weight_format=wf,
                           kv_format=kf, gpus=gpus)

    def expected(batch: int, split: int) -> DecodeParts:
        return decode_parts(model, hw, context_tokens=context, batch=batch, weight_format=wf,
                            kv_format=kf, gpus=split)

    points = tuple(DecodePoint(
        step(b), expected(b, gpus),
        serving_memory(model, hw, weight_format=wf, kv_format=kf,
                       context_tokens=max(context, 1), batch=b, gpus=gpus),
        expected(b, 1) if gpus > 1 else None) for b in batches)
    single = step(1)
    compute_format = single.compute_format
    return RooflineView(
        model, hw, gpus, wf, kf, compute_format, hw.peak_flops_per_s(compute_format),
        roofline.ridge_point(hw, compute_format),
        prefill(model, hw, prompt_tokens=prompt, weight_format=wf, kv_format=kf, gpus=gpus),
        points, single, micro_batch, seq_len,
        roofline.micro_batch_intensity(model, micro_batch=micro_batch, seq_len=seq_len))


def _bound_of(intensity: float, v: RooflineView) -> str:
    return roofline.bound(intensity, v.hardware, get_format(v.compute_format).id)


def _attained(flops: float, seconds: float, v: RooflineView) -> dict[str, float]:
    """The FLOP/s a pass reaches at its bound, all GPUs together, and its share of their peak."""
    done = flops / seconds
    return {"attained_flops_per_s": done,
            "peak_share": done / (v.peak_flops_per_s * v.gpus)}


def roofline_to_dict(v: RooflineView) -> dict[str, object]:
    """The view as JSON-ready values (plain SI numbers, units in the names)."""
    m, hw = v.model, v.hardware
    decode = []
    for p in v.decode:
        s, e, mem = p.step, p.expected, p.memory
        decode.append({
            **s.to_dict(), **_attained(s.flops, s.seconds, v),
            "tokens_per_s_against_batch_1": s.tokens_per_s / v.single.tokens_per_s,
            "expected": {"seconds": e.seconds, "tokens_per_s_per_user": 1.0 / e.seconds,
                         "maths_seconds": e.maths_seconds, "memory_seconds": e.memory_seconds,
                         "communication_seconds": e.communication_seconds,
                         "kernel_seconds": e.kernel_seconds, "limit": e.limit,
                         **({} if p.one_gpu is None else {
                             "one_gpu_seconds": p.one_gpu.seconds,
                             "speedup_over_one_gpu": p.one_gpu.seconds / e.seconds})},
            "memory": {"context_tokens": mem.context_tokens, "per_gpu_bytes": mem.per_gpu_bytes,
                       "capacity_bytes": mem.capacity_bytes, "fits": mem.fits,
                       "headroom_bytes": mem.headroom_bytes, "parts": dict(mem.parts)},
        })
    pre = v.prefill
    return {
        "model": {"id": m.id, "name": m.name, "params": float(m.params),
                  "active_params": float(m.active_params),
                  # an input embedding a decode step looks up a row of, not reads whole
                  "looked_up_params": float(gathered_table_params(m))},
        "hardware": {"id": hw.id, "name": hw.name, "memory_bytes": hw.memory_bytes},
        "gpus": v.gpus,
        # what the decode steps' all-reduces cross (None on one GPU)
        "link": str(hw.link_spec().scale_up) if v.gpus > 1 else None,
        "weight_format": v.weight_format,
        "kv_format": v.kv_format,
        "compute_format": v.compute_format,
        "peak_flops_per_s": v.peak_flops_per_s,
        "bandwidth_bytes_per_s": hw.bandwidth_bytes_per_s,
        "ridge_point_flops_per_byte": v.ridge_point,
        "prefill": {**pre.to_dict(), **_attained(pre.flops, pre.seconds, v),
                    "tokens_per_s": pre.batch * pre.prompt_tokens / pre.seconds},
        "decode": decode,
        "train_micro_batch": {"micro_batch": v.micro_batch, "seq_len": v.seq_len,
                              **dict(zip(("flops", "bytes"), roofline.micro_batch_work(
                                  m, micro_batch=v.micro_batch, seq_len=v.seq_len),
                                  strict=True)),
                              "arithmetic_intensity": v.train_intensity,
                              "bound": _bound_of(v.train_intensity, v)},
        "note": "Each pass's plain figures are the bound: raw dense peak and datasheet "
                "bandwidth, the larger of FLOPs / peak and bytes / bandwidth. expected is "
                "the step a tuned stack takes and its three roofs (maths, memory, "
                "all-reduces), each on its own. memory is each GPU's for that batch.",
    }


def roofline_text(v: RooflineView) -> str:
    """The view in lines: the roof, the prefill, a row per batch, the training micro-batch."""
    m, hw = v.model, v.hardware
    head = (f"{m.name} on {v.gpus:,} × {hw.name}: weights in {v.weight_format}, KV cache in "
            f"{v.kv_format}, maths in {v.compute_format}")
    pre = v.prefill
    lines = [head, "=" * len(head),
             f"Roof (one GPU): peak {format_flops_per_s(v.peak_flops_per_s)}, bandwidth "
             f"{format_bandwidth(hw.bandwidth_bytes_per_s)}, ridge point "
             f"{format_flops_per_byte(v.ridge_point)}",
             f"Prefill of {pre.prompt_tokens:,} tokens: "
             f"{format_flops_per_byte(pre.arithmetic_intensity)}, {pre.bound}-bound, "
             f"{format_seconds(pre.seconds)} at best",
             f"Decode, {v.decode[0].step.context_tokens:,} tokens of context each (at best; "
             "expected; its largest roof):"]
    for p in v.decode:
        s, e, mem = p.step, p.expected, p.memory
        fits = "fits" if mem.fits else "does not fit"
        comm = (f", all-reduces {format_seconds(e.communication_seconds)}" if v.gpus > 1
                else "")
        lines.append(
            f"  batch {s.batch:>7,}: {format_flops_per_byte(s.arithmetic_intensity)}, "
            f"{s.bound}-bound, {format_seconds(s.seconds)} a step "
            f"({format_tokens_per_s(s.tokens_per_s_per_user)} each, "
            f"{format_tokens_per_s(s.tokens_per_s)} in all); expected "
            f"{format_seconds(e.seconds)} (maths {format_seconds(e.maths_seconds)}, memory "
            f"{format_seconds(e.memory_seconds)}{comm}: {e.limit}); "
            f"{format_GB(mem.per_gpu_bytes)} of {format_GB(mem.capacity_bytes)} per GPU, {fits}")
    flops, traffic = roofline.micro_batch_work(v.model, micro_batch=v.micro_batch,
                                               seq_len=v.seq_len)
    lines.append(f"Training micro-batch of {v.micro_batch:,} × {v.seq_len:,} tokens: "
                 f"{format_flops(flops)} over {format_GB(traffic)} read, "
                 f"{format_flops_per_byte(v.train_intensity)}, "
                 f"{_bound_of(v.train_intensity, v)}-bound")
    return "\n".join(lines)


def roofline_commands(values: Values, model_field: Field[Any], *lines: Mapping[str, object]
                      ) -> Command:
    """A widget's command: a ``python -m engine roofline`` line for each of ``lines`` (the
    inputs by :data:`ROOFLINE_FIELDS` key, typed: a batch list as a tuple of batches), all
    for the model ``model_field`` names, with the file a pasted config is."""
    model, files = model_flags(values, model_field)

    def line(keywords: Mapping[str, object]) -> str:
        words = list(model)
        for key, value in keywords.items():
            text = (",".join(str(b) for b in value) if isinstance(value, tuple)
                    else flag_text(value))
            words += [cli_flag(ROOFLINE_FIELDS[key].name), text]
        return " ".join((*COMMAND, *(shell_quote(w) for w in words)))

    return Command(tuple(line(keywords) for keywords in lines), files)
