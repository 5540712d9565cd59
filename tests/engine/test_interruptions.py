"""Interruptions a training run should expect, at Meta's observed rate for Llama 3 405B."""

from __future__ import annotations

import math

import pytest

from engine.numbers.interruptions import run_interruptions
from engine.numbers.plan import plan
from engine.numbers.units import SECONDS_PER_DAY
from engine.words.answers import answers


def test_the_observed_run_meets_its_own_count_every_three_hours() -> None:
    # The Llama 3 Herd of Models (arXiv 2407.21783), section 3.3.4: 419 unexpected
    # interruptions in a 54-day snapshot on 16,384 H100s; 54 x 24 / 419 = 3.093 hours,
    # the "one failure every three hours" reported of that run.
    i = run_interruptions(16384, 54 * SECONDS_PER_DAY)
    assert i.expected == pytest.approx(419)
    assert i.hours_between == pytest.approx(54 * 24 / 419)
    assert 3.0 < i.hours_between < 3.2


def test_a_small_run_by_hand() -> None:
    # 419 / (54 x 16,384) = 4.7359e-4 per GPU-day; 8 GPUs x 21 days = 168 GPU-days ->
    # 0.079563 expected; the chance of at least one is 1 - e^-0.079563 = 7.648 %.
    i = run_interruptions(8, 21 * SECONDS_PER_DAY)
    assert i.rate_per_gpu_day == pytest.approx(4.7359e-4, rel=1e-4)
    assert i.expected == pytest.approx(0.079563, rel=1e-4)
    assert i.chance_of_any == pytest.approx(1 - math.exp(-0.079563), rel=1e-4)


def test_interruptions_grow_with_gpus_and_days() -> None:
    base = run_interruptions(64, 10 * SECONDS_PER_DAY).expected
    assert run_interruptions(128, 10 * SECONDS_PER_DAY).expected == pytest.approx(2 * base)
    assert run_interruptions(64, 30 * SECONDS_PER_DAY).expected == pytest.approx(3 * base)


def test_a_training_plan_that_fits_says_what_failures_do() -> None:
    small = answers(plan(model="llama-3.1-8b", hardware="h100-sxm", gpus=8, task="train",
                         sharding="zero3"))["failure"]
    assert "419 unexpected interruptions in 54 days on 16,384 H100s" in small
    assert "chance of" in small
    big = answers(plan(model="llama-3.1-8b", hardware="h100-sxm", gpus=1024, task="train",
                       sharding="zero3", tokens=15e12))["failure"]
    assert "should meet about" in big and "restart from the last checkpoint" in big


def test_serving_and_runs_that_do_not_fit_say_nothing_of_interruptions() -> None:
    serve = answers(plan(model="llama-3.1-8b", hardware="h100-sxm", task="serve"))["failure"]
    assert "interruptions" not in serve
    oom = answers(plan(model="llama-3.1-405b", hardware="h100-sxm", gpus=8, task="train",
                       sharding="zero3"))["failure"]
    assert "interruptions" not in oom


def test_the_five_questions_give_the_observed_failures_where_they_ask_why_a_job_fails() -> None:
    # Step 19's "Why did it fail?" quotes Meta's count: 419 in 54 days on 16,384 H100s,
    # one every 54 x 24 / 419 = 3.09 hours, from the catalogue, not typed.
    from pathlib import Path

    from engine.lesson.figures.network import observed_interruptions

    said = observed_interruptions()
    assert said == ("419 unexpected interruptions in 54 days on 16,384 H100s, about one every "
                    "3.1 hours")
    page = (Path(__file__).parents[2] / "docs/steps/five-questions.md").read_text()
    why = page[page.index("**Why did it fail?**"):page.index("5. **What does it cost?**")]
    assert '{{ figure("observed_interruptions") }}' in why
