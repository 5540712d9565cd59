"""The expected speed of training: what a well-tuned Megatron-style stack reaches, beside the
bound (every FLOP at the raw dense peak, no communication).

One optimiser step trains ``global batch`` tokens (a sourced default) as ``accumulation``
micro-batches of ``micro_batch`` x ``seq_len`` tokens on each of the ``dp`` data-parallel
groups of ``tp`` tensor-parallel GPUs. Per micro-batch, per GPU:

- matmuls: compute.training_flops_per_token's matmul FLOPs (4/3 of them with full
  recomputation) x tokens / tp at the chip's measured matmul efficiency;
- attention: its attention FLOPs (recomputation included), halved for causal kernels, / tp,
  at FlashAttention's efficiency;
- both divided by the measured matmul share of a forward pass (norms, activations);
- tensor parallelism: four all-reduces per layer (two forward, two backward) of micro_batch x
  seq_len x hidden x 2 bytes, on the critical path.

Per step: the gradients (2 bytes per parameter / tp) are all-reduced over the data-parallel
group during the last micro-batch's backward pass (2/3 of its compute); only the excess is
exposed. ZeRO-3 instead all-gathers the weights twice and reduce-scatters the gradients every
micro-batch, overlapped with that micro-batch's compute. MFU = model FLOPs per token
(training_flops_per_token(...).model) x tokens/s / (GPUs x dense peak).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers import validate
from engine.numbers.catalog import as_hardware, as_model
from engine.numbers.catalog.efficiency import (
    Basis,
    attention_fraction,
    forward_matmul_share,
    matmul_fraction,
    training_defaults,
)
from engine.numbers.catalog.links import get_links
from engine.numbers.communication import (
    all_gather_seconds,
    all_reduce_seconds,
    all_to_all_seconds,
    group_link,
    reduce_scatter_seconds,
)
from engine.numbers.compute import training_flops_per_token
from engine.numbers.memory import RECOMPUTE, SHARDINGS
from engine.numbers.records import Record

ACTIVATION_BYTES = 2.0  # bf16 activations between tensor-parallel GPUs
WEIGHT_BYTES = 2.0  # ZeRO-3 gathers bf16 weights


@dataclass(frozen=True, slots=True)
class ExpectedTrain(Record):
    """Expected speed of a training run; ``basis`` lists every efficiency used.

    ``communication_seconds_per_step``: all the collectives of one step (0 on one GPU);
    ``exposed_communication_seconds_per_step``: the part not hidden behind compute.
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


