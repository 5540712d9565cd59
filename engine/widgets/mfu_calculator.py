"""docs/steps/compute.md: number one, compute. MFU from a measured training throughput, or the wall-clock
time of a token budget at an assumed MFU, with the arithmetic shown."""

from __future__ import annotations

from engine.lesson.figures.claims import EXAMPLE_TRAINING_TOKENS_PER_S
from engine.numbers import compute, quantities
from engine.numbers.catalog import get_hardware
from engine.numbers.compute import GOOD_MFU_HIGH, GOOD_MFU_LOW
from engine.numbers.expected_training import expected_train
from engine.numbers.formats import get_format
from engine.numbers.training_runs import LLAMA_3_1_PRETRAINING_TOKENS
from engine.render.fields import Amount, Choice
from engine.render.html import definition_list, esc, tag
from engine.render.options import (
    CONFIG,
    GPUS,
    MFU,
    TRAINING_TOKENS,
    catalog_model_field,
    chosen_model,
    format_field,
    hardware_field,
    noting_your_model,
    tokens_text,
)
from engine.render.plot import WIDTH, chart_for_both
from engine.render.secondary import secondary
from engine.render.svg import line, rect, text
from engine.render.widget import Values, Widget
from engine.words.expected import BOUND_WORDS, EXPECTED_TRAINING_WORDS, at_best_and_expected
from engine.words.format import (
    format_count,
    format_flops,
    format_flops_per_s,
    format_percent,
    format_percent_range,
    format_seconds,
    format_TFLOP_per_s,
)

MODES = (
    ("mfu", "From a measured throughput → MFU"),
    ("time", "From an assumed MFU → time"),
)
# What large training runs reach: PaLM 540B 46.2 % (Chowdhery et al. 2022, table 3), Llama 3
# 405B 38-43 % on 16,384 H100s (Llama 3 paper, table 4). Below the band something is starving
# the GPUs; above it the figures deserve a second look.
BAND = format_percent_range(GOOD_MFU_LOW, GOOD_MFU_HIGH, between="–")

MODE = Choice("mode", "I know", "mfu", options=MODES)
MODEL = catalog_model_field(your_model=True)
HARDWARE = hardware_field()
FORMAT = format_field("format", "Maths in", "bf16", "bf16", "fp16", "fp8", "fp32")
GPU_COUNT = GPUS.but(default="8")
TOKENS_PER_S = Amount(
    "tokens_per_s",
    "Measured throughput",
    f"{EXAMPLE_TRAINING_TOKENS_PER_S:.0f}",
    unit="tokens/s",
    hint="All GPUs together.",
    quantity=quantities.TOKENS_PER_S,
)
ASSUMED_MFU = MFU.but(label="Assumed MFU", hint="0.4 means 40 %.")
# The default is Llama 3.1's real pretraining; the step's prose says so.
TOKEN_BUDGET = TRAINING_TOKENS.but(
    label="Token budget", default=tokens_text(LLAMA_3_1_PRETRAINING_TOKENS), hint=""
)


def _gpus(n: int, name: str) -> str:
    return f"{n:,} × {name}"


def mfu_gauge(mfu: float, *, label: str) -> str:
    """MFU on a 0-100 % track, the good band for large runs shaded, with a text alternative;
    on the narrow drawing the band's words go on a line of their own, under the ends."""
    description = f"{label}: {format_percent(mfu)} of peak; {BAND} is good for large training runs."

    def draw(width: int) -> tuple[str, float]:
        left, usable, bar_y, bar_h = 4, width - 8, 18, 22
        low = left + usable * GOOD_MFU_LOW
        band = usable * (GOOD_MFU_HIGH - GOOD_MFU_LOW)
        x = left + usable * mfu
        below = bar_y + bar_h + 18
        band_y = below if width >= WIDTH else below + 16
        content = (
            rect(left, bar_y, usable, bar_h, class_="track", rx=3)
            + rect(low, bar_y, band, bar_h, class_="mfu-band")
            + rect(left, bar_y + 6, usable * mfu, bar_h - 12, class_="part-0")
            + line(x, 10, x, bar_y + bar_h + 4, class_="mfu-marker")
            + text(x, 10, f"MFU {format_percent(mfu)}", anchor="start" if mfu < 0.5 else "end")
            + text(left, below, "0 %")
            + text(low + band / 2, band_y, f"good for large runs: {BAND}", anchor="middle")
            + text(left + usable, below, "100 % (peak)", anchor="end")
        )
        return content, band_y + 8

    return chart_for_both(draw, css="mfu-gauge", name=label, label=description)


def _verdict(mfu: float) -> tuple[str, str]:
    """(words, css class) for a measured MFU."""
    if mfu < GOOD_MFU_LOW:
        return (
            f"Below the {BAND} that large runs reach: the GPUs spend much of their time waiting "
            "(data loading, communication, small kernels).",
            "mfu-low",
        )
    if mfu <= GOOD_MFU_HIGH:
        # The band's figures are on the gauge, right below.
        return "Good: within the shaded band that well-tuned large training runs reach.", "fits"
    return (
        f"Above the {BAND} that large runs usually reach: excellent if true, so check the "
        "throughput, the GPU count and the format of the peak.",
        "mfu-high",
    )


