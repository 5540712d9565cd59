"""The expected speed of training: what a well-tuned Megatron-style stack reaches, beside the
bound (every FLOP at the raw dense peak, no communication).

One optimiser step trains ``global batch`` tokens (a sourced default) as ``accumulation``
micro-batches of ``micro_batch`` x ``seq_len`` tokens on each of the ``dp`` data-parallel
groups of ``tp`` tensor-parallel GPUs (parallelism.split_batch). A batch of fewer
micro-batches than ranks leaves the other ranks idle: they join the collectives but compute
nothing, and the record's ``warnings`` say so (the batch is never raised to feed them; a batch
that is not a whole number of micro-batches per rank is rounded up, and said). Per
micro-batch, per GPU:

- compute: engine.numbers.training_ops, op by op on the busiest GPU (every matmul at the
  rate its shape reaches, attention forward and backward at FlashAttention-2's measured
  rates, the memory-bound ops at a stream's bandwidth, recomputation, each kernel's fixed
  cost; the last stage's output head and loss);
- tensor parallelism: four all-reduces per layer (two forward, two backward) of micro_batch x
  seq_len x hidden x 2 bytes (/ cp), on the critical path, unless the stack runs them under
  the GEMMs (``tp_comm`` 'overlapped': Megatron-LM's --tp-comm-overlap, torchtitan's async
  TP), where only what outlasts each direction's layer GEMMs is exposed;
- context parallelism (``cp`` GPUs share each sequence): per layer the keys and values of the
  other cp - 1 chunks come round a ring in the forward pass, and again with their gradients
  in the backward (three sends of a chunk per ring step), beside attention: only what
  outlasts the attention of that direction is exposed.

Per step: the optimiser (Adam over the GPU's share of the parameters, and gradient clipping's
read of the gradients) once, after the last micro-batch; the gradients (2 bytes per parameter / tp, 4 with ``grad_reduce`` fp32) are all-reduced over the data-parallel
group during the last micro-batch's backward pass (2/3 of its compute); only the excess is
exposed. With ZeRO-1/2 (a distributed optimiser) they are reduce-scattered there instead, and
the updated weights all-gathered after the step: beside the next step's first forward pass
(1/3 of its compute; ``param_gather`` 'overlapped', Megatron-LM's --overlap-param-gather) or
exposed ('after-step', DeepSpeed). ZeRO-2 keeps only each rank's shard of the gradients, so
with several micro-batches per step it reduce-scatters every micro-batch's, each under that
micro-batch's backward pass (2/3 of its compute), rather than once. ZeRO-3 instead all-gathers the weights twice and reduce-scatters the gradients every
micro-batch, overlapped with that micro-batch's compute; under a pipeline (pp > 1) it keeps
each stage's gathered weights and unsharded gradients for the whole step, so its traffic is
ZeRO-1/2's (engine.numbers.memory.sharding_stage). Compute that runs beside a
collective (the gradients' reduction, ZeRO-3's gathers, a mixture's all-to-alls) runs on the
SMs the collective leaves it: the slowdown counts as exposed communication. MFU = model FLOPs per token
(training_flops_per_token(...).model) x tokens/s / (GPUs x dense peak), and the bound is those
same model FLOPs at every GPU's dense peak (compute.bound_seconds): the time at 100 % MFU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from engine.numbers import architecture
from engine.numbers.adapter_setup import AdapterSetup
from engine.numbers.catalog import HardwareSpec, ModelSpec
from engine.numbers.catalog.efficiency import (
    Basis,
    collective_sm_share,
    grad_reduce_basis,
    param_gather_basis,
    pipeline_split_source,
    sharded_gradients_source,
    tp_comm_overlap_source,
    training_defaults,
    zero3_under_pipeline_source,
)
from engine.numbers.catalog.kernel_rates import fp8_training_peak
from engine.numbers.communication import (
    ACTIVATION_BYTES,
    all_gather_seconds,
    all_reduce_seconds,
    all_to_all_seconds,
    group_link,
    pipeline_bubble_fraction,
    reduce_scatter_seconds,
    send_seconds,
)
from engine.numbers.compute import bound_seconds as model_flops_bound_seconds
from engine.numbers.compute import training_flops_per_token
from engine.numbers.memory import sharding_stage
from engine.numbers.op_time import Op, repeated, scaled
from engine.numbers.parallelism import (
    BatchSplit,
    StepSplit,
    Traffic,
    check_chunks,
    check_context_split,
    check_expert_parallel,
    default_expert_parallel,
    fullest_stage,
    gpu_params,
    split_batch,
)
from engine.numbers.records import JsonShape, Record
from engine.numbers.training_choices import (
    AttentionKernel,
    GradReduce,
    Kernels,
    ParamGather,
    PipelineSplit,
    Recompute,
    Sharding,
    TpComm,
)
from engine.numbers.training_ops import StepShape, training_ops

WEIGHT_BYTES = 2.0  # ZeRO-3 gathers bf16 weights

# What a training estimate changed or assumed about its inputs: 'idle_ranks', the global
# batch has fewer micro-batches than data-parallel ranks; 'batch_rounded_up', it was rounded
# up to whole micro-batches on every busy rank.
TrainWarningKind = Literal["idle_ranks", "batch_rounded_up"]


@dataclass(frozen=True, slots=True)
class TrainWarning(Record):
    """One thing a training estimate changed or assumed, as numbers (engine.words.training
    phrases it): ``kind``, the batch as dealt to the ranks, and the GPUs of one rank
    (tensor parallel x pipeline stages), so the idle GPUs can be counted."""

    JSON = JsonShape(derived=("idle_gpus",))

    kind: TrainWarningKind
    batch: BatchSplit
    gpus_per_rank: int

    @property
    def idle_gpus(self) -> int:
        return self.batch.idle_dp * self.gpus_per_rank


def batch_warnings(batch: BatchSplit, gpus_per_rank: int) -> tuple[TrainWarning, ...]:
    """What dealing the batch changed: ranks left idle, and a batch rounded up."""
    out = []
    if batch.idle_dp:
        out.append(TrainWarning("idle_ranks", batch, gpus_per_rank))
    if batch.tokens_per_step > batch.requested_tokens:
        out.append(TrainWarning("batch_rounded_up", batch, gpus_per_rank))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class TrainStep(StepSplit):
    """A training step's split: :class:`StepSplit`'s parts plus ``optimizer_seconds``, the
    optimiser step's own time (Adam and gradient clipping on the GPU's share of the
    parameters), so ``seconds`` = compute + exposed communication + bubble + optimizer."""

    optimizer_seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class ExpectedTrain(Record):
    """Expected speed of a training run; ``basis`` lists every efficiency used.

    ``communication_seconds_per_step``: all the collectives of one step (0 on one GPU);
    ``exposed_communication_seconds_per_step``: the part not hidden behind compute.
    ``bound_seconds``: the model FLOPs at every GPU's dense peak, the time at 100 % MFU.
    ``tokens_per_step``: the global batch used; ``warnings``: what was changed or assumed to
    get it (idle ranks, a batch rounded up). ``ops``: one step on the busiest GPU, op by op
    (engine.numbers.training_ops, then the exposed communication, the bubble and the
    optimiser), their seconds adding up to ``step_seconds``. ``ep`` and ``cp``: the expert-
    and context-parallel sizes used.
    """

    mfu: float
    seconds: float
    tokens_per_s: float
    bound_seconds: float
    step_seconds: float
    tokens_per_step: int
    accumulation: int
    communication_seconds_per_step: float
    exposed_communication_seconds_per_step: float
    mfu_given: bool
    basis: tuple[Basis, ...]
    JSON = JsonShape(skip=("compute_seconds_per_step", "bubble_seconds_per_step",
                           "optimizer_seconds_per_step", "ep", "cp"),
                     derived=("step",))

    pp: int = 1
    compute_seconds_per_step: float = 0.0
    bubble_seconds_per_step: float = 0.0
    traffic: tuple[Traffic, ...] = ()
    warnings: tuple[TrainWarning, ...] = ()
    optimizer_seconds_per_step: float = 0.0
    ops: tuple[Op, ...] = ()
    ep: int = 1
    cp: int = 1

    @property
    def step(self) -> TrainStep:
        """The step time split into compute, exposed communication, pipeline bubble and the
        optimiser step."""
        return TrainStep(self.step_seconds, self.compute_seconds_per_step,
                         self.exposed_communication_seconds_per_step,
                         self.bubble_seconds_per_step, self.optimizer_seconds_per_step)


def _kv_chunk_bytes(model: ModelSpec, tokens: int, tp: int) -> float:
    """Bytes of one GPU's keys and values of ``tokens`` tokens for one layer, in 16 bits
    (an MLA model's full keys and values, as Megatron-LM passes them)."""
    qk, v = architecture.attention_head_dims(model)
    kv_heads = model.kv_heads if model.attention == "gqa" else model.heads
    return tokens * kv_heads / tp * (qk + v) * ACTIVATION_BYTES


def _tp_exposed(tp_comm_mb: float, micro_batch: tuple[Op, ...]) -> tuple[float, float]:
    """Tensor parallelism's all-reduces of one micro-batch run under the layers' GEMMs:
    half of ``tp_comm_mb`` (two of each layer's four) beside the forward GEMMs, half beside
    the backward's (the output head's apart: it has no tensor-parallel collective beside
    it). Returns (exposed, hidden) seconds: what outlasts its direction's GEMMs, and what
    runs beside them."""
    exposed = hidden = 0.0
    for direction in ("(forward)", "(backward)"):
        gemms = math.fsum(o.seconds for o in micro_batch if o.name.startswith("matmul: ")
                          and o.name.endswith(direction) and "output head" not in o.name)
        half = tp_comm_mb / 2.0
        exposed += max(0.0, half - gemms)
        hidden += min(half, gemms)
    return exposed, hidden


def expected_train(model: ModelSpec, hardware: HardwareSpec, *, tokens: float, gpus: int = 1,
                   tp: int = 1, sharding: Sharding = "none", micro_batch: int = 1,
                   seq_len: int = 4096, recompute: Recompute = "selective",
                   compute_format: str = "bf16", mfu: float | None = None, pp: int = 1,
                   global_batch_tokens: float | None = None, interleave: int = 1,
                   ep: int | None = None, cp: int = 1, fp8: bool = False,
                   adapter: AdapterSetup | None = None, kernels: Kernels = "fused",
                   attention: AttentionKernel = "fa2", tp_comm: TpComm = "exposed",
                   param_gather: ParamGather = "overlapped",
                   grad_reduce: GradReduce = "bf16",
                   pipeline_split: PipelineSplit = "layers") -> ExpectedTrain:
    """Expected MFU, time and tokens/s of training on ``tokens`` tokens.

    With ``mfu`` given, that MFU sets the speed (the basis says so) and only the
    communication figures are modelled; the step's split keeps the modelled shares.
    ``bound_seconds``: the model FLOPs (matmul and causal attention, recomputation not
    counted) at every GPU's raw dense peak, no communication, no bubble: the time at 100 %
    MFU. ``pp`` pipeline stages run the 1F1B schedule: with m
    micro-batches per step the fullest stage works m x its share and idles (pp - 1) x its
    share; ``global_batch_tokens`` (default: the catalogue's) sets m. ``interleave`` v > 1:
    each GPU holds v chunks of layers (the interleaved schedule), which cuts the idle time v
    times for v times the sends between stages (Narayanan et al. 2021, section 2.2.2).
    ``ep``: expert-parallel GPUs (None: a mixture's experts over the data-parallel GPUs,
    min(experts, dp)); ``cp``: context-parallel GPUs sharing each sequence (gpus = dp x tp x
    pp x cp); ``fp8``: the layers' matmuls in fp8 (Transformer Engine), MFU still counted
    against the bf16 dense peak, and the bound then the matmul FLOPs at the fp8 peak and the
    attention FLOPs at the bf16 peak. ``adapter``: fine-tuning with adapters, the base frozen
    (its dW GEMMs skipped, engine.numbers.training_ops), only the adapters' gradients
    reduced and stepped. ``kernels``: the stack's memory-bound kernels, fused or eager
    PyTorch's (engine.numbers.training_ops); ``attention``: its attention kernel, FlashAttention-2
    or the Triton port LLM Foundry's MPT ran (training_choices.AttentionKernel); ``tp_comm``:
    'exposed', the tensor-parallel all-reduces on the critical path, or 'overlapped', each
    direction's under that direction's layer GEMMs (:func:`_tp_exposed`); ``param_gather``:
    where ZeRO-1/2's all-gather of the updated weights runs, 'overlapped' beside the next
    step's first forward pass (Megatron-LM's --overlap-param-gather) or 'after-step',
    exposed (DeepSpeed's ZeRO-1/2); ``grad_reduce``: the gradients' format on the
    data-parallel network and in the optimiser step, bf16 (2 bytes) or fp32 (4 bytes,
    Megatron-LM's and torchtitan's default); ``pipeline_split``: how the stages share the
    model (training_choices.PipelineSplit; 'embedding-and-loss' gives the embedding and the
    output layer one layer's place each, so the last stage runs one layer fewer than a full
    stage beside the output layer).
    EngineError when the split cannot work (parallelism.check_split, check_expert_parallel)
    or the chunks outnumber the layers.
    """
    m = model
    hw = hardware
    d = tokens
    g = gpus
    split = check_context_split(m, hw, g, tp, pp, cp, pipeline_split)
    grad_basis = grad_reduce_basis(grad_reduce)
    grad_bytes_per_param = grad_basis.value
    t, p = split.tp, split.pp
    v = interleave
    check_chunks(m, split, v)
    shard = sharding
    rec = recompute
    mb = micro_batch
    s = seq_len
    dp = split.dp
    peak, _ = hw.compute_peak(compute_format)
    defaults = training_defaults()
    batch_given = global_batch_tokens is not None
    global_tokens = (global_batch_tokens if global_batch_tokens is not None
                     else float(defaults.global_batch_tokens))
    tokens_mb = mb * s
    batch = split_batch(global_tokens, tokens_mb, dp)
    accum = batch.accumulation
    tokens_step = batch.tokens_per_step

    # compute.training_flops_per_token owns the FLOPs MFU counts (causal attention, as the
    # kernels run); training_ops times the work the busiest GPU does, op by op.
    per_token = training_flops_per_token(m, s, rec, adapter)
    bound_seconds = model_flops_bound_seconds(per_token.model * d, g, peak)
    if fp8:
        # No stack beats its matmul FLOPs at the fp8 peak and the rest at the bf16 peak.
        fp8_peak = fp8_training_peak(hw)
        bound_seconds = (model_flops_bound_seconds(per_token.matmul * d, g, fp8_peak)
                         + model_flops_bound_seconds(per_token.attention * d, g, peak))
    if ep is None:
        ep = default_expert_parallel(m, dp)
    else:
        check_expert_parallel(m, ep, dp)
    c = cp
    shards = dp * c if shard != "none" else 1
    # The stage whose GPUs hold the most parameters steps them (with many expert-parallel
    # GPUs, the vocabulary table's stage can outweigh a middle one).
    fullest = fullest_stage(m, p, split.pipeline_split, ep)
    ops = training_ops(m, hw, StepShape(tokens_mb // c, s, t, split.most_layers, p, ep,
                                        shards, rec, fp8, c, adapter, kernels, attention,
                                        split.last_stage_layers, fullest.params,
                                        None if split.pipeline_split == "layers"
                                        else fullest.layers),
                       grad_bytes_per_param)
    compute_mb = ops.micro_batch_seconds
    optimizer_seconds = ops.optimizer_seconds
    tokens_gpu = tokens_mb // c

    links = hw.link_spec()
    tp_link = group_link(links, t)
    tp_comm_mb = 4 * split.most_layers * all_reduce_seconds(
        tokens_gpu * m.hidden * ACTIVATION_BYTES, tp_link)
    tp_exposed_mb, tp_hidden_mb = (_tp_exposed(tp_comm_mb, ops.micro_batch)
                                   if tp_comm == "overlapped" and t > 1
                                   else (tp_comm_mb, 0.0))
    cp_comm_mb = cp_exposed_mb = 0.0
    kv_bytes = 0.0
    if c > 1:
        cp_link = group_link(links, c, per_server=max(1, links.chips_per_server // t))
        kv_bytes = _kv_chunk_bytes(m, tokens_gpu, t)
        # Forward: the keys and values of the other c - 1 chunks come round the ring; backward:
        # they come round again and their gradients go back (Megatron-LM's ring attention).
        kv_forward = split.most_layers * (c - 1) * send_seconds(kv_bytes, cp_link)
        attention_s = {name: sum(o.seconds for o in ops.micro_batch if o.name == name)
                       for name in ("attention (forward)", "attention (backward)")}
        cp_comm_mb = 3 * kv_forward
        cp_exposed_mb = (max(0.0, kv_forward - attention_s["attention (forward)"])
                         + max(0.0, 2 * kv_forward - attention_s["attention (backward)"]))
    # Each stage hands its activations forward and their gradients back: two sends per
    # micro-batch, each tensor-parallel GPU sending its 1/tp slice (Megatron's scatter/gather).
    pp_link = group_link(links, 2, per_server=2 if 2 * t <= links.chips_per_server else 1)
    p2p_mb = 2 * v * send_seconds(tokens_gpu * m.hidden * ACTIVATION_BYTES / t, pp_link) \
        if p > 1 else 0.0
    # The gradients are reduced over every data- and context-parallel GPU.
    dp_link = group_link(links, dp * c, per_server=max(1, links.chips_per_server // (t * p)))
    # A mixture of experts spreads its experts over ep of the data-parallel GPUs (expert
    # parallelism; by default ep = min(experts, dp)): each expert's gradients are reduced
    # only among its dp / ep copies, and tokens travel to their experts and back by
    # all-to-all (assumed overlapped with compute, as DeepSeek-V3's DualPipe does).
    held_params = gpu_params(m, split, ep)
    grad_bytes = held_params * grad_bytes_per_param
    if adapter is not None:
        grad_bytes = adapter.trainable_params * grad_bytes_per_param
    a2a_mb = 0.0
    if ep > 1:
        ep_link = group_link(links, ep, per_server=max(1, links.chips_per_server // (t * p)))
        a2a_mb = 4 * (m.layers - m.dense_layers) * split.layer_share * all_to_all_seconds(
            tokens_gpu * m.experts_per_token * m.hidden * ACTIVATION_BYTES / t, ep_link)
    # Compute that runs beside a collective has fewer SMs: it takes 1 / (1 - share) as long.
    sm_share = collective_sm_share()
    slowed = sm_share.value / (1.0 - sm_share.value)
    # ZeRO-3 gathers the weights for every micro-batch only where it shards them for the
    # whole step (not under a pipeline: memory.sharding_stage owns that rule).
    gathers_every_micro_batch = sharding_stage(shard, p) == 3
    # Sharded gradients accumulate only as shards: each micro-batch's are reduce-scattered.
    reduces_every_micro_batch = sharding_stage(shard, p) == 2 and dp * c > 1 and accum > 1
    reductions = accum if reduces_every_micro_batch else 1
    if gathers_every_micro_batch:
        comm_mb = (2 * all_gather_seconds(held_params * WEIGHT_BYTES, dp_link)
                   + reduce_scatter_seconds(grad_bytes, dp_link))
        dp_comm = accum * comm_mb
        dp_exposed = accum * max(0.0, comm_mb - compute_mb)
        contention_mb = slowed * min(comm_mb + a2a_mb + cp_comm_mb - cp_exposed_mb
                                     + tp_hidden_mb, compute_mb)
        contention_step = 0.0
        gather_exposed = 0.0
    else:
        reduce_mb, gather_s = all_reduce_seconds(grad_bytes, dp_link), 0.0
        if shard != "none":
            # The distributed optimizer: the gradients reduce-scattered, each rank stepping its
            # shard, then the updated 16-bit weights all-gathered. The gather cannot start
            # before the step: beside the next step's first forward pass, or after the step.
            reduce_mb = reduce_scatter_seconds(grad_bytes, dp_link)
            gather_s = all_gather_seconds(
                grad_bytes / grad_bytes_per_param * WEIGHT_BYTES, dp_link)
        reduce_s = reductions * reduce_mb
        dp_comm = reduce_s + gather_s
        hidden_gather = min(gather_s, compute_mb / 3.0) if param_gather == "overlapped" else 0.0
        hidden_reduce = min(reduce_mb, compute_mb * 2.0 / 3.0)
        hidden = reductions * hidden_reduce + hidden_gather
        gather_exposed = gather_s - hidden_gather
        dp_exposed = dp_comm - hidden - gather_exposed
        # A reduction every micro-batch runs beside that micro-batch's compute, with its other
        # collectives: together they cannot slow more than all of it.
        beside_mb = a2a_mb + cp_comm_mb - cp_exposed_mb + tp_hidden_mb + (
            hidden_reduce if reduces_every_micro_batch else 0.0)
        contention_mb = slowed * min(beside_mb, compute_mb)
        contention_step = slowed * (hidden_gather if reduces_every_micro_batch else hidden)
    stage_mb = compute_mb + tp_exposed_mb + p2p_mb + contention_mb + cp_exposed_mb
    compute_step = accum * compute_mb
    contention = accum * contention_mb + contention_step
    exposed = (accum * (tp_exposed_mb + p2p_mb + cp_exposed_mb) + dp_exposed + gather_exposed
               + contention)
    bubble = (p - 1) * stage_mb / v
    step = compute_step + exposed + bubble + optimizer_seconds
    comm = accum * (tp_comm_mb + a2a_mb + p2p_mb + cp_comm_mb) + dp_comm
    traffic = []
    if dp * c > 1:
        weights_gpu = held_params * WEIGHT_BYTES
        traffic.append(Traffic("data", dp_link.name, accum * (2 * weights_gpu + grad_bytes)
                               if gathers_every_micro_batch else reductions * grad_bytes,
                               dp_comm))
    if t > 1:
        traffic.append(Traffic("tensor", tp_link.name, 4 * split.most_layers * accum
                               * tokens_gpu * m.hidden * ACTIVATION_BYTES, accum * tp_comm_mb))
    if p > 1:
        traffic.append(Traffic("pipeline", pp_link.name, 2 * v * accum * tokens_gpu * m.hidden
                               * ACTIVATION_BYTES / t, accum * p2p_mb))
    if c > 1:
        traffic.append(Traffic("context", cp_link.name, 3 * split.most_layers * (c - 1)
                               * accum * kv_bytes, accum * cp_comm_mb))
    if ep > 1:
        traffic.append(Traffic("expert", ep_link.name, 4 * (m.layers - m.dense_layers)
                               * split.layer_share * accum * tokens_gpu * m.experts_per_token
                               * m.hidden * ACTIVATION_BYTES / t, accum * a2a_mb))

    basis = [*ops.basis,
             Basis("global batch (tokens per optimiser step)", global_tokens,
                   "given by the user" if batch_given else defaults.global_batch_source),
             grad_basis,
             Basis("overlap of the gradient reduction", 2.0 / 3.0, defaults.overlap_source)]
    if shard in ("zero1", "zero2") and dp * c > 1:
        basis.append(param_gather_basis(param_gather))
    if reduces_every_micro_batch:
        basis.append(Basis("ZeRO-2: the gradients reduce-scattered every micro-batch (each rank "
                           "keeps only its shard), each under that micro-batch's backward pass",
                           float(accum), sharded_gradients_source()))
    if shard == "zero3" and not gathers_every_micro_batch and dp * c > 1:
        basis.append(Basis("ZeRO-3 under a pipeline: each stage's weights gathered once a step "
                           "and its gradients reduce-scattered once, after the last "
                           "micro-batch", 1.0, zero3_under_pipeline_source()))
        basis.append(param_gather_basis(param_gather))
    if split.pipeline_split == "embedding-and-loss":
        basis.append(Basis(f"pipeline cut: {split.places} places ({m.layers} layers, the "
                           f"embedding and the loss) over {p} stages of {split.stage_layers}",
                           float(split.stage_layers), pipeline_split_source()))
    if contention:
        basis.append(sm_share)
    if g > 1:
        basis.append(Basis(f"data-parallel link: {dp_link.name}, bytes/s each way per GPU "
                           "after the collective efficiency", dp_link.bytes_per_s,
                           f"{links.source}; {links.latency_source}"))
    if ep > 1:
        basis.append(Basis("expert parallelism (experts spread over the data-parallel GPUs; "
                           "all-to-all overlapped with compute)", float(ep),
                           "DeepSeek-V3 Technical Report (arXiv 2412.19437), section 3.2: "
                           "expert parallelism 64 and DualPipe overlapping the all-to-all"))
    if c > 1:
        basis.append(Basis(f"context parallelism: each sequence over {c} GPUs, the keys and "
                           "values of the other chunks passed round a ring beside attention "
                           "(exposed where the exchange outlasts it)", float(c),
                           "Megatron-LM / Transformer Engine context parallelism (ring "
                           "attention with causal load balancing); Liu et al. 2023, 'Ring "
                           "Attention' (arXiv 2310.01889)"))
        basis.append(Basis(f"context-parallel link: {cp_link.name}, bytes/s each way per GPU "
                           "after the collective efficiency", cp_link.bytes_per_s, links.source))
    if t > 1 and tp_comm == "overlapped":
        basis.append(Basis("tensor-parallel all-reduces under the layers' GEMMs (each "
                           "direction's beside that direction's; what outlasts them is "
                           "exposed)", 1.0, tp_comm_overlap_source()))
    if t > 1:
        basis.append(Basis(f"tensor-parallel link: {tp_link.name}, bytes/s each way per GPU "
                           "after the collective efficiency", tp_link.bytes_per_s, links.source))
    if p > 1:
        basis.append(Basis("pipeline bubble, 1F1B schedule: (stages - 1) / (chunks x "
                           "micro-batches + stages - 1)", pipeline_bubble_fraction(p, accum * v),
                           "Narayanan et al. 2021 (arXiv 2104.04473), sections 2.2.1-2.2.2"))
        basis.append(Basis(f"pipeline link: {pp_link.name}, bytes/s each way per GPU after "
                           "the collective efficiency", pp_link.bytes_per_s, links.source))
    step_ops = [*repeated(ops.micro_batch, accum)]
    tp_name = ("tensor-parallel all-reduces (not hidden)" if tp_comm == "overlapped"
               else "tensor-parallel all-reduces")
    for name, seconds in ((tp_name, accum * tp_exposed_mb),
                          ("pipeline sends", accum * p2p_mb),
                          ("context-parallel K/V exchange (not hidden)", accum * cp_exposed_mb),
                          ("data-parallel gradient reduction (not hidden)", dp_exposed),
                          ("data-parallel weight gather (not hidden)", gather_exposed),
                          ("compute beside collectives (the SMs they take)", contention),
                          ("pipeline bubble", bubble)):
        if seconds > 0:
            step_ops.append(Op(name, seconds, "communication"))
    step_ops += ops.optimizer
    if fp8:
        basis.append(Basis("MFU of an fp8 run counted against the bf16 dense peak (FLOP/s), "
                           "so it compares with the same model's bf16 runs", peak,
                           "the engine's convention; MosaicML's llm-foundry benchmark tables "
                           "quote their fp8 runs against the fp8 peak instead, half the value"))
    model_flops_per_s_per_mfu = g * peak / per_token.model  # tokens/s at MFU = 1
    if mfu is not None:
        u = mfu
        tps = u * model_flops_per_s_per_mfu
        basis.insert(0, Basis("MFU given (used instead of the modelled efficiencies)", u,
                              "given by the user"))
        scale = tokens_step / tps / step
        step, compute_step, exposed, bubble, optimizer_seconds = (
            step * scale, compute_step * scale, exposed * scale, bubble * scale,
            optimizer_seconds * scale)
        step_ops = list(scaled(step_ops, scale))
    else:
        tps = tokens_step / step
        u = tps / model_flops_per_s_per_mfu
    return ExpectedTrain(
        mfu=u, seconds=d / tps, tokens_per_s=tps, bound_seconds=bound_seconds, step_seconds=step, tokens_per_step=tokens_step,
        accumulation=accum, communication_seconds_per_step=comm,
        exposed_communication_seconds_per_step=exposed, mfu_given=mfu is not None,
        basis=tuple(basis), pp=p, compute_seconds_per_step=compute_step,
        bubble_seconds_per_step=bubble, traffic=tuple(traffic),
        warnings=batch_warnings(batch, t * p), optimizer_seconds_per_step=optimizer_seconds,
        ops=tuple(step_ops), ep=ep, cp=c,
    )
