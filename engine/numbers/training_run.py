"""A training run you can watch: a deterministic time series of one run, and its loss.

The run is modelled as four kinds of wall-clock time, each an assumption stated beside the
result (engine.words.training writes them):

1. **Start-up** (``startup_seconds``): loading the model and data, initialising, compiling.
   No tokens are processed; the GPUs are idle.
2. **Throughput ramp** (``warmup_seconds`` of training time): throughput rises linearly
   from 0 to its steady value (kernel autotuning, data pipeline filling up). This is not
   the learning-rate warm-up, which does not change the speed.
3. **Steady training**: ``tokens/s = gpus x peak FLOP/s x MFU / FLOPs per token``, the model
   FLOPs per token given (``flops_per_token``, from
   :func:`engine.numbers.compute.training_flops_per_token`), or ``factor x params`` with
   ``factor`` = 6 FLOPs per parameter per token (2 forward + 4 backward).
4. **Checkpoint pauses**: every ``checkpoint_interval_seconds`` of training time, and once
   at the end, training stops for ``checkpoint_seconds`` while the state is written
   (a synchronous checkpoint; the GPUs are idle meanwhile).

Everything is closed-form, so :func:`training_run_at` gives the state at any elapsed time in
a few microseconds (the browser calls it every frame of its accelerated-time widget).

Units: seconds, tokens, FLOPs, FLOP/s (per GPU for ``peak_flops_per_s``); MFU and
utilisation are fractions (0.4 = 40 %). Loss is in nats per token.

The loss is the parametric fit of Hoffmann et al. (2022), "Training Compute-Optimal Large
Language Models" (the Chinchilla paper), approach 3, eq. 10:
``L(N, D) = E + A / N**alpha + B / D**beta`` with E = 1.69, A = 406.4, B = 410.7,
alpha = 0.34, beta = 0.28.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from engine.numbers import quantities, validate
from engine.numbers.errors import EngineError
from engine.numbers.records import Record, unknown_keys
from engine.numbers.units import SECONDS_PER_HOUR, SECONDS_PER_YEAR

# Hoffmann et al. 2022, approach 3 (eq. 10), fitted on MassiveText with their tokenizer.
CHINCHILLA_E = 1.69
CHINCHILLA_A = 406.4
CHINCHILLA_B = 410.7
CHINCHILLA_ALPHA = 0.34
CHINCHILLA_BETA = 0.28
# An untrained model guessing uniformly among its vocabulary has a loss of ln(vocabulary):
# that caps the curve near zero tokens, where the fit diverges. The fit's own tokenizer
# (SentencePiece, 32,000 tokens) is the default; a run of a catalogue model passes its
# vocabulary (Llama 3.1: 128,256 tokens, ln = 11.76 nats).
CHINCHILLA_VOCAB = 32_000


def initial_loss(vocab: int) -> float:
    """An untrained model's loss in nats per token: ln(``vocab``, at least 2), a uniform
    guess."""
    return math.log(vocab)

# Longest run the simulation accepts (about 3 million years): beyond it, inputs are a typo.
MAX_RUN_SECONDS = quantities.RUN_SECONDS.maximum

PHASES = ("starting", "ramping", "training", "checkpointing", "finished")


def loss(params: float, tokens: float) -> float:
    """Predicted final training loss (nats per token) of a model of ``params`` parameters
    trained on ``tokens`` tokens, from the Chinchilla parametric fit.

    Hoffmann et al. (2022), "Training Compute-Optimal Large Language Models", approach 3,
    eq. 10: ``L(N, D) = 1.69 + 406.4 / N**0.34 + 410.7 / D**0.28``.

    The fit was made on their data (MassiveText) and tokenizer, with a learning-rate schedule
    matched to each run's length, so absolute values are indicative only: other data and
    tokenizers give other numbers. The shape (more parameters or more tokens lower the
    loss, with diminishing returns towards the irreducible 1.69) is what carries over.
    """
    n = validate.number(params, "params", label="Parameters")
    d = validate.number(tokens, "tokens", label="Tokens")
    return _loss(n, d)


def _loss(n: float, d: float) -> float:
    result: float = (CHINCHILLA_E + CHINCHILLA_A / n**CHINCHILLA_ALPHA
                     + CHINCHILLA_B / d**CHINCHILLA_BETA)
    return result


def _curve_loss(n: float, d: float, start: float) -> float:
    """The loss shown on the curve: the fit, capped at an untrained model's ``start``."""
    if d <= 0.0:
        return start
    return min(_loss(n, d), start)


