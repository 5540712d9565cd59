"""The three numbers (compute, capacity, bandwidth): MFU and training time, the capacity gate and its ways out,
the bandwidth ceiling on decode speed. The engine's numbers appear, bad input names its
field, hostile text is shown as text."""

from __future__ import annotations

import json
import re

import pytest
from widget_text import one_drawing, render, text_of

from engine.browser import update
from engine.lesson.figures import prose as figures
from engine.numbers import compute, memory, serving
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.errors import EngineError
from engine.numbers.training_runs import LLAMA_3_1_PRETRAINING_TOKENS
from engine.registry import widget_names
from engine.widgets.bandwidth_ceiling import DEVICES
from engine.words.format import format_GB, format_percent, format_seconds

HOSTILE = '<script>alert("x")</script>'
H100_BF16 = get_hardware("h100-sxm").peak_flops_per_s("bf16")


def shown_and_shut(html: str) -> tuple[str, str]:
    """The text that shows as the widget opens, and the text of its one closed <details>."""
    assert html.count('<details class="widget-notes">') == 1
    start = html.index('<details class="widget-notes">')
    end = html.index("</details>", start) + len("</details>")
    return text_of(html[:start] + html[end:]), text_of(html[start:end])


def test_the_three_widgets_are_registered() -> None:
    assert {"mfu_calculator", "capacity_gate", "bandwidth_ceiling"} <= set(widget_names())


@pytest.mark.parametrize("name", ["mfu_calculator", "capacity_gate", "bandwidth_ceiling"])
def test_defaults_render_without_nan_and_with_a_described_chart(name: str) -> None:
    html = render(name)
    assert not re.search(r"\bnan\b|\binf\b|infinity", text_of(html), re.IGNORECASE)
    assert 'role="img"' in html and "aria-label=" in html


# ------------------------------------------------------------------ mfu_calculator (compute)


def test_mfu_from_a_measured_throughput_is_the_engines() -> None:
    model = get_model("llama-3.1-8b")
    html = render("mfu_calculator", tokens_per_s="60000", gpus="8")
    per_token = compute.training_flops_per_token(model).model
    mfu = compute.mfu_at(60000, per_token, 8, H100_BF16)
    assert f'data-mfu="{mfu:.6f}"' in html
    text = text_of(html)
    assert f"MFU {format_percent(mfu)}" in text
    # By hand: 6 x 7.505e9 matmul weights + causal attention 12 x 32 x 4,096 x 4,097 / 2
    # = 48.25e9 FLOPs per token; x 60,000 = 2.895e15 FLOP/s of 8 x 989.4e12 = 36.6 %.
    assert "MFU 36.6 %" in text
    assert "Good: within the shaded band" in text and "good for large runs: 35–55 %" in text
    # The arithmetic: FLOPs per token x tokens/s / (GPUs x peak).
    assert "6 × 7.50 billion weights a token multiplies (2 forward + 4 backward FLOPs each; " \
        "the input embedding is looked up, not multiplied) + 3.22 billion " \
        "(causal attention over 4,096 tokens) = 48.2 billion FLOPs" in text
    assert "48.2 billion × 60,000 tokens/s" in text
    assert "8 × 989.4 TFLOP/s" in text
    # The default budget is Llama 3.1's real pretraining (engine.numbers.training_runs).
    seconds = compute.training_seconds(per_token * LLAMA_3_1_PRETRAINING_TOKENS, 8, H100_BF16, mfu)
    assert format_seconds(seconds) in text


def test_mfu_arithmetic_is_in_one_closed_details_and_the_answer_in_view() -> None:
    for mode in ("mfu", "time"):
        html = render("mfu_calculator", mode=mode)
        assert html.count("<details") == 1 and "<details open" not in html
        seen, inside = html.split("<details")
        assert 'class="widget-verdict' in seen and 'role="img"' in seen  # verdict and gauge
        assert "8 × 989.4 TFLOP/s" in text_of(inside)  # the peak's arithmetic
    seen = render("mfu_calculator").split("<details")[0]
    assert "At this speed, 15.0 trillion tokens take" in text_of(seen)  # the 8B's, its default
    timed = render("mfu_calculator", mode="time").split("<details")
    assert "Throughput you should measure" in timed[0]
    assert "Wall-clock time" in timed[1] and "At best" in text_of(timed[1])


def test_mfu_verdict_follows_the_band() -> None:
    low = text_of(render("mfu_calculator", tokens_per_s="20000"))
    high = text_of(render("mfu_calculator", tokens_per_s="100000"))
    assert "Below the 35–55 %" in low
    assert "Above the 35–55 %" in high
    assert "mfu-low" in render("mfu_calculator", tokens_per_s="20000")


