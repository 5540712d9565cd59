"""Links between chips (data/links.toml): bandwidth each way per chip, inside a server
(``scale_up``: NVLink, Infinity Fabric, ICI, PCIe) and between servers (``scale_out``), and
the per-step latency NCCL's own cost model gives each kind of link.

The catalogue stores GB/s and microseconds; this module converts once to bytes/s and seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from engine.numbers.catalog._data import load
from engine.numbers.errors import EngineError
from engine.numbers.records import JsonShape, Record

LATENCY_KINDS = ("nvlink", "pcie", "network", "xgmi")


@dataclass(frozen=True, slots=True)
class LinkSpec(Record):
    """One chip's links. Bandwidths in bytes/s EACH WAY per chip; latencies in seconds."""

    JSON = JsonShape(rename={"hardware_id": "hardware"},
                     skip=("network_step_latency_seconds", "latency_source", "pairs_only",
                           "pcie_bytes_per_s", "host_link", "host_link_bytes_per_s",
                           "host_link_source"))

    hardware_id: str
    scale_up: str
    scale_up_bytes_per_s: float
    scale_out: str
    scale_out_bytes_per_s: float
    chips_per_server: int
    step_latency_seconds: float
    network_step_latency_seconds: float
    base_latency_seconds: float
    latency_source: str
    source: str
    pairs_only: bool = False
    pcie_bytes_per_s: float = 0.0
    note: str = ""
    # How the chip reaches its host's memory (what offloaded layers are read over), bytes/s
    # each way; "" and 0 where the catalogue gives none.
    host_link: str = ""
    host_link_bytes_per_s: float = 0.0
    host_link_source: str = ""

    def __post_init__(self) -> None:
        if not (self.scale_up_bytes_per_s > 0 and self.scale_out_bytes_per_s > 0):
            raise EngineError(f"Links of {self.hardware_id!r}: bandwidths must be > 0.")
        if self.chips_per_server < 1:
            raise EngineError(f"Links of {self.hardware_id!r}: chips_per_server must be >= 1.")
        if self.pairs_only and not self.pcie_bytes_per_s > 0:
            raise EngineError(f"Links of {self.hardware_id!r}: pair-only links need a PCIe "
                              "figure for larger groups.")


@dataclass(frozen=True, slots=True)
class CollectiveSpec:
    """How much of a link a large collective reaches (nccl-tests "bus bandwidth")."""

    bandwidth_fraction: float
    source: str


def _link(hw_id: str, e: dict[str, Any], lat: dict[str, Any], hosts: dict[str, Any]
          ) -> LinkSpec:
    kind = e["latency_kind"]
    if kind not in LATENCY_KINDS:
        raise EngineError(f"Links of {hw_id!r}: latency_kind must be one of {LATENCY_KINDS}.")
    host_kind = e.get("host_link", "")
    if host_kind and host_kind not in hosts:
        raise EngineError(f"Links of {hw_id!r}: host_link must be one of {', '.join(hosts)}.")
    no_host: dict[str, Any] = {"name": "", "GB_per_s_each_way": 0.0, "source": ""}
    host: dict[str, Any] = hosts[host_kind] if host_kind else no_host
    return LinkSpec(
        hardware_id=hw_id,
        scale_up=e["scale_up"],
        scale_up_bytes_per_s=float(e["scale_up_GB_per_s_each_way"]) * 1e9,
        scale_out=e["scale_out"],
        scale_out_bytes_per_s=float(e["scale_out_GB_per_s_each_way"]) * 1e9,
        chips_per_server=int(e["chips_per_server"]),
        step_latency_seconds=float(lat[f"{kind}_step_us"]) * 1e-6,
        network_step_latency_seconds=float(lat["network_step_us"]) * 1e-6,
        base_latency_seconds=float(lat.get(f"{kind}_base_us", lat["base_us"])) * 1e-6,
        latency_source=lat.get(f"{kind}_source", lat["source"]),
        source=e["source"],
        pairs_only=bool(e.get("pairs_only", False)),
        pcie_bytes_per_s=float(e.get("pcie_GB_per_s_each_way", 0.0)) * 1e9,
        note=e.get("note", ""),
        host_link=host["name"],
        host_link_bytes_per_s=float(host["GB_per_s_each_way"]) * 1e9,
        host_link_source=host["source"],
    )


@cache
def _all() -> dict[str, LinkSpec]:
    data = load("links")
    return {k: _link(k, v, data["latency"], data["host_links"])
            for k, v in data["links"].items()}


@cache
def collective_spec() -> CollectiveSpec:
    """The fraction of a link's bandwidth collectives reach, with its source."""
    c = load("links")["collective"]
    return CollectiveSpec(float(c["bandwidth_fraction"]), c["source"])


def get_links(hardware_id: str) -> LinkSpec:
    """The links of the catalogue chip ``hardware_id``."""
    links = _all()
    if hardware_id not in links:
        raise EngineError(f"No links in the catalogue for hardware {hardware_id!r}.", "hardware")
    return links[hardware_id]


def list_links() -> list[LinkSpec]:
    """Every chip's links, in catalogue order."""
    return list(_all().values())


def stated_links(hardware_id: str, *, chips_per_server: int, scale_up: str,
                 scale_up_GB_per_s_each_way: float, scale_out: str,
                 scale_out_GB_per_s_each_way: float, latency_kind: str,
                 source: str, host_link: str = "pcie-gen4-x16") -> LinkSpec:
    """Links stated outside links.toml (a chip of a user's own spec), in the catalogue's
    units (GB/s each way per chip), with the per-step latencies of ``latency_kind`` from
    links.toml's [latency], reaching its host's memory over ``host_link`` (a kind of
    links.toml's [host_links]). The figures are trusted: the caller checked them."""
    entry = {"latency_kind": latency_kind, "scale_up": scale_up,
             "scale_up_GB_per_s_each_way": scale_up_GB_per_s_each_way,
             "scale_out": scale_out, "scale_out_GB_per_s_each_way": scale_out_GB_per_s_each_way,
             "chips_per_server": chips_per_server, "source": source, "host_link": host_link}
    data = load("links")
    return _link(hardware_id, entry, data["latency"], data["host_links"])
