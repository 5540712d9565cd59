"""Serving with layers left in host memory (llama.cpp's ``-ngl N``: N layers on the GPU).

The model chosen here: the offloaded layers' weights are read from host memory over the
chip's host link once per decode step, the GPU running every layer, as vLLM's
``--cpu-offload-gb`` does ("part of the model is loaded from CPU memory to GPU memory on the
fly in each model forward pass", vLLM engine arguments). A decode step's weight reads then
take GPU layers' bytes / HBM bandwidth + offloaded layers' bytes / host-link bandwidth (the
bound: datasheet bandwidths, no overlap assumed beyond that sum). llama.cpp runs the
offloaded layers on the CPU instead, at the host's memory bandwidth; that is not modelled.

Host links per direction, x16: PCIe Gen3 8 GT/s, Gen4 16, Gen5 32 GT/s a lane with 128b/130b
encoding: 15.75, 31.5 and 63.0 GB/s (PCI-SIG base specifications 3.0-5.0). The link's
generation comes from the catalogue entry's interconnect text ("PCIe Gen4 x16"), else from
the board the SXM parts sit on (NVIDIA HGX A100: Gen4; HGX H100/H200/B200: Gen5, NVIDIA HGX
platform pages). A chip with unified memory (kind "soc") has no host copy to offload to.
The embeddings and the output head stay on the GPU. Bytes; GB = 10^9.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.numbers.architecture import shape_components
from engine.numbers.catalog import HardwareSpec, ModelSpec
from engine.numbers.errors import EngineError
from engine.numbers.formats import FormatId, get_format

PCIE_X16_BYTES_PER_S = {3: 15.75e9, 4: 31.5e9, 5: 63.0e9}
# SXM and OAM parts whose catalogue text names no PCIe: the generation of their board's host link.
BOARD_PCIE_GEN = {"a100-40gb": 4, "a100-80gb": 4, "h100-sxm": 5, "h200": 5, "h800": 5,
                  "h20": 5, "h100-hbm2e-500w": 5, "b200": 5, "b300": 5}
_PCIE = re.compile(r"PCIe Gen\s?([345])")


def host_link_bytes_per_s(hardware: HardwareSpec) -> float:
    """Bytes per second one way between ``hardware`` and its host's memory (PCIe x16)."""
    hw = hardware
    if hw.kind == "soc":
        raise EngineError(f"{hw.name} has unified memory: the host's memory is the chip's, so "
                          "there is nothing to offload to.", "gpu_layers")
    found = _PCIE.search(hw.interconnect)
    gen = int(found.group(1)) if found else BOARD_PCIE_GEN.get(hw.id)
    if gen is None:
        raise EngineError(f"The catalogue does not say how {hw.name} reaches its host's "
                          "memory, so offloading is not planned on it.", "gpu_layers")
    return PCIE_X16_BYTES_PER_S[gen]


@dataclass(frozen=True, slots=True)
class Offload:
    """``gpu_layers`` of ``layers`` on the GPU, the rest's ``host_bytes`` read over a link of
    ``host_link_bytes_per_s`` each decode step; ``gpu_weight_bytes`` stay in HBM."""

    gpu_layers: int
    layers: int
    gpu_weight_bytes: float
    host_bytes: float
    host_link_bytes_per_s: float
    hbm_bytes_per_s: float

    @property
    def weight_read_seconds(self) -> float:
        """Bound: one decode step's weight reads, HBM's part plus the host link's part."""
        return (self.gpu_weight_bytes / self.hbm_bytes_per_s
                + self.host_bytes / self.host_link_bytes_per_s)


def offload(model: ModelSpec, hardware: HardwareSpec, gpu_layers: int,
            weight_format: FormatId = "bf16") -> Offload:
    """The split of ``model``'s weights in ``weight_format`` with ``gpu_layers`` on the GPU
    (0 to the model's layers, checked where it enters)."""
    m, hw = model, hardware
    link = host_link_bytes_per_s(hw)
    per_number = get_format(weight_format).bytes_per_number
    layer_params = sum(c.params for c in shape_components(m) if c.scope != "model")
    per_layer = layer_params / m.layers * per_number
    host = (m.layers - gpu_layers) * per_layer
    return Offload(gpu_layers, m.layers, m.params * per_number - host, host, link,
                   hw.bandwidth_bytes_per_s)
