"""Number formats: how many bytes one number takes, and which peak applies to its maths.

Bytes per number: fp32 4, bf16 and fp16 2, fp8 and int8 1, int4 0.5 (two numbers per byte).
``peak_key`` names the hardware peak that matrix maths in that format runs at; a chip with
no peak for a format (an A100 has no fp8 units) raises EngineError when asked for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.numbers.errors import EngineError


@dataclass(frozen=True, slots=True)
class NumberFormat:
    """One number format: ``bytes_per_number`` in bytes, ``peak_key`` into a chip's peaks."""

    id: str
    label: str
    bytes_per_number: float
    peak_key: str
    bits: int
    note: str

    def __post_init__(self) -> None:
        if self.bytes_per_number <= 0 or self.bits != round(self.bytes_per_number * 8):
            raise EngineError(f"Format {self.id!r}: bytes_per_number and bits disagree.", "format")

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "label": self.label,
            "bytes_per_number": self.bytes_per_number,
            "bits": self.bits,
            "peak_key": self.peak_key,
            "note": self.note,
        }


FORMATS: dict[str, NumberFormat] = {
    f.id: f
    for f in (
        NumberFormat("fp32", "FP32 (single precision)", 4.0, "fp32", 32,
                     "Full precision; the master copy of weights in mixed-precision training. "
                     "Peak used: the chip's plain FP32 rate (not TF32)."),
        NumberFormat("bf16", "BF16 (bfloat16)", 2.0, "bf16", 16,
                     "The default for training and serving today: fp32's range, fewer digits."),
        NumberFormat("fp16", "FP16 (half precision)", 2.0, "fp16", 16,
                     "Same size as bf16, smaller range; needs loss scaling in training."),
        NumberFormat("fp8", "FP8 (E4M3/E5M2)", 1.0, "fp8", 8,
                     "Hopper, Ada, Blackwell and MI300 have fp8 tensor units; A100 does not."),
        NumberFormat("int8", "INT8", 1.0, "int8", 8,
                     "Integer weights (quantised serving); peak in TOP/s."),
        NumberFormat("int4", "INT4", 0.5, "int4", 4,
                     "Two numbers per byte; usually weight-only quantisation, the maths then "
                     "runs in bf16 after dequantising."),
    )
}


def get_format(format_id: object) -> NumberFormat:
    """The format called ``format_id`` ('fp32', 'bf16', 'fp16', 'fp8', 'int8', 'int4')."""
    if isinstance(format_id, str) and format_id in FORMATS:
        return FORMATS[format_id]
    shown = str(format_id)[:40]
    raise EngineError(
        f"Unknown number format {shown!r}; choose one of: {', '.join(FORMATS)}.", "format"
    )
