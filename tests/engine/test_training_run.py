"""Tests of engine.numbers.training_run: the sampled run, the state at any time, the Chinchilla loss."""

from __future__ import annotations

import itertools
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.numbers.errors import EngineError
from engine.numbers.training_run import (
    CHINCHILLA_VOCAB,
    TrainingRun,
    TrainingRunInputs,
    initial_loss,
    loss,
    simulate_training_run,
    training_run_at,
)
from engine.words.training import training_run_assumptions

H100_BF16 = 989e12
LLAMA_8B = 8_030_261_248

BASE = {
    "params": LLAMA_8B,
    "tokens": 1e9,
    "gpus": 8,
    "peak_flops_per_s": H100_BF16,
    "mfu": 0.4,
}


def run(samples: int = 100, **overrides: object) -> TrainingRun:
    """The run of BASE with ``overrides``, given as a browser would (checked by from_dict)."""
    return simulate_training_run(TrainingRunInputs.from_dict({**BASE, **overrides}), samples)


def test_chinchilla_loss_matches_the_formula() -> None:
    n, d = 70e9, 1.4e12
    expected = 1.69 + 406.4 / n**0.34 + 410.7 / d**0.28
    assert loss(n, d) == pytest.approx(expected, rel=1e-12)
    # Chinchilla itself (70 B on 1.4 T tokens) lands near 1.94 nats with this fit.
    assert loss(n, d) == pytest.approx(1.937, abs=0.005)


def test_loss_approaches_the_irreducible_term() -> None:
    assert loss(1e15, 1e20) == pytest.approx(1.69, abs=0.01)
    assert loss(1e15, 1e20) > 1.69


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "ten", True, None])
def test_loss_rejects_bad_input(bad: object) -> None:
    with pytest.raises(EngineError):
        loss(bad, 1e9)  # type: ignore[arg-type]
    with pytest.raises(EngineError):
        loss(1e9, bad)  # type: ignore[arg-type]


def test_steady_speed_is_six_n_d_arithmetic() -> None:
    r = run(startup_seconds=0, warmup_seconds=0, checkpoint_seconds=0)
    rate = 8 * H100_BF16 * 0.4 / (6 * LLAMA_8B)
    assert r.steady_tokens_per_s == pytest.approx(rate)
    assert r.total_flops == pytest.approx(6 * LLAMA_8B * 1e9)
    assert r.total_seconds == pytest.approx(1e9 / rate)
    assert r.gpu_hours == pytest.approx(8 * r.total_seconds / 3600)
    assert r.checkpoints == 0


def test_overheads_add_the_stated_time() -> None:
    plain = run(startup_seconds=0, warmup_seconds=0, checkpoint_seconds=0)
    r = run(startup_seconds=300, warmup_seconds=600, checkpoint_interval_seconds=3600,
            checkpoint_seconds=60)
    # Linear ramp over 600 s loses half of it: 300 s.
    assert r.train_seconds == pytest.approx(plain.total_seconds + 300)
    assert r.checkpoints == math.ceil(r.train_seconds / 3600)
    assert r.total_seconds == pytest.approx(300 + r.train_seconds + 60 * r.checkpoints)
    assert r.checkpoint_pause_seconds == pytest.approx(60 * r.checkpoints)


def test_samples_cover_the_run() -> None:
    r = run(samples=50)
    assert len(r.samples) == 50
    first, last = r.samples[0], r.samples[-1]
    assert first.elapsed_seconds == 0 and first.phase == "starting"
    assert first.tokens_done == 0 and first.tokens_per_s == 0 and first.utilisation == 0
    assert first.loss == pytest.approx(initial_loss(CHINCHILLA_VOCAB))
    assert last.elapsed_seconds == r.total_seconds and last.phase == "finished"
    assert last.tokens_done == 1e9 and last.fraction_done == 1.0 and last.seconds_left == 0
    assert last.loss == pytest.approx(loss(LLAMA_8B, 1e9))
    assert r.final_loss == last.loss


def test_phases_in_order() -> None:
    r = run(tokens=3e9, samples=2000)
    phases = [s.phase for s in r.samples]
    assert set(phases) == {"starting", "ramping", "training", "checkpointing", "finished"}
    assert phases.index("starting") < phases.index("ramping") < phases.index("training")


def test_utilisation_is_not_mfu() -> None:
    r = run(utilisation=0.97, mfu=0.42)
    steady = [s for s in r.samples if s.phase == "training"]
    assert steady
    for s in steady:
        assert s.utilisation == pytest.approx(0.97)
        assert s.mfu == pytest.approx(0.42)
        assert s.tokens_per_s == pytest.approx(r.steady_tokens_per_s)


def test_checkpoint_pauses_stop_progress() -> None:
    r = run(tokens=3e9, samples=3000)
    pauses = [s for s in r.samples if s.phase == "checkpointing"]
    assert pauses
    for s in pauses:
        assert s.tokens_per_s == 0 and s.mfu == 0 and s.utilisation == 0
        assert training_run_at(r.inputs, s.elapsed_seconds + 1).tokens_done >= s.tokens_done


