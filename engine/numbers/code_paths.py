"""How a chip's maths runs: a CPU has two code paths for a matrix multiply, each with its own
paper peak and the share of it a tuned library reaches.

- ``matrix``: the CPU's matrix units (Intel AMX on the Xeon 8480C), in bf16.
- ``vector``: its ordinary vector instructions (AVX-512), in fp32.

A GPU has one path for a model's maths here: its tensor cores, dense, in bf16. Peaks are
FLOP/s of one chip, from the catalogue; efficiencies from ``efficiency.toml`` (measured matrix
multiplies, each with its source).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from engine.numbers.catalog import HardwareSpec
from engine.numbers.catalog.efficiency import Basis, matmul_fraction
from engine.numbers.errors import EngineError
from engine.numbers.formats import FormatId
from engine.numbers.records import Record

PathId = Literal["matrix", "vector"]
PATHS: tuple[PathId, ...] = get_args(PathId)
GPU_FORMAT: FormatId = "bf16"
_PATH_FORMAT: dict[PathId, FormatId] = {"matrix": "bf16", "vector": "fp32"}


@dataclass(frozen=True, slots=True)
class CodePath(Record):
    """One way ``chip`` runs a matrix multiply: its units, number format, paper peak (FLOP/s
    of one chip) and the measured share of it a tuned library reaches."""

    id: str
    units: str
    format: FormatId
    peak_flops_per_s: float
    efficiency: Basis

    @property
    def label(self) -> str:
        """'AMX matrix units (bf16)', 'AVX-512 vector units (fp32)', 'tensor cores (bf16,
        dense)'."""
        return f"{self.units} ({self.format}" + (", dense)" if self.id == "tensor" else ")")

    @property
    def reached_flops_per_s(self) -> float:
        """What a tuned matrix multiply reaches on one chip: peak x measured efficiency."""
        return self.peak_flops_per_s * self.efficiency.value


def parse_path(value: object) -> PathId:
    """``value`` as a code path, checked where it enters (a figure's keyword text)."""
    for path in PATHS:
        if value == path:
            return path
    raise EngineError(f"Code path must be one of {', '.join(PATHS)}.", "path")


def _units(chip: HardwareSpec, path: PathId) -> str:
    if path == "matrix":
        return f"{chip.matrix_unit} matrix units"
    return f"{chip.vector_unit or 'vector'} vector units"


def code_path(chip: HardwareSpec, path: PathId = "matrix") -> CodePath:
    """``chip``'s code path ``path`` ('matrix' or 'vector'); a GPU's tensor cores whatever
    ``path`` says. A CPU without matrix units refuses 'matrix', naming the field."""
    if chip.kind != "cpu":
        return CodePath("tensor", "tensor cores", GPU_FORMAT,
                        chip.peak_flops_per_s(GPU_FORMAT), matmul_fraction(chip, GPU_FORMAT))
    if path == "matrix" and not chip.matrix_unit:
        raise EngineError(f"{chip.name} has no matrix units: choose its vector units.", "path")
    fmt = _PATH_FORMAT[path]
    return CodePath(path, _units(chip, path), fmt, chip.peak_flops_per_s(fmt),
                    matmul_fraction(chip, fmt))


def cpu_code_paths(chip: HardwareSpec) -> tuple[CodePath, ...]:
    """Every code path a CPU has: the matrix units (if any), then the vector units."""
    return tuple(code_path(chip, p) for p in PATHS if p != "matrix" or chip.matrix_unit)


@dataclass(frozen=True, slots=True)
class PathTime(Record):
    """Seconds of one piece of maths-heavy work on ``chips`` chips through ``path``.

    ``bound_seconds``: the larger of FLOPs / (paper peak x chips) and ``memory_seconds`` (bytes
    at the datasheet bandwidth). ``expected_seconds``: the same at the measured matrix-multiply
    efficiency and the measured share of the bandwidth; nothing else (no attention kernels,
    no threading or start-up costs), so a CPU's real time is longer still.
    """

    path: CodePath
    chips: int
    flops: float
    bound_seconds: float
    expected_seconds: float
    limit: str  # at the bound: 'compute' or 'memory'


def time_on_path(path: CodePath, chips: int, *, flops: float, memory_seconds: float = 0.0,
                 memory_share: float = 1.0) -> PathTime:
    """``flops`` FLOPs on ``chips`` chips through ``path``; ``memory_seconds`` is the bound's
    time to read the bytes (datasheet bandwidth) and ``memory_share`` the measured fraction of
    that bandwidth a tuned kernel reaches (efficiency.toml)."""
    compute = flops / (path.peak_flops_per_s * chips)
    expected_compute = flops / (path.reached_flops_per_s * chips)
    return PathTime(path, chips, flops, max(compute, memory_seconds),
                    max(expected_compute, memory_seconds / memory_share),
                    "memory" if memory_seconds > compute else "compute")
