"""A chip of the user's own: a small JSON spec read into a :class:`HardwareSpec`.

The spec (the CLI's ``--hardware-spec FILE.json``)::

    {"name": "My accelerator",
     "memory_GB": 85.0,                   decimal GB (10^9 bytes) a program can allocate
     "bandwidth_TB_per_s": 3.35,          memory bandwidth, 10^12 bytes/s
     "peak_TFLOP_per_s": {"bf16": 989.4,  dense peaks; bf16 required, fp16, fp8, fp4 and
                          "fp8": 1978.9}, int8 (TOP/s) optional
     "power_W": 700,                      optional: board power
     "usd_per_gpu_hour": 2.5,             optional: a price, used unless the run gives one
     "links": {"gpus_per_server": 8,      optional; without it, one card on a PCIe host link
               "scale_up_GB_per_s_each_way": 450,
               "scale_up_kind": "nvlink", optional: nvlink, pcie or xgmi (default pcie)
               "scale_out_GB_per_s_each_way": 50},  optional (default 100 Gb/s)
     "source": "where the figures came from"}       optional

Whatever its links, the chip reaches its host's memory over PCIe Gen4 x16 (31.5 GB/s each
way, assumed: a spec does not give it); offloaded layers are read over that.

Untrusted text is bounded before it is parsed (:data:`MAX_SPEC_CHARS` characters,
:data:`MAX_DEPTH` levels of brackets, numbers of at most :data:`MAX_NUMBER_CHARS`
characters), NaN and Infinity are refused, and every key is checked once here, each refusal
an EngineError naming the key. Inside the engine the chip is a plain HardwareSpec carrying its
own links, so every path that times communication finds them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.numbers import quantities
from engine.numbers.bounded_json import json_kind, nesting_depth
from engine.numbers.catalog.hardware import HardwareSpec
from engine.numbers.catalog.links import LinkSpec, stated_links
from engine.numbers.errors import EngineError
from engine.numbers.quantities import Quantity
from engine.numbers.records import unknown_keys

MAX_SPEC_CHARS = 10_000  # a spec is a few hundred characters
MAX_DEPTH = 4  # the spec nests two levels: peak_TFLOP_per_s and links
MAX_NUMBER_CHARS = 40  # 17 significant digits and an exponent fit with room to spare
MAX_NAME_CHARS = 60
MAX_SOURCE_CHARS = 300
FIELD = "hardware_spec"
USER_HARDWARE_ID = "user-spec"
# The formats a spec may give a peak for: the catalogue's peak keys (int8 is in TOP/s).
PEAK_KEYS = ("bf16", "fp16", "fp8", "int8", "fp4")
SCALE_UP_KINDS = ("nvlink", "pcie", "xgmi")  # the kinds links.toml's [latency] times
_TOP_KEYS = frozenset({"name", "memory_GB", "bandwidth_TB_per_s", "peak_TFLOP_per_s",
                       "power_W", "usd_per_gpu_hour", "links", "source"})
_LINK_KEYS = frozenset({"gpus_per_server", "scale_up_GB_per_s_each_way", "scale_up_kind",
                        "scale_out_GB_per_s_each_way"})
# Without links the chip is one card in a host: PCIe Gen4 x16 to it, a 100 Gb/s network out.
DEFAULT_SCALE_UP_GB_PER_S = 32.0
DEFAULT_SCALE_OUT_GB_PER_S = 12.5
_PCIE_SOURCE = ("PCI-SIG PCIe 4.0: 16 GT/s per lane x 16 lanes, about 32 GB/s each way (as "
                "links.toml's PCIe Gen4 cards, e.g. the L4)")
_NIC_SOURCE = "a 100 Gb/s network interface: 100 / 8 = 12.5 GB/s each way"
FIGURES_ARE_THE_USERS = "Figures given by the user's hardware spec, not the catalogue's."


@dataclass(frozen=True, slots=True)
class UserHardware:
    """A user's chip: the HardwareSpec the engine runs on (its links inside it, the stated
    one-card PCIe default where the spec gives none) and the price the spec gave (USD per
    GPU-hour, None when none)."""

    hardware: HardwareSpec
    usd_per_gpu_hour: float | None


def user_hardware_dict(hw: HardwareSpec) -> dict[str, object]:
    """A user's chip as the engine read it (SI units), saying whose figures they are."""
    return {"id": hw.id, "name": hw.name, "figures": "user's", "source": hw.source,
            "memory_bytes": hw.memory_bytes, "bandwidth_bytes_per_s": hw.bandwidth_bytes_per_s,
            "peak_flops_per_s": dict(hw.peaks), "power_W": hw.power_W,
            "links": hw.link_spec().to_dict()}


