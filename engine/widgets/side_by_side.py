"""docs/steps/side-by-side.md: the same model on the same kind of GPU, as a training job and as a service."""

from __future__ import annotations

from engine.lesson.plans.fields import plan_commands
from engine.lesson.plans.roofline_view import roofline_commands
from engine.numbers import quantities, roofline
from engine.numbers.architecture import check_tensor_parallel
from engine.numbers.catalog import get_hardware
from engine.numbers.cost import TokenCost
from engine.numbers.memory import TrainingMemory
from engine.numbers.plan import Plan, plan
from engine.numbers.plan_cost import serve_expected_cost, train_expected_cost
from engine.numbers.training_runs import DEMO_PRETRAINING_TOKENS
from engine.render.charts import memory_bar
from engine.render.html import column_heads, esc, tag
from engine.render.options import (
    BATCH,
    CONFIG,
    GPUS,
    catalog_model_field,
    chosen_model,
    hardware_field,
    noting_your_model,
)
from engine.render.secondary import secondary
from engine.render.widget import Command, Values, Widget
from engine.words.answers import price_note
from engine.words.expected import ttft_basis_short, ttft_basis_words
from engine.words.format import (
    format_count,
    format_flops,
    format_GB,
    format_percent,
    format_seconds,
    format_usd,
    plural,
)
from engine.words.memory_explained import memory_assumptions
from engine.words.sharding import sharding_name
from engine.words.training import mfu_band_words

TRAIN_TOKENS = DEMO_PRETRAINING_TOKENS  # the budget of the run training_run shows
TRAIN_SHARDING = "zero3"
SEQ_LEN = 4096
TOKENS_PER_STEP = 1024 * SEQ_LEN  # an assumed global batch: 1,024 sequences per step
PROMPT_TOKENS = quantities.TYPICAL_PROMPT_TOKENS  # the request request_timeline follows
OUTPUT_TOKENS = quantities.TYPICAL_OUTPUT_TOKENS
CONTEXT_TOKENS = 8192  # KV cache kept per request (deploy_model's default)

MODEL = catalog_model_field(your_model=True)
HARDWARE = hardware_field()
TRAIN_GPUS = GPUS.but(name="train_gpus", label="Training GPUs", default="8",
                     quantity=quantities.JOB_GPUS)
SERVE_GPUS = GPUS.but(name="serve_gpus", label="Serving GPUs", quantity=quantities.JOB_GPUS)
SERVED_BATCH = BATCH.but(label="Requests at once", default="16",
                         quantity=quantities.DEPLOYMENT_BATCH)


def _memory_cell(p: Plan) -> str:
    mem = p.memory
    if mem.fits:
        verdict = "fits"
    elif p.min_gpus is None:
        verdict = "does not fit on any number of these GPUs"
    else:
        verdict = f"does not fit; it needs at least {plural(p.min_gpus, 'GPU')}"
    return f"{format_GB(mem.per_gpu_bytes)} of {format_GB(mem.capacity_bytes)}: {verdict}"


def _against(intensity: float, ridge: float) -> str:
    return "far above" if intensity >= 2 * ridge else "above" if intensity >= ridge else "below"


def _money(p: Plan, c: TokenCost | None, what: str) -> tuple[str, str]:
    """The cost per hour, and per million tokens ``what`` (the row names the unit and the
    price per GPU-hour); the plan's price note for both when it has no price."""
    if c is None or p.usd_per_gpu_hour is None:
        return price_note(p), price_note(p)
    return (
        f"{format_usd(c.usd_per_hour)} per hour ({p.gpus:,} × "
        f"{format_usd(p.usd_per_gpu_hour)})",
        f"{format_usd(c.usd_per_million_tokens)} {what}",
    )


def _training(values: Values) -> dict[str, object]:
    """plan()'s keywords for the training job (the model aside): no MFU given, so its figures
    at best take the default MFU and its expected ones model it."""
    return {"hardware": values[HARDWARE], "gpus": values[TRAIN_GPUS], "task": "train",
            "tokens": TRAIN_TOKENS, "sharding": TRAIN_SHARDING, "seq_len": SEQ_LEN}


def _serving(values: Values) -> dict[str, object]:
    """plan()'s keywords for the service (the model aside)."""
    return {"hardware": values[HARDWARE], "gpus": values[SERVE_GPUS], "task": "serve",
            "batch": values[SERVED_BATCH], "context_tokens": CONTEXT_TOKENS,
            "prompt_tokens": PROMPT_TOKENS, "output_tokens": OUTPUT_TOKENS}


