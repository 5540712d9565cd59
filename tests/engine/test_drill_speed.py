"""The second drill of drill-will-it-fit, on speed: questions from seeds, answers equal to the engine's
bound (with the expected value beside it), the limit and the number checked, every named
slip recognised, hostile input answered in words; and its widget."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable

import pytest

from engine.browser import update
from engine.lesson.drills import speed as drill_speed
from engine.lesson.drills.core import TOLERANCE, Score, parse_answer
from engine.numbers import serving
from engine.numbers.errors import EngineError
from engine.numbers.expected_serving import (
    expected_decode_step_seconds,
    expected_prefill_seconds,
)
from engine.registry import widget_names

WIDGET = "drill_speed"
HOSTILE = '<script>alert("x")</script>'
SEEDS = range(1, 400)


def find(predicate: Callable[[drill_speed.SpeedQuestion], bool]) -> drill_speed.SpeedQuestion:
    """The first question (by number) that matches ``predicate``."""
    for seed in range(1, 3000):
        q = drill_speed.speed_question(seed)
        if predicate(q):
            return q
    raise AssertionError("no question matches")


def run(inputs: dict[str, str]) -> dict[str, object]:
    reply = json.loads(update(WIDGET, json.dumps(inputs)))
    assert isinstance(reply, dict)
    return reply


# ---------------------------------------------------------------------------- questions


def test_the_same_seed_gives_the_same_question() -> None:
    for seed in (1, 7, 42, 999_999_999):
        a, b = drill_speed.speed_question(seed), drill_speed.speed_question(seed)
        assert (a.lead, a.givens(), a.ask, a.working()) == (b.lead, b.givens(), b.ask, b.working())
        assert a.answer == b.answer
    assert len({drill_speed.speed_question(s).lead for s in range(1, 40)}) > 30


def test_questions_vary_and_one_limit_clearly_wins() -> None:
    qs = [drill_speed.speed_question(s) for s in SEEDS]
    assert {q.kind for q in qs} == set(drill_speed.KINDS)
    batch = [q for q in qs if q.kind == "batch"]
    assert 0.3 < sum(q.limit == "compute" for q in batch) / len(batch) < 0.7
    assert {q.limit for q in qs if q.kind == "per_token"} == {"memory"}
    assert len({q.hardware.id for q in qs}) == len(drill_speed.SPEED_GPUS)
    assert len({q.model.id for q in qs}) >= 5
    assert {q.weight_format for q in qs} == {"bf16", "fp8"}
    for q in qs:
        times = sorted((q.step.memory_seconds, q.step.compute_seconds))
        assert times[1] >= drill_speed.LIMIT_MARGIN * times[0]
        assert q.tokens <= q.model.max_context


def test_the_answer_is_the_engines_bound_and_the_expected_value_beside_it() -> None:
    for seed in range(1, 120):
        q = drill_speed.speed_question(seed)
        m, hw, fmt = q.model, q.hardware, q.weight_format
        if q.kind == "first_token":
            pre = serving.prefill(m, hw, prompt_tokens=q.tokens, weight_format=fmt)
            assert q.answer == pre.seconds * 1e3
            assert q.limit == pre.bound
            assert q.expected_answer == expected_prefill_seconds(m, hw, pre, fmt)[0] * 1e3
            continue
        step = serving.decode_step(m, hw, context_tokens=q.tokens, batch=q.batch,
                                   weight_format=fmt)
        assert q.limit == step.bound
        expected = expected_decode_step_seconds(m, hw, context_tokens=q.tokens, batch=q.batch,
                                                weight_format=fmt)
        if q.kind == "per_token":
            assert q.batch == 1
            assert q.answer == step.seconds * 1e3
            assert q.expected_answer == expected * 1e3
        else:
            assert q.answer == step.tokens_per_s
            assert q.expected_answer == q.batch / expected
        assert q.expected_answer != q.answer
        assert q.answer_words(q.expected_answer) in q.working()[-1]
        assert "the bound, the best case" in q.working()[-1]


def _number(text: str) -> float:
    """The first number of ``text``, '1.34 × 10^8' and '1,234.5' included."""
    match = re.search(r"([0-9][0-9,]*(?:\.[0-9]+)?)(?: × 10\^([0-9]+))?", text)
    assert match, text
    value = float(match.group(1).replace(",", ""))
    return value * 10 ** int(match.group(2)) if match.group(2) else value


def test_the_givens_are_enough_to_reach_the_answer() -> None:
    """The reader's arithmetic, from the question's words alone, lands within the tolerance."""
    for seed in range(1, 150):
        q = drill_speed.speed_question(seed)
        given = dict(q.givens())
        bytes_per_param = _number(given["Weights"].split(", ")[1]) / 8
        # The looked-up rows (an untied embedding's, one a token) are too few to matter.
        streamed = _number(given["Weights read"])
        assert streamed <= q.model.params, seed  # a looked-up table is not read whole
        matmul = _number(given["In matrix multiplies"])
        attention = _number(given["Attention scores"])
        kv = _number(given["KV cache"])
        gpu = given["GPU"]
        assert "TFLOP/s dense" in gpu, gpu
        peak = _number(gpu) * 1e12
        bandwidth_words = gpu.split(", ")[-1]
        bandwidth = _number(bandwidth_words) * (1e12 if "TB/s" in bandwidth_words else 1e9)
        if q.kind == "first_token":
            read = streamed * bytes_per_param + kv * q.tokens
            flops = 2 * matmul * q.tokens + attention
            seconds = max(read / bandwidth, flops / peak)
            assert seconds * 1e3 == pytest.approx(q.answer, rel=TOLERANCE / 2), seed
            continue
        batch = q.batch
        read = streamed * bytes_per_param + batch * kv * q.tokens
        seconds = max(read / bandwidth, batch * (2 * matmul + attention) / peak)
        mine = batch / seconds if q.kind == "batch" else seconds * 1e3
        assert mine == pytest.approx(q.answer, rel=TOLERANCE / 2), seed


def test_the_fallback_is_the_lessons_own_example() -> None:
    q = drill_speed._fallback(3)
    assert (q.kind, q.model.id, q.hardware.id, q.tokens, q.limit) == (
        "per_token", "llama-3.1-8b", "h100-sxm", 8192, "memory")
    # 8,030,261,248 parameters (Meta's Llama 3.1 8B) less its untied input embedding,
    # 128,256 x 4,096 = 525,336,576, looked up one row of 4,096 per token: (8,030,261,248 -
    # 525,336,576 + 4,096) x 2 bytes (bf16) = 15,009,857,536, plus 8,192 tokens x 131,072
    # bytes of KV cache (32 layers x 8 KV heads x 128 x 2 x 2 bytes), over 3.35 TB/s
    # (NVIDIA H100 SXM5 datasheet): 4.80 ms.
    assert q.answer == pytest.approx(
        ((8_030_261_248 - 525_336_576 + 4096) * 2 + 8192 * 131_072) / 3.35e12 * 1e3)


# ----------------------------------------------------------------------------- checking


def test_the_right_number_and_limit_are_correct_within_the_tolerance() -> None:
    for kind in drill_speed.KINDS:
        q = find(lambda q, k=kind: q.kind == k)
        unit = "ms" if kind != "batch" else "tokens/s"
        for text in (f"{q.answer:.4f}", f"{q.answer * 1.015:.4f}", f"{q.answer:.4f} {unit}"):
            fb = drill_speed.check_answer(q, q.limit, text)
            assert fb.correct and fb.mistake == "", text
            assert q.answer_words(q.answer) in fb.headline
        assert not drill_speed.check_answer(q, q.limit, f"{q.answer * 1.03:.4f}").correct
    q = find(lambda q: q.kind == "per_token")
    assert drill_speed.check_answer(q, "memory", f"{q.answer / 1e3:.8f} s").correct


def test_right_number_wrong_limit() -> None:
    q = find(lambda q: q.kind == "batch" and q.limit == "compute")
    fb = drill_speed.check_answer(q, "memory", f"{q.answer:.3f}")
    assert not fb.correct and fb.mistake == "wrong_limit"
    assert "compute sets it" in fb.headline
    assert fb.explanation.startswith("The larger sets the pace: compute")


def _slip_cases() -> list[tuple[str, drill_speed.SpeedQuestion, float]]:
    """For each named mistake, the first question whose slips tell it apart from every
    likelier one, and the answer that slip gives."""
    cases: dict[str, tuple[drill_speed.SpeedQuestion, float]] = {}
    for seed in range(1, 2000):
        q = drill_speed.speed_question(seed)
        slips = q.typical_wrong_answers()
        for i, (mistake, value, _) in enumerate(slips):
            earlier = slips[:i]
            if mistake not in cases and not any(
                drill_speed.within(value, c[1], 2 * TOLERANCE) for c in earlier
            ):
                cases[mistake] = (q, value)
        if len(cases) == len(drill_speed.MISTAKES) - 2:
            break
    return [(m, q, v) for m, (q, v) in sorted(cases.items())]


def test_every_named_mistake_can_be_made() -> None:
    named = {m for m, _, _ in _slip_cases()}
    assert named == set(drill_speed.MISTAKES) - {"wrong_limit", "unknown"}


@pytest.mark.parametrize(("mistake", "question", "value"), _slip_cases(),
                         ids=[c[0] for c in _slip_cases()])
def test_each_slip_is_recognised_and_named(
    mistake: str, question: drill_speed.SpeedQuestion, value: float
) -> None:
    fb = drill_speed.check_answer(question, question.limit, f"{value:.6f}")
    assert not fb.correct
    assert fb.mistake == mistake
    assert fb.explanation
    assert question.answer_words(question.answer) in fb.headline
    widget = run({"seed": str(question.seed), "limit": question.limit,
                  "answer": f"{value:.6f}", "action": "check"})
    assert f'data-mistake="{mistake}"' in str(widget["html"])
    shown = html.unescape(str(widget["html"]))
    assert f"Likely slip: you {drill_speed.MISTAKES[mistake]}." in shown


def test_the_headline_slips_of_the_brief_are_named_on_the_lessons_examples() -> None:
    """On Llama 3.1 8B in bf16 on one H100 (follow-one-request's example): bits for bytes, the prompt at
    decode speed, the sparse peak, one weight read per request."""
    def on_h100(kind: str) -> drill_speed.SpeedQuestion:
        return find(lambda q: q.kind == kind and q.model.id == "llama-3.1-8b"
                    and q.hardware.id == "h100-sxm" and q.weight_format == "bf16"
                    and (kind != "batch" or q.limit == "compute"))

    def named(q: drill_speed.SpeedQuestion, mistake: str) -> str:
        value = next(v for m, v, _ in q.typical_wrong_answers() if m == mistake)
        return drill_speed.check_answer(q, q.limit, f"{value:.6f}").mistake

    per_token = on_h100("per_token")
    assert named(per_token, "bits_not_bytes") == "bits_not_bytes"
    first = on_h100("first_token")
    assert named(first, "decode_speed") == "decode_speed"
    assert named(first, "sparse_peak") == "sparse_peak"
    batch = on_h100("batch")
    assert named(batch, "no_shared_read") == "no_shared_read"


def test_an_unmatched_number_says_so() -> None:
    q = find(lambda q: q.kind == "per_token")
    fb = drill_speed.check_answer(q, "memory", f"{q.answer * 1.5:.4f}")
    assert fb.mistake == "unknown"
    assert "does not match a typical slip" in fb.explanation


@pytest.mark.parametrize(
    ("limit", "answer", "field", "words"),
    [
        ("", "4.8", "limit", "choose compute or memory bandwidth"),
        (HOSTILE, "4.8", "limit", "'which limit?'"),
        ("memory", "", "answer", "empty"),
        ("memory", HOSTILE, "answer", "must be a number of ms"),
        ("memory", "-3", "answer", "more than 0 ms"),
        ("memory", "0", "answer", "more than 0 ms"),
        ("memory", "1e400", "answer", "far too large"),
        ("memory", "nan", "answer", "must be a number of ms"),
        ("memory", "4,8", "answer", "Use a point for decimals"),
        ("memory", "4.8 min", "answer", "Give the answer in ms, not 'min'"),
        ("memory", "9" * 60, "answer", "too long"),
    ],
)
def test_hostile_input_gets_a_message_not_a_crash(
    limit: str, answer: str, field: str, words: str
) -> None:
    q = find(lambda q: q.kind == "per_token")
    with pytest.raises(EngineError) as caught:
        drill_speed.check_answer(q, limit, answer)
    assert caught.value.field == field
    assert words in str(caught.value)
    reply = run({"seed": str(q.seed), "limit": limit, "answer": answer, "action": "check"})
    assert reply["field"] == field and words in str(reply["error"])


def test_answer_units() -> None:
    ms, tokens = drill_speed.MS_ANSWER, drill_speed.TOKENS_ANSWER
    assert parse_answer("4.8", ms) == 4.8
    assert parse_answer("4.8 MS", ms) == 4.8
    assert parse_answer("0.25 s", ms) == 250.0
    assert parse_answer("1,200 tokens/s", tokens) == 1200.0
    assert parse_answer("1,200 tok/s", tokens) == 1200.0
    with pytest.raises(EngineError, match="Give the answer in tokens/s, not 'gb'"):
        parse_answer("12 GB", tokens)
    with pytest.raises(EngineError, match="must be a number of ms"):
        parse_answer("4.8 tokens/s", ms)


# ------------------------------------------------------------------------------ widget


def test_the_widget_is_registered_and_keeps_the_score() -> None:
    assert WIDGET in widget_names()
    q = drill_speed.speed_question(5)
    first = run({"seed": "5", "limit": q.limit, "answer": f"{q.answer:.4f}", "action": "check"})
    state = first["set"]
    assert isinstance(state, dict)
    assert Score.from_text(state["state"]) == Score(1, 1, 1, 5)
    again = run({"seed": "5", "limit": q.limit, "answer": "1", "action": "check",
                 "state": state["state"]})
    assert "Only your first answer to a question counts" in str(again["html"])
    assert Score.from_text(again["set"]["state"]) == Score(1, 1, 1, 5)  # type: ignore[index]
    new = run({"seed": "5", "limit": "memory", "answer": "9", "action": "new"})
    assert new["set"] == {"seed": "6", "answer": "", "limit": ""}
    assert 'data-seed="6"' in str(new["html"])


def test_the_widget_refuses_a_broken_seed_or_score_in_words() -> None:
    for seed in ("0", "abc", HOSTILE, "1" * 40):
        reply = run({"seed": seed})
        assert reply["field"] == "seed" and "Question number" in str(reply["error"])
    reply = run({"state": "[" * 5000})
    assert reply["field"] == "state" and "starting a new score" in str(reply["error"])
