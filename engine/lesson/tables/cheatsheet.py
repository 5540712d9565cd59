"""Tables for the cheat sheet (docs/steps/cheat-sheet.md), rendered at build time from the engine.

Each function takes keyword arguments as an author writes them in markdown (text) and
returns one HTML table: ``{{ table("cheat_fits") }}``. Every cell is computed here from the
catalogue and the engine's own functions, so the sheet cannot drift from the lesson's widgets.
Tables carry ``data-cheat="NAME"`` and row headers, so tests and screen readers can find a
cell by its row and column.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engine.numbers import quantities
from engine.numbers.catalog import HardwareSpec, ModelSpec, get_hardware, get_model, list_hardware
from engine.numbers.compute import flops_per_token, training_flops, training_flops_per_token
from engine.numbers.errors import EngineError
from engine.numbers.formats import FORMATS, get_format
from engine.numbers.memory import (
    min_gpus_to_serve,
    serving_memory,
    training_state_bytes_per_param,
)
from engine.numbers.plan import CHINCHILLA_TOKENS_PER_PARAM
from engine.numbers.roofline import ridge_point
from engine.numbers.serving import decode_step
from engine.numbers.training_choices import MEMORY_CONVENTIONS, OPTIMIZERS, checked
from engine.render.html import column_heads, esc, table_box, tag
from engine.words.format import (
    format_bandwidth,
    format_count,
    format_flops,
    format_GB,
    format_seconds,
    format_tokens_per_s,
)
from engine.words.labels import part_label

# The lesson's models, smallest to largest, and the GPUs a reader is likely to meet.
FIT_MODELS = (
    "llama-3.2-3b",
    "llama-3.1-8b",
    "gemma-2-9b",
    "mixtral-8x7b",
    "llama-3.1-70b",
    "qwen2.5-72b",
    "llama-3.1-405b",
    "deepseek-v3",
)
SHEET_GPUS = (
    "l4",
    "rtx-4090",
    "a100-40gb",
    "l40s",
    "a100-80gb",
    "h100-sxm",
    "h200",
    "b200",
    "mi300x",
)
DECODE_MODELS = ("llama-3.1-8b", "llama-3.1-70b")
EXAMPLE_MODEL = "llama-3.1-8b"
NOT_AVAILABLE = "—"


def _ids(value: object, field: str, default: Sequence[str]) -> tuple[str, ...]:
    """A comma-separated list of ids as an author writes it; empty means ``default``."""
    if value is None or value == "":
        return tuple(default)
    if not isinstance(value, str):
        raise EngineError(f"{field} must be a comma-separated list of ids.", field)
    ids = tuple(part.strip() for part in value.split(",") if part.strip())
    if not ids:
        raise EngineError(f"{field} is empty: name at least one id.", field)
    return ids


def _models(value: object, default: Sequence[str]) -> list[ModelSpec]:
    return [get_model(i) for i in _ids(value, "models", default)]


def _gpus(value: object, default: Sequence[str]) -> list[HardwareSpec]:
    return [get_hardware(i) for i in _ids(value, "hardware", default)]


def short_name(hw: HardwareSpec) -> str:
    """The chip's name without its vendor ('H100 SXM5 80GB'): table headers stay narrow."""
    return hw.name.removeprefix(hw.vendor + " ")


def chip_header(hw: HardwareSpec) -> str:
    """'L4 · 24.15 GB': the name and the bytes a program can allocate, unless the name
    already states exactly those bytes."""
    name = short_name(hw)
    if f"{hw.memory_bytes / 1e9:g}GB" in name.replace(" ", ""):
        return name
    return f"{name} · {format_GB(hw.memory_bytes)}"


def _sheet(
    name: str,
    headers: Iterable[str],
    rows: Iterable[Sequence[str]],
    *,
    caption: str,
) -> str:
    """A compact table: the first cell of each row is its row header; all text escaped."""
    body = "".join(
        tag(
            "tr",
            tag("th", esc(row[0]), scope="row") + "".join(tag("td", esc(cell)) for cell in row[1:]),
        )
        for row in rows
    )
    return table_box(
        column_heads(headers),
        body,
        caption=caption,
        extra_class="cheat-sheet",
        class_="cheat-table",
        data_cheat=name,
    )


