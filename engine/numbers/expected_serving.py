"""The expected times of serving: what a well-tuned stack (vLLM, TensorRT-LLM, SGLang) reaches,
beside the bounds of :mod:`engine.numbers.serving`.

Each phase starts from the bound's own bytes and FLOPs (so every fix to them flows through)
and adds what the bound leaves out, each a sourced value of data/efficiency.toml or
data/links.toml:

- matmuls reach the chip's measured matmul efficiency, attention FlashAttention's (both
  scaled down on a chip run under a power cap, as training's kernels are), and a forward
  pass spends a measured share of its time outside both (norms, activations);
- that time outside matmuls, and attention itself, run on 16-bit activations whatever the
  weights: when the matmuls run in fp8 or int8 they do not speed up (:func:`maths_rates`);
- decode's memory-bound kernels reach a measured fraction of the datasheet bandwidth;
- a kernel's streaming and its maths overlap only in part: they add as
  (memory^p + maths^p)^(1/p), p measured (:func:`overlap`), where the bound takes the max;
- every layer launches a fixed number of kernels, each with a fixed latency;
- a prefill runs eagerly (stacks capture only decode steps in CUDA graphs), so it never takes
  less than the host's time to dispatch its layers (what sets a short prompt's time);
- tensor parallelism over g GPUs adds two all-reduces per layer of batch x tokens x hidden x
  2 bytes (bf16 activations) over the GPUs' links (:mod:`engine.numbers.communication`);
- a mixture of experts reads the experts its tokens are routed to, as the bound does: with
  uniform routing E(1 - (1 - k/E)^tokens) distinct experts per layer; its routed experts'
  grouped GEMM runs at the rate of its own small shape, padded to the busiest expert's rows,
  and its router top-k and token permutation are memory-bound kernels
  (:mod:`engine.numbers.moe_ops`, training's definitions);
- KV-cache replication across GPUs and sliding windows come with the bound's bytes;
- weights left in host memory (:mod:`engine.numbers.offload`) are read over the host link at
  its datasheet rate, as in the bound (no measured host-read efficiency is catalogued), the
  HBM's share at its measured fraction.

Times: expected decode step = overlap(weights / bandwidth, matmul FLOPs / peak) +
overlap(KV cache / bandwidth, attention FLOPs / peak) (each at its efficiency) + kernels +
all-reduces; a prefill, overlap(bytes, FLOPs) + kernels + all-reduces.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from engine.numbers import architecture
from engine.numbers.catalog import HardwareSpec, ModelSpec
from engine.numbers.catalog.efficiency import (
    Basis,
    attention_fraction,
    forward_matmul_share,
    forward_source,
    kernel_seconds_per_layer,
    matmul_fraction,
    memory_fraction,
    overlap_exponent,
    prefill_host_seconds_per_layer,
    under_power_cap,
)
from engine.numbers.communication import ACTIVATION_BYTES, GroupLink, all_reduce_seconds, group_link
from engine.numbers.expert_parallel import (
    ExpertParallelStep,
    expected_weight_bytes,
    expert_parallel_step,
)
from engine.numbers.formats import FormatId, get_format
from engine.numbers.moe_ops import moe_basis, serving_moe_cost
from engine.numbers.offload import Offload
from engine.numbers.parallelism import StepSplit
from engine.numbers.serving import (
    JoiningPrefill,
    PassCost,
    Prefill,
    _Costs,
    _costs,
    _prefill,
    _sum_steps,
    gathered_bytes,
    joining_prefill,
    weight_bytes_read,
)


def expected_weight_bytes_read(model: ModelSpec, bytes_per_number: float, tokens: int,
                               ep: int = 1) -> float:
    """Bytes of weights a step of ``tokens`` tokens is expected to read (all GPUs together):
    the bound's, :func:`~engine.numbers.serving.weight_bytes_read` (a mixture of experts:
    the experts those tokens are expected to reach); with ``ep`` expert-parallel groups,
    ep times the busiest group's (:func:`engine.numbers.expert_parallel.expected_weight_bytes`:
    the busiest GPU sets the step)."""
    if ep > 1:
        return expected_weight_bytes(model, bytes_per_number, tokens, ep,
                                     gathered_bytes(model, bytes_per_number, tokens))
    return weight_bytes_read(model, bytes_per_number, tokens)


def overlap(memory_seconds: float, maths_seconds: float) -> float:
    """Seconds of a kernel (or a pass) that streams for ``memory_seconds`` and computes for
    ``maths_seconds``: (memory^p + maths^p)^(1/p), between their max and their sum. Linear in
    both together, so a + b c per context token stays a + b c."""
    return overlap_at(memory_seconds, maths_seconds, overlap_exponent().value)


def overlap_at(memory_seconds: float, maths_seconds: float, p: float) -> float:
    """:func:`overlap` at the exponent ``p`` (for a model that reads it from the catalogue
    once, as the simulated server's step times do)."""
    top = max(memory_seconds, maths_seconds)
    if top <= 0:
        return 0.0
    total = (memory_seconds / top) ** p + (maths_seconds / top) ** p
    return top * math.pow(total, 1.0 / p)


_WIDE_MATHS = ("bf16", "fp16", "fp32", "tf32")


@dataclass(frozen=True, slots=True)
class _Maths:
    """Turns seconds at the raw peak of a pass's compute format into expected seconds.

    ``matmul``: the chip's measured efficiency in the compute format; ``sixteen``: (peak of the
    compute format) / (the chip's 16-bit peak), 1 when the maths is 16-bit or wider;
    ``matmul16``: the 16-bit matmul efficiency; ``share``: the measured matmul share of a
    forward pass. Attention (FlashAttention, bf16 softmax) and the kernels outside matmuls
    (norms, activations, rotary embedding: measured as a share of a bf16 forward pass) act on
    16-bit activations, so an fp8 or int8 matmul leaves their time as it was in 16 bits.
    """

    matmul: float
    sixteen: float
    matmul16: float
    share: float
    attention: float

    def saving(self, matmul_raw_seconds: float) -> float:
        """What the compute format saves on matmuls of ``matmul_raw_seconds`` (at its raw peak)
        against running them in 16 bits (<= 0; exactly 0 for 16-bit maths)."""
        return matmul_raw_seconds * (1.0 / self.matmul - self.sixteen / self.matmul16)

    def matmuls(self, raw_seconds: float) -> float:
        """Matmul seconds (at the raw peak) and the time outside matmuls that goes with them:
        the 16-bit figure, less what the faster format saves on the matmuls themselves."""
        return (raw_seconds * self.sixteen / (self.matmul16 * self.share)
                + self.saving(raw_seconds))

    def attention_seconds(self, raw_seconds: float) -> float:
        """Attention seconds (given at the compute format's raw peak) at the 16-bit peak."""
        return raw_seconds * self.sixteen / self.attention

    def forward(self, raw_seconds: float, matmul_share: float) -> float:
        """A forward pass of ``raw_seconds`` at the raw peak, ``matmul_share`` of it matmuls and
        the rest attention: in 16 bits at the measured efficiencies and matmul share, less
        what the compute format saves on the matmuls."""
        return (raw_seconds * self.sixteen * (matmul_share / self.matmul16
                                              + (1.0 - matmul_share) / self.attention)
                / self.share + self.saving(raw_seconds * matmul_share))


def maths_rates(hw: HardwareSpec, compute_format: str, wf: FormatId) -> _Maths:
    """The rates that turn seconds at ``hw``'s raw peak in ``compute_format`` into expected
    seconds (matmuls, attention, a whole forward pass) for weights in ``wf``."""
    # A power cap slows the compute-bound kernels (matmuls, attention), as in training.
    f_mm = under_power_cap(hw, matmul_fraction(hw, compute_format, wf)).value
    share = forward_matmul_share().value
    f_attn = under_power_cap(hw, attention_fraction()).value
    peak16, fmt16 = hw.compute_peak("bf16")
    peak = dict(hw.peaks)[compute_format]
    # fp16 is a faster format than bf16 only where its listed peak accumulates in fp16
    # (GeForce cards, for llama.cpp's cuBLAS path): there, as for fp8, only the matmuls
    # speed up, and the rest of the pass keeps the bf16 rate.
    if compute_format in _WIDE_MATHS and peak <= peak16:
        return _Maths(f_mm, 1.0, f_mm, share, f_attn)
    return _Maths(f_mm, peak / peak16,
                  under_power_cap(hw, matmul_fraction(hw, fmt16)).value, share, f_attn)


def tp_all_reduce_seconds(model: ModelSpec, tokens: int, link: GroupLink) -> float:
    """Seconds of the two all-reduces per layer (after attention and after the MLP, Megatron-style tensor
    parallelism) of tokens x hidden x 2 bytes."""
    return 2 * model.layers * all_reduce_seconds(tokens * model.hidden * ACTIVATION_BYTES, link)


@dataclass(frozen=True, slots=True)
class ExpectedServe:
    """Expected times of one request in a batch of ``batch`` on ``gpus`` tensor-parallel GPUs.

    A batch means ``batch`` requests kept running (a continuous-batching server's steady
    state): ``ttft_seconds`` is the first token of a request that joins the ``batch - 1``
    already running, its prefill in one step beside their decodes
    (:func:`~engine.numbers.serving.joining_prefill`); ``ttft_idle_seconds`` that of one
    request on an idle server (its prefill alone). ``prefill_seconds`` is another workload:
    the ``batch`` prompts all arriving together, prefilled in one pass; with the decode
    steps it makes ``total_seconds``, the batch's life from its prompts to its last tokens
    (the basis of its output tokens per second).
    ``communication_seconds_per_token``: the all-reduces of one decode step (0 on one GPU),
    and the dispatch and combine all-to-alls with expert parallelism; ``expert_parallel``:
    those of a decode step of the batch (None without expert parallelism);
    ``basis``: every efficiency used, with its source.
    """

    batch: int
    gpus: int
    output_tokens: int
    prefill_seconds: float
    prefill_communication_seconds: float
    ttft_seconds: float
    ttft_idle_seconds: float
    decode_seconds: float
    decode_seconds_per_token: float
    communication_seconds_per_token: float
    total_seconds: float
    basis: tuple[Basis, ...]
    expert_parallel: ExpertParallelStep | None = None

    @property
    def output_tokens_per_s(self) -> float:
        """Output tokens of the whole batch per second of the request's life."""
        return self.batch * self.output_tokens / self.total_seconds

    @property
    def step(self) -> StepSplit:
        """The mean decode step split: the GPUs' own work, the all-reduces (on the critical
        path: each layer waits for its sums), no pipeline bubble."""
        per = self.decode_seconds_per_token
        comm = self.communication_seconds_per_token
        return StepSplit(per, per - comm, comm, 0.0)

    def to_dict(self) -> dict[str, object]:
        """Its own JSON rather than engine.numbers.records': the published keys follow the
        request (first token, decode, totals), not the fields, and output tokens/s is derived."""
        return {
            "ttft_seconds": self.ttft_seconds,
            "ttft_idle_seconds": self.ttft_idle_seconds,
            "prefill_seconds": self.prefill_seconds,
            "decode_seconds_per_token": self.decode_seconds_per_token,
            "decode_seconds": self.decode_seconds,
            "total_seconds": self.total_seconds,
            "output_tokens_per_s": self.output_tokens_per_s,
            "communication_seconds_per_token": self.communication_seconds_per_token,
            "prefill_communication_seconds": self.prefill_communication_seconds,
            "step": self.step.to_dict(),
            "basis": [b.to_dict() for b in self.basis],
            **({} if self.expert_parallel is None
               else {"expert_parallel": self.expert_parallel.to_dict()}),
        }


def _basis(m: ModelSpec, hw: HardwareSpec, wf: FormatId, cf: str, g: int, link: GroupLink,
           off: Offload | None = None, ep: int = 1) -> tuple[Basis, ...]:
    out = [under_power_cap(hw, matmul_fraction(hw, cf, wf)),
           under_power_cap(hw, attention_fraction()), forward_matmul_share(),
           memory_fraction(hw, wf), overlap_exponent(), kernel_seconds_per_layer(),
           prefill_host_seconds_per_layer()]
    maths = maths_rates(hw, cf, wf)
    if maths.sixteen != 1.0:
        out.append(Basis(f"attention and the time outside matmuls at the 16-bit rate ({cf} "
                         f"peak / 16-bit peak; 16-bit matmul efficiency {maths.matmul16:g})",
                         maths.sixteen, forward_source()))
    if g > 1:
        links = hw.link_spec()
        out.append(Basis(f"tensor-parallel link: {link.name}, bytes/s each way per GPU after "
                         "the collective efficiency", link.bytes_per_s,
                         f"{links.source}; {links.latency_source}"))
    if m.routed_params:
        out.append(Basis("experts touched per layer (uniform routing): E(1 - (1 - k/E)^tokens)",
                         float(m.experts), "Expected number of distinct experts when each of "
                         "the tokens picks k of E experts independently and uniformly"))
        out.extend(b for b in moe_basis(m, hw) if b.name not in {o.name for o in out})
    if off is not None:
        out.append(Basis(f"host link: {off.link.name}, bytes/s each way per GPU at its "
                         "datasheet rate (no measured host-read efficiency is catalogued)",
                         off.link.bytes_per_s, off.link.source))
    if ep > 1:
        links = hw.link_spec()
        step = expert_parallel_step(m, hw, 1, ep, g, cf)
        out.append(Basis(f"expert parallelism: {m.experts // ep} experts a group, dispatch "
                         f"({step.dispatch_format}) and combine (bf16) all-to-alls per MoE "
                         f"layer over {step.link}; the busiest group's expected copies (the "
                         f"largest of {ep} Poisson counts) set its expert reads", float(ep),
                         f"{links.source}; {links.latency_source}"))
    rep = architecture.kv_replication(m, g)
    if rep > 1:
        out.append(Basis("KV cache replication across GPUs", rep,
                         "Megatron-style tensor parallelism splits KV heads; past one head per "
                         "GPU (or for an MLA latent) each GPU keeps a copy"))
    return tuple(out)


def expected_decode_costs(m: ModelSpec, hw: HardwareSpec, b: int, wf: FormatId, kf: FormatId,
                          g: int, off: Offload | None = None, ep: int = 1
                          ) -> tuple[_Costs, float]:
    """The bound's decode costs turned into expected ones, and the all-reduce seconds of one
    step.

    The bound overlaps everything (one max); real kernels do not: the weight matmuls (reading
    the weights and their FLOPs) and attention (reading the KV cache and its FLOPs)
    run one after the other, each streaming and computing in part at once (:func:`overlap`),
    then the fixed costs. Within each segment of the bound (a sliding window adds one) both
    parts are linear in the context c, so the result is again a + b c. Weights read over the
    host link (``off``) stay at the link's rate; only the HBM's reads take its fraction.
    ``ep`` expert-parallel groups: the busiest group's expert reads, grouped GEMM and the
    dispatch and combine all-to-alls (counted with the all-reduces).
    """
    k = _costs(m, hw, b, wf, kf, g, off)
    f_mem = memory_fraction(hw, wf).value
    maths = maths_rates(hw, k.compute_format, wf)
    w_e = expected_weight_bytes_read(m, get_format(wf).bytes_per_number, b, ep)
    extra_w = (w_e - k.weight_bytes) / (k.bandwidth * g)
    comm = (tp_all_reduce_seconds(m, b, group_link(hw.link_spec(), g))
            + ep_all_to_all_seconds(m, hw, b, ep, g, k.compute_format))
    moe = serving_moe_cost(m, hw, k.compute_format, b, g, ep)
    fixed = m.layers * kernel_seconds_per_layer().value + comm + moe.memory_op_seconds
    moe_raw = moe.extra_matmul_flops / (k.peak * g)
    segments = []
    for seg in k.segments:
        # Matmul FLOPs pay the forward pass's non-matmul share (norms, activations per token).
        hbm = seg.am - k.host_seconds + extra_w
        a = overlap(hbm / f_mem + k.host_seconds, maths.matmuls(seg.ac + moe_raw)) + fixed
        per_c = overlap(seg.bm / f_mem, maths.attention_seconds(seg.bc))
        segments.append(replace(seg, am=a, bm=per_c, ac=a, bc=per_c))
    return replace(k, segments=tuple(segments), weight_bytes=w_e), comm


def expected_decode_step_seconds(model: ModelSpec, hardware: HardwareSpec, *,
                                 context_tokens: int, batch: int = 1,
                                 weight_format: FormatId = "bf16", kv_format: FormatId = "bf16",
                                 gpus: int = 1) -> float:
    """Expected seconds of one decode step of ``batch`` requests at ``context_tokens`` each."""
    k = expected_decode_costs(model, hardware, batch, weight_format, kv_format, gpus)[0]
    return _sum_steps(k, context_tokens, 1)


def expected_prefill_seconds(m: ModelSpec, hw: HardwareSpec, pre: Prefill, wf: FormatId,
                             ep: int = 1) -> tuple[float, float]:
    """(seconds, of which communication) of the prefill ``pre`` (a bound) as a tuned stack
    runs it (``ep``: expert-parallel groups)."""
    b, s = pre.batch, pre.prompt_tokens
    attn = (b * architecture.attention_flops_per_layer_token(m)
            * architecture.causal_attended_layer_tokens(m, s))
    return _expected_pass_seconds(m, hw, pre, wf, attn, b * s, pre.host_link_seconds, ep)


def expected_joining_seconds(m: ModelSpec, hw: HardwareSpec, join: JoiningPrefill,
                             wf: FormatId, ep: int = 1) -> tuple[float, float]:
    """(seconds, of which all-reduces) of the step ``join`` (a bound: one prompt prefilled
    beside the running requests' decodes) as a tuned stack runs it: one forward pass over
    all its tokens, as a prefill is timed."""
    return _expected_pass_seconds(m, hw, join, wf, join.attention_flops, join.tokens,
                                  join.host_link_seconds, ep)


def ep_all_to_all_seconds(m: ModelSpec, hw: HardwareSpec, tokens: int, ep: int, g: int,
                          compute_format: str) -> float:
    """Seconds of a step's dispatch and combine all-to-alls over ``ep`` expert-parallel
    groups of a replica of ``g`` GPUs (0 at ep 1)."""
    if ep <= 1:
        return 0.0
    return expert_parallel_step(m, hw, tokens, ep, g, compute_format).all_to_all_seconds


def _expected_pass_seconds(m: ModelSpec, hw: HardwareSpec, pre: PassCost, wf: FormatId,
                           attention_flops: float, tokens: int, host_link_seconds: float,
                           ep: int = 1) -> tuple[float, float]:
    """(seconds, of which all-reduces) of a forward pass over ``tokens`` tokens (the bound
    ``pre``, ``attention_flops`` of its FLOPs attention, ``host_link_seconds`` of its memory
    seconds weights read over the host link) as a tuned stack runs it."""
    g = pre.gpus
    attn = min(attention_flops, pre.flops)
    share = (pre.flops - attn) / pre.flops if pre.flops else 1.0
    maths = maths_rates(hw, pre.compute_format, wf)
    comp = maths.forward(pre.compute_seconds, share)
    moe = serving_moe_cost(m, hw, pre.compute_format, tokens, g, ep)
    if moe.extra_matmul_flops:
        comp += maths.matmuls(moe.extra_matmul_flops / (hw.compute_peak(wf)[0] * g))
    # Weights read over the host link stay at the link's rate; only HBM's reads take its share.
    host = host_link_seconds
    mem = (pre.memory_seconds - host) / memory_fraction(hw, wf).value + host
    comm = tp_all_reduce_seconds(m, tokens, group_link(hw.link_spec(), g))
    if ep > 1:
        # The busiest expert group's reads beyond the balanced ones the bound counts.
        wb = get_format(wf).bytes_per_number
        busiest = expected_weight_bytes_read(m, wb, tokens, ep) - weight_bytes_read(m, wb, tokens)
        mem += busiest / (hw.bandwidth_bytes_per_s * g) / memory_fraction(hw, wf).value
        comm += ep_all_to_all_seconds(m, hw, tokens, ep, g, pre.compute_format)
    gpu_seconds = (overlap(mem, comp) + m.layers * kernel_seconds_per_layer().value + comm
                   + moe.memory_op_seconds)
    # Prefill runs eagerly: a short prompt waits for the host to dispatch every layer.
    host_seconds = m.layers * prefill_host_seconds_per_layer().value
    return max(gpu_seconds, host_seconds), comm


def expected_serve(model: ModelSpec, hardware: HardwareSpec, *, prompt_tokens: int,
                   output_tokens: int, batch: int = 1, weight_format: FormatId = "bf16",
                   kv_format: FormatId = "bf16", gpus: int = 1,
                   offload: Offload | None = None, ep: int = 1) -> ExpectedServe:
    """Expected TTFT, time per output token and output tokens/s of ``batch`` requests of
    ``prompt_tokens`` in and ``output_tokens`` out kept running on ``gpus`` tensor-parallel
    GPUs (see :class:`ExpectedServe` for the basis of each; ``offload``: with some layers'
    weights read from host memory; ``ep``: the routed experts in that many expert-parallel
    groups, :mod:`engine.numbers.expert_parallel`)."""
    m, hw, b, wf, kf, g, off = model, hardware, batch, weight_format, kv_format, gpus, offload
    pre = _prefill(m, hw, b, prompt_tokens, wf, kf, g, off)
    prefill_s, prefill_comm = expected_prefill_seconds(m, hw, pre, wf, ep)
    idle_s = prefill_s
    if b > 1:
        idle_s = expected_prefill_seconds(
            m, hw, _prefill(m, hw, 1, prompt_tokens, wf, kf, g, off), wf, ep)[0]
    join = joining_prefill(m, hw, prompt_tokens=prompt_tokens, output_tokens=output_tokens,
                           batch=b, weight_format=wf, kv_format=kf, gpus=g, offload=off)
    ttft_s = expected_joining_seconds(m, hw, join, wf, ep)[0]
    k, comm = expected_decode_costs(m, hw, b, wf, kf, g, off, ep)
    steps = output_tokens - 1
    dec = _sum_steps(k, prompt_tokens + 1, steps)
    per_token = dec / steps if steps else _sum_steps(k, prompt_tokens + 1, 1)
    return ExpectedServe(
        batch=b, gpus=g, output_tokens=output_tokens, prefill_seconds=prefill_s,
        prefill_communication_seconds=prefill_comm, ttft_seconds=ttft_s,
        ttft_idle_seconds=idle_s, decode_seconds=dec,
        decode_seconds_per_token=per_token, communication_seconds_per_token=comm,
        total_seconds=prefill_s + dec,
        basis=_basis(m, hw, wf, k.compute_format, g, group_link(hw.link_spec(), g), off, ep),
        expert_parallel=(None if ep <= 1 else
                         expert_parallel_step(m, hw, b, ep, g, k.compute_format)),
    )


@dataclass(frozen=True, slots=True)
class DecodeParts:
    """One expected decode step's parts, in seconds (the three roofs of tensor-parallel
    serving): ``maths`` (matmuls and attention at their measured efficiencies), ``memory``
    (weights and KV cache at the measured share of the bandwidth), ``communication`` (two
    all-reduces per layer), ``kernels`` (fixed launch costs). ``seconds``: the expected step,
    overlap(weights, matmuls) + overlap(KV cache, attention) + kernels + communication."""

    batch: int
    gpus: int
    maths_seconds: float
    memory_seconds: float
    communication_seconds: float
    kernel_seconds: float
    seconds: float

    @property
    def limit(self) -> str:
        """The largest of the three roofs: 'maths', 'memory' or 'communication'."""
        parts = {"memory": self.memory_seconds, "maths": self.maths_seconds,
                 "communication": self.communication_seconds}
        return max(parts, key=lambda k: parts[k])


def decode_parts(model: ModelSpec, hardware: HardwareSpec, *, context_tokens: int,
                 batch: int = 1, weight_format: FormatId = "bf16", kv_format: FormatId = "bf16",
                 gpus: int = 1) -> DecodeParts:
    """The parts of one expected decode step of ``batch`` requests at ``context_tokens`` on
    ``gpus`` tensor-parallel GPUs (per GPU: each holds 1/gpus of the work)."""
    m, hw, b, wf, kf, g = model, hardware, batch, weight_format, kv_format, gpus
    k = _costs(m, hw, b, wf, kf, g)
    seg = k.at(context_tokens)
    f_mem = memory_fraction(hw, wf).value
    rates = maths_rates(hw, k.compute_format, wf)
    w_e = expected_weight_bytes_read(m, get_format(wf).bytes_per_number, b)
    extra_w = (w_e - k.weight_bytes) / (k.bandwidth * g)
    moe = serving_moe_cost(m, hw, k.compute_format, b, g)
    memory = (seg.am + extra_w + seg.bm * context_tokens) / f_mem + moe.memory_op_seconds
    maths = (rates.matmuls(seg.ac + moe.extra_matmul_flops / (k.peak * g))
             + rates.attention_seconds(seg.bc * context_tokens))
    comm = tp_all_reduce_seconds(m, b, group_link(hw.link_spec(), g))
    kernels = m.layers * kernel_seconds_per_layer().value
    step = _sum_steps(expected_decode_costs(m, hw, b, wf, kf, g)[0], context_tokens, 1)
    return DecodeParts(b, g, maths, memory, comm, kernels, step)
