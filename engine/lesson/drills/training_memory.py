"""Drill (docs/steps/drill-training-memory.md): generated questions on training memory per GPU, the reader's answer
checked, and the likely mistake named.

A question is drawn deterministically from a seed (``random.Random(seed)``), so a question
number in a link reproduces it exactly, in CPython and in Pyodide alike. Every number in a
question, its answer and its typical wrong answers comes from :mod:`engine.numbers.memory`.

Answers are numbers in GB (10^9 bytes), read by :func:`parse_answer_GB`; an answer is right
within :data:`TOLERANCE` (2 %) of the engine's figure, and a wrong one is compared, with the
same tolerance, with the answers the typical slips give.

What every drill shares (answer parsing, the score kept on the reader's device, question
numbers, the feedback) is :mod:`engine.lesson.drills.core`, re-exported here under its old names.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

from engine.lesson.drills.core import (
    MAX_SEED,
    TOLERANCE,
    BaseFeedback,
    QuestionBase,
    QuestionLike,
    Score,
    Slip,
    first_drawn,
    next_seed,
    parse_answer_GB,
    parse_fits,
    parse_seed,
    slip_words,
    within,
)
from engine.numbers import memory
from engine.numbers.catalog import (
    HardwareSpec,
    ModelSpec,
    generic_dense_model,
    get_hardware,
    list_models,
)
from engine.numbers.catalog import get_model as _get_model
from engine.numbers.training_choices import Convention, Optimizer, Sharding
from engine.numbers.units import GB
from engine.words.format import format_GB, format_percent
from engine.words.labels import part_words
from engine.words.sharding import sharding_setting


@dataclass(frozen=True, slots=True)
class Feedback(BaseFeedback):
    """The verdict on one answer (see :class:`~engine.lesson.drills.core.BaseFeedback`; the mistake
    is an id from MISTAKES), with the reader's answer and the engine's, in GB."""

    answer_GB: float
    expected_GB: float


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
SETUPS: tuple[tuple[Optimizer, Convention, str, str], ...] = (
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
class TrainingMemoryQuestion(QuestionBase):
    """One generated question: training memory per GPU, and whether it fits.

    ``memory`` is the engine's :class:`~engine.numbers.memory.TrainingMemory` for the scenario; the
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
        return f"{self.gpus} × {hw.name}, {each} each"

    @property
    def sharding_words(self) -> str:
        return sharding_setting(self.sharding, self.gpus)

    @property
    def lead(self) -> str:
        return f"You train {self.model_words} on {self.gpu_words}."

    @property
    def ask(self) -> str:
        extra = ", plus activations" if self.with_activations else ""
        return (
            "GB per GPU for weights, gradients and optimiser states"
            f"{extra}, without runtime overhead? Does it fit?"
        )

    def givens(self) -> list[tuple[str, str]]:
        """The question's data as (term, value) pairs."""
        out = [("Optimiser", self.setup_name), ("Sharding", self.sharding_words)]
        if self.with_activations:
            out.append(("Activations", f"{format_GB(self.activation_bytes)} per GPU"))
        return out

    def notes(self) -> tuple[str, ...]:
        """The question's assumptions, for the reader who opens them."""
        out = [f"{self.setup_name}: {self.setup_details}."]
        if self.gpus > 1 and self.sharding == "zero3":
            out.append("ZeRO-3 splits weights, gradients and optimiser states evenly.")
        if self.with_activations:
            m = self.memory
            out.append(
                f"Activations: micro-batch {m.micro_batch}, {m.seq_len:,}-token sequences, "
                "selective recomputation (the engine's estimate)."
            )
        return tuple(out)

    def working(self) -> tuple[str, ...]:
        """The worked arithmetic, every number from the engine."""
        bpp = self.bytes_per_param
        sums = " + ".join(f"{part_words(k)} {v:g}" for k, v in bpp.items())
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
        lines.append(self.verdict_line())
        return tuple(lines)

    def typical_wrong_answers(self) -> list[Slip]:
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
        out: list[Slip] = [
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
        out.append(self.gib_slip())
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
        adam = memory.training_bytes_per_param("adam", "mixed-16")
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
        out.append(self.bytes_slip())
        out.append(
            (
                "bytes_per_param",
                total * GB,
                f"{total:g} is the bytes per parameter; multiply by the "
                f"{self.model.params:,} parameters (and divide as the sharding says).",
            )
        )
        return self.told_apart(out)


def _words(parts: dict[str, float]) -> str:
    names = [part_words(k) for k in parts]
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
        sharding: Sharding = "zero3"
        gpus = rng.choice(ZERO3_GPUS)
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
    # Each typical slip must give an answer that is told apart from the right one.
    needed = {"forgot_optimizer", "serving_bytes", "gib"}
    if with_activations:
        needed.add("forgot_activations")
    if gpus > 1:
        needed.add("not_divided" if sharding == "zero3" else "divided_replicated")
    return q if q.well_posed(ANSWER_RANGE, VERDICT_MARGIN, needed) else None


def _fallback(seed: int) -> TrainingMemoryQuestion:
    """Llama 3.1 8B with Adam on one H100 (the lesson's own example: 128.5 GB, no fit)."""
    model, hardware = _get_model("llama-3.1-8b"), get_hardware("h100-sxm")
    mem = memory.training_memory(model, hardware)
    _, _, name, details = SETUPS[0]
    return TrainingMemoryQuestion(
        seed, model, _model_words(model), hardware, name, details, False, mem
    )




def training_memory_question(seed: object) -> TrainingMemoryQuestion:
    """Question number ``seed`` (1 to MAX_SEED): the same number always gives the same question."""
    s = parse_seed(seed)
    return first_drawn(random.Random(s), s, _draw, _fallback, _MAX_DRAWS)


class WorkedQuestion(QuestionLike, Protocol):
    """A question :func:`check_answer` can check: a drill question with its working."""

    @property
    def answer_GB(self) -> float: ...

    def working(self) -> tuple[str, ...]: ...

    def slip_matching(self, answer_GB: float) -> Slip | None: ...


def check_answer(
    question: WorkedQuestion, answer_text: object, fits: object = None
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
    tol = format_percent(question.tolerance)
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
    words, mistake = slip_words(question.slip_matching(answer), format_GB(answer * GB))
    return Feedback(False, headline, words + verdict_note, working, mistake, answer, expected)


__all__ = [
    "MAX_SEED",
    "MISTAKES",
    "TOLERANCE",
    "Feedback",
    "Score",
    "Slip",
    "TrainingMemoryQuestion",
    "check_answer",
    "next_seed",
    "parse_answer_GB",
    "parse_fits",
    "parse_seed",
    "training_memory_question",
    "within",
]
