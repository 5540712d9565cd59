"""Drill (docs/steps/drill-will-it-fit.md): will it fit? Generated scenarios, the reader's verdict checked, the slip named.

A scenario is drawn deterministically from its number (``random.Random(seed)``), as in
:mod:`engine.lesson.drills.training_memory`: a model, a task (serve or train), a number format, a GPU type and
count, a context length and a batch. The reader says whether it fits in each GPU's memory
and, optionally, how many GB each GPU needs. The engine's verdict and figure are
:func:`engine.numbers.memory.serving_memory` or :func:`engine.numbers.memory.training_memory`, all parts
included (the activations and the runtime overhead are given in the question, as the
engine estimates them). A number is right within :data:`engine.lesson.drills.core.TOLERANCE` (2 %).

A wrong number is compared with the numbers the typical slips give (forgetting the KV
cache or the optimiser states, the total instead of the share of one GPU, GiB for GB...);
a wrong verdict with no number is matched with the first slip that leads to that verdict.
Answer parsing, the question number, the kept score and the feedback's common fields are
:mod:`engine.lesson.drills.core`'s.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from engine.lesson.drills.core import (
    TOLERANCE,
    BaseFeedback,
    QuestionBase,
    Slip,
    first_drawn,
    parse_answer_GB,
    parse_fits,
    parse_seed,
    slip_words,
    within,
)
from engine.numbers import memory
from engine.numbers.architecture import tensor_parallel_ok
from engine.numbers.catalog import HardwareSpec, ModelSpec, get_hardware, list_models
from engine.numbers.catalog import get_model as _get_model
from engine.numbers.formats import FormatId, get_format
from engine.numbers.training_choices import Convention, Optimizer, Sharding
from engine.numbers.units import GB
from engine.words.format import format_GB, format_percent
from engine.words.labels import part_words
from engine.words.sharding import sharding_setting

TASKS = ("serve", "train")
SERVE_SHARE = 0.6  # share of scenarios that serve (the rest train)
SERVE_GPUS = ("h100-sxm", "h200", "a100-80gb", "a100-40gb", "l4", "l40s", "b200", "mi300x")
TRAIN_GPUS = ("h100-sxm", "h200", "a100-80gb", "a100-40gb", "b200", "mi300x")
SERVE_FORMATS: tuple[FormatId, ...] = ("bf16", "bf16", "fp8", "int4")
KV_FORMAT: FormatId = "bf16"
SERVE_GPU_COUNTS = (1, 1, 1, 2, 4, 8)
CONTEXTS = (2048, 4096, 8192, 16384, 32768, 131072)
BATCHES = (1, 4, 8, 16, 32, 64)
ZERO3_GPUS = (8, 16, 32, 64, 128)
REPLICATED_GPUS = (1, 1, 8)
SEQ_LENS = (2048, 4096, 8192)
MICRO_BATCHES = (1, 2)
OPTIMIZER: Optimizer = "adam"
CONVENTION: Convention = "mixed-16"  # the lesson's recipe: 16 bytes per parameter
# A scenario is kept only when its answer is clearly on one side of the GPU's capacity, and
# neither trivially small nor absurdly large for it.
VERDICT_MARGIN = 0.06
ANSWER_RANGE = (0.15, 4.0)  # answer / capacity
MIN_PART_SHARE = 0.08  # the KV cache (serving) or activations (training): at least this share
_MAX_DRAWS = 300

MISTAKES = {
    "forgot_kv": "forgot the KV cache",
    "kv_one_request": "counted the KV cache of one request, not of the whole batch",
    "total_not_per_gpu": "used the total instead of the memory per GPU",
    "divided_replicated": "divided by the GPU count, but nothing is sharded",
    "forgot_extras": "forgot the activations and the runtime overhead",
    "format_bytes": "used 2 bytes per parameter for weights stored in another format",
    "forgot_optimizer": "forgot the optimiser states",
    "serving_bytes": "used 2 bytes per parameter (serving, not training)",
    "forgot_activations": "forgot the activations",
    "gib": "answered in GiB instead of GB",
    "bytes_not_GB": "answered in bytes instead of GB",
    "wrong_verdict": "right memory, wrong verdict on whether it fits",
    "unknown": "no typical slip matches",
}
# Slips that say nothing about a verdict on their own (a verdict-only answer is not matched
# with them).
_NUMBER_ONLY = frozenset({"bytes_not_GB"})


@dataclass(frozen=True, slots=True)
class FitQuestion(QuestionBase):
    """One scenario: serve or train ``model`` on ``gpus`` x ``hardware``; does it fit?

    Exactly one of ``serving`` and ``training`` is set: the engine's memory for the scenario.
    The expected number is its memory per GPU, every part included.
    """

    seed: int
    task: str
    serving: memory.ServingMemory | None
    training: memory.TrainingMemory | None
    tolerance: float = TOLERANCE

    @property
    def _mem(self) -> memory.ServingMemory | memory.TrainingMemory:
        mem = self.serving if self.serving is not None else self.training
        assert mem is not None
        return mem

    @property
    def model(self) -> ModelSpec:
        return self._mem.model

    @property
    def hardware(self) -> HardwareSpec:
        return self._mem.hardware

    @property
    def gpus(self) -> int:
        return self._mem.gpus

    @property
    def parts(self) -> dict[str, float]:
        """Bytes per GPU by part (they sum to ``answer_bytes``)."""
        return dict(self._mem.parts)

    @property
    def answer_bytes(self) -> float:
        return self._mem.per_gpu_bytes

    @property
    def capacity_bytes(self) -> float:
        return self._mem.capacity_bytes

    @property
    def fits(self) -> bool:
        return self._mem.fits

    # ------------------------------------------------------------------------- words

    @property
    def gpu_words(self) -> str:
        hw = self.hardware
        each = format_GB(hw.memory_bytes)
        if self.gpus == 1:
            return f"one {hw.name} ({each} of memory)"
        return f"{self.gpus} × {hw.name} ({each} of memory each)"

    @property
    def lead(self) -> str:
        verb = "serve" if self.task == "serve" else "train"
        return f"You want to {verb} {self.model.name} on {self.gpu_words}."

    @property
    def ask(self) -> str:
        # The answer field's label asks the optional total ("Total memory per GPU").
        return "Does it fit in each GPU's memory?"

    def givens(self) -> list[tuple[str, str]]:
        """The scenario's data as (term, value) pairs, every number from the engine."""
        m = self.model
        out = [("Parameters", f"{m.params:,}")]
        if self.serving is not None:
            s = self.serving
            fmt = get_format(s.weight_format)
            out += [
                ("Weights", f"{fmt.id.upper()}, {_bytes_words(fmt.bytes_per_number)} per parameter"),
                ("KV cache", f"{s.kv_cache_bytes_per_token:,.0f} bytes per token"),
                ("Requests", f"{s.batch:,} at once, {s.context_tokens:,} tokens of context each"),
            ]
            if s.gpus > 1:
                out.append(("Split", f"tensor parallelism over the {s.gpus} GPUs"))
            extras = s.parts["activations"] + s.parts["runtime_overhead"]
            out.append(("Activations and overhead", f"{format_GB(extras)} per GPU"))
            return out
        t = self.training
        assert t is not None
        out += [
            ("Training", f"Adam, mixed precision: {t.bytes_per_param_total:g} bytes per parameter"),
            ("Sharding", sharding_setting(t.sharding, t.gpus)),
            ("Activations", f"{format_GB(t.parts['activations'])} per GPU"),
            ("Runtime overhead", f"{format_GB(t.parts['runtime_overhead'])} per GPU"),
        ]
        return out

    def notes(self) -> tuple[str, ...]:
        """The scenario's assumptions, for the reader who opens them."""
        if self.serving is not None:
            s = self.serving
            out = [
                f"Weights in {get_format(s.weight_format).label}; KV cache in {s.kv_format}.",
                "Activations and runtime overhead: the engine's estimate; every GPU holds "
                "them in full.",
            ]
            if s.gpus > 1:
                out.insert(1, "Tensor parallelism splits the weights and the KV cache evenly.")
            return tuple(out)
        t = self.training
        assert t is not None
        sums = " + ".join(f"{part_words(k)} {v:g}" for k, v in t.bytes_per_param.items())
        out = [f"Adam in mixed precision: {sums} = {t.bytes_per_param_total:g} bytes per parameter."]
        if t.gpus > 1 and t.sharding == "zero3":
            out.append("ZeRO-3 splits weights, gradients and optimiser states evenly.")
        out.append(
            f"Activations: micro-batch {t.micro_batch}, {t.seq_len:,}-token sequences (the "
            "engine's estimate); sharding does not split them."
        )
        return tuple(out)

    def working(self) -> tuple[str, ...]:
        """The worked arithmetic, every number from the engine."""
        lines: list[str] = []
        g = self.gpus
        if self.serving is not None:
            s = self.serving
            bpn = get_format(s.weight_format).bytes_per_number
            w_total = s.parts["weights"] * g
            kv_total = s.parts["kv_cache"] * g
            extras = s.parts["activations"] + s.parts["runtime_overhead"]
            lines.append(
                f"Weights: {self.model.params:,} parameters × {bpn:g} bytes = {format_GB(w_total)}."
            )
            lines.append(
                f"KV cache: {s.kv_cache_bytes_per_token:,.0f} bytes × {s.context_tokens:,} tokens "
                f"× {s.batch:,} request{'s' if s.batch > 1 else ''} = {format_GB(kv_total)}."
            )
            shared = s.parts["weights"] + s.parts["kv_cache"]
            if g > 1:
                lines.append(
                    f"Split over {g} GPUs: ({format_GB(w_total)} + {format_GB(kv_total)}) ÷ {g} "
                    f"= {format_GB(shared)} per GPU."
                )
            lines.append(
                f"Plus {format_GB(extras)} of activations and runtime overhead: "
                f"{format_GB(shared)} + {format_GB(extras)} = {format_GB(self.answer_bytes)} "
                "per GPU."
            )
        else:
            t = self.training
            assert t is not None
            lines.append(
                f"Training state: {self.model.params:,} parameters × {t.bytes_per_param_total:g} "
                f"bytes = {format_GB(t.state_bytes_total)}."
            )
            if g > 1 and t.sharding == "zero3":
                lines.append(
                    f"ZeRO-3 splits it over the {g} GPUs: {format_GB(t.state_bytes_total)} ÷ {g} "
                    f"= {format_GB(t.state_bytes)} per GPU."
                )
            elif g > 1:
                lines.append(
                    f"Without sharding each of the {g} GPUs holds all of it: "
                    f"{format_GB(t.state_bytes)} per GPU."
                )
            act, oh = t.parts["activations"], t.parts["runtime_overhead"]
            lines.append(
                f"Plus {format_GB(act)} of activations and {format_GB(oh)} of runtime overhead: "
                f"{format_GB(self.answer_bytes)} per GPU."
            )
        lines.append(self.verdict_line())
        return tuple(lines)

    # ------------------------------------------------------------------------- slips

    def typical_wrong_answers(self) -> list[Slip]:
        """(mistake id, the per-GPU bytes that slip gives, what it means), likeliest first.

        A slip whose answer cannot be told apart from the right one is left out.
        """
        out = self._serve_slips() if self.serving is not None else self._train_slips()
        out += [self.gib_slip(", as GPU memory is quoted"), self.bytes_slip()]
        return self.told_apart(out)

    def _serve_slips(self) -> list[Slip]:
        s = self.serving
        assert s is not None
        g = self.gpus
        w, kv = s.parts["weights"], s.parts["kv_cache"]
        extras = s.parts["activations"] + s.parts["runtime_overhead"]
        out: list[Slip] = [
            (
                "forgot_kv",
                w + extras,
                f"You left out the KV cache: {s.batch:,} request{'s' if s.batch > 1 else ''} × "
                f"{s.context_tokens:,} tokens × {s.kv_cache_bytes_per_token:,.0f} bytes = "
                f"{format_GB(kv * g)}, which must sit in GPU memory beside the weights.",
            )
        ]
        if g > 1:
            out.append(
                (
                    "total_not_per_gpu",
                    (w + kv) * g + extras,
                    f"That is the memory of the whole model. Tensor parallelism splits the "
                    f"weights and the KV cache over the {g} GPUs: each holds 1/{g} of them.",
                )
            )
        if s.batch > 1:
            out.append(
                (
                    "kv_one_request",
                    w + kv / s.batch + extras,
                    f"You counted the KV cache of one request. Each of the {s.batch:,} requests "
                    f"served at once keeps its own: {s.batch:,} times as much.",
                )
            )
        out.append(
            (
                "forgot_extras",
                w + kv,
                f"You counted weights and KV cache only; add the {format_GB(extras)} of "
                "activations and runtime overhead that each GPU also holds.",
            )
        )
        bpn = get_format(s.weight_format).bytes_per_number
        bf16 = get_format("bf16").bytes_per_number
        if bpn != bf16:
            out.append(
                (
                    "format_bytes",
                    self.model.params * bf16 / g + kv + extras,
                    f"You used {bf16:g} bytes per parameter (bf16), but the weights are stored "
                    f"in {s.weight_format}: {bpn:g} bytes each.",
                )
            )
        return out

    def _train_slips(self) -> list[Slip]:
        t = self.training
        assert t is not None
        g = self.gpus
        divide = g if t.sharding == "zero3" else 1
        act, oh = t.parts["activations"], t.parts["runtime_overhead"]
        params = self.model.params
        bpp = t.bytes_per_param
        kept = bpp.get("weights", 0.0) + bpp.get("gradients", 0.0)
        total = t.bytes_per_param_total
        out: list[Slip] = [
            (
                "forgot_optimizer",
                params * kept / divide + act + oh,
                f"You counted the weights and gradients only ({kept:g} bytes per parameter): "
                f"the fp32 master weights and Adam's two moments add {total - kept:g} more, "
                f"{total:g} in all.",
            ),
        ]
        if g > 1 and t.sharding == "zero3":
            out.append(
                (
                    "total_not_per_gpu",
                    t.state_bytes_total + act + oh,
                    f"That is the whole model's training state. ZeRO-3 splits it over the {g} "
                    f"GPUs: each holds 1/{g} of it.",
                )
            )
        if g > 1 and t.sharding != "zero3":
            out.append(
                (
                    "divided_replicated",
                    t.state_bytes_total / g + act + oh,
                    f"You divided by the {g} GPUs, but plain data parallelism copies the full "
                    "state onto every GPU; only sharding (ZeRO) splits it.",
                )
            )
        bf16 = get_format("bf16").bytes_per_number
        out.append(
            (
                "serving_bytes",
                params * bf16 / divide + act + oh,
                f"You used the {bf16:g} bytes per parameter of bf16 weights, enough to serve. "
                f"Training with Adam keeps {total:g} bytes per parameter.",
            )
        )
        out.append(
            (
                "forgot_activations",
                t.state_bytes + oh,
                f"You left out the {format_GB(act)} of activations each GPU keeps for the "
                "backward pass.",
            )
        )
        return out

    def slip_for_verdict(self, says_fits: bool) -> Slip | None:
        """The likeliest slip that leads to the verdict ``says_fits`` (None if none does)."""
        for slip in self.typical_wrong_answers():
            if slip[0] not in _NUMBER_ONLY and (slip[1] <= self.capacity_bytes) == says_fits:
                return slip
        return None


