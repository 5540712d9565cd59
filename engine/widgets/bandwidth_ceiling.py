"""docs/steps/bandwidth.md: number three, memory bandwidth. The ceiling on single-user decode speed: every
token reads all the weights once, so time per token >= bytes read / bandwidth."""

from __future__ import annotations

from dataclasses import dataclass

from engine.lesson.plans.roofline_view import roofline_commands
from engine.numbers import memory, serving
from engine.numbers.catalog import HardwareSpec, ModelSpec, get_hardware
from engine.numbers.expected_serving import expected_decode_step_seconds
from engine.numbers.formats import FormatId, get_format
from engine.render.html import definition_list, esc, tag
from engine.render.options import (
    CONFIG,
    catalog_model_field,
    chosen_model,
    hardware_field,
    noting_your_model,
    weight_format_field,
)
from engine.render.plot import Bar, bar_rows, chart_for_both, extra_caption_height, narrow_wrap
from engine.render.secondary import secondary
from engine.render.svg import text
from engine.render.widget import Command, Values, Widget
from engine.words.format import (
    format_bandwidth,
    format_count,
    format_GB,
    format_seconds,
    format_TFLOP_per_s,
    format_tokens_per_s,
)

# Data-centre GPUs, a gaming card, a workstation GPU, a desktop Apple chip, one socket of a
# CPU server (dgx-1's own CPUs) and a phone: the range the lesson compares.
DEVICES = (
    "b200",
    "mi300x",
    "h200",
    "h100-sxm",
    "a100-80gb",
    "rtx-4090",
    "l4",
    "apple-m2-ultra",
    "xeon-8480c",
    "apple-a17-pro",
)


@dataclass(frozen=True, slots=True)
class Ceiling:
    """One device's single-user decode ceiling (context 0: weights only, batch 1)."""

    hardware: HardwareSpec
    step: serving.DecodeStep
    fits: bool


def ceiling(model: ModelSpec, hardware: HardwareSpec, weight_format: FormatId) -> Ceiling:
    step = serving.decode_step(
        model, hardware, context_tokens=0, batch=1, weight_format=weight_format
    )
    # The memory of the one token being decoded (its KV entry), as the command line's
    # roofline counts a step reading the weights alone.
    fits = memory.serving_memory(model, hardware, weight_format=weight_format,
                                 context_tokens=1).fits
    return Ceiling(hardware, step, fits)


def _line(c: Ceiling, *, per_token: bool = True) -> str:
    """'NVIDIA L4: 19 tokens/s (53.5 ms per token)'; the bar's caption, 'NVIDIA L4: 19' under
    the chart's one unit heading, leaves the time per token to the chart's text alternative
    and the worked-out figures."""
    speed = format_tokens_per_s(c.step.tokens_per_s_per_user)
    text = f"{c.hardware.name}: {speed if per_token else speed.removesuffix(' tokens/s')}"
    if per_token:
        text += f" ({format_seconds(c.step.seconds)} per token)"
    if not c.fits:
        text += f", does not fit in {format_GB(c.hardware.memory_bytes)}"
    return text


def ceiling_chart(rows: list[Ceiling], *, chosen: str, label: str) -> str:
    """Horizontal bars of tokens/s to one scale, one per device, with a text alternative."""
    top = max(c.step.tokens_per_s_per_user for c in rows) * 1.02
    row_h, heading_h = 36, 18

    def draw(width: int) -> tuple[str, float]:
        left, usable = 4, width - 8
        wrap_w = narrow_wrap(width, usable)
        bars = [
            Bar(
                _line(c, per_token=False),
                c.step.tokens_per_s_per_user,
                ("part-2" if c.hardware.id == chosen else "part-0")
                + ("" if c.fits else " ceiling-nofit"),
                row={"data_device": c.hardware.id},
                bold=c.hardware.id == chosen,
            )
            for c in rows
        ]
        content = text(left, 12, CHART_UNIT) + bar_rows(
            bars,
            x=left,
            first_y=17 + heading_h,
            bar_h=12,
            pitch=row_h,
            units_per_value=usable / top,
            track_w=usable,
            caption_gap=5,
            rx=2,
            wrap_w=wrap_w,
        )
        extra = extra_caption_height(bars, wrap_w)
        return content, len(rows) * row_h + heading_h + 4 + extra

    description = f"{label}. " + "; ".join(_line(c) for c in rows) + "."
    return chart_for_both(draw, css="ceiling-chart", name=label, label=description)