def render(values: Values) -> str:
    model = chosen_model(values, MODEL)
    gpu = get_hardware(values[HARDWARE])
    train_gpus = values[TRAIN_GPUS]
    serve_gpus = check_tensor_parallel(model, values[SERVE_GPUS], SERVE_GPUS.name)
    batch = values[SERVED_BATCH]
    train = plan(model=model, **_training(values))
    serve = plan(model=model, **_serving(values))
    t, s = train.train, serve.serve
    assert t is not None and s is not None
    tm = train.memory
    assert isinstance(tm, TrainingMemory)
    modelled = t.expected  # the MFU modelled (none given)
    serve_tps = batch * s.tokens_per_s_per_user
    # A request's life at best on the first token's basis: joining the others, then its
    # decode steps at the batch.
    request_best = s.ttft_at_batch_seconds + s.decode_seconds
    ridge = roofline.ridge_point(gpu)
    step_intensity = roofline.micro_batch_intensity(model, micro_batch=tm.micro_batch,
                                                    seq_len=tm.seq_len)
    step_flops, step_bytes = roofline.micro_batch_work(model, micro_batch=tm.micro_batch,
                                                       seq_len=tm.seq_len)
    train_bound = roofline.bound(step_intensity, gpu)
    decode = s.first_step
    # Both costs per token at the expected speeds (a tuned stack), so they compare like with
    # like: the service's decode kept busy at this batch, the run at its modelled MFU.
    train_hour, train_million = _money(train, train_expected_cost(train), "trained")
    serve_hour, serve_million = _money(serve, serve_expected_cost(serve),
                                       f"generated, {batch:,} requests at once, kept busy")

    rows = [
        (
            "The work",
            f"A batch job: {format_count(TRAIN_TOKENS)} tokens, run flat out on "
            f"{plural(train_gpus, 'GPU')} until done",
            f"A service: {batch:,} requests at a time on {plural(serve_gpus, 'GPU')}, "
            f"{PROMPT_TOKENS:,} tokens in and {OUTPUT_TOKENS:,} out each, as they arrive",
        ),
        (
            # Both jobs on one basis, in view: expected (a tuned stack), the bound beside.
            "What is measured",
            f"Throughput: about {modelled.tokens_per_s:,.0f} tokens/s expected "
            f"({format_percent(modelled.mfu)} MFU), {t.bound_tokens_per_s:,.0f} at best",
            f"Latency, {ttft_basis_short(batch)}: first token about "
            f"{format_seconds(s.expected.ttft_seconds)} expected "
            f"({format_seconds(s.ttft_at_batch_seconds)} at best), then about "
            f"{format_seconds(s.expected.decode_seconds_per_token)} per token "
            f"({format_seconds(s.tpot_seconds)} at best)",
        ),
        (
            "How the expected figures are modelled",
            f"{format_percent(modelled.mfu)} MFU modelled: measured matmul efficiency, "
            "attention, gradient traffic"
            + (f". {why}" if (why := mfu_band_words(modelled)) else "")
            + f". At the lesson's default {format_percent(t.mfu)} MFU: "
            f"{t.tokens_per_s:,.0f} tokens/s",
            "Measured efficiencies, kernel overheads, traffic between GPUs",
        ),
        (
            "Tail latency",
            "One slow GPU holds back every step",
            f"The slowest 1 % (p99): the best case of {format_seconds(request_best)} plus "
            "queueing",
        ),
        (
            "How long",
            f"The run: about {format_seconds(modelled.seconds)} of computing expected, at best "
            f"{format_seconds(t.bound_seconds)} (start-up and checkpoints add a little)",
            f"One request: {format_seconds(request_best)} at best; the service runs for as "
            "long as people use it",
        ),
        ("Memory per GPU", _memory_cell(train), _memory_cell(serve)),
        (
            "Limited by",
            f"{train_bound.capitalize()}: {step_intensity:,.0f} FLOPs per byte read, "
            f"{_against(step_intensity, ridge)} the chip's {ridge:,.0f} (see the roofline)",
            f"{decode.bound.capitalize()}: each decode step does "
            f"{decode.arithmetic_intensity:,.0f} FLOPs per byte read (prefill: "
            f"{s.prefill.bound})",
        ),
        (
            "FLOPs per byte read, worked out",
            f"{format_flops(step_flops)} ÷ {format_GB(step_bytes)} read "
            "(each weight read forward and backward and its gradient added: 8 bytes a "
            f"parameter) = {step_intensity:,.0f} FLOPs per byte read for each micro-batch of "
            f"{tm.micro_batch:,} × {tm.seq_len:,} tokens (a micro-batch: the sequences one GPU "
            "runs through in one pass, each reading the weights again); the chip's ridge "
            f"point (peak FLOP/s ÷ bandwidth) is {ridge:,.0f}",
            f"Each weight a decode step reads serves the {batch:,} requests in it, one "
            "token each",
        ),
        (
            "Batch",
            f"{TOKENS_PER_STEP:,} tokens per optimiser step ({TOKENS_PER_STEP // SEQ_LEN:,} sequences of "
            f"{SEQ_LEN:,}), split over the GPUs",
            f"{batch:,} requests decoded together, one token each per step "
            f"({s.tokens_per_s_per_user:,.0f} tokens/s per reader, {serve_tps:,.0f} in all, "
            "at best)",
        ),
        (
            "How it is scheduled",
            "Queued, then holds its GPUs for the whole run; checkpoints limit what a failure "
            "loses",
            "Always on, sized for the busiest hour; copies added as traffic grows",
        ),
        ("Cost per hour", train_hour, serve_hour),
        (_per_million_label(serve), train_million, serve_million),
    ]
    headline = [r for r in rows if r[0].startswith(HEADLINE_ROWS)]
    # The controls above already name the model and GPU: the caption is for screen readers.
    comparison = _table(f"{model.name} on {gpu.name}", headline, visible_caption=False)
    scale = max(train.memory.per_gpu_bytes, serve.memory.per_gpu_bytes)
    bars = (
        tag(
            "p",
            esc(f"Training on {plural(train_gpus, 'GPU')}: memory of each"),
            class_="widget-subtitle",
        )
        + memory_bar(
            train.memory.parts,
            train.memory.capacity_bytes,
            label=f"Training {model.name}: memory of each GPU",
            scale_bytes=scale,
        )
        + tag("p", esc(f"Serving on {plural(serve_gpus, 'GPU')}: memory of each"), class_="widget-subtitle")
        + memory_bar(
            serve.memory.parts,
            serve.memory.capacity_bytes,
            label=f"Serving {model.name}: memory of each GPU",
            scale_bytes=scale,
        )
    )
    assumptions = (
        f"Training: {sharding_name(TRAIN_SHARDING)} sharding, sequences of {SEQ_LEN:,} tokens, "
        f"{format_count(TRAIN_TOKENS)} tokens; expected at the {format_percent(modelled.mfu)} "
        "MFU modelled, at best at every GPU's peak.",
        "Serving: at best, raw peak and full bandwidth; expected, a tuned stack; no queue; "
        f"{CONTEXT_TOKENS:,} tokens of KV cache kept per request; {plural(batch, 'request')} "
        f"kept running; the time to first token is for {ttft_basis_words(batch)}.",
        "Costs: the same cloud price per GPU-hour for both, each at its expected speed (a "
        "tuned stack, as in the first row); the service's cost per token assumes it is kept "
        "busy at this batch.",
        *memory_assumptions(train.memory),
    )
    rest = secondary(
        "Other rows and assumptions",
        _table(f"{model.name} on {gpu.name}: the rest", [r for r in rows if r not in headline])
        + bars
        + tag("p", esc("Assumptions"), class_="widget-subtitle")
        + tag("ul", "".join(tag("li", esc(line)) for line in assumptions)),
    )
    return comparison + rest


