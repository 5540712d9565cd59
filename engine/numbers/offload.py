"""Serving with layers left in host memory (llama.cpp's ``-ngl N``: N layers on the GPU).

The model: the GPU runs every layer; the weights of the layers left in host memory stay
there, pinned, and the GPU reads them over the chip's host link as it runs those layers,
every pass (vLLM's ``--cpu-offload-gb``: "part of the model is loaded from CPU memory to GPU
memory on the fly in each model forward pass", vLLM engine arguments; it maps the pinned
host memory into the GPU's address space, so a kernel reads it directly). The link is the
chip's host link in the catalogue (:meth:`HardwareSpec.link_spec`, links.toml's
``host_link``: PCIe x16 of the card's generation, NVLink-C2C on a GH200), at its datasheet
rate each way. llama.cpp runs its offloaded layers on the CPU instead, at the host's memory
bandwidth and the CPU's FLOPs; that is not modelled here.

So a pass's weight reads take (bytes in HBM) / HBM bandwidth + (bytes in host memory) / link
bandwidth: the layers run in order, each reading its weights from where they are, one after
the other. Both the bound and the expected times count it so (engine.numbers.serving,
engine.numbers.expected_serving): the bound at the datasheet bandwidths with the maths
overlapped, the expected value with the HBM part at its measured efficiency and the link at
its datasheet rate (no measured host-read efficiency is in the catalogue, so the expected
penalty is itself a best case of the link). A mixture of experts reads only the experts its
tokens reach, from wherever they are.

The layers left on the host are an average layer each (the model's layer weights / its
layer count: a mixture's dense first layers are not told apart); the embeddings, the output
head and the final norm stay on the GPU; a replica's GPUs share the offloaded layers
evenly, each over its own link. A chip with unified memory (kind "soc") has no host copy to
offload to. Bytes; GB = 10^9.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers.architecture import shape_components
from engine.numbers.catalog import HardwareSpec, ModelSpec
from engine.numbers.errors import EngineError
from engine.numbers.formats import FormatId, get_format

FIELD = "gpu_layers"


@dataclass(frozen=True, slots=True)
class HostLink:
    """How a chip reaches its host's memory: ``name``, ``bytes_per_s`` each way, ``source``."""

    name: str
    bytes_per_s: float
    source: str


def host_link(hardware: HardwareSpec) -> HostLink:
    """The link ``hardware`` reads host memory over, from its link spec; EngineError (field
    ``gpu_layers``) for a chip with unified memory or one whose host link is not given."""
    hw = hardware
    if hw.kind == "soc":
        raise EngineError(f"{hw.name} has unified memory: the host's memory is the chip's, so "
                          "there is nothing to offload to; leave the layers on the GPU empty.",
                          FIELD)
    links = hw.link_spec()
    if not links.host_link_bytes_per_s > 0:
        raise EngineError(f"The catalogue does not say how {hw.name} reaches its host's "
                          "memory, so offloading is not planned on it; leave the layers on "
                          "the GPU empty.", FIELD)
    return HostLink(links.host_link, links.host_link_bytes_per_s, links.host_link_source)


def layer_params(model: ModelSpec) -> int:
    """Parameters of all the model's layers together (everything but the embeddings, the
    output head and the final norm)."""
    total = 0
    for c in shape_components(model):
        if c.scope != "model":
            total += c.params
    return total


@dataclass(frozen=True, slots=True)
class Offload:
    """``gpu_layers`` of the model's ``layers`` on the GPUs, the others in host memory, read
    over ``link`` by each of a replica's ``gpus`` GPUs (each holds 1/gpus of them).

    ``host_weight_bytes``: the weights one replica keeps in host memory, in the serving
    format (bytes); ``layer_params``: the parameters of all layers (see :func:`layer_params`).
    """

    gpu_layers: int
    layers: int
    gpus: int
    host_weight_bytes: float
    layer_params: int
    link: HostLink

    @property
    def host_layers(self) -> int:
        return self.layers - self.gpu_layers

    @property
    def host_share(self) -> float:
        """The share of the layers (and of their weight reads) left in host memory."""
        return self.host_layers / self.layers

    @property
    def host_weight_bytes_per_gpu(self) -> float:
        """Host memory each GPU's share of the offloaded layers takes (bytes)."""
        return self.host_weight_bytes / self.gpus

    def link_seconds(self, host_bytes_read: float, gpus: int) -> float:
        """Seconds to read ``host_bytes_read`` (a pass's, all ``gpus`` GPUs together) over
        the GPUs' host links side by side."""
        return host_bytes_read / (gpus * self.link.bytes_per_s)


def offload(model: ModelSpec, hardware: HardwareSpec, gpu_layers: int,
            weight_format: FormatId = "bf16", gpus: int = 1) -> Offload | None:
    """The split of ``model``'s weights in ``weight_format`` with ``gpu_layers`` of its
    layers on each replica of ``gpus`` GPUs (0 to the model's layers: checked where it
    enters), or None when every layer is on the GPU (nothing is offloaded, on any chip)."""
    m, hw = model, hardware
    if gpu_layers >= m.layers:
        return None
    link = host_link(hw)
    params = layer_params(m)
    host = params / m.layers * (m.layers - gpu_layers) * get_format(weight_format).bytes_per_number
    return Offload(gpu_layers, m.layers, gpus, host, params, link)


def check_gpu_layers(model: ModelSpec, gpu_layers: int) -> int:
    """``gpu_layers`` (a checked count) within ``model``'s layers; EngineError otherwise."""
    if gpu_layers > model.layers:
        raise EngineError(f"Layers on the GPU: {model.name} has {model.layers:,} layers; give "
                          f"0 to {model.layers:,} (empty: all of them).", FIELD)
    return gpu_layers
