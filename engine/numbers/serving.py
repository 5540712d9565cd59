"""Serving: prefill, decode steps, batching, and the timeline of one request.

Each phase takes ``max(bytes read / bandwidth, FLOPs / peak)`` (the roofline): bytes are the
weights plus the KV cache read (a sliding-window layer reads at most its window; more GPUs
than KV heads replicate the cache), FLOPs are 2 per active weight per token (no FLOPs for
the embedding lookup) plus attention scores. Peaks are the chip's RAW dense peak and bandwidth its full datasheet figure, so
every time here is a best case (a floor): real kernels reach about 60-80 % of each. An
untied input embedding is a lookup: a step reads one row per token of it, not the table.
That is the lesson's ceiling: Llama 3.1 8B on one H100 decodes at most about 223 tokens/s
(15.01 GB / 3.35 TB/s = 4.48 ms per token). With layers left in host memory
(:mod:`engine.numbers.offload`) their share of the weight reads crosses the host link
instead: the bytes term is then HBM bytes / bandwidth + host bytes / link bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers import architecture
from engine.numbers.catalog import HardwareSpec, ModelSpec
from engine.numbers.errors import EngineError
from engine.numbers.formats import FormatId, get_format
from engine.numbers.memory import kv_cache_bytes, kv_cache_bytes_per_token
from engine.numbers.offload import Offload
from engine.numbers.records import JsonShape, Record
from engine.numbers.rounding import ceil_div


def gathered_table_params(model: ModelSpec) -> int:
    """Parameters in tables a step only looks rows up in (a gather, no matmul): the input
    embedding when it is untied from the output head, and learned position embeddings. A
    tied table is read whole every step as the head, so it is not counted here."""
    token_table = 0 if model.tied_embeddings else model.vocab * model.hidden
    return token_table + model.learned_positions * model.hidden


def gathered_bytes(model: ModelSpec, bytes_per_number: float, tokens: int) -> float:
    """Bytes the lookups of ``tokens`` tokens read from the tables of
    :func:`gathered_table_params`: one row of ``hidden`` numbers per token from each table,
    never more rows than the table has."""
    rows = 0
    if not model.tied_embeddings:
        rows += min(tokens, model.vocab)
    if model.learned_positions:
        rows += min(tokens, model.learned_positions)
    return rows * model.hidden * bytes_per_number


# Past this many tokens (1 - k/E)^tokens is below any share that shows, for every catalogue
# mixture; capping the power keeps it from underflowing for long prompts.
_TOUCHED_TOKENS_CAP = 10_000


def routed_share_touched(model: ModelSpec, tokens: int) -> float:
    """Expected share of a layer's routed experts that ``tokens`` tokens reach, each token
    picking ``k`` of the ``E`` experts: 1 - (1 - k/E)^tokens. An expert is missed by one
    token with probability 1 - k/E and, routing each token independently and uniformly
    (what a load-balancing loss drives a router towards), by all of them with that
    probability to the power ``tokens``: the occupancy count of tokens x k balls in E
    bins, k at a time without repeats (Feller, An Introduction to Probability Theory and
    Its Applications, vol. 1, chapter II, occupancy problems). k/E for one token, about all
    of them for a prompt of thousands. A step of no tokens counts one token's. 0 for a
    dense model."""
    if not model.routed_params:
        return 0.0
    t = min(max(tokens, 1), _TOUCHED_TOKENS_CAP)
    return 1.0 - (1.0 - model.experts_per_token / model.experts) ** t


def experts_touched(model: ModelSpec, tokens: int) -> float:
    """Expected distinct routed experts per layer that ``tokens`` tokens reach:
    E (1 - (1 - k/E)^tokens) (:func:`routed_share_touched`)."""
    return model.experts * routed_share_touched(model, tokens)


def weight_bytes_read(model: ModelSpec, bytes_per_number: float, tokens: int) -> float:
    """Bytes of weights one step reads for ``tokens`` tokens processed together.

    Dense models read every weight once per step, except the tables of
    :func:`gathered_table_params`: of those only the rows the tokens look up
    (:func:`gathered_bytes`; Llama 3.1 8B, untied: 7,504,924,672 parameters streamed plus
    4,096 per token). A mixture of experts reads its shared weights plus every routed
    expert the step's tokens reach, :func:`experts_touched` of E per layer: k for a decode
    of one request, nearly all of them for a prompt of thousands of tokens.
    """
    streamed = model.params - gathered_table_params(model) - model.routed_params
    routed = model.routed_params * routed_share_touched(model, tokens)
    return ((streamed + routed) * bytes_per_number
            + gathered_bytes(model, bytes_per_number, tokens))


def host_weight_bytes_read(model: ModelSpec, bytes_per_number: float, tokens: int,
                          off: Offload | None) -> float:
    """Bytes of a step's weight reads (of ``tokens`` tokens, :func:`weight_bytes_read`)
    that come from the layers left in host memory: their share of the layers' weights, a
    mixture's routed experts counted as far as the tokens reach them. 0 without offload."""
    if off is None:
        return 0.0
    m = model
    layers_read = (off.layer_params - m.routed_params
                   + m.routed_params * routed_share_touched(m, tokens))
    return off.host_share * layers_read * bytes_per_number


