"""engine.numbers.records: records written as JSON values by one helper over their fields,
and read back from untrusted JSON with every field checked."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from engine.numbers.catalog import get_hardware, get_system
from engine.numbers.errors import EngineError
from engine.numbers.records import JsonShape, Record, from_dict, plain, to_dict


@dataclass(frozen=True, slots=True)
class Inner(Record):
    id: str
    sizes: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Outer(Record):
    JSON = JsonShape(rename={"name_id": "name"}, ids=("ref",), mappings=("pairs",),
                     skip=("secret",), derived=("total", "first"), after={"first": "name"})

    name_id: str
    ref: Inner
    inner: Inner
    pairs: tuple[tuple[str, float], ...]
    table: dict[str, float]
    big: int
    secret: str = "hidden"

    @property
    def total(self) -> float:
        return sum(self.table.values())

    @property
    def first(self) -> int:
        return self.inner.sizes[0]


def outer() -> Outer:
    inner = Inner("a", (1, 2))
    return Outer("x", inner, inner, (("bf16", 1e15),), {"w": 2.0, "kv": 1.0}, 2**60)


def test_fields_in_order_with_the_shape_applied() -> None:
    d = outer().to_dict()
    assert list(d) == ["name", "first", "ref", "inner", "pairs", "table", "big", "total"]
    assert d["ref"] == "a" and d["inner"] == {"id": "a", "sizes": [1, 2]}
    assert d["pairs"] == {"bf16": 1e15} and d["total"] == 3.0 and d["first"] == 1
    assert d["big"] == float(2**60) and isinstance(d["big"], float)  # past 2^53: a float
    assert "secret" not in d
    json.dumps(d, allow_nan=False)


def test_values_are_copies_not_the_records_own() -> None:
    o = outer()
    d = to_dict(o)
    d["table"]["w"] = 99.0  # type: ignore[index]
    assert o.table["w"] == 2.0
    assert plain((1, [2, (3,)])) == [1, [2, [3]]]


def test_catalogue_records_keep_their_published_keys() -> None:
    # The CLI's `catalog --json` keys: hardware peaks under peak_flops_per_s, systems naming
    # their chips by id with the total GPU memory after the CPU count.
    h = get_hardware("h100-sxm").to_dict()
    assert h["peak_flops_per_s"]["bf16"] == pytest.approx(989.4e12)  # NVIDIA H100 datasheet
    keys = list(h)  # fields with defaults, published beside the capacity they qualify
    assert keys[keys.index("memory_bytes") + 1 : keys.index("memory_bytes") + 3] == [
        "memory_marketed_GB", "memory_basis"]
    s = get_system("dgx-1").to_dict()
    assert s["gpu"] == "h100-sxm"
    keys = list(s)
    assert keys[keys.index("cpu_count") + 1] == "gpu_memory_bytes"
    # 8 x the H100's allocatable 79.11 GiB (84.94 GB; the catalogue's memory_basis).
    assert s["gpu_memory_bytes"] == pytest.approx(8 * 84.94e9, rel=1e-4)


def test_from_dict_checks_each_field() -> None:
    parse = {"id": lambda v: str(v).upper()}
    assert from_dict(Inner, {"id": "b", "sizes": (3,)}, parse, what="inner") == Inner("B", (3,))
    with pytest.raises(EngineError, match="each inner must be a mapping"):
        from_dict(Inner, [1], parse, what="inner")
    with pytest.raises(EngineError, match=r"unknown inner field\(s\) evil"):
        from_dict(Inner, {"id": "b", "sizes": (), "evil": 1}, parse, what="inner")
    with pytest.raises(EngineError, match="each inner needs sizes"):
        from_dict(Inner, {"id": "b"}, parse, what="inner")
    assert from_dict(Inner, {"id": "b", "sizes": (), "note": 1}, parse, what="inner",
                     ignore=("note",)) == Inner("B", ())


def test_from_dict_requires_named_fields_with_defaults() -> None:
    with pytest.raises(EngineError, match="needs secret"):
        from_dict(Outer, {**outer().to_dict(), "name_id": "x"}, {}, what="outer",
                  ignore=("name", "first", "total"), require=("secret",))
