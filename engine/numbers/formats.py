"""Number formats: how many bytes one number takes, and which peak its maths runs at.

Bytes per number: fp32 4, bf16 and fp16 2, fp8 and int8 1, int4 0.5 (two numbers per byte);
block-quantised formats add their scales (llama.cpp's q4_0 stores 32 weights in 18 bytes:
4.5 bits each). ``peak_key`` names the chip's peak for numbers in that format (the
cheat sheet's peak table, the roofline). ``math_keys`` says what the matrix maths of a model
*stored* in that format runs at, best first: the first peak the chip has applies. A
weight-only format (int4 AWQ/GPTQ, llama.cpp's q-formats) is dequantised and multiplied in
a 16-bit or 8-bit format, never at an "int4 rate"; fp8, int8 and fp4 quantise both operands
(weights and activations) and run at their own rate where the chip has the units.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from engine.numbers.errors import EngineError
from engine.numbers.records import JsonShape, Record

# What a chip without the format's own units multiplies in: weights are dequantised and
# the maths runs in bf16 (fp16, fp32 where the chip has no bf16), as serving engines do.
_SIXTEEN_BIT = ("bf16", "fp16", "fp32")

# The formats of FORMATS below, as a type: the typed core takes one of these, never text.
FormatId = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4", "fp4", "q4_0", "q4_k_m",
                   "q8_0"]
FORMAT_IDS: tuple[FormatId, ...] = get_args(FormatId)


@dataclass(frozen=True, slots=True)
class NumberFormat(Record):
    """One number format: ``bits`` per number (scales included), ``peak_key`` into a chip's
    peaks, ``math_keys`` the peaks its maths may run at (best first), ``source`` for the
    storage cost of block-quantised formats."""

    JSON = JsonShape(derived=("bytes_per_number",),
                     after={"bytes_per_number": "label", "weight_only": "math_keys"})

    id: FormatId
    label: str
    bits: float
    peak_key: str
    math_keys: tuple[str, ...]
    note: str
    weight_only: bool = False
    source: str = ""

    def __post_init__(self) -> None:
        if not 0 < self.bits <= 64 or not self.math_keys:
            raise EngineError(f"Format {self.id!r}: needs bits in (0, 64] and math keys.",
                              "format")

    @property
    def bytes_per_number(self) -> float:
        """Bytes per stored number, block scales included (4.5 bits = 0.5625 bytes)."""
        return self.bits / 8.0


_GGML = ("ggml-org/llama.cpp ggml/src/ggml-common.h: block_q4_0 = fp16 scale + 32 4-bit "
         "weights (18 bytes per 32 weights = 4.5 bits), block_q8_0 = fp16 scale + 32 int8 "
         "weights (34 bytes per 32 = 8.5 bits)")
# llama.cpp's CUDA kernels for its q-formats (mmq.cuh) quantise the activations to int8
# (q8_1) and multiply on int8 tensor cores; chips without int8 units dequantise to fp16.
_GGML_MATH = ("int8", "fp16", "bf16", "fp32")

FORMATS: dict[FormatId, NumberFormat] = {
    f.id: f
    for f in (
        NumberFormat("fp32", "FP32 (single precision)", 32, "fp32", ("fp32", *_SIXTEEN_BIT),
                     "Full precision; the master copy of weights in mixed-precision training. "
                     "Peak used: the chip's plain FP32 rate (not TF32)."),
        NumberFormat("bf16", "BF16 (bfloat16)", 16, "bf16", _SIXTEEN_BIT,
                     "The default for training and serving today: fp32's range, fewer digits."),
        NumberFormat("fp16", "FP16 (half precision)", 16, "fp16", ("fp16", "bf16", "fp32"),
                     "Same size as bf16, smaller range; needs loss scaling in training."),
        NumberFormat("fp8", "FP8 (E4M3/E5M2)", 8, "fp8", ("fp8", *_SIXTEEN_BIT),
                     "Weights and activations in fp8: Hopper, Ada, Blackwell and MI300 have "
                     "fp8 tensor units; an A100 does not (its maths then runs in bf16)."),
        NumberFormat("int8", "INT8", 8, "int8", ("int8", *_SIXTEEN_BIT),
                     "Integer weights and activations (W8A8, e.g. SmoothQuant); peak in TOP/s."),
        NumberFormat("int4", "INT4", 4, "int4", _SIXTEEN_BIT,
                     "Two numbers per byte; weight-only quantisation (AWQ, GPTQ): the weights "
                     "are dequantised and the maths runs in bf16.", weight_only=True),
        NumberFormat("fp4", "FP4 (NVFP4)", 4.5, "fp4", ("fp4", *_SIXTEEN_BIT),
                     "4-bit floats with an fp8 scale per 16 numbers (4.5 bits each); "
                     "Blackwell multiplies them on fp4 tensor units, older chips dequantise.",
                     source="NVIDIA technical blog 'Introducing NVFP4 for Efficient and "
                     "Accurate Low-Precision Inference' (2025): E2M1 values, one FP8 E4M3 "
                     "scale per 16-value block (plus one FP32 scale per tensor)"),
        NumberFormat("q4_0", "Q4_0 (llama.cpp)", 4.5, "int4", _GGML_MATH,
                     "llama.cpp: blocks of 32 4-bit weights with one fp16 scale (4.5 bits).",
                     weight_only=True, source=_GGML),
        NumberFormat("q4_k_m", "Q4_K_M (llama.cpp)", 4.84, "int4", _GGML_MATH,
                     "llama.cpp's k-quant mix: mostly 4.5-bit Q4_K, some tensors in 6-bit "
                     "Q6_K; 4.84 bits per weight on average.", weight_only=True,
                     source="ggml-org/llama.cpp tools/quantize/README.md, bits per weight "
                     "table (Llama 2 7B): Q4_K_M 4.84 BPW"),
        NumberFormat("q8_0", "Q8_0 (llama.cpp)", 8.5, "int8", _GGML_MATH,
                     "llama.cpp: blocks of 32 int8 weights with one fp16 scale (8.5 bits).",
                     weight_only=True, source=_GGML),
    )
}


def get_format(format_id: str) -> NumberFormat:
    """The format called ``format_id`` ('fp32', 'bf16', 'fp16', 'fp8', 'int8', 'int4', 'fp4',
    'q4_0', 'q4_k_m', 'q8_0'); EngineError naming 'format' for any other name."""
    return FORMATS[parse_format(format_id)]


def parse_format(value: object, field: str = "format") -> FormatId:
    """``value`` as a format id, checked where it enters (a keyword, saved state): an
    EngineError naming ``field`` lists the formats when it is none of them."""
    for format_id in FORMATS:
        if value == format_id:
            return format_id
    shown = str(value)[:40]
    raise EngineError(f"Unknown number format {shown!r}; choose one of: {', '.join(FORMATS)}.",
                      field)
