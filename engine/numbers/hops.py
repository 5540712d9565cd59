"""The hops a byte can take from a GPU, fastest first: its own memory, the links inside its
server, PCIe to the host, the network to other servers. Each with its bandwidth per GPU and
how many times slower than the GPU's memory it is: the fourth number beside FLOPs, capacity
and memory bandwidth.

Memory bandwidth is the datasheet's figure (reads and writes together); link figures are
EACH WAY per GPU (data/links.toml), what one GPU can send while it also receives as much.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers.catalog import HardwareSpec
from engine.numbers.records import Record

HOP_KINDS = ("memory", "scale_up", "pcie", "scale_out")


@dataclass(frozen=True, slots=True)
class Hop(Record):
    """One hop: ``kind`` (one of HOP_KINDS), what it is, bytes/s per GPU, and memory
    bandwidth / this bandwidth (1 for memory itself)."""

    kind: str
    name: str
    bytes_per_s: float
    times_slower: float


def hops(hardware: HardwareSpec) -> tuple[Hop, ...]:
    """The hops of ``hardware``, fastest first. PCIe appears when the catalogue gives it
    (cards whose bridges join pairs only); for PCIe-only cards it is the scale-up hop."""
    hw = hardware
    links = hw.link_spec()
    mem = hw.bandwidth_bytes_per_s
    found = [("memory", f"{hw.memory_type} memory", mem),
             ("scale_up", links.scale_up, links.scale_up_bytes_per_s)]
    if links.pcie_bytes_per_s > 0:
        found.append(("pcie", "PCIe to the other cards", links.pcie_bytes_per_s))
    found.append(("scale_out", links.scale_out, links.scale_out_bytes_per_s))
    return tuple(Hop(kind, name, bw, mem / bw) for kind, name, bw in found)