@dataclass(frozen=True, slots=True)
class _Segment:
    """Decode-step costs for contexts c >= ``start``: time = max(am + bm c, ac + bc c)."""

    start: int
    am: float
    bm: float
    ac: float
    bc: float


@dataclass(frozen=True, slots=True)
class _Costs:
    """Per-GPU costs of a decode step, piecewise linear in the context c: one segment, or
    two for a sliding-window model (past the window its local layers stop growing)."""

    segments: tuple[_Segment, ...]
    weight_bytes: float
    kv_bytes_per_layer_token: float
    flops_fixed: float
    flops_per_layer_token: float
    peak: float
    compute_format: str
    bandwidth: float
    batch: int
    groups: tuple[tuple[int, int], ...]
    # Of each segment's memory seconds, those of weight reads over the host link (offload).
    host_seconds: float = 0.0

    def at(self, c: int) -> _Segment:
        seg = self.segments[0]
        for s in self.segments:
            if c >= s.start:
                seg = s
        return seg

    def layer_tokens(self, c: int) -> float:
        return float(sum(n * (min(c, w) if w else c) for n, w in self.groups))


def _costs(m: ModelSpec, hw: HardwareSpec, batch: int, weight_format: FormatId,
           kv_format: FormatId, gpus: int, off: Offload | None = None) -> _Costs:
    wb = get_format(weight_format).bytes_per_number
    peak, compute_format = hw.compute_peak(weight_format)
    kv_layer = (kv_cache_bytes_per_token(m, kv_format) / m.layers
                * architecture.kv_replication(m, gpus))
    wbytes = weight_bytes_read(m, wb, batch)
    host_read = host_weight_bytes_read(m, wb, batch, off)
    host_s = 0.0 if off is None else off.link_seconds(host_read, gpus)
    bw = hw.bandwidth_bytes_per_s * gpus
    pk = peak * gpus
    flops_fixed = batch * architecture.forward_flops_per_token(m)
    flops_layer = batch * architecture.attention_flops_per_layer_token(m)
    groups = architecture.attention_layer_groups(m)
    segments = []
    # Below every window all layers grow with c; past a window that layer's share is fixed.
    starts = sorted({0, *(w for _, w in groups if w)})
    for start in starts:
        fixed = float(sum(n * w for n, w in groups if w and w <= start))
        growing = float(sum(n for n, w in groups if not w or w > start))
        segments.append(_Segment(start, (wbytes - host_read + batch * kv_layer * fixed) / bw
                                 + host_s,
                                 batch * kv_layer * growing / bw,
                                 (flops_fixed + flops_layer * fixed) / pk,
                                 flops_layer * growing / pk))
    return _Costs(tuple(segments), wbytes, kv_layer, flops_fixed, flops_layer, peak,
                  compute_format, hw.bandwidth_bytes_per_s, batch, groups, host_s)


