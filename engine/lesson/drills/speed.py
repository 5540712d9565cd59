"""Drill (docs/steps/drill-will-it-fit.md, second drill): how fast? Generated questions on serving speed, the reader's
number and limit checked, the slip named.

A question is drawn deterministically from its number (``random.Random(seed)``), as in the
memory drills: a dense model, a weight format and one GPU, and one of three questions:

- ``per_token``: the time per output token of one request (batch 1) at a given context;
- ``first_token``: the time to the first token of a prompt (its prefill, no queue);
- ``batch``: the output tokens per second of a batch of requests at a given context.

Each also asks which limit sets the time: compute or memory bandwidth. Every answer is the
engine's bound (:func:`engine.numbers.serving.decode_step` or
:func:`engine.numbers.serving.prefill`: the larger of bytes / bandwidth and FLOPs / dense
peak, the best case), and the feedback adds the expected value of
:mod:`engine.numbers.expected_serving`. A number is right within
:data:`engine.lesson.drills.core.TOLERANCE` (2 %); a wrong one is compared, with the same
tolerance, with the numbers the typical slips give (bits for bytes, the sparse peak, the
prompt at decode speed, the weights read once per request...).

Answers are in ms (times; '4.8', '4.8 ms' or '0.0048 s') or in tokens/s (a batch's speed).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from engine.lesson.drills.core import (
    TOLERANCE,
    AnswerUnit,
    BaseFeedback,
    Slip,
    first_drawn,
    parse_answer,
    parse_seed,
    slip_words,
    within,
)
from engine.numbers import architecture, memory, serving, validate
from engine.numbers.catalog import HardwareSpec, ModelSpec, get_hardware, list_models
from engine.numbers.catalog import get_model as _get_model
from engine.numbers.errors import EngineError
from engine.numbers.expected_serving import (
    expected_decode_step_seconds,
    expected_prefill_seconds,
)
from engine.numbers.formats import FormatId, get_format
from engine.numbers.units import GB, GiB
from engine.words.format import (
    format_bandwidth,
    format_flops,
    format_GB,
    format_percent,
    format_seconds,
    format_TFLOP_per_s,
    format_tokens_per_s,
)

KINDS = ("per_token", "first_token", "batch")
SPEED_GPUS = ("h100-sxm", "h200", "a100-80gb", "l40s", "l4", "b200", "mi300x")
WEIGHT_FORMATS: tuple[FormatId, ...] = ("bf16", "bf16", "fp8")
KV_FORMAT: FormatId = "bf16"
CONTEXTS = (1024, 2048, 4096, 8192, 16384, 32768)  # per_token
PROMPTS = (256, 512, 1024, 2048, 4096, 8192)  # first_token
BATCH_CONTEXTS = (128, 256, 512, 1024, 2048, 4096)  # batch
BATCHES = (4, 16, 32, 64, 128, 256, 512, 1024)
# A question is kept only when one limit clearly wins: the larger time at least this many
# times the smaller.
LIMIT_MARGIN = 1.25
SPARSE_FACTOR = 2.0  # datasheets' headline peak with 2:4 structured sparsity, over the dense one
_MAX_DRAWS = 300

LIMITS = ("compute", "memory")
LIMIT_WORDS = {"compute": "compute", "memory": "memory bandwidth"}

MS_ANSWER = AnswerUnit(
    "ms", "4.8", (("", 1.0), ("ms", 1.0), ("s", 1000.0)), maximum=1e12
)
TOKENS_ANSWER = AnswerUnit(
    "tokens/s",
    "1,200",
    (("", 1.0), ("tokens/s", 1.0), ("token/s", 1.0), ("tok/s", 1.0)),
    maximum=1e15,
    unit_pattern="[a-z/]*",
)

MISTAKES = {
    "seconds_not_ms": "answered in seconds instead of ms",
    "tokens_per_s": "gave tokens per second, not ms per token",
    "bits_not_bytes": "used bits as bytes",
    "forgot_kv": "forgot the KV cache",
    "gib": "used GB as GiB",
    "compute_not_memory": "used the compute time where memory bandwidth sets the pace",
    "memory_not_compute": "used the memory time where compute sets the pace",
    "sum_not_max": "added the compute and memory times",
    "sparse_peak": "used the sparse peak (or 1 FLOP per weight instead of 2)",
    "decode_speed": "counted the prompt tokens at decode speed",
    "forgot_attention": "forgot the attention FLOPs",
    "one_request": "gave one request's speed, not the batch's",
    "no_shared_read": "forgot the batch shares one weight read",
    "scaled_batch1": "multiplied the speed at batch 1 by the batch",
    "wrong_limit": "right number, wrong limit",
    "unknown": "no typical slip matches",
}
# The slips a question must tell apart from its answer to be kept, by kind.
_NEEDED = {
    "per_token": {"bits_not_bytes", "compute_not_memory", "seconds_not_ms"},
    "first_token": {"decode_speed", "seconds_not_ms"},
    "batch": {"one_request"},
}


def speed_models() -> list[ModelSpec]:
    """The catalogue's dense models with full attention: every weight read at each step, so
    the reader's arithmetic (parameters x bytes) is the engine's."""
    return [m for m in list_models() if not m.routed_params and not m.sliding_window]


@dataclass(frozen=True, slots=True)
class SpeedQuestion:
    """One question: ``kind`` (one of KINDS) for ``model`` in ``weight_format`` on one
    ``hardware``. ``step`` is the engine's bound for the pass asked about (a decode step of
    ``step.batch`` requests, or the prefill); ``expected_seconds`` its expected time.

    ``answer`` is in ms for the two times and in tokens/s for ``batch``.
    """

    seed: int
    kind: str
    model: ModelSpec
    hardware: HardwareSpec
    weight_format: FormatId
    step: serving.DecodeStep | serving.Prefill
    expected_seconds: float
    tolerance: float = TOLERANCE

    # ------------------------------------------------------------------------- numbers

    @property
    def batch(self) -> int:
        return self.step.batch

    @property
    def tokens(self) -> int:
        """The context of a decode step, or the prompt's length for a prefill."""
        if isinstance(self.step, serving.Prefill):
            return self.step.prompt_tokens
        return self.step.context_tokens

    @property
    def limit(self) -> str:
        """'compute' or 'memory': which of the step's two times is the larger."""
        return self.step.bound

    @property
    def unit(self) -> AnswerUnit:
        return TOKENS_ANSWER if self.kind == "batch" else MS_ANSWER

    def in_unit(self, seconds: float) -> float:
        """A step of ``seconds`` as the answer's unit: ms, or tokens/s of the batch."""
        return self.batch / seconds if self.kind == "batch" else seconds * 1e3

    @property
    def answer(self) -> float:
        return self.in_unit(self.step.seconds)

    @property
    def expected_answer(self) -> float:
        return self.in_unit(self.expected_seconds)

    def answer_words(self, value: float) -> str:
        """``value`` in the answer's unit as words: '4.48 ms', '0.748 ms', '1,337 tokens/s'."""
        if self.kind == "batch":
            return format_tokens_per_s(value)
        return f"{value:,.0f} ms" if value >= 100 else f"{value:.3g} ms"

    @property
    def peak(self) -> float:
        return self.hardware.compute_peak(self.weight_format)[0]

    @property
    def weight_bytes(self) -> float:
        return serving.weight_bytes_read(self.model, self._bytes_per_number, self.batch)

    @property
    def streamed_weights(self) -> float:
        """Weights read whole every step: all but the looked-up tables, whose rows (one a
        token) are too few to count at the drill's 2 % (Llama 3.1 8B: 4,096 a token beside
        7,504,924,672)."""
        return serving.weight_bytes_read(self.model, 1.0, 0)

    @property
    def _bytes_per_number(self) -> float:
        return get_format(self.weight_format).bytes_per_number

    @property
    def matmul_weights(self) -> float:
        """Weights used in matrix multiplies per token (half the forward FLOPs per token)."""
        return architecture.forward_flops_per_token(self.model) / 2

    @property
    def attention_flops(self) -> float:
        """Attention-score FLOPs: per token at the context (decode), or over the prompt."""
        m = self.model
        if isinstance(self.step, serving.Prefill):
            per = architecture.attention_flops_per_layer_token(m)
            return per * architecture.causal_attended_layer_tokens(m, self.tokens)
        return architecture.attention_flops_per_token(m, self.tokens)

    @property
    def kv_bytes_per_token(self) -> float:
        return memory.kv_cache_bytes_per_token(self.model, KV_FORMAT)

    # ------------------------------------------------------------------------- words

    @property
    def lead(self) -> str:
        m, hw = self.model.name, self.hardware.name
        if self.kind == "per_token":
            return f"One request to {m} on one {hw} is {self.tokens:,} tokens into its context."
        if self.kind == "first_token":
            return f"A request to {m} on one {hw} arrives with a prompt of {self.tokens:,} tokens."
        return (
            f"{m} on one {hw} serves {self.batch:,} requests at once, each {self.tokens:,} "
            "tokens into its context."
        )

    @property
    def ask(self) -> str:
        return {
            "per_token": "How many ms does each new output token take, at best?",
            "first_token": "How many ms until its first output token (no queue), at best?",
            "batch": "How many output tokens per second does the GPU make in all, at best?",
        }[self.kind]

    def givens(self) -> list[tuple[str, str]]:
        """The question's data as (term, value) pairs, every number from the engine (the
        batch and the context or prompt are in the lead)."""
        fmt = get_format(self.weight_format)
        peak, compute_format = self.hardware.compute_peak(self.weight_format)
        per = "over the prompt" if isinstance(self.step, serving.Prefill) else "per token"
        return [
            ("Weights read", f"{self.streamed_weights:,.0f}"),
            ("Weights", f"{fmt.id.upper()}, {fmt.bits:g} bits each"),
            ("In matrix multiplies", f"{self.matmul_weights:,.0f} weights per token"),
            ("Attention scores", f"{format_flops(self.attention_flops)} {per}"),
            ("KV cache", f"{self.kv_bytes_per_token:,.0f} bytes per token"),
            (
                "GPU",
                f"{format_TFLOP_per_s(peak)} dense ({compute_format}), "
                f"{format_bandwidth(self.hardware.bandwidth_bytes_per_s)}",
            ),
        ]

    def notes(self) -> tuple[str, ...]:
        """The question's assumptions, for the reader who opens them."""
        context = "the whole prompt" if self.kind == "first_token" else "this context"
        return (
            f"Weights in {get_format(self.weight_format).label}; KV cache in {KV_FORMAT}.",
            "The input embedding is a lookup: no FLOPs, and unless it is tied to the output "
            "head a step reads only its tokens' rows of it (left out of the weights read).",
            f"Attention scores: the engine's count of FLOPs for {context}.",
            "The answer is the bound, the best case: every FLOP at the dense peak, every "
            "byte at full bandwidth. The feedback adds a well-tuned server's expected figure.",
        )

    def working(self) -> tuple[str, ...]:
        """The worked arithmetic, every number from the engine; the last line sets the
        bound beside the expected value."""
        s = self.step
        bw = format_bandwidth(self.hardware.bandwidth_bytes_per_s)
        kv = format_GB(s.bytes_read - self.weight_bytes)
        weights = format_GB(self.weight_bytes)
        if isinstance(s, serving.Prefill):
            bytes_words = f"weights {weights} + KV cache written {kv}"
            flops = (
                f"FLOPs: 2 × {self.matmul_weights:,.0f} × {self.tokens:,} tokens + "
                f"{format_flops(self.attention_flops)} of attention = {format_flops(s.flops)}"
            )
            per = "for the prefill"
        else:
            once = " (read once for the whole batch)" if self.batch > 1 else ""
            bytes_words = f"weights {weights}{once} + KV cache {kv}"
            per_token = f"2 × {self.matmul_weights:,.0f} + {format_flops(self.attention_flops)}"
            if self.batch > 1:
                per_token = f"{self.batch:,} × ({per_token})"
            flops = f"FLOPs: {per_token} = {format_flops(s.flops)}"
            per = "per step"
        lines = [
            f"Bytes: {bytes_words} = {format_GB(s.bytes_read)}; ÷ {bw} = "
            f"{format_seconds(s.memory_seconds)}.",
            f"{flops}; ÷ {format_TFLOP_per_s(self.peak)} = {format_seconds(s.compute_seconds)}.",
            f"The larger sets the pace: {LIMIT_WORDS[self.limit]}, {format_seconds(s.seconds)} "
            f"{per}.",
        ]
        if self.kind == "batch":
            lines.append(
                f"{self.batch:,} tokens per step ÷ {format_seconds(s.seconds)} = "
                f"{format_tokens_per_s(self.answer)}."
            )
        lines.append(
            f"{self.answer_words(self.answer)} is the bound, the best case (every FLOP at the "
            "dense peak, every byte at full bandwidth); a well-tuned server is expected to "
            f"reach {self.answer_words(self.expected_answer)}."
        )
        return tuple(lines)

    # ------------------------------------------------------------------------- slips

    def typical_wrong_answers(self) -> list[Slip]:
        """(mistake id, the answer that slip gives in the answer's unit, what it means),
        likeliest first. A slip whose answer cannot be told apart from the right one is left
        out."""
        if self.kind == "per_token":
            out = self._per_token_slips()
        elif self.kind == "first_token":
            out = self._first_token_slips()
        else:
            out = self._batch_slips()
        out += self._limit_slips()
        return [c for c in out if not within(c[1], self.answer, 2 * self.tolerance)]

    def _limit_slips(self) -> list[Slip]:
        """Slips about the two times: the other one taken, the two added, GiB, the peak."""
        s = self.step
        ridge = self.peak / self.hardware.bandwidth_bytes_per_s
        ai = s.arithmetic_intensity
        intensity = f"{ai:,.0f} FLOPs per byte" if ai >= 10 else f"{ai:.2g} FLOPs per byte"
        out: list[Slip] = []
        if self.limit == "memory":
            out.append((
                "compute_not_memory",
                self.in_unit(s.compute_seconds),
                f"You used the compute time. This pass does {intensity} it reads, below the "
                f"{ridge:,.0f} this GPU needs to be busy computing: reading the bytes sets "
                "the pace.",
            ))
            out.append((
                "gib",
                self.in_unit(s.memory_seconds * GB / GiB),
                f"Your number looks like the bytes in GiB (2^30) over a bandwidth in TB/s "
                f"(10^12 bytes/s). Keep both in powers of 10: {format_GB(s.bytes_read)} is "
                f"{s.bytes_read / GiB:,.2f} GiB.",
            ))
        else:
            out.append((
                "memory_not_compute",
                self.in_unit(s.memory_seconds),
                f"You used the time to read the bytes. This pass does {intensity} it reads, "
                f"past the {ridge:,.0f} at which this GPU turns compute-bound: the FLOPs set "
                "the pace.",
            ))
            out.append((
                "sparse_peak",
                self.in_unit(max(s.memory_seconds, s.compute_seconds / SPARSE_FACTOR)),
                f"That is half the compute time: the datasheet's headline peak with 2:4 "
                f"sparsity is twice the dense {format_TFLOP_per_s(self.peak)} a model's "
                "dense matrices run at (and a weight costs 2 FLOPs per token: a multiply "
                "and an add).",
            ))
        out.append((
            "sum_not_max",
            self.in_unit(s.memory_seconds + s.compute_seconds),
            "You added the compute and memory times. At best the GPU reads and computes at "
            "once, so the larger of the two is the bound (the sum is the worst case).",
        ))
        return out

    def _ms_slip(self) -> Slip:
        return (
            "seconds_not_ms",
            self.answer / 1e3,
            "That is the time in seconds; the answer is asked in ms (multiply by 1,000).",
        )

    def _forgot_kv(self, kv_words: str) -> Slip:
        s = self.step
        no_kv = max(self.weight_bytes / self.hardware.bandwidth_bytes_per_s, s.compute_seconds)
        return (
            "forgot_kv",
            self.in_unit(no_kv),
            f"You counted the weights only: each step also reads {kv_words}, "
            f"{format_GB(s.bytes_read - self.weight_bytes)}.",
        )

    def _per_token_slips(self) -> list[Slip]:
        s = self.step
        bw = self.hardware.bandwidth_bytes_per_s
        fmt = get_format(self.weight_format)
        bits = fmt.bits
        kv = s.bytes_read - self.weight_bytes
        return [
            self._ms_slip(),
            (
                "tokens_per_s",
                1.0 / s.seconds,
                f"That is tokens per second (1 ÷ the time per token, {format_tokens_per_s(1 / s.seconds)}); "
                "the question asks for ms per token.",
            ),
            (
                "bits_not_bytes",
                self.in_unit(max((self.weight_bytes * 8 + kv) / bw, s.compute_seconds)),
                f"You used {bits:g} bits per parameter as bytes: {bits:g} bits are "
                f"{fmt.bytes_per_number:g} bytes.",
            ),
            self._forgot_kv(f"the KV cache of its {self.tokens:,} tokens"),
        ]

    def _first_token_slips(self) -> list[Slip]:
        s = self.step
        decode = serving.decode_seconds(
            self.model, self.hardware, prompt_tokens=1, output_tokens=self.tokens + 1,
            weight_format=self.weight_format, kv_format=KV_FORMAT,
        )
        no_attention = (s.flops - self.attention_flops) / self.peak
        return [
            self._ms_slip(),
            (
                "decode_speed",
                self.in_unit(decode),
                f"You counted the {self.tokens:,} prompt tokens one decode step each. The "
                "prefill takes the whole prompt in one pass: the weights are read once for "
                "all of its tokens.",
            ),
            (
                "forgot_attention",
                self.in_unit(max(s.memory_seconds, no_attention)),
                f"You left out the {format_flops(self.attention_flops)} of attention scores "
                "over the prompt.",
            ),
        ]

    def _batch_slips(self) -> list[Slip]:
        s = self.step
        b = self.batch
        one = serving.decode_step(
            self.model, self.hardware, context_tokens=self.tokens, batch=1,
            weight_format=self.weight_format, kv_format=KV_FORMAT,
        )
        return [
            (
                "one_request",
                1.0 / s.seconds,
                f"That is one request's speed (1 ÷ the step time). Each step makes a token "
                f"for every one of the {b:,} requests: multiply by {b:,}.",
            ),
            (
                "no_shared_read",
                b / max(b * one.memory_seconds, s.compute_seconds),
                f"You read the weights once per request. The {b:,} requests share one read "
                "of the weights per step; only their KV caches are read one by one.",
            ),
            (
                "scaled_batch1",
                b * one.tokens_per_s,
                f"You multiplied the speed at batch 1 by {b:,}. A step of {b:,} requests "
                f"also reads {b:,} KV caches and does {b:,} times the FLOPs: it takes "
                f"{format_seconds(s.seconds)}, not {format_seconds(one.seconds)}.",
            ),
            self._forgot_kv(f"the KV caches of the {b:,} requests"),
        ]

    def slip_matching(self, answer: float) -> Slip | None:
        """The likeliest slip that gives ``answer`` (within the tolerance), None if none."""
        for slip in self.typical_wrong_answers():
            if within(answer, slip[1], self.tolerance):
                return slip
        return None


