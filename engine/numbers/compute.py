"""Compute: FLOPs per token, FLOPs of a training run, time at a given MFU, MFU from speed.

Rules (Kaplan et al. 2020, section 2.1): using a model costs about 2 x N FLOPs per token
(one multiply and one add per weight; N = parameters active for that token, the embedding
lookup excluded); training costs about 6 x N x D for D tokens (2 forward + 4 backward).
:func:`training_flops_per_token` is the one owner of a model's training FLOPs: 3 x the
forward matmuls (6 x *active* parameters: a mixture of experts trains only the experts each
token uses) plus attention scores (PaLM's 12 x layers x heads x head_dim x sequence), and
what recomputation adds on top (hardware FLOPs, not model FLOPs: MFU never counts them).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers import architecture, validate
from engine.numbers.catalog import as_model
from engine.numbers.errors import EngineError
from engine.numbers.records import JsonShape, Record
from engine.numbers.rounding import ceil_div

# The MFU the lesson assumes when none is given: a well-run large job (Meta reports 38-43 %
# for Llama 3 405B on 16,384 H100s). plan(), the figures and the widgets' defaults use it.
DEFAULT_MFU = 0.4
# What well-tuned large training runs reach (the lesson's band; PaLM 46 %, Llama 3 405B
# 38-43 %, MT-NLG ~30 %, see engine/lesson/reality/published.py): below it GPUs mostly wait.
GOOD_MFU_LOW = 0.35
GOOD_MFU_HIGH = 0.55
# The sequence length a training plan assumes when none is given (tokens per sample).
DEFAULT_TRAINING_SEQ_LEN = 4096
RECOMPUTE = ("none", "selective", "full")


def flops_per_token(model: object) -> float:
    """FLOPs to push one token through the model's weights: 2 per active weight of every
    matmul, about 2 x active parameters (the embedding lookup costs nothing; attention
    scores come on top, see :func:`engine.numbers.architecture.attention_flops_per_token`)."""
    return architecture.forward_flops_per_token(as_model(model))


@dataclass(frozen=True, slots=True)
class TrainingFlopsPerToken(Record):
    """FLOPs to train on one token, by part.

    ``matmul``: 3 x the forward matmul FLOPs (2 forward + 4 backward per active weight).
    ``attention``: 3 x the forward attention scores at ``seq_len`` (Chowdhery et al. 2022,
    'PaLM', appendix B: 12 x layers x heads x head_dim x sequence, each token attending to
    the whole sequence; a sliding-window layer to its window). ``recompute``: the forward
    work done again in the backward pass: all of it with full recomputation (so hardware
    FLOPs are 8/6 of model FLOPs), only the attention scores with selective recomputation
    (Korthikanti et al. 2022, section 4.2), none without.
    """

    JSON = JsonShape(derived=("model", "hardware"), after={"model": "recompute",
                                                           "hardware": "model"})

    matmul: float
    attention: float
    recompute: float
    seq_len: int
    recompute_mode: str

    @property
    def model(self) -> float:
        """Model FLOPs per token: what MFU counts (no recomputation)."""
        return self.matmul + self.attention

    @property
    def hardware(self) -> float:
        """FLOPs the chips execute per token: model FLOPs plus recomputation."""
        return self.model + self.recompute

    def hardware_utilisation(self, mfu: float) -> float:
        """The share of peak the chips run at for ``mfu``: mfu x hardware / model FLOPs.

        Raises EngineError above 100 %: recomputation adds FLOPs that MFU does not count.
        """
        used = mfu * self.hardware / self.model
        if used > 1.0:
            raise EngineError(f"{mfu:.0%} MFU with {self.recompute_mode} recomputation would "
                              "need the GPUs to run above their peak (recomputation adds FLOPs "
                              "MFU does not count); lower the MFU.", "mfu")
        return used


def _recompute_mode(recompute: object) -> str:
    if isinstance(recompute, bool):
        return "full" if recompute else "none"
    if isinstance(recompute, str):
        return validate.choice(recompute, "recompute", RECOMPUTE)
    raise EngineError("Recompute must be true/false or none/selective/full.", "recompute")


def training_flops_per_token(model: object, seq_len: object = DEFAULT_TRAINING_SEQ_LEN,
                             recompute: object = "none") -> TrainingFlopsPerToken:
    """Training FLOPs per token of ``model`` on samples of ``seq_len`` tokens.

    Llama 3.1 8B at 4,096 tokens: matmul 3 x 15.01 billion = 45.0 billion, attention
    12 x 32 x 4,096 x 4,096 = 6.44 billion; 51.5 billion model FLOPs per token.
    """
    m = as_model(model)
    s = validate.integer(seq_len, "seq_len", label="Sequence length", maximum=10_000_000)
    mode = _recompute_mode(recompute)
    forward_matmul = architecture.forward_flops_per_token(m)
    forward_attention = (architecture.attention_flops_per_layer_token(m)
                         * architecture.attended_layer_tokens(m, s))
    again = {"none": 0.0, "selective": forward_attention,
             "full": forward_matmul + forward_attention}[mode]
    return TrainingFlopsPerToken(3.0 * forward_matmul, 3.0 * forward_attention, again, s, mode)


def training_flops(params: object, tokens: object, recompute: object = False) -> float:
    """The rule of thumb for a bare parameter count: 6 x N x D FLOPs to train N (active)
    parameters on D tokens; 8 x N x D with full recomputation (hardware FLOPs).

    For a model with shapes use :func:`training_flops_per_token`, which adds attention and
    uses active parameters. ``recompute`` may be a bool or 'none'/'selective'/'full';
    selective recomputation is counted as 6 N D here.
    """
    n = validate.number(params, "params", label="Parameter count", maximum=1e16)
    d = validate.number(tokens, "tokens", label="Training tokens", maximum=1e16)
    return (8.0 if _recompute_mode(recompute) == "full" else 6.0) * n * d


def training_seconds(total_flops: object, gpus: object, peak_flops_per_s: object,
                     mfu: object) -> float:
    """Wall-clock seconds = FLOPs / (GPUs x peak FLOP/s x MFU)."""
    f = validate.number(total_flops, "total_flops", label="Total FLOPs", allow_minimum=True)
    g = validate.integer(gpus, "gpus", label="GPU count", maximum=10_000_000)
    peak = validate.number(peak_flops_per_s, "peak_flops_per_s", label="Peak FLOP/s",
                           minimum=1e6, maximum=1e20)
    u = validate.fraction(mfu, "mfu", label="MFU")
    return f / (g * peak * u)


def mfu_at(tokens_per_s: object, model_flops_per_token: object, gpus: object,
           peak_flops_per_s: object) -> float:
    """Model FLOPs utilisation: model FLOPs per token x tokens/s / (GPUs x peak FLOP/s).

    Raises EngineError when the inputs imply more than 100 %.
    """
    tps = validate.number(tokens_per_s, "tokens_per_s", label="Tokens per second", maximum=1e15)
    f = validate.number(model_flops_per_token, "model_flops_per_token",
                        label="FLOPs per token", maximum=1e18)
    g = validate.integer(gpus, "gpus", label="GPU count", maximum=10_000_000)
    peak = validate.number(peak_flops_per_s, "peak_flops_per_s", label="Peak FLOP/s",
                           minimum=1e6, maximum=1e20)
    mfu = f * tps / (g * peak)
    if mfu > 1.0:
        raise EngineError(f"That throughput implies {mfu:.0%} MFU, more than the hardware's "
                          "peak: check the tokens per second, GPU count or peak.", "tokens_per_s")
    return mfu


def mfu_from_throughput(tokens_per_s: object, params: object, gpus: object,
                        peak_flops_per_s: object, *, extra_flops_per_token: object = 0.0
                        ) -> float:
    """MFU from a bare parameter count: (6 x N + extra) x tokens/s / (GPUs x peak FLOP/s).

    ``extra_flops_per_token`` adds attention-score FLOPs if the source counts them (PaLM's
    appendix B does: 12 x layers x heads x head_dim x sequence length).
    """
    n = validate.number(params, "params", label="Parameter count", maximum=1e16)
    extra = validate.number(extra_flops_per_token, "extra_flops_per_token",
                            label="Extra FLOPs per token", allow_minimum=True)
    return mfu_at(tokens_per_s, 6.0 * n + extra, gpus, peak_flops_per_s)


def tokens_per_s_at(model_flops_per_token: object, gpus: object, peak_flops_per_s: object,
                    mfu: object) -> float:
    """Training tokens per second = GPUs x peak x MFU / model FLOPs per token."""
    f = validate.number(model_flops_per_token, "model_flops_per_token",
                        label="FLOPs per token", maximum=1e18)
    g = validate.integer(gpus, "gpus", label="GPU count", maximum=10_000_000)
    peak = validate.number(peak_flops_per_s, "peak_flops_per_s", label="Peak FLOP/s",
                           minimum=1e6, maximum=1e20)
    u = validate.fraction(mfu, "mfu", label="MFU")
    return g * peak * u / f


def tokens_per_s_at_mfu(params: object, gpus: object, peak_flops_per_s: object,
                        mfu: object) -> float:
    """Training tokens per second for a bare parameter count: GPUs x peak x MFU / (6 x N)."""
    n = validate.number(params, "params", label="Parameter count", maximum=1e16)
    return tokens_per_s_at(6.0 * n, gpus, peak_flops_per_s, mfu)


def gpus_for_deadline(total_flops: object, seconds: object, peak_flops_per_s: object,
                      mfu: object) -> int:
    """Fewest GPUs that finish ``total_flops`` within ``seconds`` at ``mfu``."""
    f = validate.number(total_flops, "total_flops", label="Total FLOPs")
    s = validate.number(seconds, "seconds", label="Deadline", maximum=1e12)
    peak = validate.number(peak_flops_per_s, "peak_flops_per_s", label="Peak FLOP/s",
                           minimum=1e6, maximum=1e20)
    u = validate.fraction(mfu, "mfu", label="MFU")
    return max(1, ceil_div(f, s * peak * u))
