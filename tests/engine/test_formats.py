import pytest

from engine.numbers.errors import EngineError
from engine.numbers.formats import FORMATS, get_format


def test_bytes_per_number():
    assert {k: f.bytes_per_number for k, f in FORMATS.items()} == {
        "fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5,
        # ggml-common.h: block_q4_0 = 2-byte scale + 16 bytes for 32 weights = 18/32 bytes;
        # block_q8_0 = 2 + 32 bytes for 32 weights; NVFP4 = 4 bits + an 8-bit scale per 16.
        "q4_0": 18 / 32, "q8_0": 34 / 32, "fp4": (4 + 8 / 16) / 8,
        # llama.cpp tools/quantize/README.md: Q4_K_M averages 4.84 bits per weight.
        "q4_k_m": 4.84 / 8}


def test_get_format_and_errors():
    assert get_format("bf16").peak_key == "bf16"
    for bad in ("bf17", None, 3, ""):
        with pytest.raises(EngineError) as e:
            get_format(bad)
        assert e.value.field == "format"


def test_to_dict_plain():
    d = get_format("int4").to_dict()
    assert d["bits"] == 4 and d["bytes_per_number"] == 0.5
