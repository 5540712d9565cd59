"""Compute: FLOPs per token, FLOPs of a training run, time at a given MFU, MFU from speed.

Rules (Kaplan et al. 2020, section 2.1): using a model costs about 2 x N FLOPs per token
(one multiply and one add per weight; N = parameters active for that token, the embedding
lookup excluded); training costs about 6 x N x D for D tokens (2 forward + 4 backward).
:func:`training_flops_per_token` is the one owner of a model's training FLOPs: 3 x the
forward matmuls (6 x *active* parameters: a mixture of experts trains only the experts each
token uses) plus attention scores, and what recomputation adds on top (hardware FLOPs, not
model FLOPs: MFU never counts them).

One FLOP convention for every training time and MFU: causal attention counted as the work a
causal kernel does. A token attends to itself and the tokens before it, (s + 1) / 2 of a
sequence of s on average (a sliding-window layer: at most its window), so the attention
scores cost half of PaLM's 12 x layers x heads x head_dim x s (Chowdhery et al. 2022,
appendix B, which counts every token against the whole sequence). This is FlashAttention-2's
count (Dao 2023, arXiv 2307.08691, section 4.1: with a causal mask the FLOPs are divided by
2). The same model FLOPs are what MFU counts and what the bound divides by the dense peak, so
the bound is exactly the time at 100 % MFU (:func:`bound_seconds`).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers import architecture
from engine.numbers.adapter_setup import AdapterSetup
from engine.numbers.catalog import ModelSpec
from engine.numbers.errors import EngineError
from engine.numbers.records import JsonShape, Record
from engine.numbers.rounding import ceil_div
from engine.numbers.training_choices import Recompute

# The MFU the lesson assumes when none is given: a well-run large job (Meta reports 38-43 %
# for Llama 3 405B on 16,384 H100s). plan(), the figures and the widgets' defaults use it.
DEFAULT_MFU = 0.4
# What well-tuned large training runs reach (the lesson's band; PaLM 46 %, Llama 3 405B
# 38-43 %, MT-NLG ~30 %, see engine/lesson/reality/published.py): below it GPUs mostly wait.
GOOD_MFU_LOW = 0.35
GOOD_MFU_HIGH = 0.55
# The sequence length a training plan assumes when none is given (tokens per sample).
DEFAULT_TRAINING_SEQ_LEN = 4096


def flops_per_token(model: ModelSpec) -> float:
    """FLOPs to push one token through the model's weights: 2 per active weight of every
    matmul, about 2 x active parameters (the embedding lookup costs nothing; attention
    scores come on top, see :func:`engine.numbers.architecture.attention_flops_per_token`)."""
    return architecture.forward_flops_per_token(model)


@dataclass(frozen=True, slots=True)
class TrainingFlopsPerToken(Record):
    """FLOPs to train on one token, by part.

    ``matmul``: 3 x the forward matmul FLOPs (2 forward + 4 backward per active weight).
    ``attention``: 3 x the forward attention scores of a causal sequence of ``seq_len``
    tokens, per token: each token attends to itself and those before it (the module's
    convention: half of PaLM's 12 x layers x heads x head_dim x sequence, plus the diagonal;
    a sliding-window layer at most its window). ``recompute``: the forward
    work done again in the backward pass: all of it with full recomputation (so hardware
    FLOPs are 8/6 of model FLOPs), only the attention scores with selective recomputation
    (Korthikanti et al. 2022, section 4.2), every other matmul of a layer with torchtitan's
    per-op policy (architecture.op_policy_recomputed), none without.
    """

    JSON = JsonShape(derived=("model", "hardware"), after={"model": "recompute",
                                                           "hardware": "model"})

    matmul: float
    attention: float
    recompute: float
    seq_len: int
    recompute_mode: Recompute

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


def training_flops_per_token(model: ModelSpec, seq_len: int = DEFAULT_TRAINING_SEQ_LEN,
                             recompute: Recompute = "none",
                             adapter: AdapterSetup | None = None) -> TrainingFlopsPerToken:
    """Training FLOPs per token of ``model`` on samples of ``seq_len`` tokens.

    Llama 3.1 8B at 4,096 tokens: matmul 3 x 15.01 billion = 45.0 billion, attention
    12 x 32 layers x 4,096 (heads x head_dim) x 4,097 / 2 = 3.22 billion; 48.2 billion model
    FLOPs per token.

    With ``adapter`` (fine-tuning, every base weight frozen): the base's matmuls run forward
    and dX only, 2 x forward instead of 3 x, and the adapters add 3 x their own forward
    (2 x their parameters, engine.numbers.adapter_setup); attention is unchanged.
    """
    m = model
    s = seq_len
    forward_matmul = architecture.forward_flops_per_token(m)
    forward_attention = (architecture.attention_flops_per_layer_token(m)
                         * architecture.causal_attended_layer_tokens(m, s) / s)
    again = {"none": 0.0, "selective": forward_attention,
             "selective-op": architecture.op_policy_recomputed_flops_per_token(m),
             "full": forward_matmul + forward_attention}[recompute]
    if adapter is not None:
        lora = adapter.forward_flops_per_token
        again += lora if recompute == "full" else 0.0
        return TrainingFlopsPerToken(2.0 * forward_matmul + 3.0 * lora, 3.0 * forward_attention,
                                     again, s, recompute)
    return TrainingFlopsPerToken(3.0 * forward_matmul, 3.0 * forward_attention, again, s,
                                 recompute)


def full_attention_training_flops_per_token(model: ModelSpec, seq_len: int) -> float:
    """Attention-score training FLOPs per token as PaLM counts them (Chowdhery et al. 2022,
    appendix B): 3 x the forward scores of every token against the whole sequence of
    ``seq_len`` (a sliding-window layer: its window), about twice the module's causal count.
    Only for reading a published MFU on that basis; every figure of the engine is causal."""
    return 3.0 * architecture.attention_flops_per_token(model, seq_len)


def training_flops(params: float, tokens: float, recompute: Recompute = "none") -> float:
    """The rule of thumb for a bare parameter count: 6 x N x D FLOPs to train N (active)
    parameters on D tokens; 8 x N x D with full recomputation (hardware FLOPs).

    For a model with shapes use :func:`training_flops_per_token`, which adds attention and
    uses active parameters; selective recomputation is counted as 6 N D here.
    """
    return (8.0 if recompute == "full" else 6.0) * params * tokens


def causal_attention_training_flops_per_token(layers: int, heads: int, head_dim: int,
                                              seq_len: int) -> float:
    """Attention-score training FLOPs per token for a bare shape (no catalogue model), in the
    module's causal convention: 12 x layers x heads x head_dim x (seq_len + 1) / 2, the same
    as :func:`training_flops_per_token`'s attention for a model with full attention."""
    return 12.0 * layers * heads * head_dim * (seq_len + 1) / 2.0


