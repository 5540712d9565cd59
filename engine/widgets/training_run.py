"""docs/steps/training-run.md: a training run of Llama 3.1 8B on dgx-1's eight H100s, in accelerated time.

A clock widget: while it plays, the browser advances the hidden input ``elapsed``
(simulated seconds) and calls :func:`render` every frame, so the render stays cheap: one
:func:`~engine.numbers.training_run.simulate_training_run` of 60 samples (the whole loss curve) and
one :func:`~engine.numbers.training_run.training_run_at` for the moment shown.
"""

from __future__ import annotations

from functools import lru_cache

from engine.numbers import memory, quantities
from engine.numbers.catalog import get_model, get_system
from engine.numbers.compute import training_flops_per_token
from engine.numbers.expected_training import ExpectedTrain, expected_train
from engine.numbers.training_choices import Sharding
from engine.numbers.training_run import (
    CHINCHILLA_E,
    TrainingRunInputs,
    check_training_run,
    simulate_training_run,
    training_run_at,
)
from engine.numbers.training_runs import DEMO_PRETRAINING_TOKENS
from engine.numbers.units import SECONDS_PER_DAY, SECONDS_PER_HOUR
from engine.render.curves import gpu_meters, line_chart
from engine.render.html import definition_list, esc, tag
from engine.render.options import ELAPSED, MFU, TRAINING_TOKENS, speed_field, tokens_text
from engine.render.secondary import secondary
from engine.render.widget import Values, Widget
from engine.words.format import (
    format_count,
    format_elapsed,
    format_flops,
    format_GB,
    format_percent,
    format_seconds,
)
from engine.words.sharding import sharding_name
from engine.words.training import training_flops_words, training_run_assumptions

MODEL = "llama-3.1-8b"
SYSTEM = "dgx-1"
SHARDING: Sharding = "zero3"  # the training state (128.5 GB) does not fit one GPU: shard it over eight
TRAINING_FORMAT = "bf16"
CURVE_SAMPLES = 60
DEFAULT_TOKENS = tokens_text(DEMO_PRETRAINING_TOKENS)  # a small pretraining run for the demo

SPEEDS = (
    (str(int(SECONDS_PER_HOUR)), "1 hour per second"),
    (str(int(SECONDS_PER_DAY)), "1 day per second"),
    (str(int(7 * SECONDS_PER_DAY)), "1 week per second"),
    (str(int(30 * SECONDS_PER_DAY)), "30 days per second"),
)
PHASE_WORDS = {
    "starting": "Starting up: loading the model and data",
    "ramping": "Ramping up to full speed",
    "training": "Training at full speed",
    "checkpointing": "Saving a checkpoint: the GPUs wait",
    "finished": "Finished",
}


SPEED = speed_field(SPEEDS, SPEEDS[2][0])
TOKENS = TRAINING_TOKENS.but(
    label="Token budget", default=DEFAULT_TOKENS, unit="tokens", hint="1e12 is one trillion",
    quantity=quantities.SIMULATED_TRAINING_TOKENS,
)


@lru_cache(maxsize=8)
def _expected(tokens: float) -> ExpectedTrain:
    """The bound and the expected run at full speed: they depend on the budget alone, so the
    clock's frames do not recompute them."""
    system = get_system(SYSTEM)
    return expected_train(get_model(MODEL), system.gpu, tokens=tokens, gpus=system.gpu_count,
                          sharding=SHARDING, compute_format=TRAINING_FORMAT)


def _run_inputs(values: Values) -> TrainingRunInputs:
    """The run the budget and the MFU describe; the fields checked each, the run checks that
    they go together."""
    system = get_system(SYSTEM)
    model = get_model(MODEL)
    return check_training_run(TrainingRunInputs(
        params=model.params,
        tokens=values[TOKENS],
        gpus=system.gpu_count,
        peak_flops_per_s=system.gpu.peak_flops_per_s(TRAINING_FORMAT),
        mfu=values[MFU],
        flops_per_token=training_flops_per_token(model).model,
        vocab=model.vocab,
    ))


def watching_seconds(values: Values) -> float:
    """Real seconds the run plays from its start to its end at the chosen speed."""
    run = simulate_training_run(_run_inputs(values), CURVE_SAMPLES)
    return run.total_seconds / values[SPEED]


