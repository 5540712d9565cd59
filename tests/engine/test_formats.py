import pytest

from engine.lesson.plans.fields import PLAN_FIELDS
from engine.lesson.tables.registry import formats as formats_table
from engine.numbers.catalog import get_hardware
from engine.numbers.catalog.efficiency import matmul_fraction
from engine.numbers.errors import EngineError
from engine.numbers.formats import FORMATS, get_format, parse_format
from engine.numbers.memory import ServingMemory
from engine.numbers.plan import plan
from engine.render.html import esc


def test_bytes_per_number():
    assert {k: f.bytes_per_number for k, f in FORMATS.items()} == {
        "fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5,
        # ggml-common.h: block_q4_0 = 2-byte scale + 16 bytes for 32 weights = 18/32 bytes;
        # block_q8_0 = 2 + 32 bytes for 32 weights; NVFP4 = 4 bits + an 8-bit scale per 16.
        "q4_0": 18 / 32, "q8_0": 34 / 32, "fp4": (4 + 8 / 16) / 8,
        # llama.cpp examples/quantize/README.md (2023, Llama 2 7B): Q4_K_M averages 4.84 bits
        # per weight.
        "q4_k_m": 4.84 / 8,
        # llama.cpp files of Llama 3.1 8B (worked below); block_q6_K = 210 bytes per 256.
        "q2_k": 3.16 / 8, "q3_k_m": 4.0 / 8, "q5_k_m": 5.7 / 8, "q6_k": 210 / 256,
        # Group 128: an fp16 scale and a 4-bit zero per 128 weights.
        "awq-int4": (4 + 20 / 128) / 8, "gptq-int4": (4 + 20 / 128) / 8,
        # QLoRA: 4 bits + 8-bit scales per 64 + an fp32 scale per 64 x 256.
        "nf4": (4 + 8 / 64 + 32 / 16384) / 8, "llm-int8": 1.0,
        # OCP MX: 32 E2M1 values share one 8-bit scale.
        "mxfp4": (4 + 8 / 32) / 8}


def test_get_format_and_errors():
    assert get_format("bf16").peak_key == "bf16"
    for bad in ("bf17", None, 3, ""):
        with pytest.raises(EngineError) as e:
            get_format(bad)
        assert e.value.field == "format"


def test_to_dict_plain():
    d = get_format("int4").to_dict()
    assert d["bits"] == 4 and d["bytes_per_number"] == 0.5


# Llama 3.1 8B's matrices (parameters): the input embedding and the output matrix, and per
# layer (32) q, k, v, o and the MLP's gate, up and down; its 65 norm vectors stay fp32.
_EMBED = 128256 * 4096
_Q = _O = 4096 * 4096
_K = _V = 4096 * 1024
_MLP = 4096 * 14336
_NORMS = 65 * 4096
_LAYERS = 32
_BLOCK_BITS = {"q2_K": 2.625, "q3_K": 3.4375, "q4_K": 4.5, "q5_K": 5.5, "q6_K": 6.5625}


def _file_bits_per_weight(base: str, *, v: list[str], down: list[str], o: list[str],
                          output: str) -> float:
    """Bits per weight of a llama.cpp file of Llama 3.1 8B: every matrix in ``base`` blocks
    but attn_v, ffn_down and attn_output (one type per layer) and the output matrix."""
    b = _BLOCK_BITS
    bits = (_EMBED * b[base] + _EMBED * b[output] + _NORMS * 32
            + _LAYERS * (_Q * b[base] + _K * b[base] + 2 * _MLP * b[base]))
    bits += sum(_V * b[t] for t in v) + sum(_MLP * b[t] for t in down)
    bits += sum(_O * b[t] for t in o)
    params = 2 * _EMBED + _NORMS + _LAYERS * (_Q + _K + _V + _O + 3 * _MLP)
    assert params == 8_030_261_248
    return bits / params


def _more_bits(layer: int) -> bool:
    """llama-quant.cpp's use_more_bits for 32 layers: the first and last eighth, and every
    third layer between."""
    n = _LAYERS
    return layer < n // 8 or layer >= 7 * n // 8 or (layer - n // 8) % 3 == 2


