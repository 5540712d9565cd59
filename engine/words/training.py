"""A training run in words: the assumptions a simulated run rests on (the FLOPs per token, the
steady speed worked out, start-up, ramp, checkpoints, the loss fit), written from
engine.numbers.training_run's inputs; and what an expected training estimate changed or
assumed about its batch (engine.numbers.expected_training's warnings).
"""

from __future__ import annotations

from engine.numbers.catalog import ModelSpec
from engine.numbers.compute import (
    GOOD_MFU_HIGH,
    GOOD_MFU_LOW,
    flops_per_token,
    training_flops_per_token,
)
from engine.numbers.expected_training import ExpectedTrain, TrainWarning
from engine.numbers.training_run import TrainingRunInputs
from engine.words.format import (
    format_count,
    format_percent,
    format_percent_range,
    format_seconds,
    format_TFLOP_per_s,
    plural,
)


def training_flops_words(model: ModelSpec) -> str:
    """The training FLOPs per token as the engine counts them, in words a reader can redo:
    '3 × 15.0 billion forward + 3.22 billion attention = 48.2 billion per token' (the
    forward pass's matmuls three times over, 2 forward + 4 backward per weight, plus the
    attention scores; recomputation not counted)."""
    per = training_flops_per_token(model)
    return (f"3 × {format_count(flops_per_token(model))} forward + "
            f"{format_count(per.attention)} attention = {format_count(per.model)} per token")


def training_run_assumptions(inp: TrainingRunInputs) -> tuple[str, ...]:
    """The run's assumptions, one sentence each (the same for every moment of the run)."""
    if inp.flops_per_token:
        per_token = format_count(inp.flops_per_token)
        out = [f"Training FLOPs = {per_token} per token × tokens (2 forward + 4 backward per "
               "active weight, plus attention; recomputation not counted in MFU)."]
    else:
        per_token = f"{inp.flops_per_token_factor:g} × {format_count(inp.params)}"
        out = [f"Training FLOPs = {inp.flops_per_token_factor:g} × parameters × tokens "
               f"({'2 forward + 4 backward' if inp.flops_per_token_factor == 6 else 'as given'})."]
    out += [
        f"Steady speed = {inp.gpus:,} GPUs × {format_TFLOP_per_s(inp.peak_flops_per_s)} × "
        f"{format_percent(inp.mfu)} MFU / ({per_token}) = "
        f"{inp.steady_tokens_per_s:,.0f} tokens/s.",
        f"GPU utilisation (time busy) {format_percent(inp.utilisation)} in steady training, against "
        f"{format_percent(inp.mfu)} MFU (useful maths): busy is not the same as efficient.",
        f"Start-up: {format_seconds(inp.startup_seconds)} loading and initialising before the "
        "first token (illustrative).",
    ]
    if inp.warmup_seconds > 0:
        out.append(
            f"Throughput ramps linearly from 0 to full speed over the first "
            f"{format_seconds(inp.warmup_seconds)} of training (illustrative)."
        )
    if inp.checkpoint_seconds > 0:
        out.append(
            f"A synchronous checkpoint every {format_seconds(inp.checkpoint_interval_seconds)} "
            "of training and one at the end, each pausing "
            f"{format_seconds(inp.checkpoint_seconds)} "
            f"({inp.checkpoints:,} in all; illustrative)."
        )
    else:
        out.append("No checkpoint pauses.")
    out += [
        "No failures, restarts or slow-downs: a real run of weeks loses time to them.",
        "Loss: Chinchilla fit L = 1.69 + 406.4/N^0.34 + 410.7/D^0.28 (Hoffmann et al. 2022, "
        "approach 3), in nats per token, for their data and tokenizer: indicative, not a "
        "prediction for this model. Each point is the fit at the tokens seen so far, capped "
        f"at ln({inp.vocab:,}) = {inp.initial_loss:.2f}, an untrained model guessing among its "
        "vocabulary.",
    ]
    return tuple(out)


def train_warning_words(w: TrainWarning) -> str:
    """One sentence for what a training estimate changed or assumed about its batch."""
    b = w.batch
    if w.kind == "idle_ranks":
        return (f"The global batch of {b.requested_tokens:,.0f} tokens makes only "
                f"{b.busy_dp:,} micro-batches of {b.micro_batch_tokens:,} tokens for "
                f"{b.dp:,} data-parallel ranks: each step {plural(b.idle_dp, 'rank')}"
                + (f" ({w.idle_gpus:,} GPUs)" if w.gpus_per_rank > 1 else "")
                + " get none and wait, holding their share of the state "
                "and joining the gradient reduction. A bigger batch, shorter sequences or "
                "pipeline stages would give them work.")
    each = f"{b.accumulation:,} micro-batch{'' if b.accumulation == 1 else 'es'}"
    return (f"The global batch is rounded up from {b.requested_tokens:,.0f} to "
            f"{b.tokens_per_step:,} tokens: {each} of {b.micro_batch_tokens:,} tokens on each "
            f"of {plural(b.busy_dp, 'data-parallel rank')}.")


def train_warnings_words(warnings: tuple[TrainWarning, ...]) -> tuple[str, ...]:
    """Every warning of an expected training record, one sentence each."""
    return tuple(train_warning_words(w) for w in warnings)


# A part of the step shorter than this share is not named as a reason for the MFU.
NAMED_SHARE = 0.1


def mfu_band_words(e: ExpectedTrain) -> str | None:
    """Why an expected MFU lies outside the band the lesson calls good for large runs
    (GOOD_MFU_LOW to GOOD_MFU_HIGH), from the estimate's own step: GPUs left without a
    micro-batch, and the shares of the step spent waiting on communication, in the pipeline
    bubble or in the optimiser. None inside the band."""
    band = format_percent_range(GOOD_MFU_LOW, GOOD_MFU_HIGH)
    step = e.step
    waiting = step.exposed_communication_seconds / step.seconds if step.seconds else 0.0
    if GOOD_MFU_LOW <= e.mfu <= GOOD_MFU_HIGH:
        return None
    if e.mfu > GOOD_MFU_HIGH:
        wait = "nothing" if waiting == 0 else f"only {format_percent(waiting)}"
        return (f"{format_percent(e.mfu)} is above the {band} well-tuned large runs reach: "
                f"{wait} of each step waits for communication, less than at large scale, so "
                "treat it as the optimistic end.")
    reasons = [
        f"{w.idle_gpus:,} of {w.batch.dp * w.gpus_per_rank:,} GPUs get no micro-batch"
        for w in e.warnings if w.kind == "idle_ranks"
    ]
    for seconds, what in ((step.exposed_communication_seconds, "waits for communication"),
                          (step.bubble_seconds, "is pipeline bubble"),
                          (step.optimizer_seconds, "is the optimiser step")):
        if step.seconds and seconds / step.seconds >= NAMED_SHARE:
            reasons.append(f"{format_percent(seconds / step.seconds)} of each step {what}")
    if not reasons:
        reasons.append("the GPUs' own kernels reach less of the peak on this model's shapes")
    return f"{format_percent(e.mfu)} is below the {band} well-tuned large runs reach: " + (
        "; ".join(reasons) + ".")
