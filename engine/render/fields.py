"""Fields: one declaration per input, from which its control, its parsing, the command line's
flag and the address key all follow.

A :class:`Field` names an input (the form's ``name``, the address key, the CLI flag), labels
it for the reader and gives its default as the form's text. Its subclass says what the text
means: :class:`Count` (a whole number) and :class:`Amount` (a float) check a
:class:`~engine.numbers.quantities.Quantity` (unit, sensible range and why), :class:`OptionalAmount`
also takes an empty box, :class:`Choice` one of its options, :class:`Text` any text (the
engine's own state, a drill's answer). ``field.parse(text)`` returns the typed value or
raises :class:`~engine.numbers.errors.EngineError` naming the field, with a message that
states the range that makes sense.

A widget's render reads typed values from :class:`Values` (``values[CONTEXT]`` is an int):
each field is parsed when the render first reads it, so an input the current choices leave
unused (the MFU calculator's measured throughput when it computes a time) blocks nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Self, TypeVar

from engine.numbers.errors import EngineError
from engine.numbers.quantities import Quantity, show
from engine.numbers.validate import shorthand_value

CONTROL_KINDS = ("number", "select", "range", "text", "textarea", "hidden")

T = TypeVar("T")
# The most choices a refusal lists (a model select offers the whole config library).
MAX_LISTED_CHOICES = 16


@dataclass(frozen=True, slots=True)
class Control:
    """One labelled form control. ``default`` is text, exactly as the form would send it."""

    name: str
    label: str
    kind: str
    default: str
    options: tuple[tuple[str, str], ...] = ()  # (value, label) pairs for a select
    # The group of each option, in the same order (a select's <optgroup> labels; '': none).
    option_groups: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    step: str = "any"
    unit: str = ""
    hint: str = ""
    # A slider's words for each notch from its minimum, which a screen reader says instead of
    # the bare number (aria-valuetext): "a batch of 64" for notch 6.
    value_texts: tuple[str, ...] = ()
    # Whether a slider shows its notch's words beside it (an <output>), not only to a screen
    # reader: for a slider whose value the result does not say until the reader acts.
    shows_value: bool = False
    # Whether the field starts hidden (the ``hidden`` attribute), for a widget's stylesheet
    # to show once its result makes the field mean something.
    starts_hidden: bool = False
    # The longest text the engine reads in this field: the page refuses longer text beside
    # the field without sending it (a pasted file of megabytes would cost every keystroke).
    max_chars: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in CONTROL_KINDS:
            raise ValueError(f"control {self.name}: kind must be one of {CONTROL_KINDS}")
        if self.kind == "select" and not self.options:
            raise ValueError(f"control {self.name}: a select needs options")
        if self.option_groups and len(self.option_groups) != len(self.options):
            raise ValueError(f"control {self.name}: one group per option")
        if self.name == "action":
            raise ValueError("'action' is reserved for the pressed button")


@dataclass(frozen=True)
class Field(Generic[T]):
    """One input: ``name`` (form, address and CLI), ``label`` (shown, and in messages),
    ``default`` (text, exactly as the form sends it), and how it is shown: ``control``
    (``number``, ``select``, ``range``, ``text`` or ``hidden``), ``unit`` and ``hint`` beside
    it, ``options`` ((value, label) pairs of a select)."""

    name: str
    label: str
    default: str
    unit: str = ""
    hint: str = ""
    control_kind: str = "number"
    options: tuple[tuple[str, str], ...] = ()
    option_groups: tuple[str, ...] = ()  # each option's group (Control.option_groups)
    value_texts: tuple[str, ...] = ()  # a slider's words per notch (Control.value_texts)
    shows_value: bool = False  # a slider shows its notch's words beside it (Control.shows_value)
    starts_hidden: bool = False  # shown by the widget's stylesheet later (Control.starts_hidden)
    max_chars: int | None = None  # the longest text the engine reads (Control.max_chars)

    def parse(self, text: str) -> T:
        """The typed value of ``text``; EngineError naming this field when it makes no sense."""
        raise NotImplementedError

    def but(self, **changes: Any) -> Self:
        """The same field with some declarations changed (another label, default or range)."""
        return replace(self, **changes)

    @property
    def control(self) -> Control:
        """The labelled form control that shows this field."""
        return Control(
            self.name,
            self.label,
            self.control_kind,
            self.default,
            options=self.options,
            option_groups=self.option_groups,
            unit=self.unit,
            hint=self.hint,
            value_texts=self.value_texts,
            shows_value=self.shows_value,
            starts_hidden=self.starts_hidden,
            max_chars=self.max_chars,
            **self._range_attributes(),
        )

    def _range_attributes(self) -> dict[str, Any]:
        return {}

    def help(self) -> str:
        """One line for the command line's --help: what it is, its range or choices."""
        unit = f" ({self.unit})" if self.unit else ""
        return f"{self.label}{unit}"