def _bytes_words(count: float) -> str:
    """'0.5 bytes', '1 byte', '2 bytes'."""
    return f"{count:g} byte{'' if count == 1 else 's'}"


# ------------------------------------------------------------------------- generation


def _draw_serve(rng: random.Random, seed: int) -> FitQuestion | None:
    model = rng.choice(list_models())
    fmt = rng.choice(SERVE_FORMATS)
    hardware = get_hardware(rng.choice(SERVE_GPUS))
    gpus = rng.choice(SERVE_GPU_COUNTS)
    if not tensor_parallel_ok(model, gpus):
        return None  # tensor parallelism needs whole attention heads on every GPU
    contexts = [c for c in CONTEXTS if c <= model.max_context]
    context = rng.choice(contexts)
    batch = rng.choice(BATCHES)
    mem = memory.serving_memory(
        model,
        hardware,
        weight_format=fmt,
        kv_format=KV_FORMAT,
        context_tokens=context,
        batch=batch,
        gpus=gpus,
    )
    if mem.parts["kv_cache"] < MIN_PART_SHARE * mem.per_gpu_bytes:
        return None
    return FitQuestion(seed, "serve", mem, None)


def _draw_train(rng: random.Random, seed: int) -> FitQuestion | None:
    model = rng.choice(list_models())
    hardware = get_hardware(rng.choice(TRAIN_GPUS))
    if rng.random() < 0.6:
        sharding: Sharding = "zero3"
        gpus = rng.choice(ZERO3_GPUS)
    else:
        sharding, gpus = "none", rng.choice(REPLICATED_GPUS)
    mem = memory.training_memory(
        model,
        hardware,
        gpus=gpus,
        sharding=sharding,
        optimizer=OPTIMIZER,
        convention=CONVENTION,
        micro_batch=rng.choice(MICRO_BATCHES),
        seq_len=rng.choice(SEQ_LENS),
        recompute="selective",
    )
    act = mem.parts["activations"]
    if act > mem.state_bytes or act < MIN_PART_SHARE * mem.per_gpu_bytes:
        return None
    return FitQuestion(seed, "train", None, mem)