# The bars' one unit, said once above them rather than after every figure.
CHART_UNIT = "Ceiling in tokens/s:"
MODEL = catalog_model_field(your_model=True)
FORMAT = weight_format_field()
HARDWARE = hardware_field("Device", gpus_only=False)


def _devices(values: Values) -> list[HardwareSpec]:
    """The devices compared, the chosen one among them, fastest memory first."""
    chosen = values[HARDWARE]
    ids = list(DEVICES) if chosen in DEVICES else [*DEVICES, chosen]
    return sorted((get_hardware(i) for i in ids), key=lambda h: -h.bandwidth_bytes_per_s)


def render(values: Values) -> str:
    model = chosen_model(values, MODEL)
    weight_format = get_format(values[FORMAT]).id
    chosen = get_hardware(values[HARDWARE])
    rows = [ceiling(model, h, weight_format) for h in _devices(values)]
    mine = next(c for c in rows if c.hardware.id == chosen.id)
    step = mine.step
    expected_s = expected_decode_step_seconds(
        model, chosen, context_tokens=0, batch=1, weight_format=weight_format
    )
    verdict_text = (
        f"At most {format_tokens_per_s(step.tokens_per_s_per_user)} for one user with no "
        "context yet, about "
        f"{format_tokens_per_s(1.0 / expected_s).removesuffix(' tokens/s')} expected."
    )
    if not mine.fits:
        verdict_text += (
            f" (But {model.name} in {weight_format} does not fit in its "
            f"{format_GB(chosen.memory_bytes)}.)"
        )
    verdict = tag(
        "p",
        esc(verdict_text),
        class_="widget-verdict ceiling-verdict",
        data_tokens_per_s=f"{step.tokens_per_s_per_user:.6g}",
    )
    bytes_per = get_format(weight_format).bytes_per_number
    if model.is_moe:
        read_words = (
            f"{format_GB(step.bytes_read)}: the shared weights and the experts one token is "
            f"routed to, {bytes_per:g} bytes each"
        )
    elif looked_up := serving.gathered_table_params(model):
        read_words = (
            f"({format_count(model.params)} parameters − {format_count(looked_up)} of input "
            f"embedding, looked up one row per token) × {bytes_per:g} bytes = "
            f"{format_GB(step.bytes_read)}"
        )
    else:
        read_words = (
            f"{format_count(model.params)} parameters × {bytes_per:g} bytes = "
            f"{format_GB(step.bytes_read)}, every weight once"
        )
    peak, compute_format = chosen.compute_peak(weight_format)
    figures = definition_list(
        [
            ("Bytes read per token", read_words),
            ("Memory bandwidth", format_bandwidth(chosen.bandwidth_bytes_per_s)),
            (
                "Time to read them",
                f"{format_GB(step.bytes_read)} ÷ {format_bandwidth(chosen.bandwidth_bytes_per_s)} "
                f"= {format_seconds(step.memory_seconds)}",
            ),
            (
                "Ceiling for one user",
                f"1 ÷ {format_seconds(step.seconds)} = {format_tokens_per_s(step.tokens_per_s_per_user)}",
            ),
            (
                "Expected on a well-tuned server, no context yet",
                f"{format_seconds(expected_s)} per token ({format_tokens_per_s(1.0 / expected_s)}): "
                "real kernels read memory below its datasheet speed and each layer adds fixed costs",
            ),
            (
                "The maths of that token, for comparison",
                f"{format_count(step.flops)} FLOPs ÷ {format_TFLOP_per_s(peak)} "
                f"({compute_format}) = {format_seconds(step.compute_seconds)}",
            ),
        ]
    )
    chart = ceiling_chart(
        rows,
        chosen=chosen.id,
        label=f"Single-user decode ceiling of {model.name} in {weight_format}, by device",
    )
    return verdict + chart + secondary("Worked out", figures)


def command(values: Values) -> Command:
    """A line for each device: its decode step at batch 1 reading the weights alone."""
    return roofline_commands(values, MODEL, *({
        "hardware": h.id, "weight_format": get_format(values[FORMAT]).id, "context_tokens": 0,
        "batches": (1,)} for h in _devices(values)))


WIDGET = Widget(
    name="bandwidth_ceiling",
    title="Bandwidth: the decode ceiling",
    fields=(MODEL, CONFIG, FORMAT, HARDWARE),
    render=noting_your_model(render, MODEL),
    summary="The most tokens per second one user can get: bytes read per token over memory "
    "bandwidth, on the chosen device and across the catalogue.",
    command=command,
)