@dataclass(frozen=True, slots=True)
class PassCost(Record):
    """One pass of the model over ``batch`` requests on ``gpus`` GPUs together: a decode step
    or a prefill (each adds its token count, written right after ``batch``).

    bytes_read and flops are totals; memory_seconds = bytes / (GPUs x bandwidth),
    compute_seconds = FLOPs / (GPUs x raw dense peak); seconds is the larger; ``bound`` says
    which. arithmetic_intensity = FLOPs / bytes. With layers left in host memory, bytes_read
    counts their weights too and memory_seconds includes the subclasses' host_link_seconds,
    those weights' reads over the host link.
    """

    batch: int
    gpus: int
    bytes_read: float
    flops: float
    memory_seconds: float
    compute_seconds: float
    seconds: float
    bound: str
    compute_format: str

    @property
    def arithmetic_intensity(self) -> float:
        return self.flops / self.bytes_read


@dataclass(frozen=True, slots=True)
class DecodeStep(PassCost):
    """One decode step of ``batch`` requests at ``context_tokens`` each (all GPUs together).
    tokens_per_s_per_user = 1 / seconds; tokens_per_s = batch / seconds."""

    JSON = JsonShape(derived=("tokens_per_s_per_user", "tokens_per_s", "arithmetic_intensity"),
                     after={"context_tokens": "batch"}, skip=("host_link_seconds",))

    context_tokens: int
    host_link_seconds: float = 0.0

    @property
    def tokens_per_s_per_user(self) -> float:
        return 1.0 / self.seconds

    @property
    def tokens_per_s(self) -> float:
        return self.batch / self.seconds


def decode_step(model: ModelSpec, hardware: HardwareSpec, *, context_tokens: int = 0,
                batch: int = 1, weight_format: FormatId = "bf16", kv_format: FormatId = "bf16",
                gpus: int = 1) -> DecodeStep:
    """One decode step: every request in the batch emits one token, reading all weights
    (once for the whole batch) and each request's ``context_tokens`` of KV cache.

    ``gpus`` must split the model (checked where it enters:
    :func:`engine.numbers.architecture.check_tensor_parallel`)."""
    return _step(_costs(model, hardware, batch, weight_format, kv_format, gpus), batch,
                 context_tokens, gpus)


def _step(k: _Costs, b: int, c: int, g: int) -> DecodeStep:
    seg = k.at(c)
    mem = seg.am + seg.bm * c
    comp = seg.ac + seg.bc * c
    lt = k.layer_tokens(c)
    return DecodeStep(
        batch=b, context_tokens=c, gpus=g, bytes_read=k.weight_bytes + b * k.kv_bytes_per_layer_token * lt,
        flops=k.flops_fixed + k.flops_per_layer_token * lt, memory_seconds=mem, compute_seconds=comp,
        seconds=mem if mem >= comp else comp, bound="memory" if mem >= comp else "compute",
        compute_format=k.compute_format, host_link_seconds=k.host_seconds,
    )


@dataclass(frozen=True, slots=True)
class Prefill(PassCost):
    """The prefill of ``batch`` prompts of ``prompt_tokens``: all their tokens in one pass."""

    JSON = JsonShape(derived=("arithmetic_intensity",), after={"prompt_tokens": "batch"},
                     skip=("host_link_seconds",))

    prompt_tokens: int
    host_link_seconds: float = 0.0


def prefill(model: ModelSpec, hardware: HardwareSpec, *, prompt_tokens: int, batch: int = 1,
            weight_format: FormatId = "bf16", kv_format: FormatId = "bf16", gpus: int = 1
            ) -> Prefill:
    """Prefill: FLOPs = batch x (forward matmuls x s + causal attention 4 L H Q s(s+1)/2,
    a sliding-window layer attending to at most its window); bytes = weights read once +
    KV cache written; time = the larger of the two."""
    return _prefill(model, hardware, batch, prompt_tokens, weight_format, kv_format, gpus)


