"""The training-memory drill: questions from seeds, answers checked with a tolerance, slips named, the
kept score validated; and its widget."""

from __future__ import annotations

import json

import pytest
from widget_text import text_of

from engine.browser import update
from engine.lesson.drills import training_memory as training_drill
from engine.numbers import memory
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.errors import EngineError
from engine.numbers.units import GB, GiB
from engine.registry import get_widget, widget_names
from engine.words.format import format_GB

HOSTILE = '<script>alert("x")</script>'
WIDGET = "drill_training_memory"


def find_question(predicate: object) -> training_drill.TrainingMemoryQuestion:
    """The first question (by number) that matches ``predicate``."""
    for seed in range(1, 2000):
        q = training_drill.training_memory_question(seed)
        if predicate(q):  # type: ignore[operator]
            return q
    raise AssertionError("no question matches")


def gb_text(n_bytes: float) -> str:
    return f"{n_bytes / GB:.3f}"


# ------------------------------------------------------------------------------ questions


def test_the_same_seed_gives_the_same_question() -> None:
    for seed in (1, 2, 42, 999_999_999):
        a, b = training_drill.training_memory_question(seed), training_drill.training_memory_question(seed)
        assert a.text == b.text
        assert a.answer_bytes == b.answer_bytes
        assert a.working() == b.working()
    texts = {training_drill.training_memory_question(s).text for s in range(1, 30)}
    assert len(texts) > 20  # different seeds, different questions


def test_questions_vary_over_setups_sharding_gpus_and_activations() -> None:
    qs = [training_drill.training_memory_question(s) for s in range(1, 300)]
    assert {(q.optimizer, q.convention) for q in qs} == {
        ("adam", "mixed-16"),
        ("adam", "fp32"),
        ("sgd-momentum", "mixed-16"),
        ("adam-8bit", "mixed-16"),
    }
    assert {q.sharding for q in qs} == {"none", "zero3"}
    assert any(q.with_activations for q in qs) and not all(q.with_activations for q in qs)
    assert any(q.fits for q in qs) and not all(q.fits for q in qs)
    assert len({q.hardware.id for q in qs}) >= 4
    assert any(q.model.family == "generic" for q in qs)
    assert any(q.model.family != "generic" for q in qs)
    for q in qs:  # never on the fence: the verdict is clear
        assert abs(q.answer_bytes / q.capacity_bytes - 1) >= training_drill.VERDICT_MARGIN


def test_the_answer_is_the_engines_training_memory() -> None:
    for seed in range(1, 60):
        q = training_drill.training_memory_question(seed)
        mem = memory.training_memory(
            q.model,
            q.hardware,
            gpus=q.gpus,
            sharding=q.sharding,
            optimizer=q.optimizer,
            convention=q.convention,
            micro_batch=q.memory.micro_batch,
            seq_len=q.memory.seq_len,
            recompute="selective",
        )
        per_param = sum(memory.training_state_bytes_per_param(q.optimizer, q.convention).values())
        divide = q.gpus if q.sharding == "zero3" else 1
        assert q.state_per_gpu_bytes == pytest.approx(q.model.params * per_param / divide)
        expected = mem.state_bytes + (mem.parts["activations"] if q.with_activations else 0.0)
        assert q.answer_bytes == pytest.approx(expected)
        assert q.fits == (q.answer_bytes <= q.hardware.memory_bytes)


def test_the_lessons_own_example_is_the_fallback() -> None:
    q = training_drill._fallback(7)
    assert q.model.id == "llama-3.1-8b" and q.gpus == 1
    assert format_GB(q.answer_bytes) == "128.5 GB"
    assert not q.fits


@pytest.mark.parametrize("seed", ["0", "-3", "1.5", "abc", "", "1e400", "NaN", HOSTILE, "1e12"])
def test_bad_seeds_name_the_seed(seed: str) -> None:
    with pytest.raises(EngineError) as error:
        training_drill.training_memory_question(seed)
    assert error.value.field == "seed"
    assert len(error.value.message) < 200


def test_next_seed_is_deterministic_and_wraps() -> None:
    assert training_drill.next_seed(42) == 43
    assert training_drill.next_seed(training_drill.MAX_SEED) == 1


# -------------------------------------------------------------------------------- answers


@pytest.mark.parametrize(
    "text, value",
    [
        ("128.5", 128.5),
        ("128.5 GB", 128.5),
        (" 128.5gb ", 128.5),
        ("128.5 Gb", 128.5),
        ("1,234.5", 1234.5),
        ("1,234,567", 1234567.0),
        (".5", 0.5),
        ("16.", 16.0),
    ],
)
def test_answers_parse(text: str, value: float) -> None:
    assert training_drill.parse_answer_GB(text) == value