def expected_train(model: object, hardware: object, *, tokens: object, gpus: object = 1,
                   tp: object = 1, sharding: object = "none", micro_batch: object = 1,
                   seq_len: object = 4096, recompute: object = "selective",
                   compute_format: str = "bf16", mfu: object = None) -> ExpectedTrain:
    """Expected MFU, time and tokens/s of training on ``tokens`` tokens.

    With ``mfu`` given, that MFU sets the speed (the basis says so) and only the
    communication figures are modelled. ``bound_seconds``: the same matmul and attention
    FLOPs at the raw dense peak, no communication.
    """
    m = as_model(model)
    hw = as_hardware(hardware)
    d = validate.number(tokens, "tokens", label="Training tokens", maximum=1e16)
    g = validate.integer(gpus, "gpus", label="GPU count", maximum=10_000_000)
    t = validate.integer(tp, "tp", label="Tensor-parallel size", maximum=1024)
    shard = validate.choice(sharding, "sharding", SHARDINGS)
    rec = validate.choice(recompute, "recompute", RECOMPUTE)
    mb = validate.integer(micro_batch, "micro_batch", label="Micro-batch", maximum=1_000_000)
    s = validate.integer(seq_len, "seq_len", label="Sequence length", maximum=10_000_000)
    dp = max(g // t, 1)
    peak, cf = hw.compute_peak(compute_format)
    defaults = training_defaults()
    tokens_mb = mb * s
    accum = max(1, -(-defaults.global_batch_tokens // (dp * tokens_mb)))
    tokens_step = accum * dp * tokens_mb

    f_mm = matmul_fraction(hw, cf)
    f_attn = attention_fraction()
    share = forward_matmul_share()
    # compute.training_flops_per_token owns the FLOPs; attention there is PaLM's count (every
    # token attends to the whole sequence), of which causal kernels do half.
    per_token = training_flops_per_token(m, s, rec)
    matmul_hw = per_token.matmul * (4.0 / 3.0 if rec == "full" else 1.0)
    matmul_flops = matmul_hw * tokens_mb / t
    attn_flops = (per_token.hardware - matmul_hw) / 2.0 * tokens_mb / t
    bound_seconds = d / (tokens_mb * dp) * (matmul_flops + attn_flops) / peak
    compute_mb = (matmul_flops / (peak * f_mm.value)
                  + attn_flops / (peak * f_attn.value)) / share.value

    links = get_links(hw.id)
    tp_link = group_link(links, t)
    tp_comm_mb = 4 * m.layers * all_reduce_seconds(tokens_mb * m.hidden * ACTIVATION_BYTES,
                                                   tp_link)
    dp_link = group_link(links, dp, per_server=max(1, links.chips_per_server // t))
    # A mixture of experts spreads its experts over the data-parallel GPUs (expert
    # parallelism, ep = min(experts, dp)): each expert's gradients are reduced only among its
    # dp / ep copies, and tokens travel to their experts and back by all-to-all (assumed
    # overlapped with compute, as DeepSeek-V3's DualPipe does).
    ep = min(m.experts, dp) if m.routed_params else 1
    grad_bytes = (m.params - m.routed_params + m.routed_params / ep) / t \
        * defaults.grad_bytes_per_param
    a2a_mb = 0.0
    if ep > 1:
        ep_link = group_link(links, ep, per_server=max(1, links.chips_per_server // t))
        a2a_mb = 4 * (m.layers - m.dense_layers) * all_to_all_seconds(
            tokens_mb * m.experts_per_token * m.hidden * ACTIVATION_BYTES / t, ep_link)
    if shard == "zero3":
        comm_mb = (2 * all_gather_seconds(m.params / t * WEIGHT_BYTES, dp_link)
                   + reduce_scatter_seconds(grad_bytes, dp_link))
        dp_comm = accum * comm_mb
        dp_exposed = accum * max(0.0, comm_mb - compute_mb)
    else:
        dp_comm = all_reduce_seconds(grad_bytes, dp_link)
        dp_exposed = max(0.0, dp_comm - compute_mb * 2.0 / 3.0)
    step = accum * (compute_mb + tp_comm_mb) + dp_exposed
    comm = accum * (tp_comm_mb + a2a_mb) + dp_comm
    exposed = accum * tp_comm_mb + dp_exposed

    basis = [f_mm, f_attn, share,
             Basis("global batch (tokens per optimiser step)", float(defaults.global_batch_tokens),
                   defaults.global_batch_source),
             Basis("gradient bytes per parameter", defaults.grad_bytes_per_param,
                   defaults.grad_bytes_source),
             Basis("overlap of the gradient reduction", 2.0 / 3.0, defaults.overlap_source)]
    if g > 1:
        basis.append(Basis(f"data-parallel link: {dp_link.name}, bytes/s each way per GPU "
                           "after the collective efficiency", dp_link.bytes_per_s,
                           f"{links.source}; {links.latency_source}"))
    if ep > 1:
        basis.append(Basis("expert parallelism (experts spread over the data-parallel GPUs; "
                           "all-to-all overlapped with compute)", float(ep),
                           "DeepSeek-V3 Technical Report (arXiv 2412.19437), section 3.2: "
                           "expert parallelism 64 and DualPipe overlapping the all-to-all"))
    if t > 1:
        basis.append(Basis(f"tensor-parallel link: {tp_link.name}, bytes/s each way per GPU "
                           "after the collective efficiency", tp_link.bytes_per_s, links.source))
    model_flops_per_s_per_mfu = g * peak / per_token.model  # tokens/s at MFU = 1
    if mfu is not None:
        u = validate.fraction(mfu, "mfu", label="MFU")
        tps = u * model_flops_per_s_per_mfu
        basis.insert(0, Basis("MFU given (used instead of the modelled efficiencies)", u,
                              "given by the user"))
        step = tokens_step / tps
    else:
        tps = tokens_step / step
        u = tps / model_flops_per_s_per_mfu
    return ExpectedTrain(
        mfu=u, seconds=d / tps, tokens_per_s=tps, bound_seconds=bound_seconds, step_seconds=step, tokens_per_step=tokens_step,
        accumulation=accum, communication_seconds_per_step=comm,
        exposed_communication_seconds_per_step=exposed, mfu_given=mfu is not None,
        basis=tuple(basis),
    )