def training_seconds(total_flops: float, gpus: int, peak_flops_per_s: float,
                     mfu: float) -> float:
    """Wall-clock seconds = FLOPs / (GPUs x peak FLOP/s x MFU); GPUs, peak and MFU above 0."""
    return total_flops / (gpus * peak_flops_per_s * mfu)


def bound_seconds(model_flops: float, gpus: int, peak_flops_per_s: float) -> float:
    """The bound on a training run's time: its model FLOPs at every GPU's dense peak, which
    is :func:`training_seconds` at 100 % MFU (recomputation adds FLOPs MFU does not count,
    so no run with it reaches this; none without it beats it)."""
    return training_seconds(model_flops, gpus, peak_flops_per_s, 1.0)


def mfu_at(tokens_per_s: float, model_flops_per_token: float, gpus: int,
           peak_flops_per_s: float) -> float:
    """Model FLOPs utilisation: model FLOPs per token x tokens/s / (GPUs x peak FLOP/s).

    Raises EngineError when the inputs imply more than 100 %.
    """
    mfu = model_flops_per_token * tokens_per_s / (gpus * peak_flops_per_s)
    if mfu > 1.0:
        raise EngineError(f"That throughput implies {mfu:.0%} MFU, more than the hardware's "
                          "peak: check the tokens per second, GPU count or peak.", "tokens_per_s")
    return mfu


def mfu_from_throughput(tokens_per_s: float, params: float, gpus: int,
                        peak_flops_per_s: float, *, extra_flops_per_token: float = 0.0
                        ) -> float:
    """MFU from a bare parameter count: (6 x N + extra) x tokens/s / (GPUs x peak FLOP/s).

    ``extra_flops_per_token`` adds attention-score FLOPs
    (:func:`causal_attention_training_flops_per_token` for the module's convention).
    """
    return mfu_at(tokens_per_s, 6.0 * params + extra_flops_per_token, gpus, peak_flops_per_s)


def tokens_per_s_at(model_flops_per_token: float, gpus: int, peak_flops_per_s: float,
                    mfu: float) -> float:
    """Training tokens per second = GPUs x peak x MFU / model FLOPs per token."""
    return gpus * peak_flops_per_s * mfu / model_flops_per_token


def tokens_per_s_at_mfu(params: float, gpus: int, peak_flops_per_s: float,
                        mfu: float) -> float:
    """Training tokens per second for a bare parameter count: GPUs x peak x MFU / (6 x N)."""
    return tokens_per_s_at(6.0 * params, gpus, peak_flops_per_s, mfu)


def gpus_for_deadline(total_flops: float, seconds: float, peak_flops_per_s: float,
                      mfu: float) -> int:
    """Fewest GPUs that finish ``total_flops`` within ``seconds`` at ``mfu``."""
    return max(1, ceil_div(total_flops, seconds * peak_flops_per_s * mfu))