@pytest.mark.parametrize(
    "text, part",
    [
        ("", "empty"),
        ("   ", "empty"),
        ("128,5", "point for decimals"),
        ("12,34.5", "point for decimals"),
        ("119.7 GiB", "not GiB"),
        ("0.13 TB", "in GB"),
        ("abc", "number of GB"),
        ("1e2", "Write the number out, such as 100"),
        ("-5", "more than 0 GB"),
        ("0", "more than 0"),
        ("NaN", "number of GB"),
        ("inf", "far too large"),
        ("12 34", "number of GB"),
        ("9" * 60, "too long"),
        (HOSTILE, "number of GB"),
    ],
)
def test_junk_answers_name_the_answer(text: str, part: str) -> None:
    with pytest.raises(EngineError) as error:
        training_drill.parse_answer_GB(text)
    assert error.value.field == "answer"
    assert part.lower() in error.value.message.lower()
    assert len(error.value.message) < 200
    q = training_drill.training_memory_question(3)
    with pytest.raises(EngineError) as error:
        training_drill.check_answer(q, text)
    assert error.value.field == "answer"


def test_the_right_answer_is_accepted_within_the_tolerance() -> None:
    assert training_drill.TOLERANCE == 0.02
    for seed in range(1, 40):
        q = training_drill.training_memory_question(seed)
        exact = training_drill.check_answer(q, gb_text(q.answer_bytes), fits="yes" if q.fits else "no")
        assert exact.correct and exact.mistake == ""
        assert exact.message.startswith("Correct")
        assert exact.working == q.working()
        assert training_drill.check_answer(q, gb_text(q.answer_bytes * 1.019)).correct
        assert training_drill.check_answer(q, gb_text(q.answer_bytes * 0.981)).correct
        assert not training_drill.check_answer(q, gb_text(q.answer_bytes * 1.03)).correct
        assert not training_drill.check_answer(q, gb_text(q.answer_bytes * 0.97)).correct


def test_right_number_wrong_verdict() -> None:
    q = training_drill.training_memory_question(42)
    wrong = "yes" if not q.fits else "no"
    feedback = training_drill.check_answer(q, gb_text(q.answer_bytes), fits=wrong)
    assert not feedback.correct
    assert feedback.mistake == "wrong_verdict"
    assert "verdict" in feedback.message
    with pytest.raises(EngineError) as error:
        training_drill.check_answer(q, gb_text(q.answer_bytes), fits="")
    assert error.value.field == "fits"
    with pytest.raises(EngineError) as error:
        training_drill.check_answer(q, gb_text(q.answer_bytes), fits=HOSTILE)
    assert error.value.field == "fits"


def test_forgot_the_optimiser_states() -> None:
    q = find_question(lambda q: q.optimizer == "adam" and q.convention == "mixed-16")
    divide = q.gpus if q.sharding == "zero3" else 1
    wrong = q.model.params * 4 / divide + q.activation_bytes  # bf16 weights + gradients only
    feedback = training_drill.check_answer(q, gb_text(wrong))
    assert not feedback.correct
    assert feedback.mistake == "forgot_optimizer"
    assert "optimiser states are missing" in feedback.message
    assert feedback.headline.startswith("Not quite")
    # A wrong verdict on top of a slip is pointed out too.
    both = training_drill.check_answer(q, gb_text(wrong), fits="no" if q.fits else "yes")
    assert both.mistake == "forgot_optimizer"
    assert both.explanation.endswith("it fits." if q.fits else "it does not fit.")


def test_used_two_bytes_per_parameter() -> None:
    q = find_question(lambda q: q.gpus == 1 and not q.with_activations)
    feedback = training_drill.check_answer(q, gb_text(memory.weights_bytes(q.model.params, "bf16")))
    assert feedback.mistake == "serving_bytes"
    assert "2 bytes per parameter" in feedback.message


def test_mixed_gb_and_gib() -> None:
    q = training_drill.training_memory_question(42)
    feedback = training_drill.check_answer(q, f"{q.answer_bytes / GiB:.2f}")
    assert feedback.mistake == "gib"
    assert "GiB" in feedback.message
    assert format_GB(q.answer_bytes) in feedback.message


def test_forgot_to_divide_under_zero3() -> None:
    q = find_question(lambda q: q.sharding == "zero3" and q.gpus >= 4)
    feedback = training_drill.check_answer(q, gb_text(q.state_total_bytes + q.activation_bytes))
    assert feedback.mistake == "not_divided"
    assert f"over the {q.gpus} GPUs" in feedback.message


