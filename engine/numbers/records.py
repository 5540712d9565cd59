"""Records as plain JSON values, and back: one helper over dataclass fields.

:func:`to_dict` writes every field of a dataclass record, in field order, as JSON-ready values:
nested records through their own ``to_dict`` (else this helper), tuples and lists as lists,
dicts copied, whole numbers past 2^53 as floats (JavaScript would read them as BigInt). Records
inherit :class:`Record` to get it as their ``to_dict`` method; one whose JSON differs from its
fields says how in its class attribute ``JSON`` (a :class:`JsonShape`): fields renamed, nested
records written as their id, pairs written as a mapping, fields left out, derived values
(properties) added.

:func:`from_dict` reads a record back from untrusted JSON: a mapping whose keys are the
record's fields, each value checked by the caller's parser for that field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from typing import Any, ClassVar, TypeVar

from engine.numbers.errors import EngineError

R = TypeVar("R")
MAX_EXACT_INT = 2**53  # JavaScript's numbers hold whole numbers exactly up to here


@dataclass(frozen=True, slots=True)
class JsonShape:
    """How a record's JSON differs from its fields.

    rename: field -> key. ids: fields holding a record written as its ``id``. mappings:
    fields holding (key, value) pairs written as an object. skip: fields left out.
    derived: properties written after the fields. after: a field or derived value -> the
    key it is written right after (a field's key or another derived value's), where the
    published key order is not the fields' order.
    """

    rename: Mapping[str, str] = field(default_factory=dict)
    ids: tuple[str, ...] = ()
    mappings: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    derived: tuple[str, ...] = ()
    after: Mapping[str, str] = field(default_factory=dict)


_PLAIN = JsonShape()


class Record:
    """A base for frozen dataclass records: ``record.to_dict()`` is :func:`to_dict`, shaped by
    the class's ``JSON``."""

    __slots__ = ()
    JSON: ClassVar[JsonShape] = _PLAIN

    def to_dict(self) -> dict[str, object]:
        return to_dict(self)


def to_dict(record: Any) -> dict[str, object]:
    """``record``'s fields (and derived values) as JSON-ready values, in field order."""
    shape: JsonShape = getattr(type(record), "JSON", _PLAIN)
    field_names = {f.name for f in fields(record)}
    follows = {key: name for name, key in shape.after.items()}
    out: dict[str, object] = {}

    def put(name: str) -> None:
        key = shape.rename.get(name, name)
        out[key] = plain(_value(record, shape, name, name in field_names))
        if key in follows:  # what is placed after this key, one after another
            put(follows[key])

    for f in fields(record):
        if f.name not in shape.skip and f.name not in shape.after:
            put(f.name)
    for name in shape.derived:
        if name not in shape.after:
            put(name)
    return out


def _value(record: Any, shape: JsonShape, name: str, is_field: bool) -> object:
    value = getattr(record, name)
    if is_field and name in shape.ids:
        return value.id
    if is_field and name in shape.mappings:
        return dict(value)
    return value


def plain(value: object) -> object:
    """A value as JSON holds it (see :func:`to_dict`)."""
    if is_dataclass(value) and not isinstance(value, type):
        own = getattr(value, "to_dict", None)
        return own() if callable(own) else to_dict(value)
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if type(value) is int and abs(value) > MAX_EXACT_INT:
        return float(value)
    return value


def unknown_keys(data: Mapping[Any, object], allowed: set[str] | frozenset[str]) -> list[str]:
    """The keys of ``data`` not in ``allowed``, sorted and cut to 40 characters each (for a
    message that quotes untrusted input)."""
    return sorted(str(k)[:40] for k in data if k not in allowed)


def from_dict(cls: type[R], data: object, parse: Mapping[str, Callable[[object], object]], *,
              what: str, ignore: tuple[str, ...] = (), require: tuple[str, ...] = ()) -> R:
    """A ``cls`` record from untrusted ``data``: a mapping whose keys are fields of ``cls`` (or
    named in ``ignore``, which are left out), each value passed through ``parse[field]`` (it
    raises EngineError on a bad value; a field with no parser is taken as given). A field
    missing from ``data`` keeps its default. Refused with EngineError: not a mapping, an
    unknown key, a missing field that has no default or is named in ``require``. ``what``
    names the record in messages ('log entry')."""
    if not isinstance(data, Mapping):
        raise EngineError(f"each {what} must be a mapping.")
    record_fields = [f for f in fields(cls) if f.init]  # type: ignore[arg-type]
    names = {f.name for f in record_fields}
    unknown = unknown_keys(data, names | set(ignore))
    if unknown:
        raise EngineError(f"unknown {what} field(s) {', '.join(unknown)}.")
    missing = [f.name for f in record_fields if f.name not in data and (
        f.name in require or (f.default is MISSING and f.default_factory is MISSING))]
    if missing:
        raise EngineError(f"each {what} needs {', '.join(missing)}.")
    kwargs = {f.name: parse[f.name](data[f.name]) if f.name in parse else data[f.name]
              for f in record_fields if f.name in data}
    return cls(**kwargs)
