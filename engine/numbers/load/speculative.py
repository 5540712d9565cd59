"""Speculative decoding in a simulated server: a cheap drafter proposes ``tokens`` tokens
for each running request, and one step of the target model verifies them all at once.

Tokens per verification (Leviathan, Kalman and Matias, 2023, "Fast Inference from
Transformers via Speculative Decoding", eq. 1): with each draft token accepted with
probability ``acceptance`` (independently, the paper's assumption), a verification of k
draft tokens yields (1 - acceptance^(k+1)) / (1 - acceptance) tokens on average (the
accepted prefix and the target's own next token; k + 1 at acceptance 1).

The simulation is deterministic and uses that expectation, not random draws: each request
keeps a running total of the expected tokens its verifications have yielded and emits, at
each verification, the whole tokens by which the total's floor grew (at 0.8 and 4 draft
tokens, 3.36 a verification: 3, 3, 4, 3, 4, ...). Only the mean is modelled, so TPOT's
spread between requests is smaller than a real run's.

The verification is a decode step that computes ``tokens + 1`` tokens per request: its
weights read once, its matmul FLOPs ``tokens + 1`` times, each request's KV cache read once
(:meth:`~engine.numbers.load.step_time.StepTime.seconds` with ``decode_tokens``). The draft's
cost is added to the step:

- a draft model (``draft``): its own step time on the same GPUs, from the same model: it
  prefills the step's prompt chunks (it keeps its own KV cache), then runs ``tokens`` decode
  steps of the batch, one token each;
- no draft model (multi-token-prediction or EAGLE-style heads): each draft token is one
  decode step of a one-layer copy of the target (its decoder layer, embedding and output
  head), which is what those drafters run: EAGLE's draft is one transformer decoder layer
  over the target's features with the target's output head (Li et al., 2024, "EAGLE:
  Speculative Sampling Requires Rethinking Feature Uncertainty", section 4.1); DeepSeek-V3's
  multi-token-prediction module is one transformer block sharing the embedding and output
  head (DeepSeek-AI, 2024, "DeepSeek-V3 Technical Report", section 2.2). The head's own
  weights and KV cache (one layer's) are left out of the memory.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from engine.numbers.catalog import ModelSpec
from engine.numbers.load.step_time import PrefillChunk, StepTime, step_time_model


def expected_tokens_per_step(draft_tokens: int, acceptance: float) -> float:
    """Tokens one verification of ``draft_tokens`` draft tokens yields on average, each
    accepted with probability ``acceptance`` (Leviathan et al., 2023, eq. 1)."""
    if acceptance == 1.0:
        return float(draft_tokens + 1)
    # The power by multiplication: the same float in every runtime (libm's pow may not be).
    power = 1.0
    for _ in range(draft_tokens + 1):
        power *= acceptance
    return (1.0 - power) / (1.0 - acceptance)


def draft_head_model(model: ModelSpec) -> ModelSpec:
    """A one-layer copy of ``model`` (its embedding and output head kept): the drafter of
    multi-token-prediction and EAGLE-style heads. A mixture of experts keeps an expert
    layer (DeepSeek-V3's module is one)."""
    return dataclasses.replace(model, layers=1, dense_layers=0, local_layers=0,
                               declared_params=0, published_params=0.0,
                               published_active_params=0.0)


@dataclass(frozen=True, slots=True)
class SpecDecode:
    """Speculative decoding of ``tokens`` draft tokens per step, each accepted with
    probability ``acceptance``, drafted by ``draft`` (a draft model's step time, or the
    one-layer head's); ``draft_model``: True when ``draft`` is a separate model (it prefills
    prompts too)."""

    tokens: int
    acceptance: float
    draft: StepTime
    draft_model: bool

    @property
    def tokens_per_step(self) -> float:
        """Tokens one verification yields on average."""
        return expected_tokens_per_step(self.tokens, self.acceptance)

    def draft_seconds(self, prefills: Sequence[PrefillChunk], decode_contexts: Sequence[int]
                      ) -> float:
        """GPU seconds the drafter adds to a step with ``prefills`` and decodes whose next
        token attends to ``decode_contexts`` tokens: a draft model's prefill of the chunks,
        then ``tokens`` draft decode steps of the batch (0 without decodes)."""
        seconds = 0.0
        if self.draft_model and prefills:
            seconds += self.draft.seconds(prefills, [])
        if decode_contexts:
            run = self.draft.decode_run(decode_contexts)
            for k in range(self.tokens):
                seconds += run.seconds(k)
        return seconds


def spec_decode(step_time: StepTime, *, tokens: int, acceptance: float,
                draft: ModelSpec | None) -> SpecDecode:
    """Speculative decoding for ``step_time``'s deployment: ``draft`` on the same GPUs, or
    without one the target's one-layer head (inputs checked where they enter)."""
    s = step_time
    drafter = draft if draft is not None else draft_head_model(s.model)
    return SpecDecode(tokens, acceptance,
                      step_time_model(drafter, s.hardware, weight_format=s.weight_format,
                                      kv_format=s.kv_format, gpus=s.gpus, host_costs=False),
                      draft is not None)