def test_mfu_uses_the_chosen_format_and_gpu_count() -> None:
    model = get_model("llama-3.1-70b")
    html = render(
        "mfu_calculator", model="llama-3.1-70b", format="fp8", gpus="64", tokens_per_s="100000"
    )
    peak = get_hardware("h100-sxm").peak_flops_per_s("fp8")
    mfu = compute.mfu_at(100000, compute.training_flops_per_token(model).model, 64, peak)
    assert f'data-mfu="{mfu:.6f}"' in html
    assert "64 × 1,978.9 TFLOP/s" in text_of(html)


def test_time_mode_gives_the_engines_wall_clock_time_and_throughput() -> None:
    model = get_model("llama-3.1-8b")
    html = render("mfu_calculator", mode="time", mfu="0.4", tokens="15e12", gpus="8")
    per_token = compute.training_flops_per_token(model).model
    seconds = compute.training_seconds(per_token * 15e12, 8, H100_BF16, 0.4)
    speed = compute.tokens_per_s_at(per_token, 8, H100_BF16, 0.4)
    text = text_of(html)
    assert f'data-seconds="{seconds:.6g}"' in html
    assert format_seconds(seconds) in text
    assert f"{speed:,.0f} tokens/s" in text
    assert "40 % MFU" in text
    # The same figure the page's prose uses.
    assert figures.train_time("llama-3.1-8b", tokens=15e12, gpus=8) in text


def test_time_mode_ignores_the_throughput_field() -> None:
    # The throughput is not used to find the time, so an impossible one does not block it.
    assert "data-seconds" in render("mfu_calculator", mode="time", tokens_per_s="1e12")


@pytest.mark.parametrize(
    "field, value, mode",
    [
        ("tokens_per_s", "1e9", "mfu"),  # more than 100 % MFU
        ("tokens_per_s", "abc", "mfu"),
        ("tokens_per_s", "-5", "mfu"),
        ("gpus", "0", "mfu"),
        ("gpus", "2.5", "time"),
        ("mfu", "1.5", "time"),
        ("mfu", "nan", "time"),
        ("tokens", "inf", "time"),
        ("model", HOSTILE, "mfu"),
        ("hardware", "gpu-9000", "time"),
        ("mode", HOSTILE, "mfu"),
    ],
)
def test_mfu_calculator_refuses_bad_input_naming_the_field(
    field: str, value: str, mode: str
) -> None:
    overrides = {"mode": mode, field: value}
    with pytest.raises(EngineError) as caught:
        render("mfu_calculator", **overrides)
    assert caught.value.field == field


def test_a_peak_the_chip_does_not_have_names_the_format() -> None:
    with pytest.raises(EngineError) as caught:
        render("mfu_calculator", hardware="a100-80gb", format="fp8")
    assert caught.value.field == "format"


def test_mfu_errors_reach_the_browser_as_text() -> None:
    answer = json.loads(update("mfu_calculator", json.dumps({"tokens_per_s": HOSTILE})))
    assert answer["field"] == "tokens_per_s"
    assert "<script>" not in json.dumps(answer.get("html", ""))


# ------------------------------------------------------------------ capacity_gate (capacity)


def test_70b_on_one_h100_is_refused_with_the_arithmetic() -> None:
    plan = memory.serving_memory(get_model("llama-3.1-70b"), get_hardware("h100-sxm"))
    assert not plan.fits
    html = render("capacity_gate")
    text = text_of(html)
    assert 'class="widget-verdict refused" data-fits="false"' in html
    assert "Refused: Llama 3.1 70B in bf16" in text
    assert f"{format_GB(plan.per_gpu_bytes)} of 84.94 GB" in text  # 79.11 GiB, vllm #27508
    assert "70.6 billion parameters × 2 bytes = 141.1 GB" in text
    assert f"Short by {format_GB(plan.per_gpu_bytes - plan.capacity_bytes)}" in text
    assert "memory-bar" in html


def _rows(html: str) -> dict[str, tuple[bool, str]]:
    found = re.findall(r'<tr data-way="([^"]+)" data-fits="(true|false)">(.*?)</tr>', html)
    return {key: (fits == "true", text_of(row)) for key, fits, row in found}


