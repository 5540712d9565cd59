"""The will-it-fit drill: scenarios from seeds, the verdict (and optional number) checked by the
engine, slips named; and its widget (score kept, drill completed at five)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from widget_text import text_of

from engine.browser import update
from engine.lesson.drills import fit as drill_fit
from engine.lesson.drills import training_memory as training_drill
from engine.lesson.drills.view import GOAL
from engine.numbers import memory
from engine.numbers.errors import EngineError
from engine.numbers.units import GB, GiB
from engine.registry import get_widget, widget_names
from engine.words.format import format_GB

HOSTILE = '<script>alert("x")</script>'
WIDGET = "drill_will_it_fit"


def find(predicate: Callable[[drill_fit.FitQuestion], bool]) -> drill_fit.FitQuestion:
    """The first scenario (by number) that matches ``predicate``."""
    for seed in range(1, 3000):
        q = drill_fit.fit_question(seed)
        if predicate(q):
            return q
    raise AssertionError("no scenario matches")


def yes_no(fits: bool) -> str:
    return "yes" if fits else "no"


def gb(n_bytes: float) -> str:
    return f"{n_bytes / GB:.3f}"


def slip(q: drill_fit.FitQuestion, mistake: str) -> tuple[str, float, str]:
    return next(c for c in q.typical_wrong_answers() if c[0] == mistake)


def told_apart(q: drill_fit.FitQuestion, mistake: str) -> bool:
    """``mistake`` is among ``q``'s slips and no likelier slip gives the same number."""
    slips = q.typical_wrong_answers()
    names = [c[0] for c in slips]
    if mistake not in names:
        return False
    value = slips[names.index(mistake)][1]
    earlier = slips[: names.index(mistake)]
    return not any(training_drill.within(value, c[1], 2 * training_drill.TOLERANCE) for c in earlier)


# ---------------------------------------------------------------------------- scenarios


def test_the_same_seed_gives_the_same_scenario() -> None:
    for seed in (1, 7, 42, 999_999_999):
        a, b = drill_fit.fit_question(seed), drill_fit.fit_question(seed)
        assert a.text == b.text
        assert a.answer_bytes == b.answer_bytes
        assert a.working() == b.working()
    assert len({drill_fit.fit_question(s).text for s in range(1, 30)}) > 25


def test_scenarios_vary_and_are_never_on_the_fence() -> None:
    qs = [drill_fit.fit_question(s) for s in range(1, 300)]
    assert {q.task for q in qs} == {"serve", "train"}
    assert 0.35 < sum(q.fits for q in qs) / len(qs) < 0.65
    assert any(q.fits for q in qs if q.task == "train")
    assert any(not q.fits for q in qs if q.task == "train")
    assert len({q.hardware.id for q in qs}) >= 6
    assert len({q.model.id for q in qs}) >= 8
    assert {q.serving.weight_format for q in qs if q.serving} == {"bf16", "fp8", "int4"}
    assert len({q.serving.context_tokens for q in qs if q.serving}) >= 4
    assert len({q.serving.batch for q in qs if q.serving}) >= 4
    assert {q.training.sharding for q in qs if q.training} == {"none", "zero3"}
    assert any(q.gpus > 1 for q in qs if q.serving) and any(q.gpus == 1 for q in qs)
    for q in qs:
        ratio = q.answer_bytes / q.capacity_bytes
        assert abs(ratio - 1) >= drill_fit.VERDICT_MARGIN
        assert drill_fit.ANSWER_RANGE[0] <= ratio <= drill_fit.ANSWER_RANGE[1]
        assert sum(q.parts.values()) == pytest.approx(q.answer_bytes)
        if q.serving:
            assert q.serving.context_tokens <= q.model.max_context


def test_the_answer_is_the_engines_memory_per_gpu() -> None:
    for seed in range(1, 80):
        q = drill_fit.fit_question(seed)
        if q.serving is not None:
            s = q.serving
            mem: memory.ServingMemory | memory.TrainingMemory = memory.serving_memory(
                q.model,
                q.hardware,
                weight_format=s.weight_format,
                kv_format=s.kv_format,
                context_tokens=s.context_tokens,
                batch=s.batch,
                gpus=q.gpus,
            )
        else:
            t = q.training
            assert t is not None
            mem = memory.training_memory(
                q.model,
                q.hardware,
                gpus=q.gpus,
                sharding=t.sharding,
                optimizer="adam",
                convention="mixed-16",
                micro_batch=t.micro_batch,
                seq_len=t.seq_len,
            )
        assert q.answer_bytes == mem.per_gpu_bytes
        assert q.fits == mem.fits
        assert q.working()[-1].endswith("it fits." if q.fits else "it does not fit.")


