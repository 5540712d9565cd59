"""One training storyline: each run's tokens are one constant the steps share."""

from __future__ import annotations

from pathlib import Path

import pytest
from widget_text import render, text_of

from engine.lesson.figures.prose import get_figure
from engine.numbers.errors import EngineError
from engine.numbers.training_runs import (
    DEMO_PRETRAINING_TOKENS,
    LLAMA_3_1_405B_PRETRAINING_TOKENS,
    LLAMA_3_1_PRETRAINING_TOKENS,
    run_tokens,
    tokens_or_run,
)
from engine.render.options import TRAINING_TOKENS
from engine.widgets import mfu_calculator, side_by_side, training_run


def test_15_6_trillion_is_the_405bs_count_and_the_8b_has_the_model_cards() -> None:
    # 'The Llama 3 Herd of Models' (2024), section 3: the 405B pre-trained on 15.6T text tokens;
    # the Llama 3.1 model card: ~15T ('15T+') for every size.
    assert LLAMA_3_1_405B_PRETRAINING_TOKENS == 15.6e12
    assert LLAMA_3_1_PRETRAINING_TOKENS == 15e12
    assert get_figure("run_tokens")("llama-3.1-405b") == "15.6 trillion"
    assert get_figure("run_tokens")("llama-3.1") == "15 trillion"
    assert get_figure("run_tokens")("demo") == "1 trillion"


def test_no_page_gives_the_8b_the_405bs_tokens() -> None:
    # Pages that quote the 8B's pretraining use the 8B's run; the 405B's step uses its own.
    steps = Path(__file__).parents[2] / "docs" / "steps"
    for page in ("compute.md", "training-run.md"):
        text = (steps / page).read_text()
        assert 'run="llama-3.1"' in text or 'tokens="llama-3.1"' in text, page
        assert "llama-3.1-405b" not in text, page
    scale = (steps / "training-at-scale.md").read_text()
    assert 'tokens="llama-3.1"' not in scale and 'tokens="llama-3.1-405b"' in scale
    assert "15.6" not in text_of(render("mfu_calculator"))
    assert "15.6" not in text_of(render("device_ladder"))


def test_the_demo_run_is_a_small_fraction_of_the_real_one() -> None:
    assert DEMO_PRETRAINING_TOKENS < LLAMA_3_1_PRETRAINING_TOKENS / 10


def test_widgets_start_from_the_shared_runs() -> None:
    assert float(training_run.TOKENS.default) == DEMO_PRETRAINING_TOKENS
    assert side_by_side.TRAIN_TOKENS == DEMO_PRETRAINING_TOKENS
    assert float(TRAINING_TOKENS.default) == LLAMA_3_1_405B_PRETRAINING_TOKENS
    assert float(mfu_calculator.TOKEN_BUDGET.default) == LLAMA_3_1_PRETRAINING_TOKENS


def test_figures_take_a_run_name_or_a_count_alike() -> None:
    by_name = get_figure("train_time")("llama-3.1-8b", "llama-3.1", 8)
    assert by_name == get_figure("train_time")("llama-3.1-8b", "15e12", 8)
    assert tokens_or_run("2e12") == 2e12
    with pytest.raises(EngineError):
        run_tokens("gpt-5")
    with pytest.raises(EngineError):
        tokens_or_run("lots")