@dataclass(frozen=True)
class Numeric(Field[T]):
    quantity: Quantity = field(kw_only=True)

    def _range_attributes(self) -> dict[str, Any]:
        if self.control_kind != "range":
            return {}
        return {"minimum": self.quantity.minimum, "maximum": self.quantity.maximum, "step": "1"}

    def help(self) -> str:
        # Every number field reads the shorthand (engine.numbers.validate.to_float); token
        # counts are where people type it, and where 1,024 is the likely misreading.
        shorthand = "; 8k is 8,000 (not 8,192), 1.5M and 2e12 read too" \
            if self.quantity.unit == "tokens" else ""
        return f"{self.label}, {self.quantity.range_words()}{shorthand}"

    def shorthand_note(self, text: str) -> str:
        """What ``text`` was read as when it is written as shorthand ('Read as 8,000
        tokens.'), else ''."""
        number = shorthand_value(text)
        if number is None:
            return ""
        unit = f" {self.quantity.unit}" if self.quantity.unit else ""
        return f"Read as {show(number)}{unit}."

    def within(self, *, minimum: float | None = None, maximum: float | None = None,
               reason: str | None = None) -> Self:
        """The same field over a narrower range (e.g. up to the chosen model's context)."""
        q = self.quantity.within(minimum=minimum, maximum=maximum, reason=reason)
        return replace(self, quantity=q)


@dataclass(frozen=True)
class Count(Numeric[int]):
    """A whole number of ``quantity`` (tokens, GPUs, requests)."""

    def parse(self, text: str) -> int:
        return self.quantity.check_integer(text, self.name, self.label)


@dataclass(frozen=True)
class Amount(Numeric[float]):
    """A number of ``quantity`` (a share, days, dollars)."""

    def parse(self, text: str) -> float:
        return self.quantity.check(text, self.name, self.label)


@dataclass(frozen=True)
class OptionalAmount(Numeric["float | None"]):
    """An amount the reader may leave empty (``None``: the engine's default applies)."""

    def parse(self, text: str) -> float | None:
        if text.strip() == "":
            return None
        return self.quantity.check(text, self.name, self.label)


@dataclass(frozen=True)
class _Select(Field[T]):
    """A select: one of ``options`` ((value, label) pairs)."""

    control_kind: str = "select"

    def __post_init__(self) -> None:
        if not self.options:
            raise ValueError(f"choice {self.name}: needs options")

    def values(self) -> tuple[str, ...]:
        return tuple(v for v, _ in self.options)

    def refuse(self, text: str) -> EngineError:
        """The error for ``text``, none of the options."""
        if text == "":
            # A browser sends '' when the address names an option its list lacks.
            return EngineError(
                f"No {self.label.lower()} chosen (a link may have named one this page does not "
                "know): pick one from the list.",
                self.name,
            )
        shown = text if len(text) <= 40 else text[:40] + "..."
        values = self.values()
        listed = ", ".join(values) if len(values) <= MAX_LISTED_CHOICES else (
            f"{', '.join(values[:MAX_LISTED_CHOICES])} or another of the {len(values)} in the list")
        return EngineError(f"Unknown {self.label.lower()} {shown!r}; choose one of: {listed}.",
                           self.name)

    def help(self) -> str:
        return f"{self.label}: {', '.join(self.values())}"


@dataclass(frozen=True)
class Choice(_Select[str]):
    """One of ``options`` (a select), as text."""

    def parse(self, text: str) -> str:
        if text in self.values():
            return text
        raise self.refuse(text)


C = TypeVar("C", bound=str)


@dataclass(frozen=True)
class OneOf(_Select[C]):
    """One of ``ids``, the values of a ``Literal`` type (a format id), shown as ``options``
    (each id with its label): ``values[field]`` is of that type."""

    ids: tuple[C, ...] = field(default=(), kw_only=True)
    # Other names accepted for an id (typed or in a link; the select shows only the ids); one
    # naming an id this field does not offer (a narrowed copy) is refused like any other text.
    aliases: tuple[tuple[str, C], ...] = field(default=(), kw_only=True)

    def __post_init__(self) -> None:
        _Select.__post_init__(self)
        if self.values() != self.ids:
            raise ValueError(f"choice {self.name}: its options must be its ids")

    def parse(self, text: str) -> C:
        for chosen in self.ids:
            if chosen == text:
                return chosen
        for alias, chosen in self.aliases:
            if alias == text and chosen in self.ids:
                return chosen
        raise self.refuse(text)


def one_of(name: str, label: str, default: C, choices: tuple[C, ...],
           labels: Mapping[str, str], **more: Any) -> OneOf[C]:
    """A :class:`OneOf` field offering ``choices`` in order, each shown as ``labels[c]``."""
    return OneOf(name, label, default, options=tuple((c, labels[c]) for c in choices),
                 ids=choices, **more)


@dataclass(frozen=True)
class Text(Field[str]):
    """Any text, checked by the engine where it is used (a saved state, a drill's answer)."""

    control_kind: str = "text"

    def parse(self, text: str) -> str:
        return text


def hidden(name: str, label: str, default: str) -> Text:
    """State the engine hands back to itself (JSON text, a shown race), never typed."""
    return Text(name, label, default, control_kind="hidden")


class Values:
    """The reader's inputs as typed values: ``values[FIELD]`` parses that field's text with
    that field (so a field narrowed with ``within`` applies its narrower range); the pressed
    button is ``values.action`` (empty when none)."""

    __slots__ = ("_parsed", "_raw", "action")

    def __init__(self, raw: Mapping[str, str], action: str = "") -> None:
        self._raw = raw
        self._parsed: dict[Field[Any], Any] = {}
        self.action = action

    def __getitem__(self, f: Field[T]) -> T:
        if f not in self._parsed:
            self._parsed[f] = f.parse(self._raw[f.name])
        value: T = self._parsed[f]
        return value

    def text(self, name: str) -> str:
        """The raw text of input ``name``, as the form sent it."""
        return self._raw[name]

    def read(self) -> tuple[Field[Any], ...]:
        """The fields parsed so far (those the render used)."""
        return tuple(self._parsed)
