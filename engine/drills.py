"""Drills: generated questions, the reader's answer checked, and the likely mistake named.

A question is drawn deterministically from a seed (``random.Random(seed)``), so a question
number in a link reproduces it exactly, in CPython and in Pyodide alike. Every number in a
question, its answer and its typical wrong answers comes from :mod:`engine.memory`.

Answers are numbers in GB (10^9 bytes). :func:`parse_answer_GB` accepts ``128.5``,
``128.5 GB``, ``128.5gb`` and ``1,234.5`` (a comma only groups thousands); it refuses
``128,5`` (a decimal comma), other units, and anything that is not a positive number. An
answer is right within :data:`TOLERANCE` (2 %) of the engine's figure; a wrong one is
compared, with the same tolerance, with the answers the typical slips give.

The parts here that are not about training memory (answer parsing, the score kept on the
reader's device, :class:`Feedback`) are meant for the other drills too.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass

from engine import memory, validate
from engine.catalog import HardwareSpec, ModelSpec, generic_dense_model, get_hardware, list_models
from engine.catalog import get_model as _get_model
from engine.errors import EngineError
from engine.units import GB, GiB, format_GB

TOLERANCE = 0.02  # an answer within 2 % of the engine's figure is right
MAX_SEED = 999_999_999
MAX_ANSWER_CHARS = 40
MAX_SCORE = 1_000_000_000
MAX_STATE_CHARS = 1_000

# ----------------------------------------------------------------------------- answers

_ANSWER = re.compile(
    r"^\s*(?P<number>[0-9][0-9,]*(?:\.[0-9]*)?|\.[0-9]+)\s*(?P<unit>[a-z]*)\s*$", re.IGNORECASE
)
_THOUSANDS = re.compile(r"^[0-9]{1,3}(?:,[0-9]{3})+$")


def parse_answer_GB(text: object, field: str = "answer") -> float:
    """The reader's answer in GB as a float, or EngineError naming ``field``.

    Accepted: '128.5', '128.5 GB' (any case), '.5', '1,234.5' (commas group thousands).
    Refused: '' (empty), '128,5' (use a point for decimals), '119.7 GiB' or any other unit,
    '1e2', negative numbers, zero, and any other text.
    """
    if not isinstance(text, str):
        raise EngineError("Type your answer as a number of GB.", field)
    if not text.strip():
        raise EngineError("Your answer is empty: type a number of GB, such as 42.5.", field)
    shown = text.strip() if len(text.strip()) <= 20 else text.strip()[:20] + "..."
    if len(text) > MAX_ANSWER_CHARS:
        raise EngineError(f"{shown!r} is too long for an answer: type a number of GB.", field)
    match = _ANSWER.match(text)
    if not match:
        raise EngineError(
            f"Your answer must be a number of GB, such as 42.5, not {shown!r}.", field
        )
    number, unit = match.group("number"), match.group("unit").lower()
    if unit == "gib":
        raise EngineError("Give the answer in GB (10^9 bytes), not GiB.", field)
    if unit not in ("", "gb"):
        raise EngineError(f"Give the answer in GB, not {unit[:8]!r}.", field)
    whole = number.split(".")[0]
    if "," in whole and not _THOUSANDS.match(whole):
        raise EngineError(
            "Use a point for decimals (128.5): a comma only groups thousands (1,234.5).", field
        )
    if "," in number.partition(".")[2]:
        raise EngineError("Use a point for decimals (128.5), with no comma after it.", field)
    value = float(number.replace(",", ""))
    if not value > 0:
        raise EngineError("Your answer must be more than 0 GB.", field)
    return value


def within(value: float, target: float, tolerance: float = TOLERANCE) -> bool:
    """True when ``value`` is within ``tolerance`` (relative) of ``target``."""
    return abs(value - target) <= tolerance * abs(target)


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
            raw = json.loads(text)
        except ValueError:
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


def parse_seed(value: object, field: str = "seed") -> int:
    """A question number: a whole number from 1 to MAX_SEED (EngineError naming ``field``)."""
    return validate.integer(value, field, label="Question number", minimum=1, maximum=MAX_SEED)


def next_seed(seed: int) -> int:
    """The question after ``seed`` (1 after the last one)."""
    return parse_seed(seed) % MAX_SEED + 1


# ---------------------------------------------------------------------------- feedback


@dataclass(frozen=True, slots=True)
class Feedback:
    """The verdict on one answer: right or not, a message, the worked arithmetic, and the
    likely mistake (an id from MISTAKES; '' when right, 'unknown' when no slip matches).

    ``message`` is ``headline`` (one short sentence) followed by ``explanation``.
    """

    correct: bool
    headline: str
    explanation: str
    working: tuple[str, ...]
    mistake: str
    answer_GB: float
    expected_GB: float

    @property
    def message(self) -> str:
        return f"{self.headline} {self.explanation}".strip()

    def to_dict(self) -> dict[str, object]:
        return {
            "correct": self.correct,
            "message": self.message,
            "headline": self.headline,
            "explanation": self.explanation,
            "working": list(self.working),
            "mistake": self.mistake,
            "answer_GB": self.answer_GB,
            "expected_GB": self.expected_GB,
        }


MISTAKES = {
    "forgot_optimizer": "forgot the optimiser states",
    "serving_bytes": "used 2 bytes per parameter (serving, not training)",
    "gib": "answered in GiB instead of GB",
    "forgot_activations": "forgot the activations",
    "not_divided": "did not divide by the GPU count under ZeRO-3",
    "divided_replicated": "divided by the GPU count without sharding",
    "forgot_bf16_copies": "forgot the bf16 weights and gradients (12 instead of 16)",
    "assumed_adam": "used Adam's bytes per parameter for another optimiser",
    "divided_activations": "divided the activations by the GPU count too",
    "bytes_not_GB": "answered in bytes instead of GB",
    "bytes_per_param": "gave the bytes per parameter, not the total",
    "wrong_verdict": "right memory, wrong verdict on whether it fits",
    "unknown": "no typical slip matches",
}

# ---------------------------------------------------------------- the training drill

# (optimizer, convention, short name, what it keeps); Adam in mixed precision twice as often.
SETUPS: tuple[tuple[str, str, str, str], ...] = (
    (
        "adam",
        "mixed-16",
        "Adam, mixed precision",
        "bf16 weights and gradients, fp32 master weights, fp32 Adam moments",
    ),
    (
        "adam",
        "mixed-16",
        "Adam, mixed precision",
        "bf16 weights and gradients, fp32 master weights, fp32 Adam moments",
    ),
    (
        "adam",
        "fp32",
        "Adam, all in fp32",
        "fp32 weights, gradients and Adam moments; no bf16 copies, no master copy",
    ),
    (
        "sgd-momentum",
        "mixed-16",
        "SGD with momentum, mixed precision",
        "bf16 weights and gradients, fp32 master weights, fp32 momentum",
    ),
    (
        "adam-8bit",
        "mixed-16",
        "8-bit Adam, mixed precision",
        "bf16 weights and gradients, fp32 master weights, both Adam moments in 1 byte each",
    ),
)
DRILL_GPUS = ("h100-sxm", "h200", "a100-80gb", "a100-40gb", "b200", "mi300x")
ROUND_PARAMS = (
    1_000_000_000,
    3_000_000_000,
    7_000_000_000,
    13_000_000_000,
    20_000_000_000,
    30_000_000_000,
    34_000_000_000,
    70_000_000_000,
    120_000_000_000,
    175_000_000_000,
)
ZERO3_GPUS = (2, 4, 8, 16, 32, 64, 128)
REPLICATED_GPUS = (1, 1, 1, 8)
MICRO_BATCHES = (1, 2, 4)
SEQ_LENS = (2048, 4096, 8192)
ACTIVATION_SHARE = 0.35  # share of questions that include activations
# A question is kept only if its answer is clearly on one side of the GPU's capacity, and
# neither trivially small nor absurdly large for it.
VERDICT_MARGIN = 0.06
ANSWER_RANGE = (0.1, 8.0)  # answer / capacity
_MAX_DRAWS = 200

_TRAIN_STATE_PARTS = ("weights", "gradients", "fp32_gradients")


@dataclass(frozen=True, slots=True)
class TrainingMemoryQuestion:
    """One generated question: training memory per GPU, and whether it fits.

    ``memory`` is the engine's :class:`~engine.memory.TrainingMemory` for the scenario; the
    answer is its state per GPU, plus its activations when ``with_activations``. Runtime
    overhead is left out of the question (it says so).
    """

    seed: int
    model: ModelSpec
    model_words: str
    hardware: HardwareSpec
    setup_name: str
    setup_details: str
    with_activations: bool
    memory: memory.TrainingMemory
    tolerance: float = TOLERANCE

    @property
    def optimizer(self) -> str:
        return self.memory.optimizer

    @property
    def convention(self) -> str:
        return self.memory.convention

    @property
    def gpus(self) -> int:
        return self.memory.gpus

    @property
    def sharding(self) -> str:
        return self.memory.sharding

    @property
    def bytes_per_param(self) -> dict[str, float]:
        return dict(self.memory.bytes_per_param)

    @property
    def bytes_per_param_total(self) -> float:
        return self.memory.bytes_per_param_total

    @property
    def state_total_bytes(self) -> float:
        return self.memory.state_bytes_total

    @property
    def state_per_gpu_bytes(self) -> float:
        return self.memory.state_bytes

    @property
    def activation_bytes(self) -> float:
        """Activations per GPU when the question includes them, else 0."""
        return self.memory.parts["activations"] if self.with_activations else 0.0

    @property
    def answer_bytes(self) -> float:
        return self.state_per_gpu_bytes + self.activation_bytes

    @property
    def answer_GB(self) -> float:
        return self.answer_bytes / GB

    @property
    def capacity_bytes(self) -> float:
        return self.memory.capacity_bytes

    @property
    def fits(self) -> bool:
        return self.answer_bytes <= self.capacity_bytes

    @property
    def gpu_words(self) -> str:
        hw = self.hardware
        each = format_GB(hw.memory_bytes)
        if self.gpus == 1:
            return f"one {hw.name}, {each} of memory"
        return f"{self.gpus} × {hw.name}, {each} of memory each"

    @property
    def sharding_words(self) -> str:
        if self.gpus == 1:
            return "none (a single GPU)"
        if self.sharding == "zero3":
            return (
                f"ZeRO-3 (weights, gradients and optimiser states split evenly over the "
                f"{self.gpus} GPUs)"
            )
        return "none (plain data parallelism: every GPU keeps a full replica)"

    @property
    def activation_words(self) -> str:
        m = self.memory
        return (
            f"{format_GB(self.activation_bytes)} per GPU (micro-batch {m.micro_batch}, "
            f"{m.seq_len:,}-token sequences, selective recomputation; the engine's "
            "estimate)"
        )

    @property
    def lead(self) -> str:
        return f"You train {self.model_words} on {self.gpu_words}."

    @property
    def ask(self) -> str:
        scope = (
            "the training state (weights, gradients, optimiser states) plus the activations"
            if self.with_activations
            else "the training state (weights, gradients, optimiser states)"
        )
        return (
            f"How many GB of memory does each GPU need for {scope}? Leave out the runtime "
            "overhead. And does it fit in the GPU's memory?"
        )

    @property
    def text(self) -> str:
        """The whole question in words."""
        givens = " ".join(f"{term}: {value}." for term, value in self.givens())
        return f"{self.lead} {givens} {self.ask}"

    def givens(self) -> list[tuple[str, str]]:
        """The question's data as (term, value) pairs."""
        out = [
            ("Optimiser and precision", f"{self.setup_name} ({self.setup_details})"),
            ("Sharding", self.sharding_words),
        ]
        if self.with_activations:
            out.append(("Activations", self.activation_words))
        return out

    def working(self) -> tuple[str, ...]:
        """The worked arithmetic, every number from the engine."""
        bpp = self.bytes_per_param
        sums = " + ".join(f"{_part_words(k)} {v:g}" for k, v in bpp.items())
        lines = [
            f"Bytes per parameter: {sums} = {self.bytes_per_param_total:g} bytes.",
            f"Training state: {self.model.params:,} parameters × "
            f"{self.bytes_per_param_total:g} bytes = {format_GB(self.state_total_bytes)}.",
        ]
        if self.gpus > 1 and self.sharding == "zero3":
            lines.append(
                f"ZeRO-3 splits it over {self.gpus} GPUs: "
                f"{format_GB(self.state_total_bytes)} ÷ {self.gpus} = "
                f"{format_GB(self.state_per_gpu_bytes)} per GPU."
            )
        elif self.gpus > 1:
            lines.append(
                f"Without sharding each of the {self.gpus} GPUs holds all of it: "
                f"{format_GB(self.state_per_gpu_bytes)} per GPU."
            )
        if self.with_activations:
            lines.append(
                f"Plus {format_GB(self.activation_bytes)} of activations: "
                f"{format_GB(self.state_per_gpu_bytes)} + "
                f"{format_GB(self.activation_bytes)} = {format_GB(self.answer_bytes)} "
                "per GPU."
            )
        relation = "≤" if self.fits else ">"
        verdict = "it fits" if self.fits else "it does not fit"
        lines.append(
            f"{format_GB(self.answer_bytes)} {relation} "
            f"{format_GB(self.capacity_bytes)} on one {self.hardware.name}: "
            f"{verdict}."
        )
        return tuple(lines)

    def typical_wrong_answers(self) -> list[tuple[str, float, str]]:
        """(mistake id, the answer in bytes that slip gives, what it means), likeliest first.

        A slip whose answer is indistinguishable from the right one is left out.
        """
        bpp = self.bytes_per_param
        params = self.model.params
        divide = self.gpus if self.sharding == "zero3" else 1
        act = self.activation_bytes
        total = self.bytes_per_param_total

        def per_gpu(bytes_per_param: float) -> float:
            return params * bytes_per_param / divide + act

        kept = {k: v for k, v in bpp.items() if k in _TRAIN_STATE_PARTS}
        dropped = {k: v for k, v in bpp.items() if k not in _TRAIN_STATE_PARTS}
        kept_b, dropped_b = sum(kept.values()), sum(dropped.values())
        out: list[tuple[str, float, str]] = [
            (
                "forgot_optimizer",
                per_gpu(kept_b),
                f"You counted only {_words(kept)} ({kept_b:g} bytes per parameter): the "
                f"optimiser states are missing ({_words(dropped)}, {dropped_b:g} more bytes).",
            ),
        ]
        serving = memory.weights_bytes(1, "bf16")
        serving_words = (
            f"You used {serving:g} bytes per parameter, the size of bf16 weights "
            f"for serving. Training keeps {total:g} bytes per parameter here."
        )
        out.append(("serving_bytes", per_gpu(serving), serving_words))
        out.append(("serving_bytes", memory.weights_bytes(params, "bf16"), serving_words))
        out.append(
            (
                "gib",
                self.answer_bytes / GiB * GB,
                f"Your number looks like GiB (2^30 bytes). The lesson uses GB = 10^9 "
                f"bytes: {self.answer_bytes / GiB:,.1f} GiB is "
                f"{format_GB(self.answer_bytes)}.",
            )
        )
        if self.with_activations:
            out.append(
                (
                    "forgot_activations",
                    self.state_per_gpu_bytes,
                    f"You gave the training state only; this question asks for the state "
                    f"plus the {format_GB(act)} of activations on each GPU.",
                )
            )
        if self.gpus > 1 and self.sharding == "zero3":
            out.append(
                (
                    "not_divided",
                    self.state_total_bytes + act,
                    f"That is the whole model's state. ZeRO-3 splits it over the "
                    f"{self.gpus} GPUs, so each one holds 1/{self.gpus} of it.",
                )
            )
            if self.with_activations:
                out.append(
                    (
                        "divided_activations",
                        self.state_per_gpu_bytes + act / self.gpus,
                        "ZeRO-3 splits the training state, not the activations: each GPU "
                        f"keeps its own {format_GB(act)} of activations.",
                    )
                )
        if self.gpus > 1 and self.sharding != "zero3":
            out.append(
                (
                    "divided_replicated",
                    self.state_total_bytes / self.gpus + act,
                    f"You divided by the {self.gpus} GPUs, but plain data parallelism "
                    "copies the full state onto every GPU; only sharding (ZeRO) splits "
                    "it.",
                )
            )
        if "master_weights" in bpp:
            copies = bpp.get("weights", 0.0) + bpp.get("gradients", 0.0)
            out.append(
                (
                    "forgot_bf16_copies",
                    per_gpu(total - copies),
                    f"You counted the fp32 master weights and the optimiser states "
                    f"({total - copies:g} bytes) but not the bf16 weights and gradients "
                    f"({copies:g} bytes) that the forward and backward passes use.",
                )
            )
        adam = sum(memory.training_state_bytes_per_param("adam", "mixed-16").values())
        if adam != total:
            out.append(
                (
                    "assumed_adam",
                    per_gpu(adam),
                    f"You used {adam:g} bytes per parameter, the figure for Adam in mixed "
                    f"precision; {self.setup_name} needs {total:g} bytes per "
                    "parameter.",
                )
            )
        out.append(
            (
                "bytes_not_GB",
                self.answer_bytes * GB,
                "That looks like a number of bytes; the answer is asked in GB (divide by 10^9).",
            )
        )
        out.append(
            (
                "bytes_per_param",
                total * GB,
                f"{total:g} is the bytes per parameter; multiply by the "
                f"{self.model.params:,} parameters (and divide as the sharding says).",
            )
        )
        return [c for c in out if not within(c[1], self.answer_bytes, 2 * self.tolerance)]


