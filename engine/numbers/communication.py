"""Communication: the time collectives take over the links between chips.

Costs follow the ring algorithm NCCL uses for large messages, and its latency model for small
ones (src/graph/tuning.cc): a fixed base latency plus one step latency per hop.

- all-reduce of S bytes over n chips: 2(n-1)/n x S / bandwidth, 2(n-1) steps;
- all-gather and reduce-scatter (S = the gathered whole): (n-1)/n x S / bandwidth, n-1 steps;
- all-to-all (each chip holds S, sends (n-1)/n of it): (n-1)/n x S / bandwidth, n-1 steps.

Bandwidth is the chip's link EACH WAY times the fraction collectives reach (nccl-tests' "bus
bandwidth"). A group that spans servers is limited by the network: with m of its chips in each
server, a ring crosses servers over m network ports in parallel, so it gets
min(scale-up, m x scale-out) per chip, and its steps between servers take the network's step
latency. A pipeline of p stages fed m micro-batches idles (p-1)/(m+p-1) of the time.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers.catalog.links import LinkSpec, collective_spec
from engine.numbers.rounding import ceil_div

ACTIVATION_BYTES = 2.0  # bf16 activations travel between GPUs (tensor, pipeline, expert)


@dataclass(frozen=True, slots=True)
class GroupLink:
    """The link a group of ``chips`` chips communicates over, and its costs.

    ``bytes_per_s`` is the bandwidth each way per chip collectives reach (after the
    bus-bandwidth fraction); ``servers`` how many servers the group spans.
    """

    chips: int
    servers: int
    name: str
    link_bytes_per_s: float
    bytes_per_s: float
    step_latency_seconds: float
    network_step_latency_seconds: float
    base_latency_seconds: float

    def latency_seconds(self, steps: int, network_steps: int) -> float:
        """Base latency + each step's latency (``network_steps`` of them between servers)."""
        if self.chips <= 1:
            return 0.0
        intra = max(steps - network_steps, 0)
        return (self.base_latency_seconds + intra * self.step_latency_seconds
                + network_steps * self.network_step_latency_seconds)


def group_link(links: LinkSpec, chips: int, *, per_server: int | None = None) -> GroupLink:
    """The bottleneck link of a group of ``chips`` chips of one kind.

    ``per_server``: how many of the group's chips share a server (default: as many as fit,
    ``links.chips_per_server``). A data-parallel group beside tensor parallelism of 8 has one
    chip per server.
    """
    n = chips
    fill = min(n, links.chips_per_server)
    m = fill if per_server is None else min(per_server, fill)
    servers = ceil_div(n, m)
    up = links.scale_up_bytes_per_s
    name = links.scale_up
    if links.pairs_only and m > 2:
        up = links.pcie_bytes_per_s
        name = "PCIe (the bridges join pairs only)"
    if servers > 1:
        out = m * links.scale_out_bytes_per_s
        if out < up:
            up = out
            name = f"{links.scale_out} ({m} per server)"
    frac = collective_spec().bandwidth_fraction
    return GroupLink(n, servers, name, up, up * frac, links.step_latency_seconds,
                     links.network_step_latency_seconds, links.base_latency_seconds)


def all_reduce_seconds(n_bytes: float, link: GroupLink) -> float:
    """Ring all-reduce of ``n_bytes`` (each chip's buffer) over ``link``'s group:
    2(n-1)/n x bytes / bandwidth + base + 2(n-1) step latencies. 0 for one chip."""
    s = n_bytes
    n = link.chips
    if n <= 1:
        return 0.0
    return (2.0 * (n - 1) / n * s / link.bytes_per_s
            + link.latency_seconds(2 * (n - 1), 2 * (link.servers - 1)))


def all_gather_seconds(n_bytes: float, link: GroupLink) -> float:
    """All-gather of ``n_bytes`` in total (each chip starts with 1/n of it):
    (n-1)/n x bytes / bandwidth + base + (n-1) step latencies."""
    s = n_bytes
    n = link.chips
    if n <= 1:
        return 0.0
    return (n - 1) / n * s / link.bytes_per_s + link.latency_seconds(n - 1, link.servers - 1)


def reduce_scatter_seconds(n_bytes: float, link: GroupLink) -> float:
    """Reduce-scatter of ``n_bytes`` per chip (each ends with 1/n of the sum): the same
    traffic and steps as an all-gather."""
    return all_gather_seconds(n_bytes, link)


def all_to_all_seconds(n_bytes: float, link: GroupLink) -> float:
    """All-to-all (expert parallelism): each chip sends (n-1)/n of its ``n_bytes`` to the
    others: (n-1)/n x bytes / bandwidth + base + (n-1) step latencies."""
    return all_gather_seconds(n_bytes, link)


def send_seconds(n_bytes: float, link: GroupLink) -> float:
    """A point-to-point send of ``n_bytes`` from one chip to the next (pipeline stages):
    bytes / bandwidth + base + one step latency (a network one between servers)."""
    s = n_bytes
    if link.chips <= 1:
        return 0.0
    return s / link.bytes_per_s + link.latency_seconds(1, 1 if link.servers > 1 else 0)


def pipeline_bubble_fraction(stages: int, micro_batches: int) -> float:
    """Share of a pipeline-parallel step spent idle, (p-1)/(m+p-1) for the 1F1B schedule
    (Narayanan et al. 2021, section 2.2); both counts at least 1."""
    return (stages - 1) / (micro_batches + stages - 1)
