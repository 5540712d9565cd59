"""Expert parallelism when serving a mixture of experts: whole experts on different GPUs of a
replica, tokens sent to them and back by two all-to-alls per MoE layer.

The layout (vLLM's ``--enable-expert-parallel``, SGLang's ``--ep-size`` with attention
tensor parallel): a replica of ``g`` tensor-parallel GPUs holds the routed experts in
``ep`` groups of E / ep experts, one group per ``g / ep`` GPUs, each expert split over those
``g / ep`` GPUs as tensor parallelism splits an MLP (``ep = g``: whole experts, E / g per
GPU). Attention, the shared experts and the dense layers stay split by tensor parallelism
over all ``g`` GPUs, with their two all-reduces per layer (the routed experts' outputs come
back by the combine and are summed with the shared expert's in the MoE layer's
all-reduce). So each GPU holds 1 / g of every weight, as without expert parallelism, and the
KV cache as attention's tensor parallelism holds it: the memory per GPU is unchanged.

A step of ``tokens`` tokens then adds, per MoE layer:

- **dispatch**: each of the ``ep`` groups sends its 1 / ep share of the tokens, each token's
  k routed copies of ``hidden`` numbers, to the groups owning those experts; in fp8 when the
  matmuls run in fp8 (as DeepEP dispatches for DeepSeek-V3's fp8 GEMMs), else in the bf16
  activations;
- **combine**: the same copies back, in bf16;
- each an all-to-all over the link between the ``ep`` groups
  (:func:`engine.numbers.communication.all_to_all_seconds`: (n-1)/n of a chip's bytes at
  the collective bandwidth, plus NCCL's base and per-step latencies from data/links.toml).
  A group that spans servers is priced over each GPU's own network port (an all-to-all has
  every GPU send at once, so the ring's m ports in parallel do not apply). No overlap with
  compute is assumed (SGLang's two-batch overlap is not modelled).

And the busiest group sets the step: the routed copies reaching one group are counted as
Poisson(tokens k / ep) (uniform routing, as :mod:`engine.numbers.moe_ops` counts one
expert's), the expected largest of ep such counts (:func:`busiest_group_copies`); that
group reads the weights of the distinct experts those copies reach,
(E / ep)(1 - (1 - ep / E)^copies). The bound keeps the balanced reading (each group reaching
its mean share, which is the tensor-parallel bytes) and no communication.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from engine.numbers.catalog import HardwareSpec, ModelSpec
from engine.numbers.communication import (
    ACTIVATION_BYTES,
    GroupLink,
    all_to_all_seconds,
    group_link,
)
from engine.numbers.errors import EngineError
from engine.numbers.moe_ops import poisson_expected_max
from engine.numbers.records import Record
from engine.numbers.serving import gathered_table_params, routed_share_touched

FP8_DISPATCH_BYTES = 1.0


def check_expert_parallel(model: ModelSpec, ep: int, replica_gpus: int) -> int:
    """``ep`` if a replica of ``replica_gpus`` GPUs can hold ``model``'s routed experts in
    ``ep`` groups, else EngineError naming ``ep``: the model must be a mixture of experts,
    ``ep`` must divide its experts and the replica's GPUs (so no more than them)."""
    if ep == 1:
        return ep
    if not model.routed_params:
        raise EngineError(f"Expert parallelism spreads a mixture's experts over GPUs; {model.name} "
                          "is a dense model: leave the expert-parallel size empty.", "ep")
    if ep > replica_gpus:
        raise EngineError(f"Expert parallel size ({ep}) cannot exceed the GPUs of a replica "
                          f"({replica_gpus}): each group of experts needs its own GPUs.", "ep")
    if model.experts % ep:
        raise EngineError(f"{model.name} has {model.experts} routed experts, which {ep} GPUs "
                          "cannot share evenly: the expert-parallel size must divide them.",
                          "ep")
    if replica_gpus % ep:
        raise EngineError(f"Expert parallel size ({ep}) must divide the GPUs of a replica "
                          f"({replica_gpus}): each group of experts spans the same GPUs.", "ep")
    return ep


