"""Layers left in host memory (engine.numbers.offload), said: where their weights are, what
reading them over the host link costs, and the model behind the figures."""

from __future__ import annotations

from engine.numbers.memory import ServingMemory
from engine.numbers.offload import Offload
from engine.numbers.plan import Plan
from engine.words.format import format_bandwidth, format_GB, format_seconds

OFFLOAD_MODEL = (
    "Layers in host memory: the GPU runs every layer and reads the weights of the layers "
    "left in host memory over its host link each pass, at the link's datasheet rate (vLLM's "
    "--cpu-offload-gb does so); a pass's weight reads take HBM bytes / HBM bandwidth + host "
    "bytes / link bandwidth, in the bound and the expected times alike. An offloaded layer is "
    "an average layer; the embeddings and the output head stay on the GPU. llama.cpp runs "
    "offloaded layers on the CPU instead (not modelled)."
)


def _layers(o: Offload) -> str:
    return f"{o.host_layers:,} of {o.layers:,} layers"


def offload_memory_words(mem: ServingMemory) -> str:
    """The memory assumption of a plan with layers in host memory ('' without)."""
    if not mem.host_weight_bytes > 0:
        return ""
    per = f", {format_GB(mem.host_weight_bytes / mem.gpus)} for each GPU's share" \
        if mem.gpus > 1 else ""
    return (f"Weights in host memory: {format_GB(mem.host_weight_bytes)} of them stay in the "
            f"host's memory{per}, not in the GPU's; the weights part above is what remains "
            "on the GPU.")


def offload_fits_words(p: Plan) -> str:
    """The sentence after 'Does it fit?' on where the offloaded layers are ('' without)."""
    o = p.serve.offload if p.serve is not None else None
    if o is None:
        return ""
    replicas = p.serve.replicas if p.serve is not None else 1
    copies = (f" ({format_GB(o.host_weight_bytes * replicas)} for {replicas:,} replicas)"
              if replicas > 1 else "")
    return (f" {_layers(o)} stay in host memory: {format_GB(o.host_weight_bytes)} of CPU "
            f"RAM{copies}, besides the GPU's own figure.")


def offload_speed_words(p: Plan) -> str:
    """The sentence after 'What limits its speed?' on the host link's share ('' without)."""
    s = p.serve
    if s is None or s.offload is None:
        return ""
    o = s.offload
    each = f" each way per GPU, {o.gpus:,} side by side" if o.gpus > 1 else " each way"
    return (f" With {_layers(o)} in host memory, every pass also reads their weights over "
            f"{o.link.name} at {format_bandwidth(o.link.bytes_per_s)}{each}: "
            f"{format_seconds(s.first_step.host_link_seconds)} of each decode step and "
            f"{format_seconds(s.prefill.host_link_seconds)} of the prefill, in the bound and "
            "the expected times alike.")
