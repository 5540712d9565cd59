"""Hardware specifications: memory, bandwidth, dense peaks per number format, power, links.

The catalogue stores TB/s and TFLOP/s, and memory in bytes, GiB or MiB (unit in the field
name); this module converts once, at load, to bytes, bytes/s and FLOP/s. ``memory_bytes``
is what a program can allocate (vendors sell memory in binary units: an "80 GB" H100
hands out 79.11 GiB = 84.9 x 10^9 bytes); ``memory_basis`` says which figure and its source.
``serving_overhead_bytes`` is a serving runtime's measured memory beyond the weights and KV
cache on a chip that has one (a phone's), with ``serving_overhead_basis``; None where the
server allowance applies (:data:`engine.numbers.memory.RUNTIME_OVERHEAD_BYTES`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from engine.numbers import validate
from engine.numbers.catalog._data import load
from engine.numbers.catalog.links import LinkSpec, get_links
from engine.numbers.errors import EngineError
from engine.numbers.formats import get_format
from engine.numbers.records import JsonShape, Record

_PEAK_FIELDS = {
    "fp32": "fp32_TFLOP_per_s",
    "tf32": "tf32_TFLOP_per_s",
    "bf16": "bf16_TFLOP_per_s",
    "fp16": "fp16_TFLOP_per_s",
    "fp8": "fp8_TFLOP_per_s",
    "int8": "int8_TOP_per_s",
    "int4": "int4_TOP_per_s",
    "fp4": "fp4_TFLOP_per_s",
}
_MEMORY_FIELDS = {"memory_bytes": 1.0, "memory_GiB": 2.0**30, "memory_MiB": 2.0**20}
KINDS = ("gpu", "cpu", "tpu", "soc")


@dataclass(frozen=True, slots=True)
class HardwareSpec(Record):
    """One chip. Bytes, bytes/s, FLOP/s (dense), W; ``peaks`` maps peak key -> FLOP/s."""

    JSON = JsonShape(rename={"peaks": "peak_flops_per_s"}, mappings=("peaks",), skip=("links",),
                     after={"memory_marketed_GB": "memory_bytes",
                            "memory_basis": "memory_marketed_GB"})

    id: str
    name: str
    kind: str
    vendor: str
    memory_bytes: float
    memory_type: str
    bandwidth_bytes_per_s: float
    peaks: tuple[tuple[str, float], ...]
    power_W: float | None
    interconnect: str
    interconnect_bytes_per_s: float
    compute_units: int
    compute_unit_name: str
    lanes: int
    source: str
    note: str = ""
    confidence: str = "high"
    assumptions: tuple[str, ...] = ()
    memory_marketed_GB: float = 0.0
    memory_basis: str = ""
    matrix_unit: str = ""  # a CPU's matrix units (Intel AMX), if it has them
    vector_unit: str = ""  # a CPU's vector instructions (AVX-512)
    serving_overhead_bytes: float | None = None
    serving_overhead_basis: str = ""
    # A chip from outside the catalogue (a user's spec) carries its own links; a catalogue
    # chip's are in links.toml under its id.
    links: LinkSpec | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise EngineError(f"Hardware {self.id!r}: kind must be one of {KINDS}.", "kind")
        if not self.memory_bytes > 0 or not self.bandwidth_bytes_per_s > 0:
            raise EngineError(f"Hardware {self.id!r}: memory and bandwidth must be > 0.")
        if not self.peaks or any(not v > 0 for _, v in self.peaks):
            raise EngineError(f"Hardware {self.id!r}: needs positive peaks.")
        if self.power_W is not None and not self.power_W > 0:
            raise EngineError(f"Hardware {self.id!r}: power must be > 0 when given.")

    @property
    def memory_marketed_bytes(self) -> float:
        """The memory the chip is sold with, in bytes: memory sold as "192 GB" is built in
        powers of two, 192 GiB (0.0 where the catalogue gives no marketed figure)."""
        return self.memory_marketed_GB * 2.0**30

    def link_spec(self) -> LinkSpec:
        """This chip's links: its own where it carries them, else the catalogue's."""
        return self.links if self.links is not None else get_links(self.id)

    def has_peak(self, format_id: str) -> bool:
        key = get_format(format_id).peak_key
        return any(k == key for k, _ in self.peaks)

    def peak_flops_per_s(self, format_id: str) -> float:
        """Dense peak in FLOP/s (OP/s for integers) for maths in ``format_id``."""
        key = get_format(format_id).peak_key
        for k, v in self.peaks:
            if k == key:
                return v
        raise EngineError(
            f"{self.name} has no published dense {key} peak; choose another format "
            f"({', '.join(k for k, _ in self.peaks if k != 'tf32')}).",
            "format",
        )

    def compute_peak(self, format_id: str) -> tuple[float, str]:
        """(FLOP/s, format) the maths of a model stored in ``format_id`` runs at.

        The first of the format's ``math_keys`` the chip has a peak for: a weight-only format
        (int4 AWQ/GPTQ) is dequantised and multiplied in bf16 (so an A100 never "prefills an
        int4 model" at its int4 rate); fp8 on an A100, which has no fp8 units, likewise.
        """
        fmt = get_format(format_id)
        peaks = dict(self.peaks)
        for key in (*fmt.math_keys, "bf16", "fp16", "fp32"):
            if key in peaks:
                return peaks[key], key
        return self.peaks[0][1], self.peaks[0][0]


def _memory_bytes(hw_id: str, e: dict[str, Any]) -> float:
    given = [(f, float(round(float(e[f]) * scale))) for f, scale in _MEMORY_FIELDS.items() if f in e]
    if len(given) != 1 or not e.get("memory_basis"):
        raise EngineError(f"Hardware {hw_id!r}: give exactly one of {', '.join(_MEMORY_FIELDS)}"
                          " and a memory_basis saying which figure it is.", "memory")
    return given[0][1]


def _serving_overhead_bytes(hw_id: str, e: dict[str, Any]) -> float | None:
    if "serving_overhead_MiB" not in e:
        return None
    if not e.get("serving_overhead_basis"):
        raise EngineError(f"Hardware {hw_id!r}: a serving_overhead_MiB needs a "
                          "serving_overhead_basis saying what was measured, and where.", "memory")
    return float(round(float(e["serving_overhead_MiB"]) * 2.0**20))


def _from_toml(hw_id: str, e: dict[str, Any]) -> HardwareSpec:
    peaks = tuple((k, float(e[f]) * 1e12) for k, f in _PEAK_FIELDS.items() if f in e)
    power = e.get("power_W")
    return HardwareSpec(
        id=hw_id,
        name=e["name"],
        kind=e["kind"],
        vendor=e["vendor"],
        memory_bytes=_memory_bytes(hw_id, e),
        memory_type=e["memory_type"],
        bandwidth_bytes_per_s=float(e["bandwidth_TB_per_s"]) * 1e12,
        peaks=peaks,
        power_W=None if power is None else float(power),
        interconnect=e["interconnect"],
        interconnect_bytes_per_s=float(e["interconnect_GB_per_s"]) * 1e9,
        compute_units=int(e["compute_units"]),
        compute_unit_name=e["compute_unit_name"],
        lanes=int(e["lanes"]),
        source=e["source"],
        note=e.get("note", ""),
        confidence=e.get("confidence", "high"),
        assumptions=tuple(e.get("assumptions", ())),
        memory_marketed_GB=float(e.get("memory_marketed_GB", 0.0)),
        memory_basis=e["memory_basis"],
        matrix_unit=e.get("matrix_unit", ""),
        vector_unit=e.get("vector_unit", ""),
        serving_overhead_bytes=_serving_overhead_bytes(hw_id, e),
        serving_overhead_basis=e.get("serving_overhead_basis", ""),
    )


@cache
def _all() -> dict[str, HardwareSpec]:
    return {k: _from_toml(k, v) for k, v in load("hardware")["hardware"].items()}


def list_hardware() -> list[HardwareSpec]:
    """Every catalogue chip, in catalogue order."""
    return list(_all().values())


def device_memory_bytes(hw: HardwareSpec) -> float:
    """The memory of ``hw``'s device as its driver reports it (bytes): the catalogue chip's
    whole memory where ``hw`` is a catalogue chip seen with part of it taken by other jobs
    (``memory_bytes`` shrunk), else ``hw.memory_bytes``."""
    catalogued = _all().get(hw.id)
    return catalogued.memory_bytes if catalogued is not None else hw.memory_bytes


def get_hardware(hardware_id: object) -> HardwareSpec:
    """The catalogue chip called ``hardware_id`` (e.g. 'h100-sxm')."""
    return validate.lookup(hardware_id, _all(), "hardware", "hardware")