def test_each_way_out_is_planned_by_the_engine() -> None:
    model = get_model("llama-3.1-70b")
    rows = _rows(render("capacity_gate"))
    assert list(rows) == ["gpus", "fp8", "int4", "h200", "b200", "mi300x"]
    need = memory.min_gpus_to_serve(memory.serving_memory(model, get_hardware("h100-sxm")))
    assert need == 2
    two = memory.serving_memory(model, get_hardware("h100-sxm"), gpus=2)
    assert rows["gpus"][0] is two.fits is True
    assert "Split over 2 × NVIDIA H100" in rows["gpus"][1]
    assert format_GB(two.per_gpu_bytes) in rows["gpus"][1]
    fp8 = memory.serving_memory(model, get_hardware("h100-sxm"), weight_format="fp8")
    assert rows["fp8"][0] is fp8.fits is True
    assert "70.55 GB" in rows["fp8"][1]
    assert f"{fp8.max_context_tokens_that_fit:,} tokens" in rows["fp8"][1]
    for hw in ("h200", "b200", "mi300x"):
        plan = memory.serving_memory(model, get_hardware(hw))
        assert rows[hw][0] is plan.fits
        assert f"of {format_GB(plan.capacity_bytes)}" in rows[hw][1]
    # 145.6 GB (141.1 GB of weights + KV, activations, overhead) in the H200's measured
    # 150.1 GB (bench/measured/h200-2026-11-30.json): it fits.
    assert rows["h200"][0] is True
    assert rows["b200"][0] is True


def test_the_ways_out_show_one_line_each_and_the_full_table_waits_in_the_details() -> None:
    html = render("capacity_gate")
    shown, shut = shown_and_shut(html)
    fp8 = memory.serving_memory(get_model("llama-3.1-70b"), get_hardware("h100-sxm"), weight_format="fp8")
    h200 = memory.serving_memory(get_model("llama-3.1-70b"), get_hardware("h200"))
    assert "Ways out (room left for requests of 8,192 tokens):" in shown
    # By hand, each H100's 84,943,715,697 B less half the weights (70,553,706,496), vLLM's
    # fullest step (2,048 tokens x 73,728 x 2 B = 301,989,888 and 1,024 logits rows of
    # 128,256 x 4 B = 525,336,576) and 1.5 GB: 12,062,682,737 B, twice that over 16-token
    # blocks of 327,680 B a token = 4,601 blocks, 73,616 tokens: 8 requests of 8,192 (the
    # working space of one request instead, as before, left room for 9).
    assert "Split over 2 GPUs (each holds half of every matrix): fits, 8 requests" in shown
    assert f"fp8 weights: fits, {fp8.max_concurrent_requests:,} requests" in shown
    assert f"One NVIDIA H200 SXM 141GB: fits, {h200.max_concurrent_requests:,} requests" in shown
    # one way of each kind in view (a split, a smaller format, a bigger chip); all in the table
    assert re.findall(r'<li data-way="([^"]+)"', html) == ["gpus", "fp8", "h200"]
    assert list(_rows(html)) == ["gpus", "fp8", "int4", "h200", "b200", "mi300x"]
    assert "int4 weights:" not in shown and "MI300X: fits" not in shown
    # the arithmetic and the table are one click away, not on the page as it opens
    assert "Short by" not in shown and "Short by" in shut
    assert "Room for KV cache" not in shown and "Room for KV cache" in shut


def test_a_model_that_fits_is_admitted_and_smaller_formats_only_are_offered() -> None:
    html = render("capacity_gate", model="llama-3.1-8b", format="fp8")
    assert 'data-fits="true"' in html.split("</p>")[0]
    assert "Admitted" in html
    assert "Other ways to run it" in html
    rows = _rows(html)
    assert "fp8" not in rows and "int4" in rows


def test_the_context_changes_the_room_left() -> None:
    short = _rows(render("capacity_gate", context="1024"))
    long = _rows(render("capacity_gate", context="65536"))
    assert short["fp8"][0] is True
    assert (
        long["fp8"][0]
        is memory.serving_memory(
            get_model("llama-3.1-70b"), get_hardware("h100-sxm"), weight_format="fp8", context_tokens=65536
        ).fits
    )


@pytest.mark.parametrize(
    "field, value",
    [
        ("model", "gpt-9"),
        ("model", HOSTILE),
        ("hardware", HOSTILE),
        ("format", "fp9"),
        ("context", "0"),
        ("context", "many"),
    ],
)
def test_capacity_gate_refuses_bad_input_naming_the_field(field: str, value: str) -> None:
    with pytest.raises(EngineError) as caught:
        render("capacity_gate", **{field: value})
    assert caught.value.field == field


# ------------------------------------------------------------------ bandwidth_ceiling (bandwidth)


def test_the_lesson_number_8b_on_an_h100() -> None:
    step = serving.decode_step(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), context_tokens=0)
    assert step.bound == "memory"
    # (8,030,261,248 parameters - 525,336,576 of untied input embedding, looked up one row
    # of 4,096 per token) x 2 bytes = 15.01 GB, over 3.35 TB/s: 4.48 ms, 223 tokens/s.
    assert step.seconds == pytest.approx(15.01e9 / 3.35e12, rel=1e-3)
    html = render("bandwidth_ceiling")
    text = text_of(html)
    assert f'data-tokens-per-s="{step.tokens_per_s_per_user:.6g}"' in html
    assert "525 million of input embedding, looked up one row per token) × 2 bytes" in text
    assert "15.01 GB ÷ 3.35 TB/s = 4.48 ms" in text
    assert "At most 223 tokens/s for one user" in text
    assert figures.decode_ceiling("llama-3.1-8b") == "223 tokens/s"
    assert figures.decode_time("llama-3.1-8b") == "4.48 ms"