# ------------------------------------------------------------------------- generation


def _decode(model: ModelSpec, hw: HardwareSpec, fmt: FormatId, context: int, batch: int
            ) -> serving.DecodeStep:
    return serving.decode_step(
        model, hw, context_tokens=context, batch=batch, weight_format=fmt, kv_format=KV_FORMAT
    )


def _question(seed: int, kind: str, model: ModelSpec, hw: HardwareSpec, fmt: FormatId,
              tokens: int, batch: int) -> SpeedQuestion:
    """The question with the engine's bound and expected time for its pass."""
    step: serving.DecodeStep | serving.Prefill
    if kind == "first_token":
        step = serving.prefill(model, hw, prompt_tokens=tokens, weight_format=fmt,
                               kv_format=KV_FORMAT)
        expected = expected_prefill_seconds(model, hw, step, fmt)[0]
    else:
        step = _decode(model, hw, fmt, tokens, batch)
        expected = expected_decode_step_seconds(
            model, hw, context_tokens=tokens, batch=batch, weight_format=fmt, kv_format=KV_FORMAT
        )
    return SpeedQuestion(seed, kind, model, hw, fmt, step, expected)


def _draw(rng: random.Random, seed: int, kind: str, want_compute: bool) -> SpeedQuestion | None:
    model = rng.choice(speed_models())
    hw = get_hardware(rng.choice(SPEED_GPUS))
    fmt = rng.choice(WEIGHT_FORMATS)
    batch = rng.choice(BATCHES) if kind == "batch" else 1
    tokens = rng.choice({"per_token": CONTEXTS, "first_token": PROMPTS, "batch": BATCH_CONTEXTS}[
        kind])
    if tokens > model.max_context:
        return None
    if not memory.serving_memory(model, hw, weight_format=fmt, kv_format=KV_FORMAT,
                                 context_tokens=tokens, batch=batch).fits:
        return None  # a speed question assumes the model and its KV cache fit on the GPU
    q = _question(seed, kind, model, hw, fmt, tokens, batch)
    s = q.step
    times = sorted((s.memory_seconds, s.compute_seconds))
    if times[1] < LIMIT_MARGIN * times[0]:
        return None  # on the fence: neither limit clearly sets the time
    if kind == "batch" and (s.bound == "compute") != want_compute:
        return None
    return q if _NEEDED[kind] <= {c[0] for c in q.typical_wrong_answers()} else None