def _prefill(m: ModelSpec, hw: HardwareSpec, b: int, s: int, wf: FormatId, kf: FormatId,
             g: int, off: Offload | None = None) -> Prefill:
    peak, cf = hw.compute_peak(wf)
    wb = get_format(wf).bytes_per_number
    wbytes = weight_bytes_read(m, wb, b * s)
    host_read = host_weight_bytes_read(m, wb, b * s, off)
    host_s = 0.0 if off is None else off.link_seconds(host_read, g)
    kv = kv_cache_bytes(m, s, kf) * b * architecture.kv_replication(m, g)
    flops = b * (architecture.forward_flops_per_token(m) * s
                 + architecture.attention_flops_per_layer_token(m)
                 * architecture.causal_attended_layer_tokens(m, s))
    mem = (wbytes - host_read + kv) / (hw.bandwidth_bytes_per_s * g) + host_s
    comp = flops / (peak * g)
    return Prefill(batch=b, prompt_tokens=s, gpus=g, bytes_read=wbytes + kv, flops=flops,
                   memory_seconds=mem, compute_seconds=comp, seconds=max(mem, comp),
                   bound="memory" if mem >= comp else "compute", compute_format=cf,
                   host_link_seconds=host_s)


def running_context_tokens(prompt_tokens: int, output_tokens: int) -> int:
    """Tokens a running request's decode attends to, on average over a steady state in which
    the requests kept running are spread evenly over their answers: its prompt and half its
    answer (prompt + output // 2; the decode steps attend to prompt + 1 .. prompt +
    output - 1)."""
    return prompt_tokens + output_tokens // 2


@dataclass(frozen=True, slots=True)
class JoiningPrefill(PassCost):
    """The step in which one request's prompt of ``prompt_tokens`` is prefilled beside one
    decode of each of the ``batch - 1`` requests already running, each attending to
    ``context_tokens`` (a continuous-batching server's mixed step, chunked prefill in one
    chunk): its time is the time to first token of a request joining a server that keeps
    ``batch`` requests running. ``batch`` 1: one request on an idle server, its prefill alone.

    ``tokens``: the step's tokens (the prompt and one per decode); ``attention_flops``: the
    prompt's causal attention and the decodes' attention over their contexts;
    ``host_link_seconds``: of its memory seconds, those of the weights read over the host
    link (layers left in host memory; 0 without)."""

    JSON = JsonShape(skip=("host_link_seconds",))

    prompt_tokens: int
    context_tokens: int
    tokens: int
    attention_flops: float
    host_link_seconds: float = 0.0


def joining_prefill(model: ModelSpec, hardware: HardwareSpec, *, prompt_tokens: int,
                    output_tokens: int, batch: int = 1, weight_format: FormatId = "bf16",
                    kv_format: FormatId = "bf16", gpus: int = 1,
                    offload: Offload | None = None) -> JoiningPrefill:
    """The bound of the step that prefills one new request of ``prompt_tokens`` beside the
    decodes of ``batch - 1`` running requests of ``prompt_tokens`` in and ``output_tokens``
    out, at :func:`running_context_tokens`: bytes = the weights the step's tokens reach + the
    prompt's KV cache written + each decode's KV cache read; FLOPs = the forward matmuls of
    every token + the prompt's causal attention + each decode's attention over its context;
    time = the larger of the two. ``offload``: the layers left in host memory, whose weights
    the step reads over the host link (as a prefill does)."""
    m, hw, s, wf, kf, g = model, hardware, prompt_tokens, weight_format, kv_format, gpus
    running = batch - 1
    ctx = running_context_tokens(s, output_tokens)
    peak, cf = hw.compute_peak(wf)
    tokens = s + running
    rep = architecture.kv_replication(m, g)
    wb = get_format(wf).bytes_per_number
    wbytes = weight_bytes_read(m, wb, tokens)
    host_read = host_weight_bytes_read(m, wb, tokens, offload)
    host_s = 0.0 if offload is None else offload.link_seconds(host_read, g)
    kv = kv_cache_bytes(m, s, kf) * rep + running * kv_cache_bytes(m, ctx, kf) * rep
    attention = (architecture.attention_flops_per_layer_token(m)
                 * (architecture.causal_attended_layer_tokens(m, s)
                    + running * architecture.attended_layer_tokens(m, ctx)))
    flops = architecture.forward_flops_per_token(m) * tokens + attention
    mem = (wbytes - host_read + kv) / (hw.bandwidth_bytes_per_s * g) + host_s
    comp = flops / (peak * g)
    return JoiningPrefill(batch=batch, gpus=g, bytes_read=wbytes + kv, flops=flops,
                          memory_seconds=mem, compute_seconds=comp, seconds=max(mem, comp),
                          bound="memory" if mem >= comp else "compute", compute_format=cf,
                          prompt_tokens=s, context_tokens=ctx, tokens=tokens,
                          attention_flops=attention, host_link_seconds=host_s)


