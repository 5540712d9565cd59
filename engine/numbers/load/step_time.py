"""The seconds of one step of a continuous-batching server: the one place a simulated step
gets its time.

A step runs some prefill chunks (``tokens`` new prompt tokens of a request that already has
``cached_tokens`` in its KV cache) and some decodes (one new token each, attending to its
request's ``context_tokens``) together, as one forward pass. Its time is built from the
engine's expected serving costs (:mod:`engine.numbers.expected_serving`), so that a step of
one request alone is exactly the engine's expected prefill or decode step:

- the weights are read once for all the step's tokens (a mixture of experts: the experts
  those tokens are expected to reach), matmul FLOPs are 2 per active weight per token at the
  measured matmul efficiency, with the forward pass's measured share outside matmuls; a
  mixture of experts adds its grouped GEMM's shortfall and its router and permutation
  kernels for the step's tokens (:func:`engine.numbers.moe_ops.serving_moe_cost`);
- each sequence reads its own KV cache and does its own attention FLOPs (a prefill chunk:
  its cached context plus its own tokens, causally);
- a step with no prefill is a decode step as :func:`expected_decode_costs` times it: weights
  and matmuls overlapped, then KV cache and attention overlapped (the overlap rule of
  :func:`overlap`), plus the kernels' fixed cost and two tensor-parallel all-reduces per
  layer of the step's tokens;
- a step with a prefill chunk runs as :func:`expected_prefill_seconds` times a prefill: all
  bytes against all FLOPs in one overlap, plus kernels and all-reduces, and never less than
  the host's dispatch of an eager forward pass (stacks capture only pure decode steps in
  CUDA graphs).

The host's time between steps (sampling, output processing, scheduling) is
:meth:`StepTime.host_seconds`, apart from the GPU's; :meth:`StepTime.step_seconds` puts the
two together as the server schedules: one after the other (synchronous scheduling, vLLM's
default), or side by side (an overlap scheduler, TensorRT-LLM's PyTorch backend's default,
prepares step n + 1 while the GPU runs step n, so a step takes the longer of the two).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from engine.numbers import architecture
from engine.numbers.catalog import HardwareSpec, ModelSpec
from engine.numbers.catalog.efficiency import (
    kernel_seconds_per_layer,
    memory_fraction,
    overlap_exponent,
    prefill_host_seconds_per_layer,
)
from engine.numbers.catalog.server import host_seconds_per_sequence, host_seconds_per_step
from engine.numbers.communication import GroupLink, group_link
from engine.numbers.expected_serving import (
    ep_all_to_all_seconds,
    expected_weight_bytes_read,
    maths_rates,
    overlap_at,
    tp_all_reduce_seconds,
)
from engine.numbers.formats import FormatId, get_format
from engine.numbers.memory import kv_cache_bytes_per_token
from engine.numbers.moe_ops import NO_MOE, MoeStepCost, serving_moe_cost

Scheduling = Literal["synchronous", "overlapped"]
SCHEDULINGS: tuple[Scheduling, ...] = ("synchronous", "overlapped")


@dataclass(frozen=True, slots=True)
class PrefillChunk:
    """``tokens`` prompt tokens computed in one step for a request whose first
    ``cached_tokens`` are already in its KV cache."""

    tokens: int
    cached_tokens: int


@dataclass(frozen=True, slots=True)
class StepTime:
    """The step-time model of one replica: ``model`` on ``gpus`` tensor-parallel GPUs of
    ``hardware``, weights in ``weight_format``, KV cache in ``kv_format``. Build it with
    :func:`step_time_model`; :meth:`seconds` times a step."""

    model: ModelSpec
    hardware: HardwareSpec
    weight_format: FormatId
    kv_format: FormatId
    gpus: int
    bytes_per_number: float
    bandwidth_bytes_per_s: float  # all the replica's GPUs, after the measured efficiency
    peak_flops_per_s: float  # all the replica's GPUs, raw
    compute_format: str
    matmul_seconds_per_raw: float  # expected seconds per second of matmuls at the raw peak
    attention_seconds_per_raw: float  # the same for a decode's attention
    prefill_attention_seconds_per_raw: float  # and a prefill's (beside its pass's other kernels)
    kv_bytes_per_layer_token: float  # with the replication across GPUs
    forward_flops_per_token: float
    attention_flops_per_layer_token: float
    kernel_seconds: float
    eager_host_seconds: float
    link: GroupLink
    host_fixed_seconds: float
    host_per_sequence_seconds: float
    overlap_p: float  # the exponent of overlap() (engine.numbers.expected_serving)
    scheduling: Scheduling = "synchronous"
    ep: int = 1  # expert-parallel groups of the routed experts (engine.numbers.expert_parallel)
    # tokens -> _token_costs(tokens): a step's costs that depend only on its tokens, kept
    # for this model's lifetime (its fields are frozen, so they never go stale).
    _by_tokens: dict[int, tuple[float, float, float]] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    def _weights(self, tokens: int) -> float:
        """Weight bytes a step of ``tokens`` tokens reads (the busiest expert group's, as
        the whole replica's, with expert parallelism)."""
        return expected_weight_bytes_read(self.model, self.bytes_per_number, tokens, self.ep)

    def _fixed(self, tokens: int, moe: MoeStepCost) -> float:
        """A step's seconds beside its streaming and maths: the kernels' fixed costs, the
        all-reduces, the MoE memory-bound kernels and the expert-parallel all-to-alls."""
        m = self.model
        return (self.kernel_seconds + tp_all_reduce_seconds(m, tokens, self.link)
                + moe.memory_op_seconds
                + ep_all_to_all_seconds(m, self.hardware, tokens, self.ep, self.gpus,
                                        self.compute_format))

    def _moe(self, tokens: int) -> MoeStepCost:
        """What a mixture of experts adds to a step of ``tokens`` tokens (nothing for a dense
        model)."""
        if not self.model.routed_params:
            return NO_MOE
        return serving_moe_cost(self.model, self.hardware, self.compute_format, tokens,
                                self.gpus, self.ep)

    def _token_costs(self, tokens: int) -> tuple[float, float, float]:
        """(weight bytes read, matmul FLOPs, fixed seconds: :meth:`_fixed`) of a step of
        ``tokens`` tokens, worked out once per count of tokens."""
        costs = self._by_tokens.get(tokens)
        if costs is None:
            moe = self._moe(tokens)
            costs = (self._weights(tokens),
                     tokens * self.forward_flops_per_token + moe.extra_matmul_flops,
                     self._fixed(tokens, moe))
            self._by_tokens[tokens] = costs
        return costs

    def _layer_tokens(self, context_tokens: int) -> tuple[int, int]:
        """(tokens of layers whose window is full, tokens of layers still growing) that one
        token attending to ``context_tokens`` reads, summed over layers."""
        full = 0
        growing = 0
        for n, w in architecture.attention_layer_groups(self.model):
            if w and w <= context_tokens:
                full += n * w
            else:
                growing += n * context_tokens
        return full, growing

    def _decode_pairs(self, context: int, decode_tokens: int) -> tuple[int, int, int, int]:
        """One decode of ``decode_tokens`` tokens whose first attends to ``context`` tokens
        (the others one more each): the (layer, token) pairs of KV cache it reads, in
        layers whose window is full and in the others, then those its attention computes
        (the cache is read once for all its tokens; each token attends on its own)."""
        last = context + decode_tokens - 1
        f_read, g_read = self._layer_tokens(last)
        if decode_tokens == 1:
            return f_read, g_read, f_read, g_read
        f_done = g_done = 0
        for c in range(context, last + 1):
            f, g = self._layer_tokens(c)
            f_done += f
            g_done += g
        return f_read, g_read, f_done, g_done

    def seconds(self, prefills: Sequence[PrefillChunk], decode_contexts: Sequence[int],
                *, decode_tokens: int = 1) -> float:
        """GPU seconds of one step running ``prefills`` and one decode per entry of
        ``decode_contexts`` (the tokens that decode's first new token attends to, itself
        included). ``decode_tokens``: tokens each decode computes (a speculative decoding
        verification: its token and the draft's, each attending to one more than the one
        before; 1: a plain decode). 0 for an empty step."""
        if decode_tokens != 1:
            return self._verify_seconds(prefills, decode_contexts, decode_tokens)
        m = self.model
        tokens = sum(p.tokens for p in prefills) + len(decode_contexts)
        windowed = 0
        growing = 0
        if not m.sliding_window:
            growing = m.layers * sum(decode_contexts)
        else:
            for c in decode_contexts:
                f, g = self._layer_tokens(c)
                windowed += f
                growing += g
        return self._step_seconds(prefills, tokens, windowed, growing)

    def summed_seconds(self, prefills: Sequence[PrefillChunk], decodes: int,
                       decode_context_tokens: int) -> float:
        """:meth:`seconds` of a step running ``prefills`` and ``decodes`` plain decodes whose
        contexts add up to ``decode_context_tokens``, for a model without a sliding window
        (where a decode's cost depends on its context only through that sum)."""
        tokens = sum(p.tokens for p in prefills) + decodes
        return self._step_seconds(prefills, tokens, 0, self.model.layers * decode_context_tokens)

    def _step_seconds(self, prefills: Sequence[PrefillChunk], tokens: int, windowed: int,
                      growing: int) -> float:
        """A step of ``tokens`` tokens running ``prefills`` and decodes that read ``windowed``
        (layer, token) pairs of KV cache in layers whose window is full and ``growing`` in
        the others (whole numbers, exact in a float in any order)."""
        if tokens == 0:
            return 0.0
        m = self.model
        weights, matmul_flops, fixed = self._token_costs(tokens)
        bw, pk = self.bandwidth_bytes_per_s, self.peak_flops_per_s
        if not prefills:
            return self._decode_seconds(weights, matmul_flops, fixed, float(windowed),
                                        float(growing))
        attended = 0.0  # (layer, token) pairs attention computes
        kv_tokens = 0.0  # (layer, token) pairs of KV cache read or written
        for p in prefills:
            end = p.cached_tokens + p.tokens
            attended += (architecture.causal_attended_layer_tokens(m, end)
                         - architecture.causal_attended_layer_tokens(m, p.cached_tokens))
            kv_tokens += architecture.attended_layer_tokens(m, end)
        decoded = windowed + growing
        attended += decoded
        kv_tokens += decoded
        attention_flops = attended * self.attention_flops_per_layer_token
        maths = (matmul_flops * self.matmul_seconds_per_raw
                 + attention_flops * self.prefill_attention_seconds_per_raw) / pk
        memory = (weights + kv_tokens * self.kv_bytes_per_layer_token) / bw
        return max(overlap_at(memory, maths, self.overlap_p) + fixed, self.eager_host_seconds)

    def _decode_seconds(self, weights: float, matmul_flops: float, fixed: float,
                        windowed: float, growing: float,
                        computed: tuple[float, float] | None = None) -> float:
        """A pure decode step's GPU seconds from its weight bytes, matmul FLOPs and fixed
        seconds, and the (layer, token) pairs its decodes read: ``windowed`` in layers whose
        window is full, ``growing`` in the others; ``computed``: the pairs their attention
        computes in each (None: those read, one token per decode)."""
        w_done, g_done = (windowed, growing) if computed is None else computed
        return self._decode_tail(self._streamed_seconds(weights, matmul_flops, windowed, w_done),
                                 growing, g_done, fixed)

    def _streamed_seconds(self, weights: float, matmul_flops: float, windowed: float,
                          w_done: float) -> float:
        """A decode step's weights and full windows against its matmuls and their attention:
        full windows read a fixed share, streamed beside the weights (as the decode costs'
        segments do)."""
        return overlap_at((weights + windowed * self.kv_bytes_per_layer_token)
                          / self.bandwidth_bytes_per_s,
                          (matmul_flops + w_done * self.attention_flops_per_layer_token)
                          / self.peak_flops_per_s * self.matmul_seconds_per_raw, self.overlap_p)

    def _decode_tail(self, streamed: float, growing: float, g_done: float,
                     fixed: float) -> float:
        """A decode step's seconds from :meth:`_streamed_seconds` and the pairs of growing
        layers its decodes read (``growing``) and compute (``g_done``): those streamed
        beside attention, then the fixed seconds."""
        per_c = overlap_at(growing * self.kv_bytes_per_layer_token / self.bandwidth_bytes_per_s,
                           g_done * self.attention_flops_per_layer_token / self.peak_flops_per_s
                           * self.attention_seconds_per_raw, self.overlap_p)
        return streamed + per_c + fixed

    def _verify_seconds(self, prefills: Sequence[PrefillChunk], decode_contexts: Sequence[int],
                        decode_tokens: int) -> float:
        """:meth:`seconds` of a step whose decodes compute ``decode_tokens`` tokens each:
        the weights read once for all the step's tokens, matmul FLOPs for every token, each
        decode's KV cache read once and its attention computed for each of its tokens."""
        m = self.model
        tokens = sum(p.tokens for p in prefills) + decode_tokens * len(decode_contexts)
        if tokens == 0:
            return 0.0
        weights, matmul_flops, fixed = self._token_costs(tokens)
        w_read = g_read = w_done = g_done = 0
        if not m.sliding_window:
            n = len(decode_contexts)
            total = sum(decode_contexts)
            g_read = m.layers * (total + n * (decode_tokens - 1))
            g_done = m.layers * (decode_tokens * total
                                 + n * decode_tokens * (decode_tokens - 1) // 2)
            decode_contexts = ()
        for c in decode_contexts:
            fr, gr, fd, gd = self._decode_pairs(c, decode_tokens)
            w_read += fr
            g_read += gr
            w_done += fd
            g_done += gd
        if not prefills:
            return self._decode_seconds(weights, matmul_flops, fixed, float(w_read),
                                        float(g_read), (float(w_done), float(g_done)))
        attended = float(w_done + g_done)
        kv_tokens = float(w_read + g_read)
        for p in prefills:
            end = p.cached_tokens + p.tokens
            attended += (architecture.causal_attended_layer_tokens(m, end)
                         - architecture.causal_attended_layer_tokens(m, p.cached_tokens))
            kv_tokens += architecture.attended_layer_tokens(m, end)
        maths = (matmul_flops * self.matmul_seconds_per_raw
                 + attended * self.attention_flops_per_layer_token
                 * self.prefill_attention_seconds_per_raw) / self.peak_flops_per_s
        memory = (weights + kv_tokens * self.kv_bytes_per_layer_token) / self.bandwidth_bytes_per_s
        return max(overlap_at(memory, maths, self.overlap_p) + fixed, self.eager_host_seconds)

    def decode_run(self, contexts: Sequence[int]) -> DecodeRun:
        """The pure decode steps of one batch whose decodes attend to ``contexts`` tokens in
        its first step, one more each step after (see :class:`DecodeRun`)."""
        tokens = len(contexts)
        weights, matmul_flops, fixed = self._token_costs(tokens)
        groups = architecture.attention_layer_groups(self.model)
        if not any(w for _, w in groups):
            # Without a window the streamed part is the same every step of the run, and
            # the contexts count only through their sum.
            return DecodeRun(self, tokens, weights, matmul_flops, fixed, groups, sum(contexts),
                             (), (), self._streamed_seconds(weights, matmul_flops, 0.0, 0.0))
        ordered = sorted(contexts)
        below = [0]
        for c in ordered:
            below.append(below[-1] + c)
        return DecodeRun(self, tokens, weights, matmul_flops, fixed, groups, below[-1],
                         tuple(ordered), tuple(below), None)

    def host_seconds(self, sequences: int) -> float:
        """The host's seconds between two steps of ``sequences`` sequences (0 for none)."""
        if sequences == 0:
            return 0.0
        return self.host_fixed_seconds + self.host_per_sequence_seconds * sequences

    def step_seconds(self, gpu_seconds: float, sequences: int) -> float:
        """Seconds from one step's start to the next's for a step of ``gpu_seconds`` on the
        GPU and ``sequences`` sequences: the host's time after the GPU's (synchronous), or
        beside it (overlapped: the longer of the two). An overlap scheduler also learns that
        a request has finished one step late, so it runs one decode more for it; that step
        is left out (under 1 % of a 128-token answer's steps)."""
        host = self.host_seconds(sequences)
        if self.scheduling == "overlapped":
            return max(gpu_seconds, host)
        return gpu_seconds + host


@dataclass(frozen=True, slots=True)
class DecodeRun:
    """Consecutive pure decode steps of one unchanging batch of ``tokens`` decodes, whose
    contexts in the first step add up to ``context_sum`` and are ``contexts`` (sorted;
    ``below[i]`` the sum of the first i; both empty when no layer has a window), and grow by
    one token a step: what :meth:`StepTime.seconds` gives each of those steps, without
    building their contexts. Built by :meth:`StepTime.decode_run`."""

    step_time: StepTime
    tokens: int
    weight_bytes: float
    matmul_flops: float
    fixed_seconds: float
    groups: tuple[tuple[int, int], ...]
    context_sum: int
    contexts: tuple[int, ...]
    below: tuple[int, ...]
    streamed_seconds: float | None  # every step's, when no layer has a window; else None

    def seconds(self, later: int) -> float:
        """GPU seconds of the step ``later`` steps after the first (0: the first)."""
        b = self.tokens
        if self.streamed_seconds is not None:
            growing = float(self.groups[0][0] * (self.context_sum + b * later))
            return self.step_time._decode_tail(self.streamed_seconds, growing, growing,
                                               self.fixed_seconds)
        windowed = 0
        growing = 0
        for n, w in self.groups:
            if not w:
                growing += n * (self.context_sum + b * later)
                continue
            # Decodes whose context has reached the window read all of it; the others
            # read their context.
            short = bisect.bisect_left(self.contexts, w - later)
            windowed += n * w * (b - short)
            growing += n * (self.below[short] + short * later)
        return self.step_time._decode_seconds(self.weight_bytes, self.matmul_flops,
                                              self.fixed_seconds, float(windowed),
                                              float(growing))


def step_time_model(model: ModelSpec, hardware: HardwareSpec, *, weight_format: FormatId,
                    kv_format: FormatId, gpus: int, host_costs: bool = True,
                    scheduling: Scheduling = "synchronous", ep: int = 1) -> StepTime:
    """The step-time model of one replica (``gpus`` must split the model, checked where it
    enters). ``host_costs``: False leaves the host's time between steps out (a GPU-only
    server, to compare with the engine's expected one-request figures); ``scheduling``: how
    the host's time and the GPU's make a step (:meth:`StepTime.step_seconds`); ``ep``: the
    routed experts in that many expert-parallel groups (checked where it enters)."""
    m, hw, g = model, hardware, gpus
    peak, compute_format = hw.compute_peak(weight_format)
    rates = maths_rates(hw, compute_format, weight_format)
    return StepTime(
        model=m, hardware=hw, weight_format=weight_format, kv_format=kv_format, gpus=g,
        bytes_per_number=get_format(weight_format).bytes_per_number,
        bandwidth_bytes_per_s=hw.bandwidth_bytes_per_s * g * memory_fraction(hw, weight_format).value,
        peak_flops_per_s=peak * g, compute_format=compute_format,
        matmul_seconds_per_raw=rates.matmuls(1.0),
        attention_seconds_per_raw=rates.attention_seconds(1.0),
        prefill_attention_seconds_per_raw=rates.forward(1.0, 0.0),
        kv_bytes_per_layer_token=(kv_cache_bytes_per_token(m, kv_format) / m.layers
                                  * architecture.kv_replication(m, g)),
        forward_flops_per_token=architecture.forward_flops_per_token(m),
        attention_flops_per_layer_token=architecture.attention_flops_per_layer_token(m),
        kernel_seconds=m.layers * kernel_seconds_per_layer().value,
        eager_host_seconds=m.layers * prefill_host_seconds_per_layer().value,
        link=group_link(hw.link_spec(), g),
        host_fixed_seconds=host_seconds_per_step().value if host_costs else 0.0,
        host_per_sequence_seconds=host_seconds_per_sequence().value if host_costs else 0.0,
        overlap_p=overlap_exponent().value,
        scheduling=scheduling, ep=ep,
    )
