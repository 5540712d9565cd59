"""docs/steps/training-at-scale.md: training at real scale. Two separate reasons for many GPUs: the training state
must fit (memory per GPU with sharded state) and the FLOPs must finish in time (wall-clock).
"""

from __future__ import annotations

from engine.lesson.plans.fields import PLAN_FIELDS, plan_commands
from engine.numbers import compute, cost, quantities
from engine.numbers.catalog import get_hardware
from engine.numbers.expected_training import expected_train
from engine.numbers.memory import TrainingMemory
from engine.numbers.plan import plan
from engine.numbers.rounding import ceil_div
from engine.numbers.training_choices import SHARDINGS
from engine.numbers.training_runs import (
    LLAMA_3_1_405B_GLOBAL_BATCH_TOKENS,
    LLAMA_3_1_405B_SEQ_LEN,
)
from engine.numbers.units import SECONDS_PER_DAY
from engine.render.charts import memory_bar
from engine.render.fields import Amount, one_of
from engine.render.html import definition_list, esc, table, tag
from engine.render.options import (
    CONFIG,
    GPUS,
    MFU,
    SEQ_LEN,
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
# The defaults are Meta's layout for Llama 3.1 405B on 16,384 H100s (The Llama 3 Herd of
# Models, arXiv 2407.21783, section 3.3.2 and Table 4): tensor parallel 8 x 16 pipeline stages x
# 128 data-parallel ranks, sequences of 8,192 tokens, 16M tokens a step, the data-parallel
# ranks sharding the optimiser states (ZeRO-1, as the reality page's row of this run), an
# interleaved pipeline of 2 chunks per GPU (the paper gives no count: the fewest assumed).
SHARDING = one_of("sharding", "Sharding", "zero1", SHARDINGS, SHARDING_LABELS)
TP = TENSOR_PARALLEL.but(default="8", unit="", control_kind="select", options=TP_OPTIONS,
                        quantity=quantities.TENSOR_PARALLEL_IN_SERVER)
PP = PLAN_FIELDS["pp"].but(default="16", hint="Layers cut into stages; Meta's run: 16.")
INTERLEAVE = PLAN_FIELDS["interleave"].but(
    default="2", hint="Above 1: interleaved. Meta's run is interleaved; 2 chunks assumed (no count "
    "published).")
SEQUENCE = SEQ_LEN.but(default=str(LLAMA_3_1_405B_SEQ_LEN), hint="Meta's run: 8,192.")
# Meta's batch for this run: at the default layout (128 data-parallel ranks) every pipeline
# gets 16 sequences of 8,192 tokens a step, where the engine's smaller default batch would
# leave it 4 and most of each step in the pipeline's bubble.
GLOBAL_BATCH = Amount("global_batch", "Global batch", f"{LLAMA_3_1_405B_GLOBAL_BATCH_TOKENS}",
                      unit="tokens", quantity=quantities.GLOBAL_BATCH_TOKENS,
                      hint="Tokens per optimiser step; Llama 3.1 405B's run: 16M.")


def layout_count(gpus: int, tp: int, pp: int) -> int:
    """The fewest GPUs at or above ``gpus`` that a layout of ``tp`` x ``pp`` GPUs per
    data-parallel rank can use: the time-only count to meet the target, rounded up to a
    whole number of ranks, so the table's row (and its command) runs on the chosen layout."""
    per_rank = tp * pp
    return ceil_div(gpus, per_rank) * per_rank


def render(values: Values) -> str:
    model = chosen_model(values, MODEL)
    gpu = get_hardware(values[HARDWARE])
    tokens = values[TOKENS]
    mfu = values[MFU]
    gpus = values[GPU_COUNT]
    days = values[TARGET_DAYS]
    sharding = values[SHARDING]
    tp = values[TP]
    pp = values[PP]
    interleave = values[INTERLEAVE]
    seq_len = values[SEQUENCE]
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
        pp=pp,
        interleave=interleave,
        seq_len=seq_len,
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
                              global_batch_tokens=global_batch, pp=pp, interleave=interleave)

    fits = mem.fits
    # The deadline is judged on the expected time of this layout; the chosen MFU's time
    # stands beside it, said as the condition it is.
    on_time = modelled.seconds <= days * SECONDS_PER_DAY
    why = mfu_band_words(modelled)
    verdict_text = (
        f"{plural(gpus, 'GPU')}: {format_GB(mem.per_gpu_bytes)} of {format_GB(mem.capacity_bytes)} per "
        f"GPU, {'it fits' if fits else 'it does not fit'}; "
        f"{at_best_and_expected(t.bound_seconds, modelled.seconds)} at this layout's "
        f"{format_percent(modelled.mfu)} MFU, {'within' if on_time else 'beyond'} the "
        f"{days:g}-day target; {format_seconds(t.seconds)} if {format_percent(mfu)} MFU is "
        "reached." + (f" {why}" if why else "")
    )
    verdict = tag(
        "p",
        esc(verdict_text),
        class_="widget-verdict " + ("fits" if fits and on_time else "refused"),
    )
    bar = memory_bar(
        mem.parts,
        mem.capacity_bytes,
        label=f"Memory of each {gpu.name} with {parallel_layout(sharding, tp, pp)} over "
              f"{gpus:,} GPUs",
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
    target_gpus = layout_count(t.gpus_for_target, tp, pp)
    too_few = p.min_gpus is not None and target_gpus < p.min_gpus
    rows.append(
        (
            f"{target_gpus:,}",
            f"Fewest to finish in {days:g} days (whole {tp * pp:,}-GPU ranks"
            + ("; too few for this layout's memory)" if too_few else ")"),
            format_seconds(
                compute.training_seconds(t.model_flops, target_gpus, t.peak_flops_per_s, mfu)
            ),
        )
    )
    rows.append((f"{gpus:,}", "Your choice", format_seconds(t.seconds)))
    counts = table(
        ("GPUs", "Which count", f"Time if {format_percent(mfu)} MFU is reached"),
        rows,
        caption="GPU counts compared",
    )

    at_mfu = f"{format_percent(mfu)} MFU"
    price_line: tuple[str, str]
    if p.usd_per_gpu_hour is None:
        price_line = ("Cost", price_note(p))
    else:
        bill = cost.training_run_cost(
            gpus=gpus, seconds=t.seconds, usd_per_gpu_hour=p.usd_per_gpu_hour
        )
        price_line = (
            f"Cost at {format_usd(p.usd_per_gpu_hour)} per GPU-hour ({price_note(p)}), at "
            f"{at_mfu}",
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
            (f"GPUs to finish in {days:g} days at {at_mfu}", f"{t.gpus_for_target:,}"),
            (f"Wall-clock time on {plural(gpus, 'GPU')} at {at_mfu}", format_seconds(t.seconds)),
            (f"On one GPU at {at_mfu}", format_seconds(one_gpu)),
            price_line,
        ]
    )
    assumptions = (BOUND_WORDS, EXPECTED_TRAINING_WORDS, *train_warnings_words(modelled.warnings),
                   *memory_assumptions(mem))
    schedule = f", {plural(interleave, 'chunk')} per GPU" if pp > 1 else ""
    tuned = definition_list(
        [
            (
                f"Expected with {parallel_layout(sharding, tp, pp)}{schedule} (kernel "
                "efficiencies, communication and the pipeline's bubble; no failures, "
                "stragglers or power limits)",
                f"{format_percent(modelled.mfu)} MFU, "
                + at_best_and_expected(t.bound_seconds, modelled.seconds),
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
    fewest that fit, the fewest to finish in time). A count the chosen tensor parallel x
    pipeline stages divide keeps them, so the fewest that fit fit there too; another runs
    unsplit (tensor parallel 1, one stage), which gives the same time at an MFU (the time
    does not depend on the split)."""
    gpus, tp, pp = values[GPU_COUNT], values[TP], values[PP]
    run = {"hardware": values[HARDWARE], "gpus": gpus, "task": "train",
           "tokens": values[TOKENS], "mfu": values[MFU], "target_days": values[TARGET_DAYS],
           "sharding": values[SHARDING], "tp": tp, "pp": pp, "interleave": values[INTERLEAVE],
           "seq_len": values[SEQUENCE], "global_batch_tokens": values[GLOBAL_BATCH]}
    p = plan(model=chosen_model(values, MODEL), **run)
    target = p.train.gpus_for_target if p.train is not None else None
    counts = [1, p.min_gpus, layout_count(target, tp, pp) if target is not None else None]
    unsplit = {"tp": 1, "pp": 1, "interleave": 1}
    return plan_commands(values, MODEL, run, {**run, "mfu": None},
                         *({**run, "gpus": n, **({} if n % (tp * pp) == 0 else unsplit)}
                           for n in counts if n is not None))


WIDGET = Widget(
    name="training_at_scale",
    title="Train a big model on many GPUs",
    fields=(MODEL, CONFIG, TOKENS, HARDWARE, MFU, GPU_COUNT, TARGET_DAYS, SHARDING, TP, PP,
            INTERLEAVE, SEQUENCE, GLOBAL_BATCH),
    render=noting_your_model(render, MODEL),
    command=command,
    summary="A big model on many GPUs: memory per GPU with sharded state, wall-clock time, the "
    "fewest GPUs that fit and the count that meets a deadline.",
)