@dataclass(frozen=True, slots=True)
class TrainingRunInputs(Record):
    """What defines a run, built once and reused every frame. A plain record: each value is
    in its :mod:`engine.numbers.quantities` range and :func:`check_training_run` holds, checked
    where the inputs entered (:meth:`from_dict`, a widget's fields, the cluster's checks).

    params: model parameters (count). tokens: token budget of the run (count).
    gpus: GPUs in the run. peak_flops_per_s: dense peak of ONE GPU in the training format.
    mfu: steady model FLOPs utilisation (fraction). utilisation: steady GPU utilisation, the
    share of time the GPUs are busy (fraction, at least ``mfu``).
    flops_per_token_factor: FLOPs per parameter per token (6), used when ``flops_per_token``
    is 0. flops_per_token: model FLOPs per token (active parameters and attention included;
    recomputation excluded, as MFU counts them).
    startup_seconds, warmup_seconds, checkpoint_interval_seconds, checkpoint_seconds: see
    the module docstring; ``checkpoint_seconds=0`` disables checkpoints.
    """

    params: float
    tokens: float
    gpus: int
    peak_flops_per_s: float
    mfu: float
    utilisation: float = 0.95
    flops_per_token_factor: float = 6.0
    startup_seconds: float = 300.0
    warmup_seconds: float = 600.0
    checkpoint_interval_seconds: float = 3600.0
    checkpoint_seconds: float = 60.0
    flops_per_token: float = 0.0
    vocab: int = CHINCHILLA_VOCAB

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> TrainingRunInputs:
        """Inputs from a plain dict (e.g. JSON from the browser), each checked against its
        :mod:`engine.numbers.quantities` range and then by :func:`check_training_run`;
        unknown keys are refused."""
        if not isinstance(data, Mapping):
            raise EngineError("Training run inputs must be a mapping of names to numbers.")
        unknown = unknown_keys(data, {f.name for f in fields(cls)})
        if unknown:
            raise EngineError(f"Unknown training run input(s): {', '.join(unknown)}.")
        missing = [n for n in ("params", "tokens", "gpus", "peak_flops_per_s", "mfu")
                   if n not in data]
        if missing:
            raise EngineError(f"Missing training run input(s): {', '.join(missing)}.")
        checked: dict[str, Any] = {}
        for name, (quantity, label) in _QUANTITIES.items():
            if name in data:
                value = data[name]
                checked[name] = (quantity.check_integer(value, name, label)
                                 if quantity.kind == "integer"
                                 else quantity.check(value, name, label))
        return check_training_run(cls(**checked))

    @property
    def model_flops_per_token(self) -> float:
        """Model FLOPs per token: ``flops_per_token`` if given, else factor x params."""
        return self.flops_per_token or self.flops_per_token_factor * self.params

    @property
    def initial_loss(self) -> float:
        """The untrained model's loss, ln(vocab) nats per token: where the curve starts."""
        return initial_loss(self.vocab)

    @property
    def steady_tokens_per_s(self) -> float:
        """Tokens/s at full speed: gpus x peak x MFU / model FLOPs per token."""
        return _timing(self).steady_tokens_per_s

    @property
    def total_seconds(self) -> float:
        """Wall-clock length of the whole run (start-up, ramp and pauses included)."""
        return _timing(self).total_seconds

    @property
    def checkpoints(self) -> int:
        """Checkpoint pauses in the whole run (the one at the end included)."""
        return _timing(self).checkpoints