def render(values: Values) -> str:
    system = get_system(SYSTEM)
    gpu = system.gpu
    tokens = values[TOKENS]
    speed = values[SPEED]
    elapsed = values[ELAPSED]
    model = get_model(MODEL)
    run = simulate_training_run(_run_inputs(values), CURVE_SAMPLES)
    start_loss = run.inputs.initial_loss
    now = training_run_at(run.inputs, elapsed)
    finished = now.phase == "finished"
    expected = _expected(tokens)

    # The loss curve: the whole run faint, the part already run bold. The first sample (the
    # untrained model, before start-up ends) is far above the rest and is left off the scale.
    curve = [(s.elapsed_seconds, s.loss) for s in run.samples[1:]]
    top = max(loss for _, loss in curve)
    bottom = run.final_loss - 0.05 * (top - run.final_loss)
    chart = line_chart(
        curve,
        label=(
            f"Training loss of {model.name} over the run's {format_seconds(run.total_seconds)}: "
            f"from {start_loss:.2f} untrained to {run.final_loss:.2f} at the end; now "
            f"{now.loss:.2f} after {format_elapsed(now.elapsed_seconds)}."
        ),
        x_label="wall-clock time",
        y_label="loss (nats per token)",
        x_text=format_elapsed,
        y_text=lambda y: f"{y:.2f}",
        done_x=now.elapsed_seconds,
        current=(now.elapsed_seconds, now.loss),
        x_range=(0.0, run.total_seconds),
        y_range=(bottom, top),
        y_cut_note=f"loss starts at {start_loss:.2f}, off the top",
    )
    loss_words = (
        "Loss is how surprised the model is by each next token of its training text, in nats "
        "per token: lower is better. An untrained model guesses among "
        f"the {model.vocab:,} tokens of its vocabulary at random, a loss of ln {model.vocab:,} = "
        f"{start_loss:.2f}. The curve follows the Chinchilla fit (Hoffmann et al. 2022), "
        f"which falls fast and then levels off towards {CHINCHILLA_E:.2f}; the chart's axis "
        f"starts at {bottom:.2f}, not at zero, so the first drop from {start_loss:.2f} is "
        "off the top."
    )
    loss_words = (
        f"The chart draws the loss so far solid and the loss still to come dashed. {loss_words}"
    )

    progress = tag(
        "div",
        tag(
            "progress",
            esc(format_percent(now.fraction_done)),
            max="1",
            value=f"{now.fraction_done:.4f}",
            aria_label="Share of the token budget processed",
        )
        + tag("span", esc(format_percent(now.fraction_done))),
        class_="run-progress",
    )
    status_class = "widget-verdict fits" if finished else "widget-verdict"
    status = tag(
        "p",
        esc(PHASE_WORDS[now.phase])
        + (
            esc(
                f": {format_count(tokens)} tokens in {format_seconds(run.total_seconds)}, "
                f"{run.gpu_hours:,.0f} GPU-hours."
            )
            if finished
            else ""
        ),
        class_=status_class,
        data_clock_done=finished or None,
        data_phase=now.phase,
    )

    train_mem = memory.training_memory(model, gpu, gpus=system.gpu_count, sharding=SHARDING)
    busy = now.utilisation
    # Every GPU is as busy as the others and holds as much: the bars show it, the figures
    # above say it once.
    meters = gpu_meters(
        [(f"GPU {i}" if i == 0 else f"{i}", busy, "") for i in range(system.gpu_count)],
        shares=False,
        height=58,
        label=(
            f"{system.name}: all {system.gpu_count} GPUs {format_percent(busy)} busy, each holding "
            f"{format_GB(train_mem.per_gpu_bytes)} of "
            f"{format_GB(train_mem.capacity_bytes)}."
        ),
    )

    figures = definition_list(
        [
            (
                "Tokens processed",
                f"{format_count(now.tokens_done)} of {format_count(tokens)}",
            ),
            (
                "Tokens per second",
                f"{now.tokens_per_s:,.0f} (full speed {run.steady_tokens_per_s:,.0f})",
            ),
            ("MFU", format_percent(now.mfu)),
            ("GPU utilisation (time busy)", format_percent(now.utilisation)),
            # The clock runs at the MFU set; the engine's expected run and the bound beside
            # it, so every time in view says its basis.
            (f"Time left at {format_percent(run.inputs.mfu)} MFU", format_elapsed(now.seconds_left)),
            ("Expected run", f"{format_seconds(expected.seconds)} ({format_percent(expected.mfu)} "
             f"MFU); at best {format_seconds(expected.bound_seconds)}"),
        ]
    )
    worked = definition_list(
        [
            ("Loss", f"{now.loss:.2f} nats per token"),
            ("Elapsed", format_elapsed(now.elapsed_seconds)),
            (
                "The whole run",
                f"{format_seconds(run.total_seconds)} on {system.gpu_count} GPUs = "
                f"{run.gpu_hours:,.0f} GPU-hours",
            ),
            (
                "Best case and expected, at full speed",
                f"at best {format_seconds(expected.bound_seconds)} (every GPU at its peak, "
                f"which no run reaches); expected, counting kernel efficiencies and "
                f"communication but no failures, stragglers or power limits: "
                f"{format_percent(expected.mfu)} MFU, {format_seconds(expected.seconds)}",
            ),
            (f"Training FLOPs ({training_flops_words(model)}, × tokens)",
             format_flops(run.total_flops)),
            ("Watching time at this speed", format_seconds(run.total_seconds / speed)),
        ]
    )
    notes = (
        *training_run_assumptions(run.inputs),
        f"Memory per GPU: {format_GB(train_mem.per_gpu_bytes)} with the "
        f"training state sharded over the {system.gpu_count} GPUs ({sharding_name(SHARDING)}).",
    )
    more = secondary(
        "Loss, whole run, assumptions",
        tag("p", esc(loss_words), class_="loss-explained")
        + worked
        + tag("p", esc("How these figures are computed:"))
        + tag("ul", "".join(tag("li", esc(line)) for line in notes)),
    )
    return status + progress + figures + chart + meters + more


WIDGET = Widget(
    name="training_run",
    title="A training run, in accelerated time",
    fields=(ELAPSED, SPEED, TOKENS, MFU),
    render=render,
    clock=True,
    running_seconds=watching_seconds,
    summary="Llama 3.1 8B trained on dgx-1's eight H100s in accelerated time: tokens, tokens/s, "
    "MFU, GPU utilisation, time left and the loss curve.",
)