def _needed(q: FitQuestion) -> set[str]:
    """The slips a kept scenario must tell apart from the right answer."""
    needed = {"gib"}
    if q.serving is not None:
        needed.add("forgot_kv")
        if q.gpus > 1:
            needed.add("total_not_per_gpu")
        if q.serving.batch > 1:
            needed.add("kv_one_request")
    else:
        assert q.training is not None
        needed |= {"forgot_optimizer", "forgot_activations"}
        if q.gpus > 1:
            needed.add(
                "total_not_per_gpu" if q.training.sharding == "zero3" else "divided_replicated"
            )
    return needed


def _draw(rng: random.Random, seed: int, want_fit: bool) -> FitQuestion | None:
    q = _draw_serve(rng, seed) if rng.random() < SERVE_SHARE else _draw_train(rng, seed)
    if q is None or q.fits != want_fit:
        return None
    return q if q.well_posed(ANSWER_RANGE, VERDICT_MARGIN, _needed(q)) else None


def _fallback(seed: int) -> FitQuestion:
    """Llama 3.1 8B served in bf16 on one H100, 8,192 tokens of context: the lesson's own
    example (it fits)."""
    mem = memory.serving_memory(_get_model("llama-3.1-8b"), get_hardware("h100-sxm"))
    return FitQuestion(seed, "serve", mem, None)