def user_hardware_from_text(text: object) -> UserHardware:
    """The chip a spec's JSON text describes; EngineError (field ``hardware_spec``) naming
    the key at fault otherwise."""
    return user_hardware_from_dict(parse_spec_text(text))


def parse_spec_text(text: object) -> dict[str, Any]:
    """A spec's text as a dict, size and nesting checked before the JSON parser runs."""
    if isinstance(text, bytes):
        if len(text) > 4 * MAX_SPEC_CHARS:
            raise _too_long(len(text))
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise EngineError("The hardware spec is not UTF-8 text.", FIELD) from None
    if not isinstance(text, str):
        raise EngineError("The hardware spec must be JSON text.", FIELD)
    if len(text) > MAX_SPEC_CHARS:
        raise _too_long(len(text))
    if not text.strip():
        raise EngineError("The hardware spec is empty: give a JSON object with name, "
                          "memory_GB, bandwidth_TB_per_s and peak_TFLOP_per_s.", FIELD)
    if nesting_depth(text) > MAX_DEPTH:
        raise EngineError(f"The hardware spec nests more than {MAX_DEPTH} levels of brackets; "
                          "a spec nests two.", FIELD)
    try:
        data = json.loads(text, parse_constant=_no_constant, parse_int=_bounded,
                          parse_float=_bounded)
    except json.JSONDecodeError as exc:
        raise EngineError(f"The hardware spec is not valid JSON (line {exc.lineno}, column "
                          f"{exc.colno}: {exc.msg}).", FIELD) from None
    except RecursionError:  # cannot happen after the depth check; kept as a last guard
        raise EngineError("The hardware spec nests too deeply.", FIELD) from None
    if not isinstance(data, dict):
        raise EngineError("The hardware spec must be a JSON object ({...}).", FIELD)
    return data


@dataclass(frozen=True, slots=True)
class _LongNumber:
    """A number written with more than MAX_NUMBER_CHARS characters, kept unconverted so the
    key that holds it can be named in the refusal."""

    chars: int


def _bounded(text: str) -> float | _LongNumber:
    return _LongNumber(len(text)) if len(text) > MAX_NUMBER_CHARS else float(text)


def _no_constant(name: str) -> object:
    raise EngineError(f"The hardware spec holds {name}, which is not a number JSON allows.",
                      FIELD)


def _too_long(n: int) -> EngineError:
    return EngineError(f"The hardware spec is {n:,} characters long; a spec is a few hundred "
                       f"(at most {MAX_SPEC_CHARS:,} are read).", FIELD)


def user_hardware_from_dict(data: Mapping[str, Any], *, source: str = "") -> UserHardware:
    """The chip a parsed spec describes (``source``: where it came from, e.g. its file)."""
    _no_unknown(data, _TOP_KEYS, "")
    for key in ("name", "memory_GB", "bandwidth_TB_per_s", "peak_TFLOP_per_s"):
        if key not in data:
            raise EngineError(f"The hardware spec needs {key!r} (it has "
                              f"{', '.join(sorted(map(str, data))) or 'no keys'}).", FIELD)
    name = _text(data["name"], "name", MAX_NAME_CHARS)
    given_source = _text(data["source"], "source", MAX_SOURCE_CHARS) if "source" in data else ""
    memory_GB = _number(data["memory_GB"], "memory_GB", quantities.CHIP_MEMORY_GB)
    bandwidth = _number(data["bandwidth_TB_per_s"], "bandwidth_TB_per_s",
                        quantities.CHIP_BANDWIDTH_TB_PER_S)
    peaks = _peaks(data["peak_TFLOP_per_s"])
    power = (None if data.get("power_W") is None
             else _number(data["power_W"], "power_W", quantities.CHIP_POWER_W))
    price = (None if data.get("usd_per_gpu_hour") is None
             else _number(data["usd_per_gpu_hour"], "usd_per_gpu_hour",
                          quantities.USD_PER_GPU_HOUR))
    links = _links(data.get("links"), name)
    said = "; ".join(s for s in (source, given_source) if s)
    hardware = HardwareSpec(
        id=USER_HARDWARE_ID, name=name, kind="gpu", vendor="", memory_bytes=memory_GB * 1e9,
        memory_type="device", bandwidth_bytes_per_s=bandwidth * 1e12, peaks=peaks,
        power_W=power, interconnect=links.scale_up,
        interconnect_bytes_per_s=links.scale_up_bytes_per_s, compute_units=0,
        compute_unit_name="", lanes=0,
        source=f"{FIGURES_ARE_THE_USERS}{f' ({said})' if said else ''}",
        note=FIGURES_ARE_THE_USERS, confidence="user",
        memory_basis=f"{memory_GB:,} GB, the figure the user's spec gives",
        links=links)
    return UserHardware(hardware, price)