def _fallback(seed: int) -> SpeedQuestion:
    """Llama 3.1 8B in bf16 on one H100, 8,192 tokens into its context: the lesson's own
    example of decode at batch 1."""
    return _question(seed, "per_token", _get_model("llama-3.1-8b"), get_hardware("h100-sxm"),
                     "bf16", 8192, 1)


def speed_question(seed: object) -> SpeedQuestion:
    """Question number ``seed`` (1 to MAX_SEED): the same number always gives the same one.

    The three kinds come about equally often; about half the batch questions are
    compute-bound.
    """
    s = parse_seed(seed)
    rng = random.Random(s)
    kind = rng.choice(KINDS)
    want_compute = rng.random() < 0.5
    return first_drawn(rng, s, lambda r, n: _draw(r, n, kind, want_compute), _fallback,
                       _MAX_DRAWS)


# ---------------------------------------------------------------------------- checking


@dataclass(frozen=True, slots=True)
class SpeedFeedback(BaseFeedback):
    """The verdict on one answer (see :class:`~engine.lesson.drills.core.BaseFeedback`; the
    mistake is an id from MISTAKES), with what the reader said and what the engine says:
    the limit ('compute' or 'memory') and the number in ``unit``."""

    says_limit: str
    limit: str
    answer: float
    expected: float
    unit: str