def _part_words(key: str) -> str:
    return {
        "weights": "weights",
        "gradients": "gradients",
        "fp32_gradients": "fp32 gradient copy",
        "master_weights": "fp32 master weights",
        "first_moment": "first moment",
        "second_moment": "second moment",
        "momentum": "momentum",
    }.get(key, key.replace("_", " "))


def _words(parts: dict[str, float]) -> str:
    names = [_part_words(k) for k in parts]
    if not names:
        return "nothing"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _model_words(model: ModelSpec) -> str:
    if model.family == "generic":
        return f"a {model.params / 1e9:g}-billion-parameter model ({model.params:,} parameters)"
    return f"{model.name} ({model.params:,} parameters)"


def _draw(rng: random.Random, seed: int) -> TrainingMemoryQuestion | None:
    if rng.random() < 0.5:
        model = rng.choice(list_models())
    else:
        model = generic_dense_model(rng.choice(ROUND_PARAMS))
    optimizer, convention, setup_name, setup_details = rng.choice(SETUPS)
    hardware = get_hardware(rng.choice(DRILL_GPUS))
    if rng.random() < 0.5:
        sharding, gpus = "zero3", rng.choice(ZERO3_GPUS)
    else:
        sharding, gpus = "none", rng.choice(REPLICATED_GPUS)
    with_activations = rng.random() < ACTIVATION_SHARE
    micro_batch, seq_len = rng.choice(MICRO_BATCHES), rng.choice(SEQ_LENS)
    mem = memory.training_memory(
        model,
        hardware,
        gpus=gpus,
        sharding=sharding,
        optimizer=optimizer,
        convention=convention,
        micro_batch=micro_batch,
        seq_len=seq_len,
        recompute="selective",
    )
    if with_activations and mem.parts["activations"] > mem.state_bytes:
        # The drill is about bytes per parameter: keep activations to a minor part.
        return None
    q = TrainingMemoryQuestion(
        seed, model, _model_words(model), hardware, setup_name, setup_details, with_activations, mem
    )
    ratio = q.answer_bytes / q.capacity_bytes
    if not ANSWER_RANGE[0] <= ratio <= ANSWER_RANGE[1] or abs(ratio - 1) < VERDICT_MARGIN:
        return None
    # Each typical slip must give an answer that is told apart from the right one.
    needed = {"forgot_optimizer", "serving_bytes", "gib"}
    if with_activations:
        needed.add("forgot_activations")
    if gpus > 1:
        needed.add("not_divided" if sharding == "zero3" else "divided_replicated")
    if not needed <= {mistake for mistake, _, _ in q.typical_wrong_answers()}:
        return None
    return q


