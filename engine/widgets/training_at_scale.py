"""docs/steps/training-at-scale.md: training at real scale. Two separate reasons for many GPUs: the training state
must fit (memory per GPU with sharded state) and the FLOPs must finish in time (wall-clock).
"""

from __future__ import annotations

from engine.lesson.plans.fields import plan_commands
from engine.numbers import compute, cost, quantities
from engine.numbers.catalog import get_hardware
from engine.numbers.expected_training import expected_train
from engine.numbers.memory import TrainingMemory
from engine.numbers.plan import plan
from engine.numbers.training_choices import SHARDINGS
from engine.numbers.training_runs import LLAMA_3_1_405B_GLOBAL_BATCH_TOKENS
from engine.numbers.units import SECONDS_PER_DAY
from engine.render.charts import memory_bar
from engine.render.fields import Amount, one_of
from engine.render.html import definition_list, esc, table, tag
from engine.render.options import (
    CONFIG,
    GPUS,
    MFU,
    TARGET_DAYS,
    TENSOR_PARALLEL,
    TRAINING_TOKENS,
    catalog_model_field,
    chosen_model,
    hardware_field,
    noting_your_model,
)
from engine.render.secondary import secondary
from engine.render.widget import Command, Values, Widget
from engine.words.answers import answers, price_note
from engine.words.expected import BOUND_WORDS, EXPECTED_TRAINING_WORDS, at_best_and_expected
from engine.words.format import (
    format_count,
    format_flops,
    format_GB,
    format_percent,
    format_seconds,
    format_usd,
    plural,
)
from engine.words.labels import SHARDING_LABELS
from engine.words.memory_explained import memory_assumptions
from engine.words.sharding import parallel_layout
from engine.words.training import mfu_band_words, train_warnings_words

TP_OPTIONS = (("1", "1 (none)"), ("2", "2"), ("4", "4"), ("8", "8 (one server's NVLink)"))

MODEL = catalog_model_field("llama-3.1-405b", your_model=True)
TOKENS = TRAINING_TOKENS.but(hint="15.6e12 is 15.6 trillion")
HARDWARE = hardware_field()
GPU_COUNT = GPUS.but(default="16384")
SHARDING = one_of("sharding", "Sharding", "zero3", SHARDINGS, SHARDING_LABELS)
TP = TENSOR_PARALLEL.but(default="8", unit="", control_kind="select", options=TP_OPTIONS,
                        quantity=quantities.TENSOR_PARALLEL_IN_SERVER)
# Meta's batch for this run: at the default layout (2,048 data-parallel ranks of 8 GPUs) every
# rank gets two sequences of 4,096 tokens a step, where the engine's smaller default batch
# would leave half the ranks idle.
GLOBAL_BATCH = Amount("global_batch", "Global batch", f"{LLAMA_3_1_405B_GLOBAL_BATCH_TOKENS}",
                      unit="tokens", quantity=quantities.GLOBAL_BATCH_TOKENS,
                      hint="Tokens per optimiser step; Llama 3.1 405B's run: 16M.")