def test_divided_although_nothing_is_sharded() -> None:
    def told_apart(q: training_drill.TrainingMemoryQuestion) -> bool:
        """Replicated over several GPUs, and dividing anyway is no other slip's answer."""
        divided = q.state_total_bytes / q.gpus + q.activation_bytes
        others = [b for m, b, _ in q.typical_wrong_answers() if m != "divided_replicated"]
        return not any(abs(b - divided) <= 0.02 * divided for b in others)

    q = find_question(lambda q: q.sharding == "none" and q.gpus > 1 and told_apart(q))
    feedback = training_drill.check_answer(q, gb_text(q.state_total_bytes / q.gpus + q.activation_bytes))
    assert feedback.mistake == "divided_replicated"
    assert "full state onto every GPU" in feedback.message


def test_forgot_the_activations() -> None:
    q = find_question(lambda q: q.with_activations)
    feedback = training_drill.check_answer(q, gb_text(q.state_per_gpu_bytes))
    assert feedback.mistake == "forgot_activations"
    assert format_GB(q.activation_bytes) in feedback.message


def test_used_12_instead_of_16() -> None:
    q = find_question(lambda q: q.optimizer == "adam" and q.convention == "mixed-16")
    divide = q.gpus if q.sharding == "zero3" else 1
    feedback = training_drill.check_answer(q, gb_text(q.model.params * 12 / divide + q.activation_bytes))
    assert feedback.mistake == "forgot_bf16_copies"


def test_used_adams_16_for_another_optimiser() -> None:
    q = find_question(lambda q: q.optimizer == "sgd-momentum")
    divide = q.gpus if q.sharding == "zero3" else 1
    feedback = training_drill.check_answer(q, gb_text(q.model.params * 16 / divide + q.activation_bytes))
    assert feedback.mistake == "assumed_adam"
    assert "12 bytes per parameter" in feedback.message


def test_an_unrecognised_answer_still_shows_the_working() -> None:
    q = training_drill.training_memory_question(42)
    feedback = training_drill.check_answer(q, gb_text(q.answer_bytes * 3.7))
    assert not feedback.correct and feedback.mistake == "unknown"
    assert feedback.working and format_GB(q.answer_bytes) in feedback.message
    assert set(training_drill.MISTAKES) >= {m for m, _, _ in q.typical_wrong_answers()}


# ---------------------------------------------------------------------------------- score


def test_score_round_trips_and_counts_only_first_answers() -> None:
    s = training_drill.Score.from_text("")
    assert s == training_drill.Score()
    s, counted = s.record(5, True)
    assert counted and (s.answered, s.correct, s.streak) == (1, 1, 1)
    again, counted = s.record(5, False)
    assert not counted and again == s
    s, _ = s.record(6, False)
    assert (s.answered, s.correct, s.streak) == (2, 1, 0)
    assert training_drill.Score.from_text(s.to_text()) == s


@pytest.mark.parametrize(
    "stored",
    [
        "{",
        "[]",
        "null",
        '"text"',
        '{"answered":1,"correct":1,"streak":1}',
        '{"answered":1,"correct":2,"streak":0,"scored":null}',
        '{"answered":-1,"correct":0,"streak":0,"scored":null}',
        '{"answered":1.5,"correct":0,"streak":0,"scored":null}',
        '{"answered":true,"correct":0,"streak":0,"scored":null}',
        '{"answered":1,"correct":0,"streak":0,"scored":"42"}',
        '{"answered":1,"correct":0,"streak":0,"scored":0}',
        '{"answered":1,"correct":0,"streak":0,"scored":null,"x":1}',
        json.dumps({"answered": HOSTILE, "correct": 0, "streak": 0, "scored": None}),
        "x" * 5000,
    ],
)
def test_broken_or_foreign_scores_are_refused_naming_state(stored: str) -> None:
    with pytest.raises(EngineError) as error:
        training_drill.Score.from_text(stored)
    assert error.value.field == "state"
    assert "starting a new score" in error.value.message


# --------------------------------------------------------------------------------- widget


def run(action: str = "", **overrides: object) -> tuple[str, dict[str, str]]:
    widget = get_widget(WIDGET)
    rendered = widget.run(widget.defaults(overrides), action)
    return rendered.html, dict(rendered.set_inputs)


def test_the_widget_is_registered_with_its_store_and_address() -> None:
    assert WIDGET in widget_names()
    widget = get_widget(WIDGET)
    assert widget.store == "local:drill-training-memory"
    assert widget.url_state
    assert {a.name for a in widget.actions} == {"check", "new"}


