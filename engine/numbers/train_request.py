"""A training request, checked once: plan()'s raw training keywords in, real types out.

:func:`check_train_request` parses every training input of :func:`engine.numbers.plan.plan`
(a number, or text as a reader typed it) against its :mod:`engine.numbers.quantities` record
or its choices (:mod:`engine.numbers.training_choices`), and refuses the first one out of range
with a message that names the field, states the range and why. Whether the inputs fit
together (a tensor-parallel size that divides the heads, stages no more than the layers) is
the arithmetic's own refusal (engine.numbers.parallelism.check_split).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers import quantities, validate
from engine.numbers.adapter_setup import ADAPTER_CHOICES, METHODS, PLAN_TARGETS, Method, Targets
from engine.numbers.training_choices import (
    ATTENTION_KERNELS,
    CONVENTIONS,
    GRAD_REDUCES,
    KERNELS,
    OPTIMIZERS,
    PARAM_GATHERS,
    PIPELINE_SPLITS,
    RECOMPUTE,
    SHARDINGS,
    TP_COMMS,
    AttentionKernel,
    Convention,
    GradReduce,
    Kernels,
    Optimizer,
    ParamGather,
    PipelineSplit,
    Recompute,
    Sharding,
    TpComm,
    checked,
)


@dataclass(frozen=True, slots=True)
class TrainRequest:
    """A checked training set-up: ``gpus`` = data x ``tp`` x ``pp`` x ``cp`` GPUs (``cp``
    context-parallel GPUs share each sequence), ``ep`` expert-parallel GPUs (None: the
    default rule, engine.numbers.parallelism.default_expert_parallel), ``micro_batch``
    sequences of ``seq_len`` tokens per step of each data-parallel rank, ``interleave`` chunks
    of layers per GPU. ``tokens``, ``mfu``, ``target_days`` (days) and
    ``global_batch_tokens`` are None when not given (the plan then uses its defaults).
    ``adapter``: fine-tuning with LoRA or QLoRA adapters of ``rank`` on ``targets`` (None:
    full training; rank and targets then unused). ``kernels``: the stack's memory-bound
    kernels (training_choices.Kernels); ``attention``: its attention kernel
    (training_choices.AttentionKernel); ``tp_comm``: how its tensor-parallel collectives run
    (training_choices.TpComm); ``param_gather``: where ZeRO-1/2's gather of the updated
    weights runs (training_choices.ParamGather); ``grad_reduce``: the gradients' format on
    the data-parallel network (training_choices.GradReduce); ``pipeline_split``: how the
    pipeline's stages share the model (training_choices.PipelineSplit)."""

    gpus: int
    tp: int
    pp: int
    sharding: Sharding
    optimizer: Optimizer
    convention: Convention
    micro_batch: int
    seq_len: int
    recompute: Recompute
    interleave: int
    tokens: float | None
    mfu: float | None
    target_days: float | None
    global_batch_tokens: float | None
    ep: int | None = None
    cp: int = 1
    adapter: Method | None = None
    rank: int = 16
    targets: Targets = "all-linear"
    kernels: Kernels = "fused"
    attention: AttentionKernel = "fa2"
    tp_comm: TpComm = "exposed"
    param_gather: ParamGather = "overlapped"
    grad_reduce: GradReduce = "bf16"
    pipeline_split: PipelineSplit = "layers"


def _given(value: object) -> bool:
    return value is not None and value != ""


def check_train_request(*, gpus: int, sharding: object, tp: object, optimizer: object,
                        convention: object, micro_batch: object, seq_len: object,
                        recompute: object, pp: object, tokens: object, mfu: object,
                        target_days: object, global_batch_tokens: object,
                        interleave: object, ep: object = None, cp: object = 1,
                        adapter: object = "none", rank: object = 16, targets: object = "all",
                        kernels: object = "fused", attention: object = "fa2",
                        tp_comm: object = "exposed",
                        param_gather: object = "overlapped",
                        grad_reduce: object = "bf16",
                        pipeline_split: object = "layers") -> TrainRequest:
    """plan()'s training keywords, each checked against its quantity or its choices
    (``gpus`` comes checked: plan() counts the servers' GPUs first)."""
    q = quantities
    method = validate.choice("none" if adapter is None else adapter, "adapter",
                             ADAPTER_CHOICES)
    target = validate.choice(targets, "targets", tuple(PLAN_TARGETS))
    return TrainRequest(
        gpus=gpus,
        tp=q.TENSOR_PARALLEL.check_integer(tp, "tp", "Tensor-parallel size"),
        pp=q.PIPELINE_STAGES.check_integer(pp, "pp", "Pipeline stages"),
        sharding=checked(sharding, "sharding", SHARDINGS),
        recompute=checked(recompute, "recompute", RECOMPUTE),
        micro_batch=q.MICRO_BATCH.check_integer(micro_batch, "micro_batch", "Micro-batch"),
        seq_len=q.SEQ_LEN.check_integer(seq_len, "seq_len", "Sequence length"),
        optimizer=checked(optimizer, "optimizer", OPTIMIZERS),
        convention=checked(convention, "convention", CONVENTIONS),
        tokens=(q.TRAINING_TOKENS.check(tokens, "tokens", "Training tokens")
                if _given(tokens) else None),
        mfu=q.MFU.check(mfu, "mfu", "MFU") if _given(mfu) else None,
        target_days=(q.TARGET_DAYS.check(target_days, "target_days", "Target days")
                     if _given(target_days) else None),
        interleave=q.PIPELINE_CHUNKS.check_integer(interleave, "interleave",
                                                   "Pipeline chunks per GPU"),
        global_batch_tokens=(q.GLOBAL_BATCH_TOKENS.check(
            global_batch_tokens, "global_batch_tokens", "Global batch")
            if _given(global_batch_tokens) else None),
        ep=(q.EXPERT_PARALLEL.check_integer(ep, "ep", "Expert parallel size")
            if _given(ep) else None),
        cp=q.CONTEXT_PARALLEL.check_integer(cp, "cp", "Context parallel size"),
        adapter=next((m for m in METHODS if m == method), None),
        rank=q.LORA_RANK.check_integer(rank, "rank", "Adapter rank"),
        targets=PLAN_TARGETS[target],
        kernels=checked(kernels, "kernels", KERNELS),
        attention=checked(attention, "attention", ATTENTION_KERNELS),
        tp_comm=checked(tp_comm, "tp_comm", TP_COMMS),
        param_gather=checked(param_gather, "param_gather", PARAM_GATHERS),
        grad_reduce=checked(grad_reduce, "grad_reduce", GRAD_REDUCES),
        pipeline_split=checked(pipeline_split, "pipeline_split", PIPELINE_SPLITS),
    )
