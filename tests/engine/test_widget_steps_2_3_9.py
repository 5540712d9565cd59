"""The widgets of ai-ml-dl, training-needs-more-memory and follow-one-request: the engine's numbers appear, bad input names its field, and
hostile text is shown as text."""

from __future__ import annotations

import json
import re

import pytest
from widget_text import one_drawing, render, text_of

from engine.browser import update
from engine.numbers import memory, quantities, serving
from engine.numbers.architecture import attention_flops_per_token, summary
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.errors import EngineError
from engine.numbers.expected_serving import expected_serve
from engine.registry import get_widget, widget_names
from engine.render.charts import memory_bar, timeline
from engine.render.options import CONFIG, YOUR_MODEL
from engine.words.format import format_count, format_GB, format_seconds

HOSTILE = '<script>alert("x")</script>'


def test_the_new_widgets_are_registered() -> None:
    assert {"layer_matrices", "train_vs_serve", "request_timeline"} <= set(widget_names())


# ------------------------------------------------------------------ layer_matrices (ai-ml-dl)


def test_layer_matrices_shows_one_layer_and_adds_up_to_the_model() -> None:
    model = get_model("llama-3.1-8b")
    s = summary(model)
    html = render("layer_matrices")
    assert "4,096 × 14,336" in html  # mlp.gate / mlp.up
    assert "4,096 × 1,024" in html  # grouped-query attention: 8 KV heads
    assert f"{int(s['layer_params']):,}" in html  # type: ignore[call-overload]
    assert "8,030,261,248" in html
    assert f"32 × one layer ({int(s['layer_params']):,} parameters each)" in html  # type: ignore[call-overload]
    assert f"{s['total_flops_per_token']:,.0f}" in html
    assert "16.1 billion FLOPs" in html  # 2 x parameters
    assert "93.5 %" in html  # the sum against 2 × parameters


def test_layer_matrices_attention_grows_with_context() -> None:
    model = get_model("llama-3.1-8b")
    short = text_of(render("layer_matrices", context="0"))
    long = text_of(render("layer_matrices", context="100000"))
    assert "at 0 tokens of context" in short
    assert "at 100,000 tokens of context" in long
    # 4 x layers x heads x head_dim x context
    assert attention_flops_per_token(model, 100000) == 4 * 32 * 32 * 128 * 100000
    assert f"{format_count(attention_flops_per_token(model, 100000))} FLOPs" in long
    assert "52.4 billion FLOPs" in long


def test_layer_matrices_for_a_mixture_of_experts_model() -> None:
    model = get_model("mixtral-8x7b")
    html = render("layer_matrices", model="mixtral-8x7b")
    assert f"{model.params:,}" in html
    assert "parameters used per token" in html
    assert "25 % used per token" in html


@pytest.mark.parametrize(
    "field, value",
    [("model", "gpt-9"), ("model", HOSTILE), ("context", "-1"), ("context", "abc")],
)
def test_layer_matrices_refuses_bad_input_naming_the_field(field: str, value: str) -> None:
    with pytest.raises(EngineError) as caught:
        render("layer_matrices", **{field: value})
    assert caught.value.field == field


# ------------------------------ train_vs_serve (training-needs-more-memory)


def test_train_vs_serve_defaults_show_16_bytes_and_8x() -> None:
    html = render("train_vs_serve")
    text = text_of(html)
    train = memory.training_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"))
    serve = memory.serving_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), context_tokens=8192)
    assert train.bytes_per_param_total == 16
    assert "Training ÷ serving, per parameter" in text and "8×" in text
    for label, nbytes in (
        ("Weights", "2"),
        ("Gradients", "2"),
        ("FP32 master weights", "4"),
        ("Adam first moment", "4"),
        ("Adam second moment", "4"),
    ):
        assert f"<td>{label}</td><td>{nbytes}</td>" in html
    assert "<td>Training state in all</td><td>16</td>" in html
    assert format_GB(train.per_gpu_bytes) in text and "it does not fit." in text
    assert format_GB(serve.per_gpu_bytes) in text and "it fits." in text
    assert "128.5 GB" in text  # 16 x 8.03 B
    assert format_GB(train.parts["activations"]) in text
    assert one_drawing(text).count('role="img"') == 0 and one_drawing(html).count('role="img"') == 2
    assert "Rajbhandari" in text  # the source of the 16-byte convention


@pytest.mark.parametrize(
    "convention, total, ratio", [("mixed-18", 18, "9×"), ("mixed-20", 20, "10×")]
)
def test_train_vs_serve_other_conventions_cite_their_sources(
    convention: str, total: int, ratio: str
) -> None:
    text = text_of(render("train_vs_serve", convention=convention))
    assert f"Training state in all {total}" in text
    assert ratio in text
    assert "Megatron-LM" in text


def test_train_vs_serve_activations_grow_with_the_sequence() -> None:
    short = memory.training_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), seq_len=1024)
    long = memory.training_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), seq_len=16384)
    assert long.parts["activations"] > short.parts["activations"]
    assert format_GB(long.parts["activations"]) in render("train_vs_serve", seq_len="16384")
    assert format_GB(short.parts["activations"]) in render("train_vs_serve", seq_len="1024")


@pytest.mark.parametrize(
    "field, value",
    [
        ("model", HOSTILE),
        ("hardware", "gpu-9000"),
        ("optimizer", "lion"),
        ("convention", "mixed-17"),
        ("micro_batch", "0"),
        ("seq_len", "1.5"),
        ("recompute", HOSTILE),
    ],
)
def test_train_vs_serve_refuses_bad_input_naming_the_field(field: str, value: str) -> None:
    with pytest.raises(EngineError) as caught:
        render("train_vs_serve", **{field: value})
    assert caught.value.field == field