def test_the_question_gives_what_the_reader_needs_from_the_engine() -> None:
    q = find(lambda q: q.serving is not None and q.gpus > 1 and q.serving.batch > 1)
    s = q.serving
    assert s is not None
    text = q.text
    assert f"{q.model.params:,}" in text
    assert f"{s.kv_cache_bytes_per_token:,.0f} bytes per token" in text
    assert f"{s.batch:,} at once, {s.context_tokens:,} tokens of context each" in text
    assert f"over the {q.gpus} GPUs" in text
    extras = s.parts["activations"] + s.parts["runtime_overhead"]
    assert format_GB(extras) in text
    assert q.hardware.name in text
    t = find(lambda q: q.training is not None).training
    assert t is not None
    text = find(lambda q: q.training is not None).text
    assert "mixed precision: 16 bytes per parameter" in text
    assert format_GB(t.parts["activations"]) in text


def test_the_fallback_is_the_lessons_own_example() -> None:
    q = drill_fit._fallback(5)
    assert (q.model.id, q.hardware.id, q.task, q.fits) == (
        "llama-3.1-8b",
        "h100-sxm",
        "serve",
        True,
    )


# ----------------------------------------------------------------------------- checking


def test_the_right_verdict_alone_is_correct() -> None:
    for seed in range(1, 20):
        q = drill_fit.fit_question(seed)
        fb = drill_fit.check_answer(q, yes_no(q.fits))
        assert fb.correct and fb.mistake == ""
        assert format_GB(q.answer_bytes) in fb.headline
        assert fb.answer_GB is None
        assert not drill_fit.check_answer(q, yes_no(not q.fits), "   ").correct


def test_the_right_verdict_and_number_are_correct_within_the_tolerance() -> None:
    q = drill_fit.fit_question(7)
    for text in (gb(q.answer_bytes), f"{q.answer_GB * 1.015:.3f}", f"{q.answer_GB:.2f} GB"):
        fb = drill_fit.check_answer(q, yes_no(q.fits), text)
        assert fb.correct, text
    fb = drill_fit.check_answer(q, yes_no(q.fits), f"{q.answer_GB * 1.03:.3f}")
    assert not fb.correct


def test_right_number_wrong_verdict() -> None:
    q = drill_fit.fit_question(7)
    fb = drill_fit.check_answer(q, yes_no(not q.fits), gb(q.answer_bytes))
    assert not fb.correct
    assert fb.mistake == "wrong_verdict"


@pytest.mark.parametrize(
    ("predicate", "mistake", "words"),
    [
        (lambda q: q.serving is not None, "forgot_kv", "KV cache"),
        (lambda q: q.serving is not None and q.gpus > 1, "total_not_per_gpu", "Tensor parallelism"),
        (lambda q: q.serving is not None and q.serving.batch > 1, "kv_one_request", "one request"),
        (lambda q: q.serving is not None, "forgot_extras", "runtime overhead"),
        (
            lambda q: q.serving is not None and q.serving.weight_format != "bf16",
            "format_bytes",
            "bytes per parameter (bf16)",
        ),
        (lambda q: q.training is not None, "forgot_optimizer", "Adam's two moments"),
        (lambda q: q.training is not None, "serving_bytes", "enough to serve"),
        (
            lambda q: q.training is not None and q.training.sharding == "zero3" and q.gpus > 1,
            "total_not_per_gpu",
            "ZeRO-3 splits it",
        ),
        (
            lambda q: q.training is not None and q.training.sharding == "none" and q.gpus > 1,
            "divided_replicated",
            "copies the full state",
        ),
        (lambda q: q.training is not None, "forgot_activations", "activations"),
        (lambda q: True, "gib", "GiB"),
    ],
)
def test_a_typical_wrong_number_is_named(
    predicate: Callable[[drill_fit.FitQuestion], bool], mistake: str, words: str
) -> None:
    q = find(lambda q: predicate(q) and told_apart(q, mistake))
    _, wrong_bytes, explanation = slip(q, mistake)
    fb = drill_fit.check_answer(q, yes_no(q.fits), gb(wrong_bytes))
    assert not fb.correct
    assert fb.mistake == mistake
    assert fb.explanation == explanation
    assert words in explanation
    assert mistake in drill_fit.MISTAKES


def test_gib_is_the_engines_figure_in_gib() -> None:
    q = drill_fit.fit_question(7)
    _, wrong, _ = slip(q, "gib")
    assert wrong == pytest.approx(q.answer_bytes / GiB * GB)


def test_a_wrong_verdict_alone_is_matched_with_a_slip_that_leads_to_it() -> None:
    q = find(lambda q: q.serving is not None and not q.fits)
    fb = drill_fit.check_answer(q, "yes")
    assert not fb.correct
    expected = q.slip_for_verdict(True)
    assert expected is not None and fb.mistake == expected[0]
    assert expected[1] <= q.capacity_bytes
    assert "would fit" in fb.explanation
    q = find(lambda q: q.training is not None and not q.fits and q.gpus == 1)
    fb = drill_fit.check_answer(q, "yes")
    assert fb.mistake in {"forgot_optimizer", "serving_bytes", "forgot_activations", "gib"}


