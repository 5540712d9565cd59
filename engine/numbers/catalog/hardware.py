"""Hardware specifications: memory, bandwidth, dense peaks per number format, power, links.

The catalogue stores GB, TB/s and TFLOP/s (unit in the field name); this module converts
once, at load, to bytes, bytes/s and FLOP/s.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from engine.numbers.catalog._data import load
from engine.numbers.errors import EngineError
from engine.numbers.formats import get_format

_PEAK_FIELDS = {
    "fp32": "fp32_TFLOP_per_s",
    "tf32": "tf32_TFLOP_per_s",
    "bf16": "bf16_TFLOP_per_s",
    "fp16": "fp16_TFLOP_per_s",
    "fp8": "fp8_TFLOP_per_s",
    "int8": "int8_TOP_per_s",
    "int4": "int4_TOP_per_s",
}
KINDS = ("gpu", "cpu", "tpu", "soc")


@dataclass(frozen=True, slots=True)
class HardwareSpec:
    """One chip. Bytes, bytes/s, FLOP/s (dense), W; ``peaks`` maps peak key -> FLOP/s."""

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

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise EngineError(f"Hardware {self.id!r}: kind must be one of {KINDS}.", "kind")
        if not self.memory_bytes > 0 or not self.bandwidth_bytes_per_s > 0:
            raise EngineError(f"Hardware {self.id!r}: memory and bandwidth must be > 0.")
        if not self.peaks or any(not v > 0 for _, v in self.peaks):
            raise EngineError(f"Hardware {self.id!r}: needs positive peaks.")
        if self.power_W is not None and not self.power_W > 0:
            raise EngineError(f"Hardware {self.id!r}: power must be > 0 when given.")

    def has_peak(self, format_id: str) -> bool:
        key = get_format(format_id).peak_key
        return any(k == key for k, _ in self.peaks)

    def peak_flops_per_s(self, format_id: object) -> float:
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

    def compute_peak(self, format_id: object) -> tuple[float, str]:
        """(FLOP/s, format) the maths of a model stored in ``format_id`` runs at.

        A format the chip cannot compute in (int4 on an H100, fp8 on an A100) is treated as
        weight-only quantisation: weights are dequantised and the maths runs in bf16 (fp16
        if the chip has no bf16 peak), which is what serving engines do.
        """
        fmt = get_format(format_id)
        for k, v in self.peaks:
            if k == fmt.peak_key:
                return v, fmt.id
        for fallback in ("bf16", "fp16", "fp32"):
            for k, v in self.peaks:
                if k == fallback:
                    return v, fallback
        return self.peaks[0][1], self.peaks[0][0]

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "name": self.name,
            "kind": self.kind,
            "vendor": self.vendor,
            "memory_bytes": self.memory_bytes,
            "memory_type": self.memory_type,
            "bandwidth_bytes_per_s": self.bandwidth_bytes_per_s,
            "peak_flops_per_s": dict(self.peaks),
            "power_W": self.power_W,
            "interconnect": self.interconnect,
            "interconnect_bytes_per_s": self.interconnect_bytes_per_s,
            "compute_units": self.compute_units,
            "compute_unit_name": self.compute_unit_name,
            "lanes": self.lanes,
            "source": self.source,
            "note": self.note,
            "confidence": self.confidence,
            "assumptions": list(self.assumptions),
        }


def _from_toml(hw_id: str, e: dict[str, Any]) -> HardwareSpec:
    peaks = tuple((k, float(e[f]) * 1e12) for k, f in _PEAK_FIELDS.items() if f in e)
    power = e.get("power_W")
    return HardwareSpec(
        id=hw_id,
        name=e["name"],
        kind=e["kind"],
        vendor=e["vendor"],
        memory_bytes=float(e["memory_GB"]) * 1e9,
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
    )


@cache
def _all() -> dict[str, HardwareSpec]:
    return {k: _from_toml(k, v) for k, v in load("hardware")["hardware"].items()}


def list_hardware() -> list[HardwareSpec]:
    """Every catalogue chip, in catalogue order."""
    return list(_all().values())


def get_hardware(hardware_id: object) -> HardwareSpec:
    """The catalogue chip called ``hardware_id`` (e.g. 'h100-sxm')."""
    chips = _all()
    if isinstance(hardware_id, str) and hardware_id in chips:
        return chips[hardware_id]
    shown = str(hardware_id)[:40]
    raise EngineError(f"Unknown hardware {shown!r}; choose one of: {', '.join(chips)}.",
                      "hardware")
