import pytest

from engine.numbers.errors import EngineError
from engine.numbers.formats import FORMATS, get_format


def test_bytes_per_number():
    assert {k: f.bytes_per_number for k, f in FORMATS.items()} == {
        "fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}


def test_get_format_and_errors():
    assert get_format("bf16").peak_key == "bf16"
    for bad in ("bf17", None, 3, ""):
        with pytest.raises(EngineError) as e:
            get_format(bad)
        assert e.value.field == "format"


def test_to_dict_plain():
    d = get_format("int4").to_dict()
    assert d["bits"] == 4 and d["bytes_per_number"] == 0.5