def test_mfu_above_utilisation_refused() -> None:
    with pytest.raises(EngineError, match="MFU"):
        run(mfu=0.6, utilisation=0.5)


def test_run_too_long_refused() -> None:
    with pytest.raises(EngineError, match="simulation handles"):
        run(tokens=1e16, gpus=1, peak_flops_per_s=1e9)


@pytest.mark.parametrize(
    ("field", "value"),
    [("params", 0), ("tokens", -5), ("gpus", 0), ("gpus", 1.5), ("peak_flops_per_s", "x"),
     ("mfu", 0), ("mfu", 1.5), ("utilisation", float("nan")), ("startup_seconds", -1),
     ("checkpoint_interval_seconds", 0), ("flops_per_token_factor", 0), ("vocab", 1)],
)
def test_bad_inputs_name_the_field(field: str, value: object) -> None:
    with pytest.raises(EngineError) as info:
        run(**{field: value})
    assert info.value.field == field


def test_text_numbers_accepted() -> None:
    r = run(tokens="1,000,000,000", gpus="8")
    assert r.inputs.tokens == 1e9 and r.inputs.gpus == 8


def test_to_dict_is_json() -> None:
    r = run(samples=5)
    d = r.to_dict()
    text = json.dumps(d, allow_nan=False)
    assert json.loads(text)["samples"][-1]["phase"] == "finished"
    assert len(d["samples"]) == 5


def test_assumptions_state_the_features() -> None:
    text = " ".join(training_run_assumptions(run().inputs))
    for word in ("Start-up", "ramps", "checkpoint", "Hoffmann", "indicative", "MFU"):
        assert word in text


def test_run_at_matches_samples() -> None:
    r = run(samples=37)
    for s in r.samples:
        assert training_run_at(r.inputs, s.elapsed_seconds) == s


def test_run_at_accepts_a_dict_and_clamps() -> None:
    r = run()
    at_end = training_run_at(TrainingRunInputs.from_dict(r.inputs.to_dict()), r.total_seconds * 10)
    assert at_end.phase == "finished" and at_end.tokens_done == 1e9
    with pytest.raises(EngineError, match="Unknown"):
        TrainingRunInputs.from_dict({**BASE, "evil": 1})
    with pytest.raises(EngineError, match="Missing"):
        TrainingRunInputs.from_dict({"params": 1e9})
    with pytest.raises(EngineError):
        TrainingRunInputs.from_dict("not a dict")  # type: ignore[arg-type]


def test_budget_ending_during_ramp() -> None:
    r = run(tokens=1e3, startup_seconds=0, checkpoint_seconds=0)
    rate = r.steady_tokens_per_s
    assert r.train_seconds == pytest.approx(math.sqrt(2 * 600 * 1e3 / rate))
    assert r.samples[-1].tokens_done == 1e3


@settings(max_examples=60, deadline=None)
@given(
    tokens=st.floats(1e3, 1e12),
    gpus=st.integers(1, 64),
    mfu=st.floats(0.05, 0.6),
    startup=st.floats(0, 5000),
    warmup=st.floats(0, 5000),
    interval=st.floats(1, 20000),
    pause=st.floats(0, 600),
)
def test_tokens_done_never_decrease(
    tokens: float, gpus: int, mfu: float, startup: float, warmup: float, interval: float,
    pause: float,
) -> None:
    r = run(tokens=tokens, gpus=gpus, mfu=mfu, startup_seconds=startup, warmup_seconds=warmup,
            checkpoint_interval_seconds=interval, checkpoint_seconds=pause, samples=200)
    done = [s.tokens_done for s in r.samples]
    left = [s.seconds_left for s in r.samples]
    losses = [s.loss for s in r.samples]
    assert all(a <= b for a, b in itertools.pairwise(done))
    assert all(a >= b for a, b in itertools.pairwise(left))
    assert all(a >= b for a, b in itertools.pairwise(losses))
    assert done[-1] == tokens
    for s in r.samples:
        assert 0 <= s.mfu <= s.utilisation <= 1
        assert all(math.isfinite(v) for v in (s.tokens_done, s.tokens_per_s, s.loss))


@settings(max_examples=100)
@given(
    n=st.floats(1e6, 1e13), d=st.floats(1e6, 1e14), factor=st.floats(1.01, 100),
)
def test_loss_decreases_in_n_and_d(n: float, d: float, factor: float) -> None:
    assert loss(n * factor, d) < loss(n, d)
    assert loss(n, d * factor) < loss(n, d)
    assert loss(n, d) > 1.69


def test_inputs_expose_the_totals() -> None:
    r = run()
    assert r.inputs.total_seconds == r.total_seconds
    assert r.inputs.steady_tokens_per_s == r.steady_tokens_per_s
    assert r.inputs.checkpoints == r.checkpoints