def test_llama_cpp_mixes_average_their_tensors_types():
    """Each file type's rule (src/llama-quant.cpp llama_tensor_get_type) applied to Llama 3.1
    8B's matrices gives llama.cpp's published bits per weight of that file
    (tools/quantize/README.md: Q2_K 3.1593, Q4_K_M 4.8944, Q5_K_M 5.7036, Q6_K 6.5633; Q3_K_M
    3.74 GiB in quantize.cpp's table = 4.00 bits), which the catalogue rounds."""
    layers = range(_LAYERS)
    q2 = _file_bits_per_weight("q2_K", v=["q4_K"] * 32, down=["q3_K"] * 32, o=["q3_K"] * 32,
                               output="q6_K")
    first_two = ["q5_K" if i < 2 else "q4_K" for i in layers]
    q3m = _file_bits_per_weight("q3_K", v=first_two, down=first_two, o=["q4_K"] * 32,
                                output="q6_K")
    half_q6 = {base: ["q6_K" if _more_bits(i) else base for i in layers]
               for base in ("q4_K", "q5_K")}
    q4m = _file_bits_per_weight("q4_K", v=half_q6["q4_K"], down=half_q6["q4_K"],
                                o=["q4_K"] * 32, output="q6_K")
    q5m = _file_bits_per_weight("q5_K", v=half_q6["q5_K"], down=half_q6["q5_K"],
                                o=["q5_K"] * 32, output="q6_K")
    q6 = _file_bits_per_weight("q6_K", v=["q6_K"] * 32, down=["q6_K"] * 32, o=["q6_K"] * 32,
                               output="q6_K")
    assert round(q2, 4) == 3.1593 and round(q4m, 4) == 4.8944
    assert round(q5m, 4) == 5.7036 and round(q6, 4) == 6.5633
    assert abs(q3m * 8_030_261_248 / 8 / 2**30 - 3.74) < 0.005  # GiB, as quantize.cpp rounds
    for format_id, worked in (("q2_k", q2), ("q3_k_m", q3m), ("q5_k_m", q5m), ("q6_k", q6)):
        assert abs(get_format(format_id).bits - worked) < 0.01, format_id


# Llama 3.1 8B's weights in each new format, worked by hand: 8,030,261,248 parameters x
# bits / 8 (GB = 1e9 bytes).
LLAMA_8B_WEIGHTS_GB = {
    "q2_k": 3.1719,       # 3.16 bits
    "q3_k_m": 4.0151,     # 4.0 bits
    "q5_k_m": 5.7215,     # 5.7 bits
    "q6_k": 6.5873,       # 6.5625 bits
    "awq-int4": 4.1720,   # 4 + 20/128 = 4.15625 bits
    "gptq-int4": 4.1720,
    "nf4": 4.1425,        # 4 + 8/64 + 32/16384 = 4.12695 bits
    "llm-int8": 8.0303,   # 8 bits
    "mxfp4": 4.2661,      # 4.25 bits
}


@pytest.mark.parametrize("format_id", sorted(LLAMA_8B_WEIGHTS_GB))
def test_llama_8b_weights_and_a_plan_in_each_format(format_id):
    p = plan(model="llama-3.1-8b", hardware="h100-sxm", gpus=1, task="serve",
             weight_format=format_id)
    assert isinstance(p.memory, ServingMemory) and p.serve is not None
    assert p.memory.weights_bytes_total / 1e9 == pytest.approx(LLAMA_8B_WEIGHTS_GB[format_id],
                                                               abs=1e-4)
    assert p.serve.ttft_seconds > 0 and p.serve.expected.decode_seconds > 0


def test_maths_rates_by_chip():
    """Dequantising formats multiply in 16-bit on every GPU; mxfp4 on fp4 units where a chip
    has them (B200), in bf16 where not (H100); llama.cpp's types in int8 at its kernels'
    measured rate ([matmul.ggml])."""
    h100, b200 = get_hardware("h100-sxm"), get_hardware("b200")
    for f in ("awq-int4", "gptq-int4", "nf4", "llm-int8"):
        assert h100.compute_peak(f)[1] == "bf16" and b200.compute_peak(f)[1] == "bf16"
    assert h100.compute_peak("mxfp4")[1] == "bf16" and b200.compute_peak("mxfp4")[1] == "fp4"
    for f in ("q2_k", "q3_k_m", "q5_k_m", "q6_k"):
        assert h100.compute_peak(f)[1] == "int8"
        assert "llama.cpp" in matmul_fraction(h100, "int8", f).name


def test_nvfp4_reads_as_fp4():
    assert parse_format("nvfp4") == "fp4" and get_format("nvfp4").bits == 4.5
    assert PLAN_FIELDS["weight_format"].parse("nvfp4") == "fp4"
    p = plan(model="llama-3.1-8b", hardware="b200", gpus=1, task="serve",
             weight_format="nvfp4")
    assert p.weight_format == "fp4"


@pytest.mark.parametrize("kv_format", ["fp8", "int8", "q8_0", "q4_0"])
def test_kv_cache_formats_and_their_runtimes(kv_format):
    assert PLAN_FIELDS["kv_format"].parse(kv_format) == kv_format
    assert get_format(kv_format).kv_cache  # which runtime offers it
    p = plan(model="llama-3.1-8b", hardware="h100-sxm", gpus=1, task="serve",
             kv_format=kv_format)
    assert isinstance(p.memory, ServingMemory)
    # Llama 3.1 8B: 2 (K and V) x 32 layers x 8 heads x 128 = 65,536 numbers per token.
    assert p.memory.kv_cache_bytes_per_token == 65536 * get_format(kv_format).bytes_per_number


def test_formats_table_says_quality_and_kv_runtime():
    html = formats_table()
    for f in FORMATS.values():
        if f.quality:
            assert esc(f.quality) in html
    assert "+3.5199" in html and "27.41" in html and "--cache-type-k" in html
