"""Number formats: how many bytes one number takes, and which peak its maths runs at.

Bytes per number: fp32 4, bf16 and fp16 2, fp8 and int8 1, int4 0.5 (two numbers per byte);
block-quantised formats add their scales (llama.cpp's q4_0 stores 32 weights in 18 bytes:
4.5 bits each). ``peak_key`` names the chip's peak for numbers in that format (the
cheat sheet's peak table, the roofline). ``math_keys`` says what the matrix maths of a model
*stored* in that format runs at, best first: the first peak the chip has applies. A
weight-only format (int4 AWQ/GPTQ, llama.cpp's q-formats) is dequantised and multiplied in
a 16-bit or 8-bit format, never at an "int4 rate"; fp8, int8 and fp4 quantise both operands
(weights and activations) and run at their own rate where the chip has the units.

The bits of a llama.cpp file type (Q4_K_M, Q2_K...) are an average: llama.cpp quantises some
matrices (the output matrix, attn_v, ffn_down in some layers) to a larger block type than the
rest, so a file's bits per weight is the parameter-weighted mean of its matrices' block bits,
here as published for Llama 3.1 8B (Llama 2 7B for Q4_K_M).
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
                   "q8_0", "q2_k", "q3_k_m", "q5_k_m", "q6_k", "awq-int4", "gptq-int4", "nf4",
                   "llm-int8", "mxfp4"]
FORMAT_IDS: tuple[FormatId, ...] = get_args(FormatId)

# Other names people use for a format above, accepted wherever a format id is.
FORMAT_ALIASES: dict[str, FormatId] = {"nvfp4": "fp4"}


@dataclass(frozen=True, slots=True)
class NumberFormat(Record):
    """One number format: ``bits`` per number (scales included), ``peak_key`` into a chip's
    peaks, ``math_keys`` the peaks its maths may run at (best first), ``source`` for the
    storage cost of block-quantised formats, ``quality`` its published quality cost (empty
    where none is catalogued) and ``kv_cache`` the runtimes that keep a KV cache in it (empty
    where none does)."""

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
    quality: str = ""  # its published quality cost, with the measurement's source
    kv_cache: str = ""  # the runtimes that offer it for the KV cache, and how

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

_KQUANT = ("ggml-org/llama.cpp: ggml/src/ggml-common.h, super-blocks of 256 weights: block_q2_K "
           "84 bytes (2.625 bits), block_q3_K 110 (3.4375), block_q4_K 144 (4.5), block_q5_K "
           "176 (5.5), block_q6_K 210 (6.5625); src/llama-quant.cpp llama_tensor_get_type, "
           "which tensors of each file type get which block; tools/quantize/README.md, the "
           "bits per weight of meta-llama/Llama-3.1-8B files: Q2_K 3.1593, Q5_K_M 5.7036, "
           "Q6_K 6.5633 (Q3_K_M, absent from that table: 3.74 GiB of Llama 3 8B in "
           "tools/quantize/quantize.cpp, 4.0 bits)")


def _ppl(name: str, delta: str) -> str:
    """llama.cpp's own measurement of ``name``'s quality cost, as a sentence."""
    return (f"Perplexity {delta} over 16-bit on Llama 3 8B (llama.cpp's llama-quantize "
            f"table, tools/quantize/quantize.cpp, for {name}).")


# llama.cpp's KV cache types (the same blocks as its weight formats).
_LLAMA_CPP_KV = ("llama.cpp (--cache-type-k and --cache-type-v; a quantised V cache needs "
                 "flash attention, -fa).")

# AWQ and GPTQ checkpoints at group size 128: per group of 128 input weights of each output
# column, one fp16 scale and one 4-bit zero point.
_GROUP_128_BITS = (16 + 4) / 128
_AWQ_LAYOUT = ("casper-hansen/AutoAWQ awq/modules/linear/gemm.py WQLinear_GEMM: qweight int32 "
               "(8 4-bit weights each), qzeros int32 (in / group, out / 8), scales fp16 (in / "
               "group, out); group size 128 as published AWQ checkpoints use")
_GPTQ_LAYOUT = ("AutoGPTQ auto_gptq/nn_modules/qlinear QuantLinear (4 bits): qweight and qzeros "
                "packed 8 to an int32, scales fp16 per group and output column, g_idx int32 "
                "per input row; group size 128 as published GPTQ checkpoints use")

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
                     "fp8 tensor units; an A100 does not (its maths then runs in bf16).",
                     kv_cache="vLLM (--kv-cache-dtype fp8, E4M3 or E5M2), SGLang "
                     "(--kv-cache-dtype fp8_e4m3) and TensorRT-LLM (FP8 KV cache)."),
        NumberFormat("int8", "INT8", 8, "int8", ("int8", *_SIXTEEN_BIT),
                     "Integer weights and activations (W8A8, e.g. SmoothQuant); peak in TOP/s.",
                     kv_cache="TensorRT-LLM (INT8 KV cache) and LMDeploy (--quant-policy 8)."),
        NumberFormat("int4", "INT4", 4, "int4", _SIXTEEN_BIT,
                     "Two numbers per byte; weight-only quantisation (AWQ, GPTQ): the weights "
                     "are dequantised and the maths runs in bf16.", weight_only=True),
        NumberFormat("fp4", "FP4 (NVFP4)", 4.5, "fp4", ("fp4", *_SIXTEEN_BIT),
                     "4-bit floats with an fp8 scale per 16 numbers (4.5 bits each); "
                     "Blackwell multiplies them on fp4 tensor units, older chips dequantise.",
                     source="NVIDIA technical blog 'Introducing NVFP4 for Efficient and "
                     "Accurate Low-Precision Inference' (2025): E2M1 values, one FP8 E4M3 "
                     "scale per 16-value block (plus one FP32 scale per tensor)",
                     quality="NVIDIA's NVFP4 checkpoint of DeepSeek-R1 against the FP8 original "
                     "(nvidia/DeepSeek-R1-FP4 model card, Evaluation): MMLU 90.7 against 90.8, "
                     "GSM8K 96.1 against 96.3, AIME 2024 80.0 against 80.0, GPQA Diamond 69.2 "
                     "against 69.7, MATH-500 94.2 against 95.4."),
        NumberFormat("q4_0", "Q4_0 (llama.cpp)", 4.5, "int4", _GGML_MATH,
                     "llama.cpp: blocks of 32 4-bit weights with one fp16 scale (4.5 bits).",
                     weight_only=True, source=_GGML, quality=_ppl("Q4_0", "+0.4685"),
                     kv_cache=_LLAMA_CPP_KV),
        NumberFormat("q4_k_m", "Q4_K_M (llama.cpp)", 4.84, "int4", _GGML_MATH,
                     "llama.cpp's k-quant mix: mostly 4.5-bit Q4_K, some tensors in 6-bit "
                     "Q6_K; 4.84 bits per weight on average.", weight_only=True,
                     source="ggml-org/llama.cpp examples/quantize/README.md as of September "
                     "2023 (pull request 3340), bits per weight table (Llama 2 7B): Q4_K_M "
                     "4.84; the file, now tools/quantize/README.md, gives 4.8944 for Llama 3.1 "
                     "8B", quality=_ppl("Q4_K_M", "+0.1754")),
        NumberFormat("q8_0", "Q8_0 (llama.cpp)", 8.5, "int8", _GGML_MATH,
                     "llama.cpp: blocks of 32 int8 weights with one fp16 scale (8.5 bits).",
                     weight_only=True, source=_GGML, quality=_ppl("Q8_0", "+0.0026"),
                     kv_cache=_LLAMA_CPP_KV),
        NumberFormat("q2_k", "Q2_K (llama.cpp)", 3.16, "int8", _GGML_MATH,
                     "llama.cpp's 2-bit k-quant file: 2.625-bit Q2_K blocks, with attn_v in "
                     "Q4_K, ffn_down and attn_output in Q3_K and the output matrix in Q6_K; "
                     "3.16 bits per weight on average (Llama 3.1 8B).", weight_only=True,
                     source=_KQUANT, quality=_ppl("Q2_K", "+3.5199")),
        NumberFormat("q3_k_m", "Q3_K_M (llama.cpp)", 4.0, "int8", _GGML_MATH,
                     "llama.cpp's 3-bit k-quant mix: 3.4375-bit Q3_K blocks, with attn_v, "
                     "ffn_down and attn_output in Q4_K (Q5_K in the first layers) and the "
                     "output matrix in Q6_K; 4.0 bits per weight on average (Llama 3.1 8B).",
                     weight_only=True, source=_KQUANT, quality=_ppl("Q3_K_M", "+0.6569")),
        NumberFormat("q5_k_m", "Q5_K_M (llama.cpp)", 5.7, "int8", _GGML_MATH,
                     "llama.cpp's 5-bit k-quant mix: 5.5-bit Q5_K blocks, with attn_v and "
                     "ffn_down in 6.5625-bit Q6_K in half the layers and the output matrix in "
                     "Q6_K; 5.7 bits per weight on average (Llama 3.1 8B).", weight_only=True,
                     source=_KQUANT, quality=_ppl("Q5_K_M", "+0.0569")),
        NumberFormat("q6_k", "Q6_K (llama.cpp)", 6.5625, "int8", _GGML_MATH,
                     "llama.cpp: every matrix in Q6_K blocks, 256 6-bit weights with 16 int8 "
                     "scales and one fp16 scale (210 bytes: 6.5625 bits).", weight_only=True,
                     source=_KQUANT, quality=_ppl("Q6_K", "+0.0217")),
        NumberFormat("awq-int4", "AWQ INT4 (group 128)", 4 + _GROUP_128_BITS, "int4",
                     _SIXTEEN_BIT,
                     "4-bit weights with an fp16 scale and a 4-bit zero point per group of 128 "
                     "(4.156 bits); kernels such as Marlin dequantise them and multiply in "
                     "16-bit.", weight_only=True, source=_AWQ_LAYOUT,
                     quality="On Llama 2 7B, WikiText-2 perplexity 5.60 against 5.47 in FP16 "
                     "(+0.13) at INT4, group 128 (AWQ paper, Lin et al., MLSys 2024, Table 4)."),
        NumberFormat("gptq-int4", "GPTQ INT4 (group 128)", 4 + _GROUP_128_BITS, "int4",
                     _SIXTEEN_BIT,
                     "4-bit weights with an fp16 scale and a 4-bit zero point per group of 128 "
                     "(4.156 bits; the int32 group index per input row adds under 0.01); "
                     "dequantised and multiplied in 16-bit.", weight_only=True,
                     source=_GPTQ_LAYOUT,
                     quality="On Llama 2 7B, WikiText-2 perplexity 5.69 against 5.47 in FP16 "
                     "(+0.22) at INT4, group 128, as the AWQ paper measured GPTQ (Lin et al., "
                     "MLSys 2024, Table 4)."),
        NumberFormat("nf4", "NF4 (bitsandbytes, double quantised)", 4 + 8 / 64 + 32 / (64 * 256),
                     "int4", _SIXTEEN_BIT,
                     "bitsandbytes' 4-bit NormalFloat as QLoRA uses it: blocks of 64 weights, "
                     "their scales quantised to 8 bits in blocks of 256 (4.127 bits); each "
                     "matmul dequantises to bf16.", weight_only=True,
                     source="Dettmers et al., 'QLoRA: Efficient Finetuning of Quantized LLMs' "
                     "(2023), section 3: block size 64 for the weights; double quantisation "
                     "stores 8-bit scales in blocks of 256, 8/64 + 32/(64 x 256) = 0.127 bits "
                     "per parameter instead of 32/64 = 0.5",
                     quality="LLaMA 7B to 65B fine-tuned with adapters on NF4 weights (double "
                     "quantised) match 16-bit LoRA on 5-shot MMLU, mean 53.1 against 53.0 in "
                     "BFloat16 and 52.2 in FP4 (QLoRA paper, Table 4); quantised without "
                     "fine-tuning, OPT, BLOOM, LLaMA and Pythia models of 125M to 13B average "
                     "Pile Common Crawl perplexity 27.41 in NF4 with double quantisation, "
                     "against 31.07 in FP4 (E2M1) and 34.34 in Int4 (Table 2)."),
        NumberFormat("llm-int8", "LLM.int8() (bitsandbytes)", 8, "int8", _SIXTEEN_BIT,
                     "bitsandbytes' 8-bit weights with one scale per row; the few outlier "
                     "feature columns are multiplied in fp16, the rest in int8. It runs no "
                     "faster than fp16, so its maths is counted at the 16-bit rate.",
                     weight_only=True,
                     source="Dettmers et al., 'LLM.int8(): 8-bit Matrix Multiplication for "
                     "Transformers at Scale' (2022): vector-wise int8 quantisation with a "
                     "mixed-precision decomposition of outlier features; Hugging Face blog 'A "
                     "Gentle Introduction to 8-bit Matrix Multiplication' (2022): BLOOM-176B "
                     "with LLM.int8() about 15 % to 23 % slower than the fp16 version",
                     quality="C4 validation perplexity 12.45 at 13B, the same as 32-bit "
                     "float (LLM.int8() paper, Table 1)."),
        NumberFormat("mxfp4", "MXFP4 (OCP microscaling)", 4 + 8 / 32, "fp4",
                     ("fp4", *_SIXTEEN_BIT),
                     "4-bit E2M1 floats with one 8-bit power-of-two scale per 32 (4.25 bits); "
                     "gpt-oss ships its experts in it. Blackwell and MI355X multiply it on fp4 "
                     "units; older chips dequantise to bf16.",
                     source="Open Compute Project, 'OCP Microscaling Formats (MX) "
                     "Specification' v1.0 (2023): MXFP4 = 32 FP4 (E2M1) elements sharing one "
                     "E8M0 scale",
                     quality="gpt-oss-20b and -120b were post-trained with their MoE weights in "
                     "MXFP4, and 'all evals were performed with the same MXFP4 quantization' "
                     "(OpenAI's gpt-oss-20b and gpt-oss-120b model cards, 2025): their "
                     "published scores are the MXFP4 model's own."),
    )
}


def get_format(format_id: str) -> NumberFormat:
    """The format called ``format_id`` (one of FORMAT_IDS, or a name of FORMAT_ALIASES);
    EngineError naming 'format' for any other name."""
    return FORMATS[parse_format(format_id)]


def parse_format(value: object, field: str = "format") -> FormatId:
    """``value`` as a format id, checked where it enters (a keyword, saved state): another
    name for a format (``nvfp4``) reads as its id; an EngineError naming ``field`` lists the
    formats when it is none of them."""
    for format_id in FORMATS:
        if value == format_id:
            return format_id
    for alias, format_id in FORMAT_ALIASES.items():
        if value == alias:
            return format_id
    shown = str(value)[:40]
    raise EngineError(f"Unknown number format {shown!r}; choose one of: {', '.join(FORMATS)}.",
                      field)
