"""What every drill shares: answers parsed and checked, the kept score, question numbers,
the feedback on an answer, and the parts of a question that do not depend on its scenario.

A question is drawn deterministically from a seed (``random.Random(seed)``), so a question
number in a link reproduces it exactly, in CPython and in Pyodide alike.

Answers are numbers in a drill's unit (:class:`AnswerUnit`; the memory drills' is GB, 10^9
bytes). :func:`parse_answer_GB` accepts ``128.5``, ``128.5 GB``, ``128.5gb`` and ``1,234.5``
(a comma only groups thousands); it refuses ``128,5`` (a decimal comma), other units, and
anything that is not a positive number; :func:`parse_answer` does the same in any unit. An
answer is right within :data:`TOLERANCE` (2 %) of the engine's figure; a wrong one is
compared, with the same tolerance, with the answers the typical slips give.

The drills themselves (their scenarios and their catalogues of mistakes) are
:mod:`engine.lesson.drills.training_memory` (training memory), :mod:`engine.lesson.drills.fit` (will it
fit?) and :mod:`engine.lesson.drills.speed` (how fast?).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from engine.numbers import bounded_json, validate
from engine.numbers.catalog import HardwareSpec
from engine.numbers.errors import EngineError
from engine.numbers.records import JsonShape, Record
from engine.numbers.units import GB, GiB
from engine.words.format import format_GB

TOLERANCE = 0.02  # an answer within 2 % of the engine's figure is right
MAX_SEED = 999_999_999
MAX_ANSWER_CHARS = 40
MAX_ANSWER_GB = 1e9  # a billion GB: far beyond any memory a drill asks about
MAX_SCORE = 1_000_000_000
MAX_STATE_CHARS = 1_000

Slip = tuple[str, float, str]  # (mistake id, the bytes that slip gives, what it means)

# ----------------------------------------------------------------------------- answers

_THOUSANDS = re.compile(r"^[0-9]{1,3}(?:,[0-9]{3})+$")


@dataclass(frozen=True, slots=True)
class AnswerUnit:
    """How a drill's answers are written: the unit's name (in messages), an example answer,
    the unit words accepted after the number (lower case, each with its factor to the unit;
    '' is a bare number), refused unit words with their message, the largest answer, and
    the pattern unit words are read with."""

    name: str
    example: str
    accepted: tuple[tuple[str, float], ...]
    refused: tuple[tuple[str, str], ...] = ()
    maximum: float = MAX_ANSWER_GB
    unit_pattern: str = "[a-z]*"

    def pattern(self) -> re.Pattern[str]:
        return re.compile(
            r"^\s*(?P<number>[0-9][0-9,]*(?:\.[0-9]*)?|\.[0-9]+)\s*(?P<unit>"
            + self.unit_pattern
            + r")\s*$",
            re.IGNORECASE,
        )


GB_ANSWER = AnswerUnit(
    "GB",
    "42.5",
    (("", 1.0), ("gb", 1.0)),
    (("gib", "Give the answer in GB (10^9 bytes), not GiB."),),
)


def parse_answer_GB(text: object, field: str = "answer") -> float:
    """The reader's answer in GB as a float, or EngineError naming ``field``.

    Accepted: '128.5', '128.5 GB' (any case), '.5', '1,234.5' (commas group thousands).
    Refused: '' (empty), '128,5' (use a point for decimals), '119.7 GiB' or any other unit,
    '1e2', negative numbers, zero, and any other text.
    """
    return parse_answer(text, GB_ANSWER, field)


def parse_answer(text: object, unit: AnswerUnit, field: str = "answer") -> float:
    """The reader's answer in ``unit`` as a float, or EngineError naming ``field``: a
    positive number written out (a point for decimals, commas only grouping thousands),
    followed by nothing or one of the unit's accepted words (converted by its factor)."""
    name, example = unit.name, unit.example
    if not isinstance(text, str):
        raise EngineError(f"Type your answer as a number of {name}.", field)
    if not text.strip():
        raise EngineError(
            f"Your answer is empty: type a number of {name}, such as {example}.", field
        )
    shown = text.strip() if len(text.strip()) <= 20 else text.strip()[:20] + "..."
    if len(text) > MAX_ANSWER_CHARS:
        raise EngineError(f"{shown!r} is too long for an answer: type a number of {name}.", field)
    match = unit.pattern().match(text)
    if not match:
        _refuse_other_numbers(text.strip(), unit, field)
        raise EngineError(
            f"Your answer must be a number of {name}, such as {example}, not {shown!r}.", field
        )
    number, word = match.group("number"), match.group("unit").lower()
    refused = dict(unit.refused)
    if word in refused:
        raise EngineError(refused[word], field)
    factors = dict(unit.accepted)
    if word not in factors:
        raise EngineError(f"Give the answer in {name}, not {word[:8]!r}.", field)
    whole = number.split(".")[0]
    if "," in whole and not _THOUSANDS.match(whole):
        raise EngineError(
            "Use a point for decimals (128.5): a comma only groups thousands (1,234.5).", field
        )
    if "," in number.partition(".")[2]:
        raise EngineError("Use a point for decimals (128.5), with no comma after it.", field)
    value = float(number.replace(",", ""))
    if not value > 0:
        raise EngineError(f"Your answer must be more than 0 {name}.", field)
    return value * factors[word]


