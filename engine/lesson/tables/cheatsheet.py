"""Tables for the cheat sheet (docs/steps/cheat-sheet.md), rendered at build time from the engine.

Each function takes keyword arguments as an author writes them in markdown (text) and
returns one HTML table: ``{{ table("cheat_fits") }}``. Every cell is computed here from the
catalogue and the engine's own functions, so the sheet cannot drift from the lesson's widgets.
Tables carry ``data-cheat="NAME"`` and row headers, so tests and screen readers can find a
cell by its row and column.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from engine.numbers import quantities
from engine.numbers.catalog import HardwareSpec, ModelSpec, get_hardware, get_model
from engine.numbers.compute import flops_per_token, training_flops, training_flops_per_token
from engine.numbers.errors import EngineError
from engine.numbers.formats import get_format
from engine.numbers.memory import (
    ServingMemory,
    min_gpus_to_serve,
    serving_memory,
    training_state_bytes_per_param,
)
from engine.numbers.roofline import ridge_point
from engine.numbers.serving import decode_step
from engine.numbers.training_choices import MEMORY_CONVENTIONS, OPTIMIZERS, checked
from engine.render.html import column_heads, esc, table_box, tag
from engine.words.format import (
    format_bandwidth,
    format_count,
    format_GB,
    format_tokens_per_s,
)
from engine.words.labels import OPTIMIZER_LABELS

# The lesson's cases: the models it serves, the formats it stores weights in, and the GPUs
# of the generations it names (oldest first, so the A100 precedes dgx-1's H100).
SHEET_MODELS = ("llama-3.1-8b", "llama-3.1-70b")
SHEET_GPUS = ("a100-80gb", "h100-sxm", "h200", "b200")
SHEET_FORMATS = ("bf16", "fp8", "int4")
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


def cheat_formats(
    models: str = "", formats: str = "", optimizer: str = "adam", convention: str = "mixed-16"
) -> str:
    """Bytes per parameter and what the example models weigh: serving, the weights in each
    of ``formats``; training with ``optimizer`` under ``convention``, each part's bytes."""
    ms = _models(models, SHEET_MODELS)
    opt = checked(optimizer, "optimizer", OPTIMIZERS)
    conv = checked(convention, "convention", MEMORY_CONVENTIONS)
    rows = [
        [f.label, f"{f.bytes_per_number:g}", *(format_GB(m.params * f.bytes_per_number) for m in ms)]
        for f in (get_format(i) for i in _ids(formats, "formats", SHEET_FORMATS))
    ]
    parts = training_state_bytes_per_param(opt, conv)
    total = math.fsum(parts.values())
    # The parts themselves are in training-needs-more-memory; the sheet names the convention.
    how = "mixed precision" if conv == "mixed-16" else conv
    rows.append(
        [f"Train with {OPTIMIZER_LABELS[opt]}, {how}", f"{total:g}", *(format_GB(m.params * total) for m in ms)]
    )
    headers = ["Format, or task", "Bytes per parameter", *(m.name for m in ms)]
    return _sheet(
        "cheat_formats", headers, rows, caption="Size = parameters × bytes per parameter"
    )


def cheat_fits(
    models: str = "", hardware: str = "", format: str = "bf16", context: str = "8192"
) -> str:
    """Which model fits where: serving on ONE GPU (weights, KV cache for one request of
    ``context`` tokens, activations, overhead) against each GPU's memory (cheat_hardware)."""
    ms = _models(models, SHEET_MODELS)
    gpus = _gpus(hardware, SHEET_GPUS)
    fmt = get_format(format)
    tokens = quantities.CONTEXT_TOKENS.check_integer(context, "context", "Context")
    rows = []
    ranged = False
    for m in ms:
        plans = [serving_memory(m, h, weight_format=fmt.id, context_tokens=tokens) for h in gpus]
        # Memory needed hardly depends on the GPU (one GPU, nothing split): only the working
        # space does, a prefill step of the chip's own scheduler budget; capacity does.
        cells = ["fits" if p.fits else "no" for p in plans]
        low, high = _needs_range(plans)
        ranged = ranged or low != high
        rows.append([m.name, high if low == high else f"{low[:-3]}–{high}", *cells])
    headers = ["Model", "Needs", *(short_name(h) for h in gpus)]
    caption = (f"Serve in {fmt.id} on one GPU, one {tokens:,}-token request"
               + ("; a range where the chips' working space differs" if ranged else ""))
    return _sheet("cheat_fits", headers, rows, caption=caption)