def _lin_sum(a: float, b: float, c0: int, n: int) -> float:
    """Sum of a + b c for c = c0 .. c0 + n - 1."""
    return n * a + b * (n * c0 + n * (n - 1) / 2.0)


def _sum_steps(k: _Costs, c0: int, n: int) -> float:
    """Exact sum of decode-step times max(am + bm c, ac + bc c) for c = c0 .. c0 + n - 1,
    segment by segment (the costs are linear within a segment)."""
    total = 0.0
    for i, seg in enumerate(k.segments):
        end = k.segments[i + 1].start if i + 1 < len(k.segments) else None
        lo = max(c0, seg.start)
        hi = c0 + n if end is None else min(c0 + n, end)
        if hi > lo:
            total += _sum_linear_max(seg, lo, hi - lo)
    return total


def _sum_linear_max(k: _Segment, c0: int, n: int) -> float:
    """Exact sum of max(am + bm c, ac + bc c) for c = c0 .. c0 + n - 1."""
    if n <= 0:
        return 0.0
    da = k.am - k.ac
    db = k.bm - k.bc
    if db == 0.0:
        return _lin_sum(k.am, k.bm, c0, n) if da >= 0 else _lin_sum(k.ac, k.bc, c0, n)
    cross = -da / db  # memory term >= compute term for c >= cross when db > 0
    split = min(max(ceil_div(cross, 1) - c0, 0), n)  # steps with c < cross
    low, high = (k.ac, k.bc), (k.am, k.bm)
    if db < 0:
        low, high = high, low
    return _lin_sum(low[0], low[1], c0, split) + _lin_sum(high[0], high[1], c0 + split, n - split)


def decode_seconds(model: ModelSpec, hardware: HardwareSpec, *, prompt_tokens: int,
                   output_tokens: int, batch: int = 1, weight_format: FormatId = "bf16",
                   kv_format: FormatId = "bf16", gpus: int = 1) -> float:
    """Seconds of all decode steps after the prefill (output_tokens - 1 steps; the prefill
    emits the first token), step i at context prompt_tokens + i."""
    k = _costs(model, hardware, batch, weight_format, kv_format, gpus)
    return _sum_steps(k, prompt_tokens + 1, output_tokens - 1)


@dataclass(frozen=True, slots=True)
class Phase(Record):
    """One stretch of a request's life: 'queue', 'prefill' or 'decode' (one step or several)."""

    name: str
    kind: str
    start_seconds: float
    length_seconds: float
    tokens: int
    bound: str


@dataclass(frozen=True, slots=True)
class RequestTimeline(Record):
    """A request from arrival to last token. TTFT = queue + prefill (the prefill emits the
    first token); TPOT = mean decode-step time; total = TTFT + all decode steps."""

    JSON = JsonShape(rename={"model_id": "model", "hardware_id": "hardware"},
                     derived=("tokens_per_s_per_user", "tokens_per_s"))

    model_id: str
    hardware_id: str
    prompt_tokens: int
    output_tokens: int
    batch: int
    gpus: int
    phases: tuple[Phase, ...]
    prefill: PassCost
    first_step: DecodeStep
    last_step: DecodeStep
    ttft_seconds: float
    tpot_seconds: float
    decode_seconds: float
    total_seconds: float
    bound: str

    @property
    def tokens_per_s_per_user(self) -> float:
        return 1.0 / self.tpot_seconds if self.tpot_seconds > 0 else 0.0

    @property
    def tokens_per_s(self) -> float:
        return self.batch * self.tokens_per_s_per_user