def render(values: Values) -> str:
    model = chosen_model(values, MODEL)
    gpu = get_hardware(values[HARDWARE])
    tokens = values[TOKENS]
    mfu = values[MFU]
    gpus = values[GPU_COUNT]
    days = values[TARGET_DAYS]
    sharding = values[SHARDING]
    tp = values[TP]
    global_batch = values[GLOBAL_BATCH]
    quantities.check_multiple_of_tp(gpus, tp, "gpus")
    p = plan(
        model=model,
        hardware=gpu,
        gpus=gpus,
        task="train",
        tokens=tokens,
        mfu=mfu,
        target_days=days,
        sharding=sharding,
        tp=tp,
        global_batch_tokens=global_batch,
    )
    t = p.train
    assert t is not None
    mem = p.memory
    assert isinstance(mem, TrainingMemory)
    one_gpu = compute.training_seconds(t.model_flops, 1, t.peak_flops_per_s, mfu)
    modelled = expected_train(model, gpu, tokens=tokens, gpus=gpus, tp=tp, sharding=sharding,
                              micro_batch=mem.micro_batch, seq_len=mem.seq_len,
                              recompute=mem.recompute, compute_format=t.compute_format,
                              global_batch_tokens=global_batch)

    fits = mem.fits
    on_time = t.seconds <= days * SECONDS_PER_DAY
    verdict_text = (
        f"{plural(gpus, 'GPU')}: {format_GB(mem.per_gpu_bytes)} of {format_GB(mem.capacity_bytes)} per "
        f"GPU, {'it fits' if fits else 'it does not fit'}; {format_seconds(t.seconds)} of "
        f"training if {format_percent(mfu)} MFU is reached, {'within' if on_time else 'beyond'} the "
        f"{days:g}-day target."
    )
    verdict = tag(
        "p",
        esc(verdict_text),
        class_="widget-verdict " + ("fits" if fits and on_time else "refused"),
    )
    bar = memory_bar(
        mem.parts,
        mem.capacity_bytes,
        label=f"Memory of each {gpu.name} with {parallel_layout(sharding)} over {gpus:,} GPUs",
    )

    rows: list[tuple[str, str, str]] = [
        ("1", "One GPU (if the state fitted)", format_seconds(one_gpu))
    ]
    if p.min_gpus is None:
        fit_words = "No count: " + answers(p)["gpus"]
    else:
        fit_words = plural(p.min_gpus, 'GPU')
        rows.append(
            (
                f"{p.min_gpus:,}",
                "Fewest that fit",
                format_seconds(
                    compute.training_seconds(t.model_flops, p.min_gpus, t.peak_flops_per_s, mfu)
                ),
            )
        )
    assert t.gpus_for_target is not None
    rows.append(
        (
            f"{t.gpus_for_target:,}",
            f"Fewest to finish in {days:g} days",
            format_seconds(
                compute.training_seconds(t.model_flops, t.gpus_for_target, t.peak_flops_per_s, mfu)
            ),
        )
    )
    rows.append((f"{gpus:,}", "Your choice", format_seconds(t.seconds)))
    counts = table(
        ("GPUs", "Which count", f"Time at {format_percent(mfu)} MFU"),
        rows,
        caption="GPU counts compared",
    )

    price_line: tuple[str, str]
    if p.usd_per_gpu_hour is None:
        price_line = ("Cost", price_note(p))
    else:
        bill = cost.training_run_cost(
            gpus=gpus, seconds=t.seconds, usd_per_gpu_hour=p.usd_per_gpu_hour
        )
        price_line = (
            f"Cost at {format_usd(p.usd_per_gpu_hour)} per GPU-hour ({price_note(p)})",
            f"{bill.gpu_hours:,.0f} GPU-hours, {format_usd(bill.usd)}",
        )
    figures = definition_list(
        [
            (
                "Training FLOPs (6 × active parameters × tokens + attention)",
                format_flops(t.model_flops),
            ),
            (
                "Training state before sharding",
                f"{format_GB(mem.state_bytes_total)} "
                f"({mem.bytes_per_param_total:g} bytes × {model.params:,} parameters)",
            ),
            ("Training state per GPU", format_GB(mem.state_bytes)),
            (
                "Memory per GPU",
                f"{format_GB(mem.per_gpu_bytes)} of {format_GB(mem.capacity_bytes)}",
            ),
            ("Smallest GPU count that fits", fit_words),
            (f"GPUs to finish in {days:g} days", f"{t.gpus_for_target:,}"),
            (f"Wall-clock time on {plural(gpus, 'GPU')}", format_seconds(t.seconds)),
            ("On one GPU", format_seconds(one_gpu)),
            price_line,
        ]
    )
    assumptions = (BOUND_WORDS, EXPECTED_TRAINING_WORDS, *train_warnings_words(modelled.warnings),
                   *memory_assumptions(mem))
    # The expected line is for this widget's layout, which has no pipeline stages: far below
    # what a tuned run with pipelining measures at this scale, so it waits in the details with
    # its layout named rather than stand beside the headline.
    tuned = definition_list(
        [
            (
                f"Expected with {parallel_layout(sharding, tp)}, no pipeline stages "
                "(kernel efficiencies and communication; no failures, stragglers or power "
                "limits)",
                f"{format_percent(modelled.mfu)} MFU, "
                + at_best_and_expected(t.bound_seconds, modelled.seconds)
                + (f". {why}" if (why := mfu_band_words(modelled)) else ""),
            ),
        ]
    )
    details = secondary(
        "Memory, all figures, assumptions",
        bar
        + tag("p", esc(f"{model.name} on {format_count(tokens)} tokens, {gpu.name}."))
        + figures
        + tuned
        + tag("ul", "".join(tag("li", esc(line)) for line in assumptions)),
    )
    return verdict + counts + details

def command(values: Values) -> Command:
    """The plan on the chosen GPUs; the same without ``--mfu`` (the command line then models
    the MFU: the expected line); then the run on each count the table compares (one GPU, the
    fewest that fit, the fewest to finish in time). A count the chosen tensor parallel size
    divides keeps it, so the fewest that fit fit there too; another runs at tensor parallel 1,
    which gives the same time at an MFU (the time does not depend on the split)."""
    gpus, tp = values[GPU_COUNT], values[TP]
    run = {"hardware": values[HARDWARE], "gpus": gpus, "task": "train",
           "tokens": values[TOKENS], "mfu": values[MFU], "target_days": values[TARGET_DAYS],
           "sharding": values[SHARDING], "tp": tp, "global_batch_tokens": values[GLOBAL_BATCH]}
    p = plan(model=chosen_model(values, MODEL), **run)
    counts = [1, p.min_gpus, p.train.gpus_for_target if p.train is not None else None]
    return plan_commands(values, MODEL, run, {**run, "mfu": None},
                         *({**run, "gpus": n, "tp": tp if n % tp == 0 else 1}
                           for n in counts if n is not None))


WIDGET = Widget(
    name="training_at_scale",
    title="Train a big model on many GPUs",
    fields=(MODEL, CONFIG, TOKENS, HARDWARE, MFU, GPU_COUNT, TARGET_DAYS, SHARDING, TP,
            GLOBAL_BATCH),
    render=noting_your_model(render, MODEL),
    command=command,
    summary="A big model on many GPUs: memory per GPU with sharded state, wall-clock time, the "
    "fewest GPUs that fit and the count that meets a deadline.",
)