def test_the_bars_show_tokens_per_s_and_the_time_per_token_waits_for_the_reader() -> None:
    html = render("bandwidth_ceiling")
    shown, shut = shown_and_shut(html)
    l4 = serving.decode_step(get_model("llama-3.1-8b"), get_hardware("l4"), context_tokens=0)
    assert "Ceiling in tokens/s:" in shown and "NVIDIA L4: 20" in shown
    assert "NVIDIA L4: 20 tokens/s" not in shown  # the unit is said once, above the bars
    assert format_seconds(l4.seconds) not in shown
    # the chart's text alternative keeps every device's time per token
    label = re.search(r'aria-label="([^"]*)"', html.split("<svg", 1)[1]).group(1)  # type: ignore[union-attr]
    assert f"NVIDIA L4: 20 tokens/s ({format_seconds(l4.seconds)} per token)" in label
    expected = serving.decode_step(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), context_tokens=0)
    # The basis said as step 16 says its dgx-1 figure: expected, for one user, with what context.
    assert (f"At most {expected.tokens_per_s_per_user:,.0f} tokens/s for one user with no "
            "context yet, about") in shown
    assert "real kernels read memory below its datasheet speed" in shut


def test_bars_cover_the_devices_to_one_scale_and_in_bandwidth_order() -> None:
    html = render("bandwidth_ceiling")
    html = one_drawing(html)
    devices = re.findall(r'<g data-device="([^"]+)">', html)
    assert sorted(devices) == sorted(DEVICES)
    bandwidths = [get_hardware(d).bandwidth_bytes_per_s for d in devices]
    assert bandwidths == sorted(bandwidths, reverse=True)
    widths = {
        d: float(w)
        for d, w in re.findall(
            r'<g data-device="([^"]+)">.*?<rect class="part-[02][^"]*" x="4" y="[0-9]+" '
            r'width="([0-9.]+)"',
            html,
        )
    }
    ratio = widths["h100-sxm"] / widths["a100-80gb"]
    h100 = serving.decode_step(get_model("llama-3.1-8b"), get_hardware("h100-sxm")).tokens_per_s_per_user
    a100 = serving.decode_step(get_model("llama-3.1-8b"), get_hardware("a100-80gb")).tokens_per_s_per_user
    assert ratio == pytest.approx(h100 / a100, rel=1e-3)
    # The chosen device is highlighted; a phone cannot hold the bf16 model.
    assert '<g data-device="h100-sxm"><text x="4" y="' in html and 'font-weight="700"' in html
    assert "does not fit in 6 GB" in html  # what iOS lets one app use of the phone's 8 GB


def test_int4_raises_the_ceiling() -> None:
    bf16 = serving.decode_step(get_model("llama-3.1-8b"), get_hardware("h100-sxm")).tokens_per_s_per_user
    int4 = serving.decode_step(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), weight_format="int4")
    html = render("bandwidth_ceiling", format="int4")
    assert int4.tokens_per_s_per_user > 3.9 * bf16
    assert f'data-tokens-per-s="{int4.tokens_per_s_per_user:.6g}"' in html
    assert "× 0.5 bytes" in text_of(html)


def test_a_device_outside_the_list_joins_the_chart() -> None:
    html = render("bandwidth_ceiling", hardware="epyc-9654")
    assert '<g data-device="epyc-9654">' in html
    assert "AMD EPYC 9654 (one socket): 31" in text_of(html)  # its bar, in bold: the chosen device
    assert re.search(r'<g data-device="epyc-9654"><text [^>]*font-weight="700"', html)


def test_a_mixture_of_experts_reads_only_its_active_experts() -> None:
    model = get_model("mixtral-8x7b")
    step = serving.decode_step(model, get_hardware("h100-sxm"))
    assert step.bytes_read < model.params * 2
    text = text_of(render("bandwidth_ceiling", model="mixtral-8x7b"))
    assert f"{format_GB(step.bytes_read)}: the shared weights and the experts" in text


@pytest.mark.parametrize(
    "field, value",
    [("model", HOSTILE), ("hardware", "gpu-9000"), ("format", HOSTILE)],
)
def test_bandwidth_ceiling_refuses_bad_input_naming_the_field(field: str, value: str) -> None:
    with pytest.raises(EngineError) as caught:
        render("bandwidth_ceiling", **{field: value})
    assert caught.value.field == field
    answer = json.loads(update("bandwidth_ceiling", json.dumps({field: value})))
    assert answer["field"] == field
    assert "html" not in answer
