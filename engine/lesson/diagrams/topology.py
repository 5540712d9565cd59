"""A server's topology as a picture: its GPUs, each with its own network card to other
servers, all on the scale-up fabric (NVSwitch on a DGX), and its CPUs with the RAM, reached
from the GPUs over PCIe. Counts from the system's catalogue entry, link names and bandwidths
(each way, per GPU) from the GPU's links (:meth:`HardwareSpec.link_spec`)."""

from __future__ import annotations

from engine.numbers.catalog import SystemSpec
from engine.numbers.units import GiB
from engine.render.svg import group, line, rect, svg, text
from engine.words.format import format_bandwidth

WIDTH = 300  # user units, as the layer diagram: whole on a 390 px phone at 12 px
LINE_H = 14
PAD = 2
SIDE = 12  # room on the left for the path from PCIe down to the CPUs
BOX = 26  # a box of one line
GAP = 10  # between rows, where the wires are


def _box(x: float, y: float, w: float, h: float, lines: tuple[str, ...], kind: str,
         part: str) -> str:
    shape = rect(x, y, w, h, rx=4, class_=f"diagram-{kind}")
    first = y + h / 2 + 4.5 - (len(lines) - 1) * LINE_H / 2
    labels = "".join(text(x + w / 2, first + i * LINE_H, words, anchor="middle")
                     for i, words in enumerate(lines))
    return group(shape + labels, data_part=part)


def _wire(x: float, y1: float, y2: float) -> str:
    return line(x, y1, x, y2, class_="diagram-line")


def topology_svg(server: SystemSpec) -> str:
    """``server``'s chips and links, top to bottom: the network, one card per GPU, PCIe
    (cards, GPUs and CPUs meet there), the GPUs, their scale-up fabric; the CPUs and RAM
    below, reached from PCIe by the path on the left."""
    links = server.gpu.link_spec()
    n = server.gpu_count
    left = PAD + SIDE
    inner = WIDTH - left - PAD
    cell = inner / n
    w = cell - 4
    centres = [left + i * cell + cell / 2 for i in range(n)]
    parts: list[str] = []
    y = 2.0
    parts.append(_box(left, y, inner, 40, (
        f"network: {n:,} cards, one per GPU,",
        f"{format_bandwidth(links.scale_out_bytes_per_s)} each way each"), "step", "network"))
    nic_y = y + 40 + GAP
    pcie_y = nic_y + BOX + GAP
    gpu_y = pcie_y + BOX + GAP
    fabric_y = gpu_y + BOX + GAP
    for i, centre in enumerate(centres):
        parts.append(_wire(centre, y + 40, nic_y) + _wire(centre, nic_y + BOX, pcie_y)
                     + _wire(centre, pcie_y + BOX, gpu_y) + _wire(centre, gpu_y + BOX, fabric_y))
        parts.append(_box(centre - w / 2, nic_y, w, BOX, ("NIC",), "add", f"nic-{i + 1}"))
        parts.append(_box(centre - w / 2, gpu_y, w, BOX, ("GPU",), "matrix", f"gpu-{i + 1}"))
    parts.append(_box(left, pcie_y, inner, BOX, ("PCIe: cards, GPUs and CPUs",), "step",
                      "pcie"))
    parts.append(_box(left, fabric_y, inner, 40, (
        links.scale_up,
        f"{format_bandwidth(links.scale_up_bytes_per_s)} each way per GPU"), "vector", "fabric"))
    cpu_y = fabric_y + 40 + GAP + 4
    half = (inner - 6) / server.cpu_count
    # The CPUs hang off PCIe: a path down the left side, past the GPUs and their fabric.
    side_x = PAD + SIDE / 2
    parts.append(line(left, pcie_y + BOX / 2, side_x, pcie_y + BOX / 2, class_="diagram-line")
                 + line(side_x, pcie_y + BOX / 2, side_x, cpu_y - GAP / 2,
                        class_="diagram-line")
                 + line(side_x, cpu_y - GAP / 2, WIDTH - PAD - half / 2, cpu_y - GAP / 2,
                        class_="diagram-line"))
    for i in range(server.cpu_count):
        x = left + i * (half + 6)
        parts.append(_wire(x + half / 2, cpu_y - GAP / 2, cpu_y))
        parts.append(_box(x, cpu_y, half, BOX, ("CPU",), "add", f"cpu-{i + 1}"))
    ram_y = cpu_y + BOX + GAP
    parts.append(_wire(left + inner / 2, cpu_y + BOX, ram_y))
    parts.append(_box(left, ram_y, inner, BOX, (f"RAM: {server.ram_bytes / GiB:,.0f} GiB",),
                      "step", "ram"))
    height = ram_y + BOX + 2
    label = (f"{server.name}: {n:,} {server.gpu.name} GPUs, each with its own network card "
             f"({links.scale_out}, {format_bandwidth(links.scale_out_bytes_per_s)} each way), "
             f"joined by {links.scale_up} at {format_bandwidth(links.scale_up_bytes_per_s)} "
             f"each way per GPU; cards, GPUs and {server.cpu_count:,} {server.cpu.name} CPUs "
             f"meet on PCIe; {server.ram_bytes / GiB:,.0f} GiB of RAM.")
    return svg("".join(parts), css="diagram", width=WIDTH, height=height, label=label,
               data={"diagram": "server-topology"})