def _refuse_other_numbers(text: str, unit: AnswerUnit, field: str) -> None:
    """Say what is wrong with numbers the answer format does not take: a negative number,
    scientific notation (too large, or to be written out), a number too large to be a float."""
    try:
        value = float(text)
    except ValueError:
        return
    if value != value:  # NaN
        return
    if value <= 0:
        raise EngineError(f"Your answer must be more than 0 {unit.name}.", field)
    if value > unit.maximum:
        raise EngineError(
            f"{text[:20]!r} {unit.name} is far too large: no answer here is over "
            f"{unit.maximum:,.0f} {unit.name}.",
            field,
        )
    raise EngineError(f"Write the number out, such as {value:,.6g}, not {text[:20]!r}.", field)


def within(value: float, target: float, tolerance: float = TOLERANCE) -> bool:
    """True when ``value`` is within ``tolerance`` (relative) of ``target``."""
    return abs(value - target) <= tolerance * abs(target)


def parse_fits(value: object, field: str = "fits") -> bool:
    """'yes' or 'no' (EngineError naming ``field`` otherwise)."""
    if value == "":
        raise EngineError("Say whether it fits: choose yes or no.", field)
    return validate.choice(value, field, ("yes", "no"), label="Answer to 'does it fit?'") == "yes"


# ------------------------------------------------------------------------------- score


@dataclass(frozen=True, slots=True)
class Score:
    """A drill's score, kept on the reader's device as JSON.

    ``scored`` is the question number whose first answer was last counted: answering the
    same question again shows feedback but does not change the score.
    """

    answered: int = 0
    correct: int = 0
    streak: int = 0
    scored: int | None = None

    @classmethod
    def from_text(cls, text: object, field: str = "state") -> Score:
        """Read a kept score; '' is a fresh one. Anything broken or foreign: EngineError."""
        if not isinstance(text, str):
            raise EngineError("The saved drill score is not text; starting a new score.", field)
        if not text.strip():
            return cls()
        if len(text) > MAX_STATE_CHARS:
            raise EngineError(
                "The saved drill score is too long to be ours; starting a new score.", field
            )
        try:
            raw = bounded_json.loads(
                text, what="The saved drill score", field=field, max_chars=MAX_STATE_CHARS,
                max_depth=2,
            )
        except EngineError:
            raise EngineError(
                "The saved drill score is not valid JSON; starting a new score.", field
            ) from None
        keys = {"answered", "correct", "streak", "scored"}
        if not isinstance(raw, dict) or set(raw) != keys:
            raise EngineError(
                "The saved drill score is not a score this drill keeps; starting a new score.",
                field,
            )
        counts = [raw["answered"], raw["correct"], raw["streak"]]
        if not all(_whole(n, 0, MAX_SCORE) for n in counts):
            raise EngineError(
                "The saved drill score holds counts that are not whole numbers; "
                "starting a new score.",
                field,
            )
        answered, correct, streak = (int(n) for n in counts)
        if not answered >= correct >= streak:
            raise EngineError(
                "The saved drill score does not add up (more correct answers "
                "than answers); starting a new score.",
                field,
            )
        scored = raw["scored"]
        if scored is not None and not _whole(scored, 1, MAX_SEED):
            raise EngineError(
                "The saved drill score names no valid question; starting a new score.", field
            )
        return cls(answered, correct, streak, None if scored is None else int(scored))

    def to_text(self) -> str:
        return json.dumps(
            {
                "answered": self.answered,
                "correct": self.correct,
                "scored": self.scored,
                "streak": self.streak,
            },
            separators=(",", ":"),
            sort_keys=True,
        )

    def record(self, seed: int, correct: bool) -> tuple[Score, bool]:
        """The score after an answer to question ``seed``, and whether it counted.

        Only the first answer to a question counts; later ones leave the score as it is.
        """
        if self.scored == seed:
            return self, False
        if correct:
            return Score(self.answered + 1, self.correct + 1, self.streak + 1, seed), True
        return Score(self.answered + 1, self.correct, 0, seed), True