def _no_unknown(data: Mapping[str, Any], allowed: frozenset[str], under: str) -> None:
    extra = unknown_keys(data, allowed)
    if extra:
        where = f" in {under!r}" if under else ""
        raise EngineError(f"The hardware spec has unknown keys{where}: {', '.join(extra[:5])}; "
                          f"it takes {', '.join(sorted(allowed))}.", FIELD)


def _label(key: str) -> str:
    return f"Hardware spec {key!r}"


def _number(value: object, key: str, quantity: Quantity) -> float:
    """A JSON number within ``quantity``'s range; text, booleans and null are refused
    (a spec is written by hand once: '85 GB' is a mistake to point out, not to read)."""
    if isinstance(value, _LongNumber):
        raise EngineError(f"{_label(key)}: a number of {value.chars:,} characters is not a "
                          f"figure; give one {quantity.range_words()}.", FIELD)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise EngineError(f"{_label(key)} must be a number {quantity.range_words()}, not "
                          f"{json_kind(value)}.", FIELD)
    return quantity.check(value, FIELD, _label(key))


def _text(value: object, key: str, longest: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise EngineError(f"{_label(key)} must be non-empty text.", FIELD)
    if len(value) > longest:
        raise EngineError(f"{_label(key)} is {len(value):,} characters; at most {longest}.",
                          FIELD)
    if not value.isprintable():
        raise EngineError(f"{_label(key)} holds control characters.", FIELD)
    return value.strip()


def _peaks(value: object) -> tuple[tuple[str, float], ...]:
    if not isinstance(value, dict):
        raise EngineError(f"{_label('peak_TFLOP_per_s')} must be an object of dense peaks by "
                          f"format, e.g. {{\"bf16\": 989.4}}, not {json_kind(value)}.", FIELD)
    _no_unknown(value, frozenset(PEAK_KEYS), "peak_TFLOP_per_s")
    if "bf16" not in value:
        raise EngineError(f"{_label('peak_TFLOP_per_s')} needs a bf16 peak (the others are "
                          "optional).", FIELD)
    return tuple((k, _number(value[k], f"peak_TFLOP_per_s.{k}",
                             quantities.CHIP_PEAK_TFLOP_PER_S) * 1e12)
                 for k in PEAK_KEYS if k in value)


def _links(value: object, name: str) -> LinkSpec:
    if value is None:
        return stated_links(
            USER_HARDWARE_ID, chips_per_server=1,
            scale_up="PCIe Gen4 x16 to the host (default: the spec gives no links)",
            scale_up_GB_per_s_each_way=DEFAULT_SCALE_UP_GB_PER_S,
            scale_out="a 100 Gb/s network (default)",
            scale_out_GB_per_s_each_way=DEFAULT_SCALE_OUT_GB_PER_S, latency_kind="pcie",
            source=f"Default links of a spec without any: one card per server; {_PCIE_SOURCE}; "
                   f"{_NIC_SOURCE}")
    if not isinstance(value, dict):
        raise EngineError(f"{_label('links')} must be an object, not {json_kind(value)}.", FIELD)
    _no_unknown(value, _LINK_KEYS, "links")
    for key in ("gpus_per_server", "scale_up_GB_per_s_each_way"):
        if key not in value:
            raise EngineError(f"{_label('links')} needs {key!r}.", FIELD)
    per = int(_number(value["gpus_per_server"], "links.gpus_per_server",
                      quantities.CHIPS_PER_SERVER))
    up = _number(value["scale_up_GB_per_s_each_way"], "links.scale_up_GB_per_s_each_way",
                 quantities.LINK_GB_PER_S)
    kind = value.get("scale_up_kind", "pcie")
    if kind not in SCALE_UP_KINDS:
        raise EngineError(f"{_label('links.scale_up_kind')} must be one of "
                          f"{', '.join(SCALE_UP_KINDS)}.", FIELD)
    out_given = value.get("scale_out_GB_per_s_each_way") is not None
    out = (_number(value["scale_out_GB_per_s_each_way"], "links.scale_out_GB_per_s_each_way",
                   quantities.LINK_GB_PER_S) if out_given else DEFAULT_SCALE_OUT_GB_PER_S)
    return stated_links(
        USER_HARDWARE_ID, chips_per_server=per,
        scale_up=f"{name}'s scale-up link ({kind}, as the spec gives it)",
        scale_up_GB_per_s_each_way=up,
        scale_out="the network, as the spec gives it" if out_given
        else "a 100 Gb/s network (default)",
        scale_out_GB_per_s_each_way=out, latency_kind=str(kind),
        source=FIGURES_ARE_THE_USERS + ("" if out_given else f" Scale-out default: {_NIC_SOURCE}."))