def test_an_unmatched_wrong_number() -> None:
    q = drill_fit.fit_question(7)
    fb = drill_fit.check_answer(q, yes_no(q.fits), "0.001")
    assert fb.mistake == "unknown" and not fb.correct
    assert "does not match a typical slip" in fb.explanation
    json.dumps(fb.to_dict())


@pytest.mark.parametrize(
    ("fits", "answer", "field"),
    [
        ("", "", "fits"),
        ("maybe", "", "fits"),
        (HOSTILE, "", "fits"),
        ("yes", "12,5", "answer"),
        ("yes", "ten", "answer"),
        ("yes", "-3", "answer"),
        ("yes", "3 GiB", "answer"),
        ("yes", HOSTILE, "answer"),
    ],
)
def test_bad_answers_name_their_field(fits: str, answer: str, field: str) -> None:
    with pytest.raises(EngineError) as error:
        drill_fit.check_answer(drill_fit.fit_question(1), fits, answer)
    assert error.value.field == field


# ------------------------------------------------------------------------------- widget


def run(action: str = "", **overrides: object) -> tuple[str, dict[str, str]]:
    widget = get_widget(WIDGET)
    rendered = widget.run(widget.defaults(overrides), action)
    return rendered.html, dict(rendered.set_inputs)


def test_the_widget_is_registered_with_its_store_and_address() -> None:
    assert WIDGET in widget_names()
    widget = get_widget(WIDGET)
    assert widget.store == "local:drill-will-it-fit"
    assert widget.url_state == ("seed",)
    assert widget.control("seed").kind == "hidden"
    assert {a.name for a in widget.actions} == {"check", "new"}


def test_the_widget_shows_the_scenario() -> None:
    html, set_inputs = run(seed="7")
    q = drill_fit.fit_question(7)
    assert 'data-seed="7"' in html
    assert q.lead in text_of(html)
    assert "Score: 0 correct of 0 answered" in text_of(html)
    assert set_inputs == {}
    assert "drill-feedback" not in html


def test_check_scores_a_right_answer_and_names_a_slip() -> None:
    q = drill_fit.fit_question(7)
    html, set_inputs = run("check", seed="7", fits=yes_no(q.fits), answer=gb(q.answer_bytes))
    assert 'data-correct="true"' in html
    kept = training_drill.Score.from_text(set_inputs["state"])
    assert (kept.answered, kept.correct, kept.scored) == (1, 1, 7)
    assert "Score: 1 correct of 1 answered" in text_of(html)
    assert 'role="img"' in html  # the memory bar of one GPU
    _, wrong, words = slip(q, "forgot_kv" if q.serving else "forgot_optimizer")
    html, again = run(
        "check", seed="7", fits=yes_no(q.fits), answer=gb(wrong), state=set_inputs["state"]
    )
    assert 'data-correct="false"' in html
    assert 'data-mistake="' in html
    assert words in text_of(html)
    assert "Only your first answer" in text_of(html)
    assert training_drill.Score.from_text(again["state"]) == kept


def test_new_moves_to_the_next_scenario_and_clears_the_answer() -> None:
    html, set_inputs = run("new", seed="7", fits="yes", answer="12")
    assert set_inputs == {"seed": "8", "answer": "", "fits": ""}
    assert 'data-seed="8"' in html
    assert drill_fit.fit_question(8).lead in text_of(html)


def test_three_correct_answers_complete_the_drill() -> None:
    assert GOAL == 3  # more questions stay available as practice
    almost = training_drill.Score(2, 2, 2, None).to_text()
    q = drill_fit.fit_question(3)
    html, _ = run("check", seed="3", fits=yes_no(q.fits), state=almost)
    assert '<span data-drill-complete="drill_will_it_fit">' in html
    html, _ = run(seed="3", state=almost)
    assert "data-drill-complete" not in html
    assert "1 more correct answer complete" in text_of(html)


@pytest.mark.parametrize(
    ("field", "value"),
    [("seed", HOSTILE), ("seed", "0"), ("state", HOSTILE), ("state", '{"answered": 1}')],
)
def test_bad_hidden_inputs_name_their_field(field: str, value: str) -> None:
    with pytest.raises(EngineError) as error:
        run(**{field: value})
    assert error.value.field == field


def test_hostile_text_through_the_browser_entry_point_stays_text() -> None:
    reply = json.loads(
        update(
            WIDGET, json.dumps({"seed": "7", "answer": HOSTILE, "fits": "yes", "action": "check"})
        )
    )
    assert reply["field"] == "answer"
    assert "internal" not in reply
    reply = json.loads(update(WIDGET, json.dumps({"seed": HOSTILE})))
    assert reply["field"] == "seed"
    reply = json.loads(update(WIDGET, json.dumps({"seed": "7", "fits": "yes", "action": "check"})))
    assert "<script" not in reply["html"]
    assert set(reply["set"]) == {"state"}