def parse_limit(value: object, field: str = "limit") -> str:
    """'compute' or 'memory' (EngineError naming ``field`` otherwise)."""
    if value == "":
        raise EngineError("Say which limit sets it: choose compute or memory bandwidth.", field)
    return validate.choice(value, field, LIMITS, label="Answer to 'which limit?'")


def check_answer(question: SpeedQuestion, limit: object, answer_text: object) -> SpeedFeedback:
    """Check the reader's limit ('compute' or 'memory') and number (text, in the question's
    unit). Right when both are the engine's, the number within ``question.tolerance``; a
    wrong number is matched with the typical slips (within the same tolerance)."""
    says = parse_limit(limit)
    answer = parse_answer(answer_text, question.unit)
    working = question.working()
    right = question.answer_words(question.answer)
    truth = LIMIT_WORDS[question.limit]

    def result(correct: bool, headline: str, explanation: str, mistake: str) -> SpeedFeedback:
        return SpeedFeedback(correct, headline, explanation, working, mistake, says,
                             question.limit, answer, question.answer, question.unit.name)

    limit_ok = says == question.limit
    if within(answer, question.answer, question.tolerance):
        if limit_ok:
            return result(
                True,
                f"Correct: {right} at best, set by {truth}.",
                f"Numbers within {format_percent(question.tolerance)} of the engine's figure count.",
                "",
            )
        return result(False, f"Your {right} is right, but {truth} sets it.", working[2],
                      "wrong_limit")
    headline = (
        f"Right limit ({truth}), but the answer is {right}."
        if limit_ok
        else f"Not quite: {right}, set by {truth}."
    )
    words, mistake = slip_words(question.slip_matching(answer), question.answer_words(answer))
    return result(False, headline, words, mistake)


__all__ = [
    "KINDS",
    "MISTAKES",
    "SpeedFeedback",
    "SpeedQuestion",
    "check_answer",
    "parse_limit",
    "speed_question",
]
