"""The "Going further" widgets (issue 13): defaults, options and hostile inputs, each number
checked against the engine function that owns it."""

from __future__ import annotations

import re

import pytest

from engine.lesson.plan import plan_to_dict
from engine.numbers.errors import EngineError
from engine.numbers.plan import plan
from engine.registry import get_widget
from engine.words.format import format_seconds

HOSTILE = '<script>alert("x")</script>'


def render(name: str, **overrides: object) -> str:
    widget = get_widget(name)
    return widget.run(widget.defaults(overrides)).html


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#x27;", "'")


def _cluster_plan(**kw: object) -> dict:
    args: dict[str, object] = {"model": "llama-3.1-70b", "hardware": "h100-sxm",
                               "task": "train", "nodes": 256, "tp": 8, "pp": 4,
                               "seq_len": 8192, "sharding": "zero1", "tokens": 1e12}
    args.update(kw)
    return plan_to_dict(plan(**args))["train"]  # type: ignore[return-value]


def test_cluster_training_defaults_show_the_engines_split():
    words = text_of(render("cluster_training"))
    step = _cluster_plan()["expected"]["step"]
    assert "2,048 GPUs in 256 servers as 64 data-parallel copies × tensor parallel 8 × 4 " \
        "pipeline stages" in words
    for key in ("compute_seconds", "exposed_communication_seconds", "bubble_seconds"):
        assert format_seconds(step[key]) in words
    assert f"{format_seconds(step['seconds'])} expected" in words
    # 8 micro-batches (4,194,304 / (64 x 8,192)) over 4 stages: 3/11 of the pipeline idle.
    assert "Micro-batches per step, each pipeline 8," in words
    assert "it fits" in words


def test_cluster_training_options_change_the_bubble():
    # Interleaving (2 chunks per GPU) halves the bubble; more stages grow it.
    plain = _cluster_plan()["expected"]["step"]["bubble_seconds"]
    two = _cluster_plan(interleave=2)["expected"]["step"]["bubble_seconds"]
    assert format_seconds(two) in text_of(render("cluster_training", interleave="2"))
    assert two < plain
    words = text_of(render("cluster_training", model="llama-3.1-405b", servers="2048",
                           pp="16", global_batch="16777216"))
    assert "16,384 GPUs in 2,048 servers" in words and "Layers per stage 8 of 126" in words


@pytest.mark.parametrize(("overrides", "field"), [
    ({"pp": "3"}, "pp"),  # 2,048 GPUs / (8 x 3) is not whole
    ({"pp": "81"}, "pp"),  # more stages than 80 layers
    ({"servers": "0"}, "servers"),
    ({"servers": "1e9"}, "servers"),
    ({"servers": HOSTILE}, "servers"),
    ({"tp": "16"}, "tp"),
    ({"interleave": "100"}, "interleave"),
    ({"pp": "32", "interleave": "4"}, "interleave"),  # 128 chunks for 80 layers
    ({"global_batch": "-5"}, "global_batch"),
    ({"model": HOSTILE}, "model"),
])
def test_cluster_training_refuses_what_cannot_work(overrides, field):
    with pytest.raises(EngineError) as e:
        render("cluster_training", **overrides)
    assert e.value.field in (field, "nodes")
    assert e.value.message