def _needs_range(plans: Sequence[ServingMemory]) -> tuple[str, str]:
    """The least and the most memory ``plans`` need, as read: ('18.79 GB', '19.24 GB');
    one figure twice where they agree."""
    return (format_GB(min(p.per_gpu_bytes for p in plans)),
            format_GB(max(p.per_gpu_bytes for p in plans)))


def same_name_memory_note(gpus: Sequence[HardwareSpec]) -> str:
    """Why two chips sold with the same memory list different bytes, or "" when none do.

    The catalogue's memory is what a program can allocate; the figure in a card's name is
    the memory it carries, in GiB. Where two chips name the same figure, the one with fewer
    bytes reserves more of it (its driver and firmware keep it back from programs). Chips
    are named by the first word of their short names ('A100')."""
    notes = []
    for i, a in enumerate(gpus):
        for b in gpus[i + 1 :]:
            same = a.memory_marketed_GB > 0 and a.memory_marketed_GB == b.memory_marketed_GB
            if same and a.memory_bytes != b.memory_bytes:
                less = min(a, b, key=lambda h: h.memory_bytes)
                first, second, reserves = (short_name(h).split()[0] for h in (a, b, less))
                notes.append(
                    f"the {first} and {second} each carry {a.memory_marketed_GB:g} GiB; "
                    f"the {reserves} reserves more"
                )
    return "; ".join(notes)


def cheat_hardware(hardware: str = "", models: str = "", format: str = "bf16") -> str:
    """The chips: memory a program can allocate, bandwidth, dense bf16 peak, bf16
    ridge point (FLOP per byte at which the chip turns compute-bound), and each model's
    single-user decode ceiling in ``format`` (every weight read once a token, no context
    yet), on the fewest GPUs (tensor parallel) that hold it where one cannot."""
    gpus = _gpus(hardware, SHEET_GPUS)
    ms = _models(models, SHEET_MODELS)
    fmt = get_format(format)
    rows = []
    for h in gpus:
        row = [
            short_name(h),
            format_GB(h.memory_bytes),
            format_bandwidth(h.bandwidth_bytes_per_s),
            f"{h.peak_flops_per_s('bf16') / 1e12:,.0f}" if h.has_peak("bf16") else NOT_AVAILABLE,
        ]
        row.append(f"{ridge_point(h, 'bf16'):,.0f}" if h.has_peak("bf16") else NOT_AVAILABLE)
        for m in ms:
            n = min_gpus_to_serve(serving_memory(m, h, weight_format=fmt.id))
            if n is None:
                row.append(NOT_AVAILABLE)
                continue
            step = decode_step(m, h, weight_format=fmt.id, gpus=n)
            cell = format_tokens_per_s(step.tokens_per_s_per_user)
            row.append(cell if n == 1 else f"{cell} on {n} GPUs")
        rows.append(row)
    headers = [
        "Chip",
        "Memory",
        "Bandwidth",
        "BF16 TFLOP/s",
        "BF16 ridge",
        *(f"{m.name} decode" for m in ms),
    ]
    note = same_name_memory_note(gpus)
    caption = (
        "Memory a program can allocate" + (f" ({note})" if note else "")
        + f"; dense peak; ridge = peak ÷ bandwidth; decode in {fmt.id}, one user, at best: "
        + "bandwidth ÷ weight bytes"
    )
    return _sheet("cheat_hardware", headers, rows, caption=caption)


def cheat_flops_rules(model: str = EXAMPLE_MODEL) -> str:
    """FLOPs rules: 2 N per token to use a model, 6 N (+ attention) per training token; the
    multipliers come from engine.numbers.compute's rule of thumb, the example model's values
    from its shapes."""
    m = get_model(model)
    train = training_flops(1, 1)
    trained = training_flops_per_token(m)
    rows = [
        [
            "Use it (one token in or out)",
            f"{train / 3.0:g} × N",
            f"{format_count(flops_per_token(m))} FLOPs",
        ],
        [
            "Train (forward + backward)",
            f"{train:g} × N + attention",
            f"{format_count(trained.model)} FLOPs",
        ],
    ]
    headers = ("Per token", "Rule", m.name)
    return _sheet(
        "cheat_flops_rules",
        headers,
        rows,
        caption=f"N = parameters a token uses; attention over {trained.seq_len:,}-token "
        "samples; time = FLOPs ÷ (GPUs × peak × MFU)",
    )


CHEAT_TABLES = {
    f.__name__: f
    for f in (
        cheat_formats,
        cheat_fits,
        cheat_hardware,
        cheat_flops_rules,
    )
}
