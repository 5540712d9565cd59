"""A serving workload checked once, where it enters: plan()'s raw keywords become a
:class:`ServeRequest` of real types, which the typed arithmetic trusts.

The checks, in the order a reader meets their messages: the GPUs' split into replicas of
``serve_tp`` tensor-parallel GPUs, the batch, the number formats, the context, whether the
model splits over a replica's GPUs, and the request's prompt and answer lengths. Each limit
is its :class:`~engine.numbers.quantities.Quantity`'s; the layers kept on the GPU (when
given) are checked against the model's own layer count last.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers import quantities
from engine.numbers.architecture import check_tensor_parallel
from engine.numbers.catalog import HardwareSpec, ModelSpec
from engine.numbers.expert_parallel import check_expert_parallel
from engine.numbers.formats import FormatId, parse_format
from engine.numbers.offload import check_gpu_layers
from engine.numbers.rounding import ceil_div


@dataclass(frozen=True, slots=True)
class ServeRequest:
    """``replicas`` copies of ``model`` on ``tp`` tensor-parallel GPUs of ``hardware`` each,
    every copy holding ``batch`` requests of up to ``context_tokens`` in KV cache; the request
    followed reads ``prompt_tokens`` and writes ``output_tokens``. ``gpu_layers``: the
    layers each replica keeps on its GPUs, the others in host memory (None: every layer on
    the GPU, as an equal count does); ``ep``: the replica's routed experts in that many
    expert-parallel groups (1: split by tensor parallelism only)."""

    model: ModelSpec
    hardware: HardwareSpec
    tp: int
    replicas: int
    batch: int
    weight_format: FormatId
    kv_format: FormatId
    context_tokens: int
    prompt_tokens: int
    output_tokens: int
    gpu_layers: int | None = None
    ep: int = 1

    @property
    def gpus(self) -> int:
        """Every GPU of every replica."""
        return self.tp * self.replicas


def serve_request(model: ModelSpec, hardware: HardwareSpec, *, gpus: int, serve_tp: object,
                  batch: object, weight_format: object, kv_format: object,
                  context_tokens: object, prompt_tokens: object, output_tokens: object,
                  gpus_field: str = "gpus", gpu_layers: object = None,
                  ep: object = None) -> ServeRequest:
    """The checked request: ``gpus`` (already a checked GPU count) serve as gpus / tp replicas
    of ``serve_tp`` GPUs (None or '': one replica of all of them), the batch spread evenly
    over the replicas (rounded up). EngineError naming the field at fault otherwise: a GPU
    count the model cannot be split over names ``gpus_field``, the input it came from (the
    servers when they were given). ``ep`` (None or '': 1) must divide the model's experts
    and a replica's GPUs (:func:`~engine.numbers.expert_parallel.check_expert_parallel`)."""
    if serve_tp is None or serve_tp == "":
        tp = gpus
    else:
        tp = quantities.TENSOR_PARALLEL.check_integer(serve_tp, "tp", "Tensor-parallel size")
        quantities.check_multiple_of_tp(gpus, tp)
    replicas = gpus // tp
    total_batch = quantities.BATCH.check_integer(batch, "batch", "Batch")
    wf = parse_format(weight_format)
    kf = parse_format(kv_format)
    ctx = quantities.CONTEXT_TOKENS.check_integer(context_tokens, "context_tokens", "Context")
    check_tensor_parallel(model, tp, gpus_field if serve_tp is None or serve_tp == "" else "tp")
    ep_size = (1 if ep is None or ep == "" else check_expert_parallel(
        model, quantities.EXPERT_PARALLEL.check_integer(ep, "ep", "Expert parallel size"), tp))
    on_gpu = (None if gpu_layers is None or gpu_layers == "" else check_gpu_layers(
        model, quantities.GPU_LAYERS.check_integer(gpu_layers, "gpu_layers",
                                                   "Layers on the GPU")))
    return ServeRequest(
        model=model, hardware=hardware, tp=tp, replicas=replicas,
        batch=ceil_div(total_batch, replicas), weight_format=wf, kv_format=kf,
        context_tokens=ctx,
        prompt_tokens=quantities.PROMPT_TOKENS.check_integer(prompt_tokens, "prompt_tokens",
                                                             "Prompt length"),
        output_tokens=quantities.OUTPUT_TOKENS.check_integer(output_tokens, "output_tokens",
                                                             "Answer length"),
        gpu_layers=on_gpu, ep=ep_size,
    )