# ------------------------------------------------ request_timeline (follow-one-request)


def test_request_timeline_shows_the_engine_times() -> None:
    run = serving.request_timeline(
        get_model("llama-3.1-8b"), get_hardware("h100-sxm"), prompt_tokens=quantities.TYPICAL_PROMPT_TOKENS, output_tokens=quantities.TYPICAL_OUTPUT_TOKENS
    )
    html = render("request_timeline")
    text = text_of(html)
    assert format_seconds(run.ttft_seconds) in text
    assert format_seconds(run.tpot_seconds) in text
    assert format_seconds(run.total_seconds) in text
    assert run.ttft_seconds < run.total_seconds
    assert "drawn in 40 groups" in text  # 255 steps grouped
    assert one_drawing(html).count('role="img"') == 3  # the request and the two comparison rows


def test_request_timeline_shows_both_times_and_the_comparison_the_rest_behind_one_details() -> None:
    model, gpu = get_model("llama-3.1-8b"), get_hardware("h100-sxm")
    run = serving.request_timeline(model, gpu, prompt_tokens=quantities.TYPICAL_PROMPT_TOKENS, output_tokens=quantities.TYPICAL_OUTPUT_TOKENS)
    expected = expected_serve(model, gpu, prompt_tokens=quantities.TYPICAL_PROMPT_TOKENS, output_tokens=quantities.TYPICAL_OUTPUT_TOKENS)
    html = render("request_timeline")
    assert html.count("<details") == 1
    shown, _, behind = html.partition("<details")
    text = " ".join(text_of(shown).split())
    # The first token and each further token as the bound, the expected beside it (every time is both).
    assert (f"Time to first token {format_seconds(run.ttft_seconds)} at best, "
            f"{format_seconds(expected.ttft_seconds)} expected") in text
    assert (f"Time per output token {format_seconds(run.tpot_seconds)} at best, "
            f"{format_seconds(expected.decode_seconds_per_token)} expected") in text
    assert one_drawing(shown).count('role="img"') == 3  # the request, then the two swapped ones
    assert "<table" not in shown and "<table" in behind
    assert "Tokens per second for this reader" in text_of(behind)


def test_request_timeline_few_steps_are_drawn_one_by_one() -> None:
    html = render("request_timeline", output_tokens="5")
    for i in range(1, 5):
        assert f"decode step {i}:" in html
    assert "groups" not in text_of(html)


def test_request_timeline_comparison_decode_dominates() -> None:
    model, gpu = get_model("llama-3.1-8b"), get_hardware("h100-sxm")
    long_q = serving.request_timeline(model, gpu, prompt_tokens=4000, output_tokens=100)
    long_a = serving.request_timeline(model, gpu, prompt_tokens=100, output_tokens=4000)
    assert long_a.total_seconds > 10 * long_q.total_seconds
    assert long_q.ttft_seconds > long_a.ttft_seconds
    text = text_of(render("request_timeline"))
    assert format_seconds(long_q.total_seconds) in text
    assert format_seconds(long_a.total_seconds) in text


def test_request_timeline_one_token_answer_has_no_decode_step() -> None:
    text = text_of(render("request_timeline", output_tokens="1"))
    assert "no decode step" in text


@pytest.mark.parametrize(
    "field, value",
    [
        ("model", "gpt-9"),
        ("hardware", HOSTILE),
        ("prompt_tokens", "0"),
        ("prompt_tokens", "NaN"),
        ("output_tokens", "2.5"),
        ("output_tokens", "1e400"),
        ("output_tokens", HOSTILE),
    ],
)
def test_request_timeline_refuses_bad_input_naming_the_field(field: str, value: str) -> None:
    with pytest.raises(EngineError) as caught:
        render("request_timeline", **{field: value})
    assert caught.value.field == field


# -------------------------------------------------------------------------- escaping


@pytest.mark.parametrize("name", ["layer_matrices", "train_vs_serve", "request_timeline"])
def test_hostile_inputs_are_refused_before_any_html_is_made(name: str) -> None:
    widget = get_widget(name)
    for control in widget.controls:
        # The pasted config is read only while "your model" is chosen (its box is hidden
        # otherwise), so it is tried with that choice made.
        chosen = {"model": YOUR_MODEL} if control.name == CONFIG.name else {}
        values = widget.defaults({**chosen, control.name: HOSTILE})
        reply = json.loads(update(name, json.dumps(values)))
        assert "html" not in reply
        assert reply["field"] == control.name


def test_chart_labels_are_escaped() -> None:
    svg = timeline(
        [(HOSTILE, "decode", 0.0, 1.0)], label=HOSTILE, marker_seconds=0.5, marker_label=HOSTILE
    )
    bar = memory_bar([(HOSTILE, 1e9)], 2e9, label=HOSTILE, scale_bytes=4e9)
    for html in (svg, bar):
        assert "<script>" not in html
        assert "&lt;script&gt;" in html


def test_memory_bars_share_a_scale() -> None:
    small = memory_bar({"weights": 1e9}, 2e9, label="a", scale_bytes=10e9)
    big = memory_bar({"weights": 10e9}, 2e9, label="b")
    width = re.compile(r'class="part-weights" x="[0-9.]+" y="\d+" width="([0-9.]+)"')
    assert float(width.findall(big)[0]) == pytest.approx(
        10 * float(width.findall(small)[0]), abs=0.1
    )