def _whole(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


# ---------------------------------------------------------------------------- seeds


def parse_seed(value: object, field: str = "seed") -> int:
    """A question number: a whole number from 1 to MAX_SEED (EngineError naming ``field``)."""
    return validate.integer(value, field, label="Question number", minimum=1, maximum=MAX_SEED)


def next_seed(seed: int) -> int:
    """The question after ``seed`` (1 after the last one)."""
    return parse_seed(seed) % MAX_SEED + 1


Q = TypeVar("Q")


def first_drawn(
    rng: random.Random,
    seed: int,
    draw: Callable[[random.Random, int], Q | None],
    fallback: Callable[[int], Q],
    tries: int,
) -> Q:
    """The first question ``draw`` keeps in ``tries`` draws from ``rng``, else ``fallback``."""
    for _ in range(tries):
        question = draw(rng, seed)
        if question is not None:
            return question
    return fallback(seed)


# ---------------------------------------------------------------------------- feedback


@dataclass(frozen=True, slots=True)
class BaseFeedback(Record):
    """The verdict on one answer: right or not, a message, the worked arithmetic, and the
    likely mistake (an id from the drill's MISTAKES; '' when right, 'unknown' when no slip
    matches). A drill's feedback adds its own fields after these.

    ``message`` is ``headline`` (one short sentence) followed by ``explanation``.
    """

    JSON = JsonShape(derived=("message",), after={"message": "correct"})

    correct: bool
    headline: str
    explanation: str
    working: tuple[str, ...]
    mistake: str

    @property
    def message(self) -> str:
        return f"{self.headline} {self.explanation}".strip()


def slip_words(slip: Slip | None, shown_answer: str) -> tuple[str, str]:
    """(explanation, mistake id) for a wrong number: the matched slip's words and id, or, when
    no slip matches, a line saying so about ``shown_answer`` (the answer in words) and
    'unknown'."""
    if slip is not None:
        return slip[2], slip[0]
    return (
        f"Your {shown_answer} does not match a typical slip; follow the working below.",
        "unknown",
    )


# ---------------------------------------------------------------------------- questions


class QuestionLike(Protocol):
    """What the shared parts of a drill's question need of it."""

    @property
    def tolerance(self) -> float: ...

    @property
    def hardware(self) -> HardwareSpec: ...

    @property
    def answer_bytes(self) -> float: ...

    @property
    def capacity_bytes(self) -> float: ...

    @property
    def fits(self) -> bool: ...

    @property
    def lead(self) -> str: ...

    @property
    def ask(self) -> str: ...

    def givens(self) -> list[tuple[str, str]]: ...

    def typical_wrong_answers(self) -> list[Slip]: ...


class QuestionBase:
    """The parts of a question shared by every drill (a mixin for its dataclass)."""

    __slots__ = ()

    @property
    def answer_GB(self: QuestionLike) -> float:
        return self.answer_bytes / GB

    @property
    def text(self: QuestionLike) -> str:
        """The whole question in words."""
        givens = " ".join(f"{term}: {value}." for term, value in self.givens())
        return f"{self.lead} {givens} {self.ask}"

    def verdict_line(self: QuestionLike) -> str:
        """The last line of the working: the answer against one GPU's memory."""
        relation = "≤" if self.fits else ">"
        verdict = "it fits" if self.fits else "it does not fit"
        return (
            f"{format_GB(self.answer_bytes)} {relation} {format_GB(self.capacity_bytes)} on one "
            f"{self.hardware.name}: {verdict}."
        )

    def gib_slip(self: QuestionLike, aside: str = "") -> Slip:
        """The answer in GiB for GB (``aside`` ends the explanation's second sentence)."""
        right = self.answer_bytes
        return (
            "gib",
            right / GiB * GB,
            f"Your number looks like GiB (2^30 bytes). The lesson uses GB = 10^9 "
            f"bytes{aside}: {right / GiB:,.1f} GiB is {format_GB(right)}.",
        )

    def bytes_slip(self: QuestionLike) -> Slip:
        """The answer in bytes for GB."""
        return (
            "bytes_not_GB",
            self.answer_bytes * GB,
            "That looks like a number of bytes; the answer is asked in GB (divide by 10^9).",
        )

    def told_apart(self: QuestionLike, slips: list[Slip]) -> list[Slip]:
        """``slips`` less those whose answer cannot be told apart from the right one."""
        return [c for c in slips if not within(c[1], self.answer_bytes, 2 * self.tolerance)]

    def slip_matching(self: QuestionLike, answer_GB: float) -> Slip | None:
        """The likeliest slip that gives ``answer_GB`` (within the tolerance), None if none."""
        for slip in self.typical_wrong_answers():
            if within(answer_GB * GB, slip[1], self.tolerance):
                return slip
        return None

    def well_posed(
        self: QuestionLike, answer_range: tuple[float, float], margin: float, needed: set[str]
    ) -> bool:
        """A question to keep: its answer over the capacity within ``answer_range`` and not
        within ``margin`` of 1, and every slip in ``needed`` told apart from the answer."""
        ratio = self.answer_bytes / self.capacity_bytes
        if not answer_range[0] <= ratio <= answer_range[1] or abs(ratio - 1) < margin:
            return False
        return needed <= {mistake for mistake, _, _ in self.typical_wrong_answers()}


__all__ = [
    "GB_ANSWER",
    "MAX_SEED",
    "TOLERANCE",
    "AnswerUnit",
    "BaseFeedback",
    "QuestionBase",
    "QuestionLike",
    "Score",
    "Slip",
    "first_drawn",
    "next_seed",
    "parse_answer",
    "parse_answer_GB",
    "parse_fits",
    "parse_seed",
    "slip_words",
    "within",
]