# Each input's range and label, for :meth:`TrainingRunInputs.from_dict`.
_QUANTITIES: dict[str, tuple[quantities.Quantity, str]] = {
    "params": (quantities.PARAMS, "Parameters"),
    "tokens": (quantities.RUN_TOKENS, "Token budget"),
    "gpus": (quantities.GPUS, "GPU count"),
    "peak_flops_per_s": (quantities.PEAK_FLOPS_PER_S, "Peak FLOP/s per GPU"),
    "mfu": (quantities.MFU, "MFU"),
    "utilisation": (quantities.GPU_UTILISATION, "GPU utilisation"),
    "flops_per_token_factor": (quantities.FLOPS_PER_PARAM_PER_TOKEN,
                               "FLOPs per parameter per token"),
    "startup_seconds": (quantities.RUN_SECONDS, "Start-up time"),
    "warmup_seconds": (quantities.RUN_SECONDS, "Ramp-up time"),
    "checkpoint_interval_seconds": (quantities.CHECKPOINT_INTERVAL_SECONDS,
                                    "Time between checkpoints"),
    "checkpoint_seconds": (quantities.RUN_SECONDS, "Checkpoint pause"),
    "flops_per_token": (quantities.FLOPS_PER_TOKEN, "FLOPs per token"),
    "vocab": (quantities.VOCAB, "Vocabulary"),
}


def check_training_run(inp: TrainingRunInputs) -> TrainingRunInputs:
    """``inp`` when its inputs, each in range, make a run the simulation can show: an MFU no
    higher than the GPUs' utilisation and a run no longer than :data:`MAX_RUN_SECONDS`;
    EngineError otherwise. The one check of those rules, for every entry point."""
    if inp.mfu > inp.utilisation:
        raise EngineError(
            f"MFU ({inp.mfu:.0%}) cannot exceed GPU utilisation ({inp.utilisation:.0%}): "
            "the GPUs cannot do useful maths for more of the time than they are busy.",
            "mfu",
        )
    total = _timing(inp).total_seconds
    if not math.isfinite(total) or total > MAX_RUN_SECONDS:
        # Always past MAX_RUN_SECONDS here: whole years, as engine.words.format writes them.
        length = f"{total / SECONDS_PER_YEAR:,.0f} years" if math.isfinite(total) else "forever"
        raise EngineError(
            f"This run would take {length}, more than the simulation handles: check the "
            "token budget, the GPU count and the peak FLOP/s.",
            "tokens",
        )
    return inp


@dataclass(frozen=True, slots=True)
class _Timing:
    steady_tokens_per_s: float
    train_seconds: float  # time spent training (ramp + steady), pauses excluded
    checkpoints: int
    total_seconds: float


def _timing(inp: TrainingRunInputs) -> _Timing:
    rate = inp.gpus * inp.peak_flops_per_s * inp.mfu / inp.model_flops_per_token
    w = inp.warmup_seconds
    if inp.tokens <= rate * w / 2.0:
        # The budget runs out during the ramp: tokens = rate * tau**2 / (2 w).
        train = math.sqrt(2.0 * w * inp.tokens / rate)
    else:
        train = inp.tokens / rate + w / 2.0
    checkpoints = 0
    if inp.checkpoint_seconds > 0.0 and math.isfinite(train):
        checkpoints = max(1, math.ceil(train / inp.checkpoint_interval_seconds - 1e-9))
    total = inp.startup_seconds + train + checkpoints * inp.checkpoint_seconds
    return _Timing(rate, train, checkpoints, total)


@dataclass(frozen=True, slots=True)
class TrainingSample(Record):
    """The run at one moment. MFU and utilisation differ: utilisation is the share of time
    the GPUs are busy (what ``nvidia-smi`` shows), MFU the share of peak FLOP/s spent on the
    model's own maths; a healthy run shows ~95 % utilisation at ~40 % MFU."""

    elapsed_seconds: float
    phase: str
    tokens_done: float
    fraction_done: float
    tokens_per_s: float
    mfu: float
    utilisation: float
    flops_done: float
    seconds_left: float
    loss: float


