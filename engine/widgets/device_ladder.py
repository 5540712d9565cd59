"""docs/steps/where-ai-runs.md: a ladder of devices, from a phone to a cluster, and what each can do with a model.

For each rung the engine's :func:`engine.numbers.plan.plan` answers: can it serve the model (in the
widest number format that fits), how fast one user's answer streams, can it hold the
training state (ZeRO-3 across its chips, tensor parallel inside one server if needed) and
how long training would take at the MFU given. The widget only chooses which plans to ask
for and lays out the answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from engine.lesson.plans.fields import plan_commands
from engine.numbers import parallelism, quantities
from engine.numbers.architecture import tensor_parallel_ok
from engine.numbers.catalog import HardwareSpec, ModelSpec, get_hardware, get_system
from engine.numbers.catalog.efficiency import training_defaults
from engine.numbers.formats import FormatId
from engine.numbers.memory import ServingMemory, TrainingMemory
from engine.numbers.plan import CHINCHILLA_TOKENS_PER_PARAM, Plan, plan
from engine.numbers.training_runs import LLAMA_3_1_PRETRAINING_TOKENS
from engine.numbers.units import TB
from engine.render.fields import Choice, OptionalAmount
from engine.render.html import column_heads, esc, table_box, tag
from engine.render.options import (
    CONTEXT,
    GPUS,
    MFU,
    MODEL_OR_CONFIG,
    TRAINING_TOKENS,
    model_fields,
    model_from,
    noting_your_model,
)
from engine.render.secondary import plain_list, secondary
from engine.render.widget import Command, Values, Widget
from engine.words.format import (
    a_or_an,
    format_bytes,
    format_count,
    format_GB,
    format_percent,
    format_seconds,
)
from engine.words.sharding import sharding_name, tensor_parallel

SERVER = "dgx-1"
# Number formats tried for serving, widest first: the first one that fits is the answer.
SERVE_FORMATS: tuple[FormatId, ...] = ("bf16", "int8", "int4")
WIDEST = "widest"
# The ladder opens on a model every rung can run: a 1B model in 4-bit weights, as phone
# apps ship them, at a phone's context.
LADDER_MODEL = MODEL_OR_CONFIG.but(default="llama-3.2-1b")
WEIGHTS = Choice(
    "weights", "Weights", "int4",
    options=((WIDEST, "The widest that fits: bf16, int8, then int4"),
             ("bf16", "bf16 (16-bit)"), ("int8", "int8 (8-bit)"),
             ("int4", "int4 (4-bit, as phone apps ship models)")),
)
# Chip counts one copy may span (tensor parallel), smallest first, inside one server only:
# serving tries them as GPU counts, training as tensor-parallel sizes under ZeRO-3.
TENSOR_PARALLEL = (1, 2, 4, 8)

CONTEXT_TO_SERVE = CONTEXT.but(
    name="context_tokens", label="Context to serve", default="4096",
    hint="Apple's on-device model's window (technote TN3193).",
)
TOKENS = OptionalAmount(
    "tokens",
    "Training tokens",
    "",
    unit="tokens",
    hint=f"Empty: {CHINCHILLA_TOKENS_PER_PARAM} per parameter (compute-optimal).",
    quantity=TRAINING_TOKENS.quantity,
)
TRAINING_MFU = MFU.but(hint="0.4 means 40 %.")
CLUSTER_GPUS = GPUS.but(
    name="cluster_gpus", label="GPUs in the cluster", default="16384", unit="H100s",
    quantity=quantities.CLUSTER_GPUS,
)


@dataclass(frozen=True, slots=True)
class Rung:
    """One step of the ladder: ``count`` chips of ``hardware``; one copy of the model may
    span at most ``serve_count`` of them (one server's worth); the rest hold more copies."""

    role: str
    hardware: HardwareSpec
    count: int
    serve_count: int


def ladder(cluster_gpus: int) -> tuple[Rung, ...]:
    """Phone (the memory iOS lets one app use), a top-end desktop (a 192 GB Mac Studio), a
    workstation GPU, the lesson's server, a cluster of them."""
    server = get_system(SERVER)
    per_server = server.gpu_count
    return (
        Rung("Phone, one app's share", get_hardware("apple-a17-pro"), 1, 1),
        Rung("Top-end desktop (Mac Studio)", get_hardware("apple-m2-ultra"), 1, 1),
        Rung("Workstation GPU", get_hardware("rtx-4090"), 1, 1),
        Rung(f"One server ({SERVER})", server.gpu, per_server, per_server),
        Rung("Cluster", server.gpu, cluster_gpus, min(per_server, cluster_gpus)),
    )


def serve_formats(weights: str) -> tuple[FormatId, ...]:
    """The formats the ladder tries for ``weights`` (the field's value), widest first."""
    return SERVE_FORMATS if weights == WIDEST else tuple(f for f in SERVE_FORMATS if f == weights)


def serve_plan(model: ModelSpec, rung: Rung, context_tokens: int,
               formats: tuple[FormatId, ...] = SERVE_FORMATS) -> Plan:
    """The widest of ``formats`` that fits, on the fewest of the rung's chips (1, 2, 4 or 8,
    tensor parallel); the last plan tried when nothing fits."""
    found: Plan | None = None
    for fmt in formats:
        for gpus in TENSOR_PARALLEL:
            if gpus > rung.serve_count:
                break
            if not tensor_parallel_ok(model, gpus):
                continue
            found = plan(
                model=model,
                hardware=rung.hardware,
                gpus=gpus,
                task="serve",
                weight_format=fmt,
                context_tokens=context_tokens,
            )
            if found.memory.fits:
                return found
    assert found is not None
    return found


def train_plan(model: ModelSpec, rung: Rung, tokens: float | None, mfu: float) -> Plan:
    """ZeRO-3 across the rung's chips with the smallest tensor-parallel size that fits
    (the one needing the least memory per chip if none)."""
    found: Plan | None = None
    for tp in TENSOR_PARALLEL:
        if tp > rung.serve_count or rung.count % tp or not tensor_parallel_ok(model, tp):
            continue
        candidate = plan(
            model=model,
            hardware=rung.hardware,
            gpus=rung.count,
            task="train",
            sharding="zero3",
            tp=tp,
            tokens=tokens,
            mfu=mfu,
        )
        if candidate.memory.fits:
            return candidate
        if found is None or candidate.memory.per_gpu_bytes < found.memory.per_gpu_bytes:
            found = candidate
    assert found is not None
    return found


@lru_cache(maxsize=1)  # the render and its command ask for the same plans in a row
def rung_plans(model: ModelSpec, context_tokens: int, tokens: float | None, mfu: float,
               cluster_gpus: int, formats: tuple[FormatId, ...] = SERVE_FORMATS,
               ) -> tuple[tuple[Rung, Plan, Plan], ...]:
    """Each rung with its serving and its training plan."""
    return tuple((rung, serve_plan(model, rung, context_tokens, formats),
                  train_plan(model, rung, tokens, mfu)) for rung in ladder(cluster_gpus))


def command(values: Values) -> Command:
    """A line for each rung's serving plan and one for its training plan; where the batch
    leaves GPUs idle, one more for the training time on the busy GPUs alone."""
    lines: list[dict[str, object]] = []
    mfu = values[TRAINING_MFU]
    for rung, sp, tp in rung_plans(model_from(values), values[CONTEXT_TO_SERVE], values[TOKENS],
                                   mfu, values[CLUSTER_GPUS], serve_formats(values[WEIGHTS])):
        mem, train = sp.memory, tp.memory
        assert isinstance(mem, ServingMemory) and sp.serve is not None
        assert isinstance(train, TrainingMemory)
        lines.append({"hardware": rung.hardware.id, "gpus": sp.gpus, "task": "serve",
                      "weight_format": mem.weight_format, "kv_format": mem.kv_format,
                      "context_tokens": mem.context_tokens, "batch": mem.batch,
                      "prompt_tokens": sp.serve.prompt_tokens,
                      "output_tokens": sp.serve.output_tokens})
        training = {"hardware": rung.hardware.id, "gpus": tp.gpus, "task": "train",
                    "sharding": train.sharding, "tp": train.tp, "tokens": values[TOKENS],
                    "mfu": mfu}
        lines.append(training)
        if busy_gpus(tp) < tp.gpus:
            lines.append({**training, "gpus": busy_gpus(tp)})
    return plan_commands(values, MODEL_OR_CONFIG, *lines)


Cell = tuple[str, str, str]  # (main text, detail text, "yes" | "no" | "")


def _cell(cell: Cell) -> str:
    main, detail, verdict = cell
    strong = tag("strong", esc(main), class_=f"ladder-{verdict}" if verdict else None)
    return strong + (tag("span", esc(detail), class_="ladder-detail") if detail else "")


def _device_cell(rung: Rung) -> Cell:
    total = rung.hardware.memory_bytes * rung.count
    memory = format_GB(total) if total < TB else format_bytes(total)
    chips = rung.hardware.name if rung.count == 1 else f"{rung.count:,} × {rung.hardware.name}"
    return rung.role, f"{chips}; {memory}", ""


def _serve_cells(rung: Rung, p: Plan, formats: tuple[FormatId, ...]) -> tuple[Cell, Cell]:
    mem = p.memory
    assert isinstance(mem, ServingMemory) and p.serve is not None
    each = " each" if p.gpus > 1 else ""
    if not mem.fits:
        even = "even " if len(formats) > 1 else ""
        return (
            (
                "No",
                f"{even}in {mem.weight_format} it needs {format_GB(mem.per_gpu_bytes)}{each}",
                "no",
            ),
            ("—", "", ""),
        )
    where = f"on {p.gpus} chips (tensor parallel), " if p.gpus > 1 else ""
    copies = f"; {rung.count // p.gpus:,} copies at once" if rung.count > p.gpus else ""
    return (
        (
            f"Yes, in {mem.weight_format}",
            f"{where}{format_GB(mem.per_gpu_bytes)} of {format_GB(mem.capacity_bytes)}{each}"
            f"{copies}",
            "yes",
        ),
        (
            f"{p.serve.tokens_per_s_per_user:,.0f} tokens/s at best",
            f"{p.serve.bound}-bound; about "
            f"{1.0 / p.serve.expected.decode_seconds_per_token:,.0f} expected with tuned software",
            "",
        ),
    )


def _train_cells(p: Plan) -> tuple[Cell, Cell]:
    mem = p.memory
    assert isinstance(mem, TrainingMemory) and p.train is not None
    how = (
        ""
        if p.gpus == 1
        else (f", {sharding_name('zero3')} over {p.gpus:,}"
              + (f", {tensor_parallel(mem.tp)}" if mem.tp > 1 else ""))
    )
    time = format_seconds(_training_seconds(p))
    if mem.fits:
        return (("Yes", f"{format_GB(mem.per_gpu_bytes)} per chip{how}", "yes"), (time, "", ""))
    return (
        ("No", f"needs {format_GB(mem.per_gpu_bytes)} per chip{how}", "no"),
        (time, "if it fitted", ""),
    )


def busy_gpus(train: Plan) -> int:
    """The most GPUs one optimiser step of ``train`` gives work to (the catalogue's global
    batch; :func:`engine.numbers.parallelism.busy_gpus`)."""
    mem = train.memory
    assert isinstance(mem, TrainingMemory)
    return parallelism.busy_gpus(training_defaults().global_batch_tokens, mem.seq_len,
                                 mem.micro_batch, mem.tp)


def _training_seconds(train: Plan) -> float:
    """The run's time at the plan's MFU with every busy GPU working: GPUs the batch leaves
    idle do not shorten it."""
    assert train.train is not None
    return parallelism.seconds_on_busy_gpus(train.train.seconds, train.gpus, busy_gpus(train))


def _batch_words(train: Plan) -> str:
    """'' when the batch gives every GPU work; else what caps them (a short cell note)."""
    if train.gpus <= busy_gpus(train):
        return ""
    batch = format_count(training_defaults().global_batch_tokens)
    return f"its {batch}-token batch keeps only {busy_gpus(train):,} GPUs busy (no pipeline)"


def _notes(serve: Plan, train: Plan, tried: tuple[FormatId, ...]) -> tuple[str, ...]:
    assert serve.serve is not None and isinstance(serve.memory, ServingMemory)
    assert isinstance(train.memory, TrainingMemory)
    s, t = serve.serve, train.memory
    formats = (f"the first of {', '.join(tried)} in which" if len(tried) > 1
               else f"weights in {tried[0]}; a rung serves the model if")
    return (
        f"Serving: {formats} weights, KV cache ({serve.memory.kv_format}), "
        "activations and runtime overhead fit, on the fewest chips that hold it (tensor "
        f"parallel over up to {max(TENSOR_PARALLEL)} GPUs of one server); the other chips "
        "serve further copies.",
        f"Decode speed: the mean time per output token of one request ({s.prompt_tokens:,} "
        f"tokens in, {s.output_tokens:,} out) at raw peak and full memory bandwidth: a "
        "ceiling, not a measurement.",
        f"Training: {t.optimizer} in mixed precision ({t.bytes_per_param_total:g} bytes per "
        "parameter: bf16 weights and gradients, fp32 master weights and two moments) sharded with ZeRO-3 across the chips, with the smallest tensor-parallel "
        f"size (up to {max(TENSOR_PARALLEL)}, inside one server) that fits; sequence "
        f"{t.seq_len:,}, micro-batch {t.micro_batch}, {t.recompute} recomputation.",
        "Training time: 6 × active parameters × tokens FLOPs (+ attention) at the chips' dense bf16 peak × MFU.",
        "Perfect scaling is assumed: every chip busy at that MFU, no communication, so a real run takes longer. "
        f"One optimiser step's batch ({training_defaults().global_batch_tokens:,} tokens, "
        f"{t.seq_len:,}-token sequences, {t.micro_batch} per GPU, tensor parallel {t.tp}) gives "
        f"work to at most {busy_gpus(train):,} GPUs; past that only a bigger batch, "
        "shorter sequences or pipeline stages (not modelled here) help, so a bigger cluster's "
        "time is that of the busy GPUs.",
        "Phone and desktop figures are rough (see the hardware catalogue's notes).",
    )


def _short_row(rung: Rung, serve: Plan, train: Plan) -> str:
    """One rung in one line, saying what it does: serves the model (one user's decode speed
    at best) or cannot; trains it in a time, or cannot hold the training state."""
    assert serve.serve is not None and train.train is not None
    speed = (f"Serves it: {serve.serve.tokens_per_s_per_user:,.0f} at best, "
             f"{1.0 / serve.serve.expected.decode_seconds_per_token:,.0f} expected"
             if serve.memory.fits else "Cannot serve it")
    time = (f"Trains it in {format_seconds(_training_seconds(train))}" if train.memory.fits
            else "Cannot hold its training state")
    cells: tuple[Cell, Cell] = (
        (speed, "", "yes" if serve.memory.fits else "no"),
        (time, _batch_words(train), "yes" if train.memory.fits else "no"),
    )
    return tag("tr", tag("th", esc(rung.role), scope="row") + "".join(
        tag("td", _cell(cell)) for cell in cells
    ))


def _lends_less(rungs: tuple[Rung, ...]) -> tuple[Rung, ...]:
    """The rungs whose chip lends a program less than its marketed memory (a phone's app, a
    Mac's GPU)."""
    return tuple(r for r in rungs if r.count == 1 and r.hardware.memory_marketed_bytes
                 and r.hardware.memory_bytes < 0.95 * r.hardware.memory_marketed_bytes)


def _role(rung: Rung) -> str:
    return rung.role[0].lower() + rung.role[1:]


def usable_memory_short(rungs: tuple[Rung, ...]) -> str:
    """The in-view line: how much of its memory each such rung lends, and that the system
    decides it; '' when none does."""
    parts = [f"{_role(r)}, {format_GB(r.hardware.memory_bytes)} of "
             f"{format_GB(r.hardware.memory_marketed_bytes)}" for r in _lends_less(rungs)]
    return (f"Usable memory (the operating system's share): {'; '.join(parts)}."
            if parts else "")


def usable_memory_words(rungs: tuple[Rung, ...]) -> str:
    """Where a rung's chip lends a program less than its marketed memory, how much and why,
    in one line (the full ladder's notes); '' when none does."""
    parts: list[str] = []
    for rung in _lends_less(rungs):
        hw = rung.hardware
        why = hw.memory_basis.split(":", 1)[0].strip().rstrip(".")
        parts.append(f"{_role(rung)}: {format_GB(hw.memory_bytes)} of its "
                     f"{format_GB(hw.memory_marketed_bytes)} (sold as {hw.memory_marketed_GB:g} GB; "
                     f"{why[0].lower() + why[1:]})")
    return f"Usable memory, {'; '.join(parts)}." if parts else ""


def render(values: Values) -> str:
    model = model_from(values)
    context_tokens = values[CONTEXT_TO_SERVE]
    tokens = values[TOKENS]
    mfu = values[TRAINING_MFU]
    cluster_gpus = values[CLUSTER_GPUS]

    rows: list[str] = []
    short_rows: list[str] = []
    plans: list[tuple[Plan, Plan]] = []
    first_serve = first_train = ""
    token_count = 0.0
    formats = serve_formats(values[WEIGHTS])
    for rung, sp, tp in rung_plans(model, context_tokens, tokens, mfu, cluster_gpus, formats):
        assert tp.train is not None
        token_count = tp.train.tokens
        if sp.memory.fits and not first_serve:
            first_serve = rung.role[0].lower() + rung.role[1:]
        if tp.memory.fits and not first_train:
            first_train = rung.role[0].lower() + rung.role[1:]
        plans.append((sp, tp))
        device = tag("th", _cell(_device_cell(rung)), scope="row")
        cells = "".join(tag("td", _cell(c))
                        for c in (*_serve_cells(rung, sp, formats), *_train_cells(tp)))
        rows.append(tag("tr", device + cells))
        short_rows.append(_short_row(rung, sp, tp))
    really_used = (f"; Llama 3.1 really used about {format_count(LLAMA_3_1_PRETRAINING_TOKENS)}"
                   if model.id.startswith("llama-3.1-") else "")
    token_words = f"{format_count(token_count)} tokens" + (
        "" if tokens is not None else
        f" ({CHINCHILLA_TOKENS_PER_PARAM} per parameter, the compute-optimal budget{really_used})"
    )
    caption = (
        f"{model.name}: serving with {a_or_an(context_tokens)} {context_tokens:,}-token context; training on "
        f"{token_words} at {format_percent(mfu)} MFU"
    )
    headers = (
        "Device",
        "Serve it?",
        "One user decodes at",
        "Train it?",
        f"Training time at {format_percent(mfu)} MFU",
    )
    grid = table_box(column_heads(headers), "".join(rows), caption=caption, extra_class="ladder-table")
    per_param = "" if tokens is not None else f" ({CHINCHILLA_TOKENS_PER_PARAM} per parameter)"
    basis = f"{format_count(token_count)} tokens{per_param} at {format_percent(mfu)} MFU, perfect scaling"
    short = table_box(
        column_heads(("Device", "Serving: one user's tokens/s", f"Training: {basis}")),
        "".join(short_rows),
        caption="",
        label=f"{model.name} on each rung",
        extra_class="ladder-table",
    )
    if first_serve and first_serve == first_train:
        words = f"Smallest rung that can serve {model.name} and hold its training state: {first_serve}."
    else:
        serves = (
            f"Smallest rung that can serve {model.name}: {first_serve}"
            if first_serve
            else f"No rung here can serve {model.name}, even in {formats[-1]}"
        )
        trains = (
            ("" if first_serve else "the smallest that can ")
            + f"hold its training state: {first_train}."
            if first_train
            else "none can hold its training state."
        )
        words = f"{serves}; {trains}"
    verdict = tag("p", esc(words), class_="ladder-summary")
    rungs = ladder(cluster_gpus)
    usable = usable_memory_short(rungs)
    usable_line = tag("p", esc(usable), class_="ladder-usable") if usable else ""
    full_usable = usable_memory_words(rungs)
    notes = plain_list(_notes(*plans[-1], formats) + ((full_usable,) if full_usable else ()))
    return (verdict + short + usable_line
            + secondary("The full ladder and its arithmetic", grid + notes))


WIDGET = Widget(
    name="device_ladder",
    title="The device ladder",
    fields=(LADDER_MODEL, *model_fields()[1:], WEIGHTS, CONTEXT_TO_SERVE, TOKENS, TRAINING_MFU,
            CLUSTER_GPUS),
    render=noting_your_model(render, MODEL_OR_CONFIG),
    command=command,
    summary="Phone, desktop, workstation GPU, one server and a cluster: can each serve the "
    "model (in which format, how fast) and hold its training state (how long to train).",
)