def cheat_formats(models: str = "") -> str:
    """Number formats: bits, bytes per number, and what the example models' weights weigh."""
    ms = _models(models, DECODE_MODELS)
    headers = ["Format", "Bits", "Bytes per number"] + [f"{m.name} weights" for m in ms]
    rows = [
        [f.label, str(f.bits), f"{f.bytes_per_number:g}"]
        + [format_GB(m.params * f.bytes_per_number) for m in ms]
        for f in FORMATS.values()
    ]
    return _sheet("cheat_formats", headers, rows, caption="Size = parameters × bytes per number")


def cheat_bytes_per_param(
    model: str = EXAMPLE_MODEL, optimizer: str = "adam", serve_formats: str = "bf16,fp8,int4"
) -> str:
    """Bytes held per parameter: serving (the weights only) and training with Adam under
    each mixed-precision convention (16, 18, 20 bytes), with the example model's total."""
    m = get_model(model)
    opt = checked(optimizer, "optimizer", OPTIMIZERS)
    rows: list[list[str]] = []
    for fmt_id in _ids(serve_formats, "serve_formats", ("bf16",)):
        f = get_format(fmt_id)
        rows.append(
            [
                f"Serve, {f.id} weights",
                f"{part_label('weights')} {f.bytes_per_number:g}",
                f"{f.bytes_per_number:g}",
                format_GB(m.params * f.bytes_per_number),
            ]
        )
    for convention in MEMORY_CONVENTIONS:
        if not convention.startswith("mixed-"):
            continue
        parts = training_state_bytes_per_param(opt, convention)
        total = sum(parts.values())
        rows.append(
            [
                f"Train, {optimizer}, {convention}",
                " + ".join(f"{part_label(k)} {v:g}" for k, v in parts.items()),
                f"{total:g}",
                format_GB(m.params * total),
            ]
        )
    headers = ("Task", "What each parameter holds (bytes)", "Bytes per parameter", m.name)
    caption = (
        "Bytes per parameter before KV cache and activations "
        f"(optimiser choices: {', '.join(OPTIMIZERS)})"
    )
    return _sheet("cheat_bytes_per_param", headers, rows, caption=caption)


def cheat_flops_rules(model: str = EXAMPLE_MODEL) -> str:
    """FLOPs rules: 2 N per token to use a model, 6 N (+ attention) per training token, 8 N
    (+ attention) executed with full recomputation; the rules' multipliers come from
    engine.numbers.compute's rule of thumb, the example model's values from its shapes."""
    m = get_model(model)
    use_rule = training_flops(1, 1) / 3.0
    train = training_flops(1, 1)
    full = training_flops(1, 1, recompute="full")
    run_tokens = CHINCHILLA_TOKENS_PER_PARAM * m.params
    trained = training_flops_per_token(m)
    recomputed = training_flops_per_token(m, recompute="full")

    rows = [
        [
            "Use it (one token in or out)",
            f"{use_rule:g} × N per token",
            f"{format_count(flops_per_token(m))} FLOPs",
            NOT_AVAILABLE,
        ],
        [
            "Train (forward + backward)",
            f"{train:g} × N per token + attention",
            f"{format_count(trained.model)} FLOPs",
            format_flops(trained.model * run_tokens),
        ],
        [
            "Train, full recomputation",
            f"{full:g} × N per token + attention",
            f"{format_count(recomputed.hardware)} FLOPs",
            format_flops(recomputed.hardware * run_tokens),
        ],
    ]
    headers = (
        "Work",
        "Rule (N = parameters)",
        f"{m.name}, per token",
        f"{m.name}, {CHINCHILLA_TOKENS_PER_PARAM} tokens per parameter",
    )
    return _sheet(
        "cheat_flops_rules",
        headers,
        rows,
        caption=f"FLOPs; N = active parameters (the embedding lookup is free; a mixture of "
        f"experts counts only the experts a token uses); causal attention over {trained.seq_len:,}-token "
        "samples; time = model FLOPs ÷ (GPUs × peak FLOP/s × MFU)",
    )