def test_the_widget_shows_the_question_and_the_score() -> None:
    q = training_drill.training_memory_question(42)
    html, set_inputs = run(seed="42")
    text = text_of(html)
    assert "Question 42." in text
    assert f"{q.model.params:,} parameters" in text
    assert q.hardware.name in text
    assert "Score: 0 correct of 0 answered" in text
    assert "data-drill-complete" not in html
    assert set_inputs == {}
    assert "drill-feedback" not in html  # typing alone does not check


def test_check_grades_records_and_keeps_the_score() -> None:
    q = training_drill.training_memory_question(42)
    answer = gb_text(q.answer_bytes)
    fits = "yes" if q.fits else "no"
    html, set_inputs = run("check", seed="42", answer=answer, fits=fits)
    assert 'data-correct="true"' in html
    assert "Correct" in text_of(html)
    assert "Score: 1 correct of 1 answered, streak 1." in text_of(html)
    for line in q.working():
        assert line in text_of(html)
    assert 'role="img"' in html  # the memory bar of one GPU
    state = training_drill.Score.from_text(set_inputs["state"])
    assert (state.answered, state.correct, state.scored) == (1, 1, 42)
    # A second answer to the same question shows feedback but leaves the score alone.
    wrong = gb_text(q.state_total_bytes + q.activation_bytes)
    html, again = run("check", seed="42", answer=wrong, fits=fits, state=set_inputs["state"])
    assert q.sharding == "zero3" and 'data-mistake="not_divided"' in html
    assert "Only your first answer" in text_of(html)
    assert training_drill.Score.from_text(again["state"]) == state


def test_three_correct_answers_complete_the_drill() -> None:
    state = training_drill.Score().to_text()
    for seed in range(100, 103):
        q = training_drill.training_memory_question(seed)
        html, set_inputs = run(
            "check",
            seed=str(seed),
            answer=gb_text(q.answer_bytes),
            fits="yes" if q.fits else "no",
            state=state,
        )
        state = set_inputs["state"]
    assert '<span data-drill-complete="drill_training_memory">' in html
    assert "Score: 3 correct of 3 answered, streak 3." in text_of(html)


def test_new_question_moves_to_the_next_seed_and_clears_the_answer() -> None:
    html, set_inputs = run("new", seed="42", answer="12", fits="yes")
    assert set_inputs == {"seed": "43", "answer": "", "fits": ""}
    assert "Question 43." in text_of(html)
    assert training_drill.training_memory_question(43).lead in text_of(html)


@pytest.mark.parametrize(
    "field, value",
    [
        ("seed", HOSTILE),
        ("seed", "0"),
        ("seed", "1e400"),
        ("state", HOSTILE),
        ("state", '{"answered":1}'),
    ],
)
def test_bad_hidden_inputs_name_their_field(field: str, value: str) -> None:
    with pytest.raises(EngineError) as error:
        run(**{field: value})
    assert error.value.field == field
    reply = json.loads(update(WIDGET, json.dumps({field: value})))
    assert reply["field"] == field and "html" not in reply


@pytest.mark.parametrize("field, value", [("answer", HOSTILE), ("answer", ""), ("fits", HOSTILE)])
def test_bad_answers_on_check_name_their_field(field: str, value: str) -> None:
    q = training_drill.training_memory_question(1)
    inputs = {"answer": gb_text(q.answer_bytes), "fits": "yes", field: value}
    with pytest.raises(EngineError) as error:
        run("check", **inputs)
    assert error.value.field == field


def test_hostile_text_is_escaped_and_never_checked_while_typing() -> None:
    html, _ = run(answer=HOSTILE)
    assert "<script" not in html and HOSTILE not in html
    reply = json.loads(update(WIDGET, json.dumps({"answer": HOSTILE, "action": "check"})))
    assert reply["field"] == "answer"


def test_no_nan_reaches_the_page() -> None:
    for seed in range(1, 40):
        html, _ = run("check", seed=str(seed), answer="1", fits="no")
        words = text_of(html).lower().split()
        assert "nan" not in words and "inf" not in words and "infinity" not in words


def test_questions_use_catalogue_hardware() -> None:
    for gpu in training_drill.DRILL_GPUS:
        assert get_hardware(gpu).kind == "gpu"
    assert get_model("llama-3.1-8b").params == 8_030_261_248


@pytest.mark.parametrize(
    ("typed", "says"),
    [
        ("1e308", "far too large"),  # once answered "not a number"
        ("9e999", "far too large"),
        ("-5", "more than 0 GB"),
        ("2e1", "Write the number out, such as 20"),
        ("abc", "must be a number of GB"),
    ],
)
def test_answers_that_are_numbers_of_another_shape_get_a_precise_message(
    typed: str, says: str
) -> None:
    with pytest.raises(EngineError, match=says):
        training_drill.parse_answer_GB(typed)