# The rows docs/steps/side-by-side.md speaks of: what each job is watched by, how it is
# scheduled, and its cost; the rest of the comparison opens on purpose.
HEADLINE_ROWS = ("What is measured", "Tail latency", "How it is scheduled", "Cost per million tokens")


def _per_million_label(p: Plan) -> str:
    """The cost row's name: its basis (both jobs at their expected speed) and the price per
    GPU-hour both pay (the same GPU)."""
    if p.usd_per_gpu_hour is None:
        return "Cost per million tokens, both expected"
    return (f"Cost per million tokens, both expected, at {format_usd(p.usd_per_gpu_hour)} "
            "per GPU-hour")


def _table(caption: str, rows: list[tuple[str, str, str]], *, visible_caption: bool = True) -> str:
    """The comparison rows as a table: one row per aspect, training then serving; the caption
    shows, or only labels the table for screen readers."""
    head = tag("thead", tag("tr", column_heads(("Compared", "Training job", "Service"))))
    body = "".join(
        tag(
            "tr",
            tag("th", esc(name), scope="row")
            + tag("td", esc(a), data_column="train")
            + tag("td", esc(b), data_column="serve"),
        )
        for name, a, b in rows
    )
    if visible_caption:
        return tag("div", tag("table", tag("caption", esc(caption)) + head + tag("tbody", body)),
                   class_="side-by-side")
    return tag("div", tag("table", head + tag("tbody", body), aria_label=caption),
               class_="side-by-side")


def command(values: Values) -> Command:
    """The training plan and the serving plan the comparison reads; then the chip's roofline
    with the training micro-batch (the ridge point and the micro-batch's intensity the
    "Limited by" rows compare)."""
    training = _training(values)
    tm = plan(model=chosen_model(values, MODEL), **training).memory
    assert isinstance(tm, TrainingMemory)
    plans = plan_commands(values, MODEL, training, _serving(values))
    roof = roofline_commands(values, MODEL, {"hardware": values[HARDWARE],
                                             "micro_batch": tm.micro_batch,
                                             "seq_len": tm.seq_len})
    return Command(plans.lines + roof.lines, plans.files)


WIDGET = Widget(
    name="side_by_side",
    title="One model, two jobs",
    fields=(MODEL, CONFIG, HARDWARE, TRAIN_GPUS, SERVE_GPUS, SERVED_BATCH),
    render=noting_your_model(render, MODEL),
    command=command,
    summary="The same model on the same GPU as a training job and as a service: what is "
    "measured, memory, the limit, batch, scheduling and cost, side by side.",
)