def fit_question(seed: object) -> FitQuestion:
    """Scenario number ``seed`` (1 to MAX_SEED): the same number always gives the same one.

    About half the scenarios fit and half do not.
    """
    s = parse_seed(seed)
    rng = random.Random(s)
    want_fit = rng.random() < 0.5
    return first_drawn(rng, s, lambda r, n: _draw(r, n, want_fit), _fallback, _MAX_DRAWS)


# ---------------------------------------------------------------------------- checking


@dataclass(frozen=True, slots=True)
class FitFeedback(BaseFeedback):
    """The verdict on one answer (see :class:`~engine.lesson.drills.core.BaseFeedback`; the mistake is
    an id from MISTAKES), with what the reader said and what the engine says.
    """

    says_fits: bool
    fits: bool
    answer_GB: float | None
    expected_GB: float


def check_answer(question: FitQuestion, fits: object, answer_text: object = "") -> FitFeedback:
    """Check the reader's verdict ('yes'/'no', required) and optional memory per GPU (text, GB).

    Right when the verdict is the engine's and the number, if given, is within
    ``question.tolerance`` of the engine's figure. A wrong number is matched with the typical
    slips (within the same tolerance); a wrong verdict alone with the first slip leading to it.
    """
    says_fits = parse_fits(fits)
    answer: float | None = None
    if not (isinstance(answer_text, str) and not answer_text.strip()):
        answer = parse_answer_GB(answer_text)
    working = question.working()
    expected = question.answer_GB
    right = format_GB(question.answer_bytes)
    verdict_ok = says_fits == question.fits
    truth = "it fits" if question.fits else "it does not fit"

    def result(correct: bool, headline: str, explanation: str, mistake: str) -> FitFeedback:
        return FitFeedback(
            correct,
            headline,
            explanation,
            working,
            mistake,
            says_fits,
            question.fits,
            answer,
            expected,
        )

    number_ok = answer is not None and within(
        answer * GB, question.answer_bytes, question.tolerance
    )
    if verdict_ok and (answer is None or number_ok):
        each = f" Each GPU needs {right}." if answer is None else f" {right} per GPU."
        return result(
            True,
            f"Correct: {truth}.{each}",
            f"Numbers within {format_percent(question.tolerance)} of the engine's figure count.",
            "",
        )
    if number_ok:
        return result(
            False,
            f"Your {format_GB(answer * GB if answer else 0.0)} is right, but {truth}.",
            working[-1],
            "wrong_verdict",
        )
    if answer is not None:
        headline = (
            f"Right verdict ({truth}), but each GPU needs {right}."
            if verdict_ok
            else f"Not quite: {truth}, and each GPU needs {right}."
        )
        words, mistake = slip_words(question.slip_matching(answer), format_GB(answer * GB))
        return result(False, headline, words, mistake)
    headline = f"Not quite: {truth}. Each GPU needs {right}."
    slip = question.slip_for_verdict(says_fits)
    if slip is None:
        return result(False, headline, "Follow the working below.", "unknown")
    mistake, wrong_bytes, words = slip
    would = "would fit" if says_fits else "would not fit"
    return result(
        False,
        headline,
        f"{words} That slip gives {format_GB(wrong_bytes)} per GPU, which {would}.",
        mistake,
    )


__all__ = [
    "MISTAKES",
    "FitFeedback",
    "FitQuestion",
    "check_answer",
    "fit_question",
]