def request_timeline(model: ModelSpec, hardware: HardwareSpec, *, prompt_tokens: int,
                     output_tokens: int, batch: int = 1, weight_format: FormatId = "bf16",
                     kv_format: FormatId = "bf16", gpus: int = 1, queue_seconds: float = 0.0,
                     max_phases: int = 40, joining: bool = False,
                     offload: Offload | None = None) -> RequestTimeline:
    """The timeline of one request (in a batch of ``batch`` identical ones); ``offload``:
    with some layers' weights read from host memory.

    Phases: an optional queue, the prefill, then the decode steps: one phase per step when
    there are at most ``max_phases`` steps, else that many phases of consecutive steps.
    The prefill is the batch's prompts arriving together, in one pass; ``joining``: the
    request's own prompt beside the decodes of the ``batch - 1`` others already running
    (:func:`joining_prefill`).
    """
    m, hw, b, wf, kf, g = model, hardware, batch, weight_format, kv_format, gpus
    s, out, q, cap = prompt_tokens, output_tokens, queue_seconds, max_phases
    pre: PassCost = _prefill(m, hw, b, s, wf, kf, g, offload)
    if joining:
        pre = joining_prefill(m, hw, prompt_tokens=s, output_tokens=out, batch=b,
                              weight_format=wf, kv_format=kf, gpus=g, offload=offload)
    k = _costs(m, hw, b, wf, kf, g, offload)
    phases = []
    t = 0.0
    if q > 0:
        phases.append(Phase("queue", "queue", 0.0, q, 0, "none"))
        t = q
    phases.append(Phase("prefill", "prefill", t, pre.seconds, s, pre.bound))
    t += pre.seconds
    ttft = t
    steps = out - 1
    groups = min(steps, cap)
    done = 0
    for i in range(groups):
        n = (steps * (i + 1)) // groups - done
        c0 = s + 1 + done
        length = _sum_steps(k, c0, n)
        mid = _step(k, b, c0 + n // 2, g)
        name = f"decode step {done + 1}" if n == 1 else f"decode steps {done + 1}-{done + n}"
        phases.append(Phase(name, "decode", t, length, n, mid.bound))
        t += length
        done += n
    decode = t - ttft
    first = _step(k, b, s + 1, g)
    last = _step(k, b, s + max(steps, 1), g)
    bound = pre.bound if pre.seconds >= decode else last.bound
    return RequestTimeline(
        model_id=m.id, hardware_id=hw.id, prompt_tokens=s, output_tokens=out, batch=b, gpus=g,
        phases=tuple(phases), prefill=pre, first_step=first, last_step=last, ttft_seconds=ttft,
        tpot_seconds=decode / steps if steps else 0.0, decode_seconds=decode, total_seconds=t,
        bound=bound,
    )


def batching_table(model: ModelSpec, hardware: HardwareSpec, *, batches: tuple[int, ...] = (
        1, 2, 4, 8, 16, 32, 64, 128, 256), context_tokens: int = 1024,
        weight_format: FormatId = "bf16", kv_format: FormatId = "bf16", gpus: int = 1
        ) -> list[DecodeStep]:
    """Decode steps at several batch sizes: throughput rises, per-user speed falls once the
    step turns compute-bound (or the KV cache reads dominate)."""
    if not batches:
        raise EngineError("Give at least one batch size.", "batches")
    return [decode_step(model, hardware, context_tokens=context_tokens, batch=bt,
                        weight_format=weight_format, kv_format=kv_format, gpus=gpus)
            for bt in batches]
