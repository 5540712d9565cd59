"""Systems: whole servers built from catalogue chips (the lesson's dgx-1)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from engine.numbers import validate
from engine.numbers.catalog._data import load
from engine.numbers.catalog.hardware import HardwareSpec, get_hardware
from engine.numbers.errors import EngineError
from engine.numbers.records import JsonShape, Record


@dataclass(frozen=True, slots=True)
class SystemSpec(Record):
    """A server: its GPUs and CPUs (catalogue chips), RAM in bytes, links in bytes/s, W."""

    JSON = JsonShape(ids=("gpu", "cpu"), derived=("gpu_memory_bytes",),
                     after={"gpu_memory_bytes": "cpu_count"})

    id: str
    name: str
    gpu: HardwareSpec
    gpu_count: int
    cpu: HardwareSpec
    cpu_count: int
    ram_bytes: float
    nvlink_bytes_per_s_per_gpu: float
    power_W: float
    rack_units: int
    network: str
    source: str
    note: str = ""

    def __post_init__(self) -> None:
        if self.gpu_count < 1 or self.cpu_count < 1:
            raise EngineError(f"System {self.id!r}: needs at least one GPU and one CPU.")
        if not self.ram_bytes > 0 or not self.power_W > 0:
            raise EngineError(f"System {self.id!r}: RAM and power must be > 0.")

    @property
    def gpu_memory_bytes(self) -> float:
        """All GPU memory of the system (679.5 GB for dgx-1: 8 x 79.11 GiB allocatable)."""
        return self.gpu.memory_bytes * self.gpu_count

    @property
    def cpu_cores(self) -> int:
        """The cores of all the system's CPUs together (112 for dgx-1: two 56-core Xeons)."""
        return self.cpu.compute_units * self.cpu_count


def _from_toml(sys_id: str, e: dict[str, Any]) -> SystemSpec:
    return SystemSpec(
        id=sys_id,
        name=e["name"],
        gpu=get_hardware(e["gpu"]),
        gpu_count=int(e["gpu_count"]),
        cpu=get_hardware(e["cpu"]),
        cpu_count=int(e["cpu_count"]),
        ram_bytes=float(e["ram_GiB"]) * 2.0**30,
        nvlink_bytes_per_s_per_gpu=float(e["nvlink_GB_per_s_per_gpu"]) * 1e9,
        power_W=float(e["power_W"]),
        rack_units=int(e["rack_units"]),
        network=e["network"],
        source=e["source"],
        note=e.get("note", ""),
    )


@cache
def _all() -> dict[str, SystemSpec]:
    return {k: _from_toml(k, v) for k, v in load("systems")["systems"].items()}


def list_systems() -> list[SystemSpec]:
    return list(_all().values())


def get_system(system_id: object) -> SystemSpec:
    """The catalogue system called ``system_id`` ('dgx-1')."""
    return validate.lookup(system_id, _all(), "system", "system")
