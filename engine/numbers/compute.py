"""Compute: FLOPs per token, FLOPs of a training run, time at a given MFU, MFU from speed.

Rules (Kaplan et al. 2020, section 2.1): using a model costs about 2 x N FLOPs per token
(one multiply and one add per weight; N = parameters active for that token); training
costs about 6 x N x D for D tokens (2 forward + 4 backward), 8 x N x D when every layer's
forward pass is recomputed in the backward pass (full activation recomputation).
"""

from __future__ import annotations

from engine.numbers import validate
from engine.numbers.catalog import as_model
from engine.numbers.errors import EngineError

# The MFU the lesson assumes when none is given: a well-run large job (Meta reports 38-43 %
# for Llama 3 405B on 16,384 H100s). plan(), the figures and the widgets' defaults use it.
DEFAULT_MFU = 0.4
# What well-tuned large training runs reach (the lesson's band; PaLM 46 %, Llama 3 405B
# 38-43 %, MT-NLG ~30 %, see engine/lesson/reality.py): below it GPUs mostly wait.
GOOD_MFU_LOW = 0.35
GOOD_MFU_HIGH = 0.55


def flops_per_token(model: object) -> float:
    """2 x active parameters: FLOPs to push one token through the model (no attention scores)."""
    return 2.0 * as_model(model).active_params


def training_flops(params: object, tokens: object, recompute: object = False) -> float:
    """6 x N x D FLOPs to train N parameters on D tokens; 8 x N x D with full recomputation.

    ``recompute`` may be a bool or 'none'/'selective'/'full'; selective recomputation adds
    only a few per cent (attention scores) and is counted as 6 N D.
    """
    n = validate.number(params, "params", label="Parameter count", maximum=1e16)
    d = validate.number(tokens, "tokens", label="Training tokens", maximum=1e16)
    if isinstance(recompute, str):
        full = validate.choice(recompute, "recompute", ("none", "selective", "full")) == "full"
    elif isinstance(recompute, bool):
        full = recompute
    else:
        raise EngineError("Recompute must be true/false or none/selective/full.", "recompute")
    return (8.0 if full else 6.0) * n * d


def training_seconds(total_flops: object, gpus: object, peak_flops_per_s: object,
                     mfu: object) -> float:
    """Wall-clock seconds = FLOPs / (GPUs x peak FLOP/s x MFU)."""
    f = validate.number(total_flops, "total_flops", label="Total FLOPs", allow_minimum=True)
    g = validate.integer(gpus, "gpus", label="GPU count", maximum=10_000_000)
    peak = validate.number(peak_flops_per_s, "peak_flops_per_s", label="Peak FLOP/s",
                           minimum=1e6, maximum=1e20)
    u = validate.fraction(mfu, "mfu", label="MFU")
    return f / (g * peak * u)


def mfu_from_throughput(tokens_per_s: object, params: object, gpus: object,
                        peak_flops_per_s: object, *, extra_flops_per_token: object = 0.0
                        ) -> float:
    """Model FLOPs utilisation: (6 x N + extra) x tokens/s / (GPUs x peak FLOP/s).

    ``extra_flops_per_token`` adds attention-score FLOPs if the source counts them (PaLM's
    appendix B does: 12 x layers x heads x head_dim x sequence length). Raises EngineError
    when the inputs imply more than 100 %.
    """
    tps = validate.number(tokens_per_s, "tokens_per_s", label="Tokens per second", maximum=1e15)
    n = validate.number(params, "params", label="Parameter count", maximum=1e16)
    g = validate.integer(gpus, "gpus", label="GPU count", maximum=10_000_000)
    peak = validate.number(peak_flops_per_s, "peak_flops_per_s", label="Peak FLOP/s",
                           minimum=1e6, maximum=1e20)
    extra = validate.number(extra_flops_per_token, "extra_flops_per_token",
                            label="Extra FLOPs per token", allow_minimum=True)
    mfu = (6.0 * n + extra) * tps / (g * peak)
    if mfu > 1.0:
        raise EngineError(f"That throughput implies {mfu:.0%} MFU, more than the hardware's "
                          "peak: check the tokens per second, GPU count or peak.", "tokens_per_s")
    return mfu


def tokens_per_s_at_mfu(params: object, gpus: object, peak_flops_per_s: object,
                        mfu: object) -> float:
    """Training tokens per second = GPUs x peak x MFU / (6 x N)."""
    n = validate.number(params, "params", label="Parameter count", maximum=1e16)
    g = validate.integer(gpus, "gpus", label="GPU count", maximum=10_000_000)
    peak = validate.number(peak_flops_per_s, "peak_flops_per_s", label="Peak FLOP/s",
                           minimum=1e6, maximum=1e20)
    u = validate.fraction(mfu, "mfu", label="MFU")
    return g * peak * u / (6.0 * n)


def gpus_for_deadline(total_flops: object, seconds: object, peak_flops_per_s: object,
                      mfu: object) -> int:
    """Fewest GPUs that finish ``total_flops`` within ``seconds`` at ``mfu``."""
    f = validate.number(total_flops, "total_flops", label="Total FLOPs")
    s = validate.number(seconds, "seconds", label="Deadline", maximum=1e12)
    peak = validate.number(peak_flops_per_s, "peak_flops_per_s", label="Peak FLOP/s",
                           minimum=1e6, maximum=1e20)
    u = validate.fraction(mfu, "mfu", label="MFU")
    return max(1, int(-(-f // (s * peak * u))))