def _sample(inp: TrainingRunInputs, t: _Timing, elapsed: float) -> TrainingSample:
    u = elapsed - inp.startup_seconds
    interval, pause = inp.checkpoint_interval_seconds, inp.checkpoint_seconds
    if u <= 0.0:
        tau, phase = 0.0, "starting"
    elif u >= t.total_seconds - inp.startup_seconds:
        tau, phase = t.train_seconds, "finished"
    elif pause > 0.0 and u >= t.train_seconds + (t.checkpoints - 1) * pause:
        tau, phase = t.train_seconds, "checkpointing"  # the final save
    elif pause > 0.0:
        cycle = interval + pause
        k = math.floor(u / cycle)
        rem = u - k * cycle
        if rem < interval:
            tau, phase = k * interval + rem, "training"
        else:
            tau, phase = (k + 1) * interval, "checkpointing"
    else:
        tau, phase = u, "training"
    tau = min(tau, t.train_seconds)

    w, rate = inp.warmup_seconds, t.steady_tokens_per_s
    if tau < w:
        speed = tau / w
        tokens = rate * tau * tau / (2.0 * w)
    else:
        speed = 1.0
        tokens = rate * (tau - w / 2.0)
    if tau >= t.train_seconds:
        tokens = inp.tokens  # exact at the end, whatever the rounding of the closed forms
    tokens = min(tokens, inp.tokens)
    if phase == "training" and speed < 1.0:
        phase = "ramping"
    if phase in ("starting", "checkpointing", "finished"):
        speed = 0.0
    return TrainingSample(
        elapsed_seconds=elapsed,
        phase=phase,
        tokens_done=tokens,
        fraction_done=tokens / inp.tokens,
        tokens_per_s=rate * speed,
        mfu=inp.mfu * speed,
        utilisation=inp.utilisation * speed,
        flops_done=tokens * inp.model_flops_per_token,
        seconds_left=max(t.total_seconds - elapsed, 0.0),
        loss=_curve_loss(inp.params, tokens, inp.initial_loss),
    )


@dataclass(frozen=True, slots=True)
class TrainingRun(Record):
    """A whole run: totals and ``samples`` evenly spaced from 0 to the end.

    total_flops = model FLOPs per token x tokens; gpu_hours = gpus x total_seconds / 3600 (what a
    cloud bills: start-up and checkpoint pauses included).
    """

    inputs: TrainingRunInputs
    total_flops: float
    steady_tokens_per_s: float
    steady_seconds_estimate: float
    train_seconds: float
    startup_seconds: float
    checkpoints: int
    checkpoint_pause_seconds: float
    total_seconds: float
    gpu_hours: float
    final_loss: float
    samples: tuple[TrainingSample, ...]


def simulate_training_run(inp: TrainingRunInputs, samples: int = 100) -> TrainingRun:
    """Simulate the run ``inp``: totals and ``samples`` (at least 2) points evenly spaced in
    wall-clock time from 0 to the end (both included).

    Units: see :class:`TrainingRunInputs` and the module docstring (seconds, tokens, FLOP/s
    per GPU, fractions). Deterministic: the same inputs always give the same run.
    """
    n = samples
    t = _timing(inp)
    step = t.total_seconds / (n - 1)
    points = tuple(_sample(inp, t, t.total_seconds if i == n - 1 else i * step)
                   for i in range(n))
    total_flops = inp.model_flops_per_token * inp.tokens
    return TrainingRun(
        inputs=inp,
        total_flops=total_flops,
        steady_tokens_per_s=t.steady_tokens_per_s,
        steady_seconds_estimate=inp.tokens / t.steady_tokens_per_s,
        train_seconds=t.train_seconds,
        startup_seconds=inp.startup_seconds,
        checkpoints=t.checkpoints,
        checkpoint_pause_seconds=t.checkpoints * inp.checkpoint_seconds,
        total_seconds=t.total_seconds,
        gpu_hours=inp.gpus * t.total_seconds / SECONDS_PER_HOUR,
        final_loss=_curve_loss(inp.params, inp.tokens, inp.initial_loss),
        samples=points,
    )


def training_run_at(inp: TrainingRunInputs, elapsed_seconds: float) -> TrainingSample:
    """The run's state ``elapsed_seconds`` (0 or more) after launch; past the end gives the
    finished state. Cheap: pass a :class:`TrainingRunInputs` built once and call this every
    frame (a few microseconds)."""
    t = _timing(inp)
    return _sample(inp, t, min(elapsed_seconds, t.total_seconds))
