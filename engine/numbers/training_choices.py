"""The choices a training set-up is made of, each a ``Literal`` type and its tuple.

The type is declared once and the tuple (the options a field offers, the list a refusal
names) is derived from it, so the two cannot drift. :func:`checked` turns a raw value
(a reader's text, an author's keyword) into one of them, or refuses it naming the field.
"""

from __future__ import annotations

from typing import Literal, TypeVar, get_args

from engine.numbers import validate

# ZeRO stages: 1 shards the optimiser states, 2 the gradients too, 3 the weights too.
Sharding = Literal["none", "zero1", "zero2", "zero3"]
SHARDINGS: tuple[Sharding, ...] = get_args(Sharding)
Optimizer = Literal["adam", "adamw", "adam-8bit", "sgd-momentum", "sgd"]
OPTIMIZERS: tuple[Optimizer, ...] = get_args(Optimizer)
# Bytes per parameter of weights, gradients and master weights (optimiser states apart);
# fp8 is mixed-16's state plus the fp8 weight copies Transformer Engine keeps, and also says
# how the layers' matmuls run (in fp8).
Convention = Literal["mixed-16", "mixed-18", "mixed-20", "fp32", "fp8"]
CONVENTIONS: tuple[Convention, ...] = get_args(Convention)
# The conventions that are only a memory layout (every matmul in 16 or 32 bits): the choices
# the memory tables and widgets offer.
MEMORY_CONVENTIONS: tuple[Convention, ...] = ("mixed-16", "mixed-18", "mixed-20", "fp32")
# What the backward pass computes again instead of keeping: 'selective' as Megatron-LM
# defines it (Korthikanti et al. 2022: the attention core), 'selective-op' as torchtitan's
# per-op policy does (attention's output and every other matmul kept, the rest recomputed).
Recompute = Literal["none", "selective", "selective-op", "full"]
RECOMPUTE: tuple[Recompute, ...] = get_args(Recompute)
# The kernels a stack runs its memory-bound ops with: 'fused' (one kernel per op:
# Transformer Engine, torch.compile, Apex), 'eager' (PyTorch's eager ops as torchtitan's
# Llama code composes them), 'eager-fused-norm' (the same with a fused RMSNorm kernel).
Kernels = Literal["fused", "eager", "eager-fused-norm"]
KERNELS: tuple[Kernels, ...] = get_args(Kernels)
# The attention kernel a stack trains with: 'fa2' (FlashAttention-2: PyTorch SDPA's flash
# backend, Megatron-LM, torchtitan) or 'triton' (the Triton port of FlashAttention that
# LLM Foundry's MPT ran as attn_impl 'triton' before FlashAttention-2) or 'cudnn' (cuDNN's
# fused attention, which Transformer Engine picks on Hopper: Megatron-Core, NeMo).
AttentionKernel = Literal["fa2", "triton", "cudnn"]
ATTENTION_KERNELS: tuple[AttentionKernel, ...] = get_args(AttentionKernel)

# How a stack runs tensor parallelism's collectives: 'exposed', each on the critical path
# (Megatron-LM's default); 'overlapped', split into chunks sent under the layer's GEMMs
# (Megatron-LM's --tp-comm-overlap with Transformer Engine, torchtitan's async TP).
TpComm = Literal["exposed", "overlapped"]
TP_COMMS: tuple[TpComm, ...] = get_args(TpComm)
# Where ZeRO-1/2's all-gather of the updated weights runs: 'overlapped', beside the next
# step's first forward pass (Megatron-LM's --overlap-param-gather); 'after-step', at the end
# of the optimiser step, exposed (DeepSpeed's ZeRO-1/2).
ParamGather = Literal["overlapped", "after-step"]
PARAM_GATHERS: tuple[ParamGather, ...] = get_args(ParamGather)
# The format the gradients cross the data-parallel network in: 'bf16' (2 bytes each: NeMo's
# launcher and NVIDIA's FP8 recipes) or 'fp32' (4 bytes: Megatron-LM's and torchtitan's
# defaults for BF16 training).
GradReduce = Literal["bf16", "fp32"]
GRAD_REDUCES: tuple[GradReduce, ...] = get_args(GradReduce)
# How a pipeline's stages share the model: 'layers', the transformer layers cut evenly with
# the embedding and the output layer riding on the first and last stages; or
# 'embedding-and-loss', each of those two taking one layer's place in the cut (Megatron-LM's
# --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split; the
# Llama 3 405B run, whose first chunk held only the embedding and last only the loss).
PipelineSplit = Literal["layers", "embedding-and-loss"]
PIPELINE_SPLITS: tuple[PipelineSplit, ...] = get_args(PipelineSplit)

C = TypeVar("C", bound=str)


def checked(value: object, field: str, options: tuple[C, ...], label: str | None = None) -> C:
    """``value`` as one of ``options``; EngineError 'Unknown {label} ...; choose one of: ...'
    naming ``field`` otherwise (the message of :func:`engine.numbers.validate.choice`)."""
    for option in options:
        if value == option and isinstance(value, str):
            return option
    validate.choice(value, field, options, label=label)
    raise AssertionError("unreachable: validate.choice refuses what is not an option")