def _fallback(seed: int) -> TrainingMemoryQuestion:
    """Llama 3.1 8B with Adam on one H100 (the lesson's own example: 128.5 GB, no fit)."""
    model, hardware = _get_model("llama-3.1-8b"), get_hardware("h100-sxm")
    mem = memory.training_memory(model, hardware)
    _, _, name, details = SETUPS[0]
    return TrainingMemoryQuestion(
        seed, model, _model_words(model), hardware, name, details, False, mem
    )


Question = TrainingMemoryQuestion


def training_memory_question(seed: object) -> TrainingMemoryQuestion:
    """Question number ``seed`` (1 to MAX_SEED): the same number always gives the same question."""
    s = parse_seed(seed)
    rng = random.Random(s)
    for _ in range(_MAX_DRAWS):
        question = _draw(rng, s)
        if question is not None:
            return question
    return _fallback(s)


def parse_fits(value: object, field: str = "fits") -> bool:
    """'yes' or 'no' (EngineError naming ``field`` otherwise)."""
    if value == "":
        raise EngineError("Say whether it fits: choose yes or no.", field)
    return validate.choice(value, field, ("yes", "no"), label="Answer to 'does it fit?'") == "yes"


def check_answer(
    question: TrainingMemoryQuestion, answer_text: object, fits: object = None
) -> Feedback:
    """Check the reader's answer (text, in GB) and, when given, their 'does it fit?' (yes/no).

    Right when within ``question.tolerance`` (2 %) of the engine's figure and, if ``fits`` is
    given, with the right verdict. When wrong, the message names the likeliest slip: the
    first typical wrong answer (see ``typical_wrong_answers``) within the same tolerance.
    """
    answer = parse_answer_GB(answer_text)
    says_fits = None if fits is None else parse_fits(fits)
    expected = question.answer_GB
    working = question.working()
    right_number = within(answer * GB, question.answer_bytes, question.tolerance)
    verdict_ok = says_fits is None or says_fits == question.fits
    tol = f"{question.tolerance * 100:g} %"
    right = format_GB(question.answer_bytes)
    if right_number and verdict_ok:
        verdict = ""
        if says_fits is not None:
            verdict = ", and it fits" if question.fits else ", and it does not fit"
        return Feedback(
            True,
            f"Correct: {right} per GPU{verdict}.",
            f"Answers within {tol} of the engine's figure count.",
            working,
            "",
            answer,
            expected,
        )
    if right_number:
        return Feedback(
            False,
            f"Your {format_GB(answer * GB)} is right, but the verdict is not.",
            working[-1],
            working,
            "wrong_verdict",
            answer,
            expected,
        )
    headline = f"Not quite: the answer is {right} per GPU."
    verdict_note = ""
    if says_fits is not None and says_fits != question.fits:
        verdict_note = " And so it fits." if question.fits else " And so it does not fit."
    for mistake, wrong_bytes, words in question.typical_wrong_answers():
        if within(answer * GB, wrong_bytes, question.tolerance):
            return Feedback(
                False, headline, words + verdict_note, working, mistake, answer, expected
            )
    return Feedback(
        False,
        headline,
        f"Your {format_GB(answer * GB)} does not match a typical slip; follow the working "
        "below." + verdict_note,
        working,
        "unknown",
        answer,
        expected,
    )


__all__ = [
    "MISTAKES",
    "TOLERANCE",
    "Feedback",
    "Question",
    "Score",
    "TrainingMemoryQuestion",
    "check_answer",
    "next_seed",
    "parse_answer_GB",
    "parse_fits",
    "parse_seed",
    "training_memory_question",
    "within",
]