def cheat_hardware(kind: str = "gpu,tpu") -> str:
    """The hardware catalogue: memory, bandwidth, dense bf16 and fp8 peaks and ridge points
    (FLOP per byte at which the chip turns compute-bound)."""
    kinds = _ids(kind, "kind", ("gpu", "tpu"))
    rows = []
    for h in list_hardware():
        if h.kind not in kinds:
            continue
        row = [short_name(h), format_GB(h.memory_bytes), format_bandwidth(h.bandwidth_bytes_per_s)]
        for fmt in ("bf16", "fp8"):
            if h.has_peak(fmt):
                row += [
                    f"{h.peak_flops_per_s(fmt) / 1e12:,.0f}",
                    f"{ridge_point(h, fmt):,.0f}",
                ]
            else:
                row += [NOT_AVAILABLE, NOT_AVAILABLE]
        rows.append(row)
    if not rows:
        raise EngineError(f"No hardware of kind {kind[:40]!r}.", "kind")
    headers = (
        "Chip",
        "Memory",
        "Bandwidth",
        "BF16 TFLOP/s",
        "BF16 ridge",
        "FP8 TFLOP/s",
        "FP8 ridge",
    )
    return _sheet(
        "cheat_hardware",
        headers,
        rows,
        caption="Dense peaks; ridge point = peak ÷ bandwidth, in FLOP per byte",
    )


def cheat_fits(
    models: str = "", hardware: str = "", format: str = "bf16", context: str = "8192"
) -> str:
    """Which model fits where: serving on ONE GPU (weights, KV cache for one request of
    ``context`` tokens, activations, overhead) against each GPU's memory."""
    ms = _models(models, FIT_MODELS)
    gpus = _gpus(hardware, SHEET_GPUS)
    fmt = get_format(format)
    tokens = quantities.CONTEXT_TOKENS.check_integer(context, "context", "Context")
    rows = []
    for m in ms:
        plans = [serving_memory(m, h, weight_format=fmt.id, context_tokens=tokens) for h in gpus]
        # Memory needed does not depend on the GPU (one GPU, nothing split); capacity does.
        cells = ["fits" if p.fits else "no" for p in plans]
        rows.append([m.name, format_GB(plans[0].per_gpu_bytes), *cells])
    headers = ["Model", "Needs", *(chip_header(h) for h in gpus)]
    caption = (
        f"Serve in {fmt.id} on one GPU, one request of {tokens:,} tokens: "
        "needs (GB per GPU) vs memory"
    )
    return _sheet("cheat_fits", headers, rows, caption=caption)


def cheat_decode_ceilings(models: str = "", hardware: str = "", format: str = "bf16") -> str:
    """Decode ceilings: the most tokens/s one user gets when each token reads every weight
    once (bandwidth-bound, no context yet). Where one GPU cannot hold the model, the fewest
    GPUs that can (tensor parallel) are used and named."""
    ms = _models(models, DECODE_MODELS)
    gpus = _gpus(hardware, SHEET_GPUS)
    fmt = get_format(format)
    rows = []
    for h in gpus:
        row = [short_name(h), format_bandwidth(h.bandwidth_bytes_per_s)]
        for m in ms:
            n = min_gpus_to_serve(serving_memory(m, h, weight_format=fmt.id))
            if n is None:
                row.append(NOT_AVAILABLE)
                continue
            step = decode_step(m, h, weight_format=fmt.id, gpus=n)
            cell = f"{format_tokens_per_s(step.tokens_per_s_per_user)} ({format_seconds(step.seconds)})"
            row.append(cell if n == 1 else f"{cell} on {n} GPUs")
        rows.append(row)
    headers = ["GPU", "Bandwidth", *(m.name for m in ms)]
    caption = (
        f"Single-user decode ceiling in {fmt.id}: tokens/s (time per token) = bandwidth ÷ "
        "weight bytes; where one GPU cannot hold the model, on the fewest that can "
        "(tensor parallel)"
    )
    return _sheet("cheat_decode_ceilings", headers, rows, caption=caption)


CHEAT_TABLES = {
    f.__name__: f
    for f in (
        cheat_formats,
        cheat_bytes_per_param,
        cheat_flops_rules,
        cheat_hardware,
        cheat_fits,
        cheat_decode_ceilings,
    )
}