def render(values: Values) -> str:
    mode = values[MODE]
    model = chosen_model(values, MODEL)
    gpu = get_hardware(values[HARDWARE])
    number_format = get_format(values[FORMAT])
    peak = gpu.peak_flops_per_s(number_format.id)
    gpus = values[GPU_COUNT]
    tokens = values[TOKEN_BUDGET]
    flops = compute.training_flops_per_token(model)
    per_token = flops.model
    total_flops = per_token * tokens
    all_peak = gpus * peak
    peak_words = f"{gpus:,} × {format_TFLOP_per_s(peak)} = {format_flops_per_s(all_peak)}"
    per_token_words = (
        f"6 × {format_count(flops.matmul / 6.0)} weights a token multiplies (2 forward + 4 "
        "backward FLOPs each; the input embedding is looked up, not multiplied) + "
        f"{format_count(flops.attention)} (causal attention over {flops.seq_len:,} tokens) = "
        f"{format_count(per_token)} FLOPs"
    )
    if mode == "mfu":
        tokens_per_s = values[TOKENS_PER_S]
        mfu = compute.mfu_at(tokens_per_s, per_token, gpus, peak)
        seconds = compute.training_seconds(total_flops, gpus, peak, mfu)
        words, css = _verdict(mfu)
        verdict = tag(
            "p",
            esc(f"MFU {format_percent(mfu)}. {words}"),
            class_=f"widget-verdict {css}",
            data_mfu=f"{mfu:.6f}",
        )
        achieved = per_token * tokens_per_s
        # In view: the time the step's prose quotes; the MFU's arithmetic is in the details.
        time_row = definition_list(
            [(f"At this speed, {format_count(tokens)} tokens take", format_seconds(seconds))]
        )
        working = definition_list(
            [
                ("FLOPs per training token", per_token_words),
                (
                    "Model FLOPs done per second",
                    f"{format_count(per_token)} × {tokens_per_s:,.0f} tokens/s = {format_flops_per_s(achieved)}",
                ),
                (f"Peak of {_gpus(gpus, gpu.name)} in {number_format.id}", peak_words),
                ("MFU", f"{format_flops_per_s(achieved)} ÷ {format_flops_per_s(all_peak)} = {format_percent(mfu)}"),
                (
                    "Time for the token budget (training FLOPs ÷ model FLOPs per second)",
                    f"{format_flops(total_flops)} ÷ {format_flops_per_s(achieved)} = {format_seconds(seconds)}",
                ),
            ]
        )
        gauge = mfu_gauge(mfu, label="Measured model FLOPs utilisation")
        return verdict + gauge + time_row + secondary("The arithmetic", working)
    mfu = values[ASSUMED_MFU]
    seconds = compute.training_seconds(total_flops, gpus, peak, mfu)
    speed = compute.tokens_per_s_at(per_token, gpus, peak, mfu)
    verdict = tag(
        "p",
        esc(
            f"{format_count(tokens)} tokens on {_gpus(gpus, gpu.name)} at {format_percent(mfu)} MFU: "
            f"{format_seconds(seconds)}."
        ),
        class_="widget-verdict mfu-time",
        data_seconds=f"{seconds:.6g}",
    )
    useful = all_peak * mfu
    expected = expected_train(model, gpu, tokens=tokens, gpus=gpus,
                              compute_format=number_format.id)
    # In view: what to measure and what a tuned stack reaches; the verdict gives the time.
    figures = definition_list(
        [
            ("Throughput you should measure", f"{speed:,.0f} tokens/s"),
            (
                "With a tuned stack on these GPUs",
                f"{format_percent(expected.mfu)} MFU, "
                + at_best_and_expected(expected.bound_seconds, expected.seconds),
            ),
        ]
    )
    working = definition_list(
        [
            (
                "Training FLOPs (FLOPs per token × tokens)",
                f"{format_count(per_token)} × {format_count(tokens)} = "
                f"{format_flops(total_flops)}",
            ),
            (f"Peak of {_gpus(gpus, gpu.name)} in {number_format.id}", peak_words),
            ("Useful FLOP/s at that MFU", f"{format_flops_per_s(all_peak)} × {format_percent(mfu)} = {format_flops_per_s(useful)}"),
            (
                "Wall-clock time",
                f"{format_flops(total_flops)} ÷ {format_flops_per_s(useful)} = {format_seconds(seconds)}",
            ),
        ]
    )
    two_numbers = tag(
        "ul", "".join(tag("li", esc(words)) for words in (BOUND_WORDS, EXPECTED_TRAINING_WORDS)),
        class_="widget-notes",
    )
    gauge = mfu_gauge(mfu, label="Assumed model FLOPs utilisation")
    return verdict + gauge + figures + secondary(
        "The arithmetic; at best and expected", working + two_numbers
    )


WIDGET = Widget(
    name="mfu_calculator",
    title="MFU and training time",
    fields=(MODE, MODEL, CONFIG, HARDWARE, FORMAT, GPU_COUNT, TOKENS_PER_S, ASSUMED_MFU, TOKEN_BUDGET),
    render=noting_your_model(render, MODEL),
    summary="Model FLOPs utilisation from a measured training throughput, or the wall-clock "
    "time of a token budget at an assumed MFU, with the arithmetic.",
)