@lru_cache(maxsize=4096)
def busiest_group_copies(experts: int, experts_per_token: int, ep: int, tokens: int) -> float:
    """Expected routed copies the busiest of ``ep`` expert groups receives when ``tokens``
    tokens each pick ``experts_per_token`` of ``experts`` experts uniformly: the expected
    largest of ep Poisson(tokens k / ep) counts, never more than each token's copies that
    can land in one group (min(k, E / ep) per token). tokens k for one group."""
    if ep <= 1:
        return float(tokens * experts_per_token)
    most = tokens * min(experts_per_token, experts // ep)
    return min(float(most), poisson_expected_max(ep, tokens * experts_per_token / ep))


def busiest_group_experts(model: ModelSpec, ep: int, tokens: int) -> float:
    """Expected distinct experts of the busiest group (of E / ep) its copies reach:
    (E / ep)(1 - (1 - ep / E)^copies); the whole model's :func:`experts_touched` at ep 1."""
    if ep <= 1:
        return model.experts * routed_share_touched(model, tokens)
    per_group = model.experts // ep
    copies = busiest_group_copies(model.experts, model.experts_per_token, ep, tokens)
    missed: float = (1.0 - 1.0 / per_group) ** copies
    return per_group * (1.0 - missed)


def expected_weight_bytes(model: ModelSpec, bytes_per_number: float, tokens: int, ep: int,
                          gathered_bytes: float) -> float:
    """Weight bytes a step of ``tokens`` tokens reads, counted as the whole replica's so that
    / (GPUs x bandwidth) gives the busiest GPU's time: the streamed weights other than the
    routed experts, plus ep x the busiest group's reached experts' bytes, plus
    ``gathered_bytes`` (the lookups' rows)."""
    streamed = model.params - gathered_table_params(model) - model.routed_params
    per_expert = model.routed_params / model.experts
    routed = ep * busiest_group_experts(model, ep, tokens) * per_expert
    return (streamed + routed) * bytes_per_number + gathered_bytes


def dispatch_bytes_per_number(compute_format: str) -> float:
    """Bytes a dispatched activation takes: fp8 when the matmuls run in fp8, else bf16."""
    return FP8_DISPATCH_BYTES if compute_format == "fp8" else ACTIVATION_BYTES


def ep_link(hardware: HardwareSpec, ep: int) -> GroupLink:
    """The link between ``ep`` expert groups: NVLink (the scale-up link) inside a server;
    across servers each GPU's own network port (see the module)."""
    links = hardware.link_spec()
    if ep > links.chips_per_server:
        return group_link(links, ep, per_server=1)
    return group_link(links, ep)


@dataclass(frozen=True, slots=True)
class ExpertParallelStep(Record):
    """Expert parallelism's share of one step of ``tokens`` tokens on a replica: ``ep``
    groups of ``experts_per_gpu`` experts, each GPU holding its group's experts (whole when ep
    is the replica's GPUs, else a 1 / (GPUs / ep) slice of each);
    per MoE layer, each group's ``dispatch_bytes_per_gpu`` and ``combine_bytes_per_gpu``
    (its share of the tokens' routed copies, the dispatch in ``dispatch_format``),
    ``all_to_all_seconds_per_layer`` (dispatch and combine together) over ``link``;
    ``all_to_all_seconds`` over the ``moe_layers``; ``busiest_group_copies`` and
    ``busiest_group_experts``: the routed copies and distinct experts of the busiest group."""

    ep: int
    tokens: int
    experts_per_gpu: int
    moe_layers: int
    dispatch_format: str
    dispatch_bytes_per_gpu: float
    combine_bytes_per_gpu: float
    all_to_all_seconds_per_layer: float
    all_to_all_seconds: float
    busiest_group_copies: float
    busiest_group_experts: float
    link: str


def expert_parallel_step(model: ModelSpec, hardware: HardwareSpec, tokens: int, ep: int,
                         replica_gpus: int, compute_format: str) -> ExpertParallelStep:
    """What expert parallelism over ``ep`` groups of a replica of ``replica_gpus`` GPUs adds
    to a step of ``tokens`` tokens (the module's rule). ep 1: no all-to-alls."""
    m = model
    moe_layers = m.layers - m.dense_layers
    share = tokens / ep * m.experts_per_token * m.hidden
    dispatch_b = dispatch_bytes_per_number(compute_format)
    dispatch = share * dispatch_b
    combine = share * ACTIVATION_BYTES
    link = ep_link(hardware, ep)
    per_layer = all_to_all_seconds(dispatch, link) + all_to_all_seconds(combine, link)
    return ExpertParallelStep(
        ep=ep, tokens=tokens,
        experts_per_gpu=m.experts // ep,
        moe_layers=moe_layers, dispatch_format="fp8" if dispatch_b == 1.0 else "bf16",
        dispatch_bytes_per_gpu=dispatch, combine_bytes_per_gpu=combine,
        all_to_all_seconds_per_layer=per_layer,
        all_to_all_seconds=0.0 if ep <= 1 else moe_layers * per_layer,
        busiest_group_copies=busiest_group_copies(m.experts, m.experts_per_token, ep, tokens),
        busiest_group_experts=busiest_group_experts(m, ep, tokens), link=link.name)


def expert_tensor_parallel(replica_gpus: int, ep: int) -> int:
    """GPUs each routed expert is split over: the replica's GPUs / ep."""
    return max(1, replica_gpus // ep)
