"""docs/steps/roofline.md: the roofline. Attainable FLOP/s against arithmetic intensity (log-log) for one
chip and number format, with the prefill and decode at several batch sizes placed on it, and
a batch slider moving a highlighted decode point.

Every figure comes from :mod:`engine.numbers.serving` (``prefill``, ``decode_step``: time = the larger
of bytes / bandwidth and FLOPs / peak) and :mod:`engine.numbers.roofline` (``ridge_point``). A point
sits on the roof by construction: its FLOP/s are its FLOPs divided by its engine time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.lesson.plans.roofline_view import roofline_commands
from engine.numbers.catalog import HardwareSpec, get_hardware
from engine.numbers.expected_serving import expected_decode_step_seconds
from engine.numbers.formats import FormatId
from engine.numbers.memory import ServingMemory, serving_memory
from engine.numbers.quantities import TYPICAL_PROMPT_TOKENS, Quantity
from engine.numbers.roofline import ridge_point
from engine.numbers.serving import DecodeStep, Prefill, decode_step, prefill
from engine.render.fields import Count
from engine.render.html import definition_list, esc, table, tag
from engine.render.options import (
    CONFIG,
    CONTEXT,
    catalog_model_field,
    chosen_model,
    format_field,
    hardware_field,
    noting_your_model,
)
from engine.render.placer import Placer, Spot, around, text_box
from engine.render.plot import NARROW_WIDTH, WIDTH, Frame, Narrow, Scale, axes, chart, ticks
from engine.render.secondary import secondary
from engine.render.svg import circle, line, num, polyline, rect, text
from engine.render.widget import Command, Values, Widget
from engine.words.expected import at_best_and_expected
from engine.words.format import (
    a_or_an,
    format_bandwidth,
    format_flops_per_byte,
    format_flops_per_s,
    format_GB,
    format_percent,
    format_seconds,
    format_tokens_per_s,
)

MARKED_BATCHES = (1, 8, 32, 128, 512)  # decode points always drawn
MAX_BATCH_LOG2 = 11  # the slider's top notch: batch 2,048
KV_FORMAT: FormatId = "bf16"  # the KV cache stays in bf16 whatever the weights are stored in

# Presentation attributes, so the chart reads without the stylesheet; s3.css refines colours.
_ROOF = {"fill": "none", "stroke": "currentColor", "stroke_width": "3"}
_GRID = {"class_": "roof-grid", "stroke": "currentColor", "stroke_opacity": "0.15"}
_AXIS = {"stroke": "currentColor", "stroke_opacity": "0.6"}
_RIDGE = {"stroke": "currentColor", "stroke_opacity": "0.6", "stroke_dasharray": "5 4"}
_HOLLOW = {"fill": "none", "stroke": "currentColor", "stroke_width": "2"}


def _decade_label(value: float) -> str:
    """Axis label of a power of ten of FLOP/byte: '0.1', '1', '1,000'."""
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def _short_decade_label(value: float) -> str:
    """A phone's axis label of a power of ten, in thousands' shorthand: '0.1', '100', '10k',
    '1M' (the lesson's shorthand: powers of 1,000)."""
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"


@dataclass(frozen=True, slots=True)
class _Mark:
    """A workload on the chart: its name, FLOP/byte, attained FLOP/s and bound, and whether
    its memory (weights, KV cache, working space) fits on the GPU."""

    name: str
    short: str
    intensity: float
    flops_per_s: float
    bound: str
    fits: bool = True
    memory_bytes: float = 0.0
    capacity_bytes: float = 0.0


def _mark_of(
    step: DecodeStep | Prefill, name: str, short: str, mem: ServingMemory | None = None
) -> _Mark:
    return _Mark(
        name,
        short,
        step.arithmetic_intensity,
        step.flops / step.seconds,
        step.bound,
        fits=mem.fits if mem is not None else True,
        memory_bytes=mem.per_gpu_bytes if mem is not None else 0.0,
        capacity_bytes=mem.capacity_bytes if mem is not None else 0.0,
    )


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where the roofline is drawn: its frame, one decade label in every ``tick_stride`` on
    the intensity axis, and the axis titles."""

    frame: Frame
    tick_stride: int
    x_title: str
    compute_note: tuple[str, ...] = ("compute-bound →",)
    peak_left: bool = False  # the peak's figure may also go at the flat roof's left
    say_no_fit: bool = True  # the slider's label adds ", does not fit" (else its ring shows it)
    tick_label: Callable[[float], str] = _decade_label


_WIDE = _Layout(Frame(WIDTH, 320, left=86, right=24, top=22, bottom=46), 1,
                "arithmetic intensity (FLOP/byte)")
# A phone's drawing: tick labels tight against the axis, every other decade named when
# more than four would crowd 260 units, the shorter axis title; the compute-bound side is
# often under 100 units wide, so its note takes two lines and the peak may go left.
_NARROW = _Layout(Frame(NARROW_WIDTH, 300, left=40, right=20, top=22, bottom=46), 2,
                  "FLOP per byte", ("compute-", "bound →"), peak_left=True, say_no_fit=False,
                  tick_label=_short_decade_label)


def roofline_svg(
    *,
    hardware: HardwareSpec,
    peak_flops_per_s: float,
    ridge: float,
    prefill_mark: _Mark,
    decode_marks: Sequence[_Mark],
    current: _Mark,
    label: str,
) -> str:
    """The log-log roofline: the bandwidth slope meeting the flat peak at the ridge point,
    decade ticks on both axes, and the workloads as points on the roof; drawn twice, wide
    and for a phone. Labels are placed where they meet nothing already drawn; a label with
    no free spot is left off (the table below the chart lists every point)."""
    marks = (hardware, peak_flops_per_s, ridge, prefill_mark, decode_marks, current)
    wide = _roofline_drawing(_WIDE, *marks)
    narrow = Narrow(_roofline_drawing(_NARROW, *marks), height=_NARROW.frame.height)
    svg = chart(wide, css="roofline", name="roofline", label=label, width=WIDTH,
                height=_WIDE.frame.height, narrow=narrow)
    too_big = [m.short for m in decode_marks if not m.fits]
    if not current.fits and current.intensity not in {m.intensity for m in decode_marks}:
        too_big.append(current.short)
    if too_big:
        svg += tag(
            "p",
            esc(
                "Hollow points (batch "
                + ", ".join(too_big).replace("batch ", "")
                + ") do not fit in memory."
            ),
            class_="roof-legend",
        )
    return svg


def _roofline_drawing(
    layout: _Layout,
    hardware: HardwareSpec,
    peak_flops_per_s: float,
    ridge: float,
    prefill_mark: _Mark,
    decode_marks: Sequence[_Mark],
    current: _Mark,
) -> str:
    """The roofline's shapes and labels in ``layout``'s frame."""
    bw = hardware.bandwidth_bytes_per_s
    f = layout.frame
    intensities = [m.intensity for m in (prefill_mark, current, *decode_marks)] + [ridge]
    lx0 = math.floor(math.log10(min(intensities) / 1.5))
    # At least a decade right of the ridge, so the flat roof and its labels have room.
    lx1 = math.ceil(math.log10(max(*intensities, ridge * 10.0) * 1.5))
    ly0 = math.floor(math.log10(10.0**lx0 * bw))
    x_scale = Scale(10.0**lx0, 10.0**lx1, f.left, f.end, clamp=False, log=True)
    y_scale = Scale(10.0**ly0, peak_flops_per_s * 3.0, f.base, f.top, log=True)

    def px(intensity: float, flops: float) -> tuple[float, float]:
        return x_scale(intensity), y_scale(flops)

    shapes = [
        ticks(
            "x",
            x_scale,
            _strided(x_scale.decades(), layout),
            f,
            grid=_GRID,
        ),
        ticks(
            "y",
            y_scale,
            [(v, layout.tick_label(v / 1e12)) for v in y_scale.decades()],
            f,
            grid=_GRID,
        ),
        axes(f, **_AXIS),
    ]
    # The roof: bandwidth x intensity up to the ridge, then the flat peak.
    x_lo, x_hi = 10.0**lx0, 10.0**lx1
    roof = [px(x_lo, x_lo * bw), px(ridge, peak_flops_per_s), px(x_hi, peak_flops_per_s)]
    shapes.append(polyline(roof, class_="roof-line", **_ROOF))
    rx, ry = roof[1]
    shapes.append(line(rx, ry, rx, f.base, class_="roof-ridge", **_RIDGE))
    placer = Placer((f.left + 2, f.top - 12, f.end + f.right - 2, f.base - 2))
    placer.segments += [(roof[0], roof[1]), (roof[1], roof[2]), ((rx, ry), (rx, f.base))]
    y_title = "attainable TFLOP/s"
    placer.take(text_box(4, f.top - 8, y_title, "start"))
    # The points first (they cannot move), then the labels that must show, then the rest.
    points: list[str] = []
    for mark in decode_marks:
        x, y = px(mark.intensity, mark.flops_per_s)
        placer.take((x - 6, y - 6, x + 6, y + 6))
        if mark.fits:
            points.append(
                circle(x, y, 4, title=_describe(mark), class_="roof-decode", fill="currentColor")
            )
        else:
            points.append(
                circle(
                    x, y, 4.5, title=_describe(mark), class_="roof-decode roof-nofit", **_HOLLOW
                )
            )
    x, y = px(prefill_mark.intensity, prefill_mark.flops_per_s)
    placer.take((x - 8, y - 8, x + 8, y + 8))
    points.append(
        rect(
            x - 5,
            y - 5,
            10,
            10,
            title=_describe(prefill_mark),
            class_="roof-prefill",
            transform=f"rotate(45 {num(x)} {num(y)})",
            fill="currentColor",
        )
    )
    prefill_xy = (x, y)
    cx, cy = px(current.intensity, current.flops_per_s)
    placer.take((cx - 11, cy - 11, cx + 11, cy + 11))
    points.append(
        circle(
            cx,
            cy,
            8,
            title=_describe(current),
            class_="roof-current" + ("" if current.fits else " roof-nofit"),
            fill="none",
            stroke="currentColor",
            stroke_width="3",
            stroke_dasharray=None if current.fits else "4 3",
        )
    )

    labels: list[str] = []
    current_text = current.short + ("" if current.fits or not layout.say_no_fit else ", does not fit")
    spot = placer.place(
        current_text,
        [
            (cx, cy - 13, "middle"),
            (cx, cy + 23, "middle"),
            (cx - 12, cy - 8, "end"),
            (cx + 12, cy - 8, "start"),
            (cx - 12, cy + 16, "end"),
            (cx + 12, cy + 16, "start"),
        ],
    )
    if spot is None:  # never left off: drawn above even if crowded
        spot = (cx, cy - 13, "middle")
    labels.append(
        _label(spot, current_text, "roof-current-label" + ("" if current.fits else " roof-nofit"))
    )
    # Fixed notes: the ridge (beside its line, near the bottom), the two regions, the peak.
    base, end = f.base, f.end
    compute: list[tuple[str, list[Spot]]] = (
        [(layout.compute_note[0], [(rx + 6, base - 22, "start"), (rx + 6, base - 38, "start")])]
        if len(layout.compute_note) == 1
        else [
            (words, [(rx + 6, base - 38 + 16 * i, "start")])
            for i, words in enumerate(layout.compute_note)
        ]
    )
    peak_spots: list[Spot] = [(end - 4, ry + 16, "end"), (end - 4, ry - 6, "end"),
                              (end - 4, ry + 30, "end")]
    if layout.peak_left:
        peak_spots += [(f.left + 4, ry - 6, "start"), (f.left + 4, ry + 16, "start")]
    notes = [
        (
            f"ridge {format_flops_per_byte(ridge)}",
            [(rx + 5, base - 6, "start"), (rx - 5, base - 6, "end")],
        ),
        ("← memory-bound", [(rx - 6, base - 22, "end"), (rx - 6, base - 38, "end")]),
        *compute,
        (f"peak {format_flops_per_s(peak_flops_per_s)}", peak_spots),
    ]
    for words, candidates in notes:
        spot = placer.place(words, candidates)
        if spot is not None:
            labels.append(_label(spot, words, "roof-note"))
    px_, py_ = prefill_xy
    spot = placer.place(
        "prefill",
        [
            (px_ - 8, py_ - 8, "end"),
            (px_, py_ - 11, "middle"),
            (px_ + 8, py_ - 8, "start"),
            (px_, py_ + 20, "middle"),
            (px_ - 9, py_ + 4, "end"),
            (px_ + 9, py_ + 4, "start"),
            (px_ - 8, py_ + 16, "end"),
            (px_ + 8, py_ + 16, "start"),
        ],
    )
    if spot is not None:
        labels.append(_label(spot, "prefill"))
    # Decode labels at the marked batches (the slider's own batch is labelled above).
    for mark in decode_marks:
        if mark.intensity == current.intensity:
            continue
        x, y = px(mark.intensity, mark.flops_per_s)
        spot = placer.place(mark.short, around(x, y, 5))
        if spot is not None:
            labels.append(_label(spot, mark.short))
    shapes += points + labels
    shapes.append(
        text(
            round(f.left + f.plot_w / 2),
            base + 34,
            layout.x_title,
            anchor="middle",
        )
    )
    shapes.append(text(4, f.top - 8, y_title))
    return "".join(shapes)


def _strided(decades: Sequence[float], layout: _Layout) -> list[tuple[float, str]]:
    """Decade ticks, each labelled, or with a ``tick_stride`` of 2 and more than four decades
    every other one (counted from the top, so the largest is named)."""
    step = layout.tick_stride if len(decades) > 4 else 1
    last = len(decades) - 1
    return [(v, layout.tick_label(v)) for i, v in enumerate(decades) if (last - i) % step == 0]


def _label(spot: Spot, words: str, css: str | None = None) -> str:
    x, y, anchor = spot
    return text(x, y, words, anchor=anchor, class_=css)


def _describe(mark: _Mark) -> str:
    text = f"{mark.name}: {format_flops_per_byte(mark.intensity)}, {mark.bound}-bound"
    if not mark.fits:
        text += (
            f", does not fit (needs {format_GB(mark.memory_bytes)} of "
            f"{format_GB(mark.capacity_bytes)})"
        )
    return text


def _fits_text(mem: ServingMemory) -> str:
    """'yes, 17.2 GB' or 'does not fit: 293.6 GB'."""
    if mem.fits:
        return f"yes, {format_GB(mem.per_gpu_bytes)}"
    return f"does not fit: {format_GB(mem.per_gpu_bytes)}"


MODEL = catalog_model_field(your_model=True)
HARDWARE = hardware_field()
FORMAT = format_field("format", "Weights stored as", "bf16", "bf16", "fp8", "int4")
# The lesson's one context for a user's time per token: the typical prompt the plan, the
# load curve and the roofline step's prose use too.
ROOFLINE_CONTEXT = CONTEXT.but(default=str(TYPICAL_PROMPT_TOKENS))
BATCH_LOG2 = Count(
    "batch_log2",
    "Batch (powers of two)",
    "0",
    control_kind="range",
    value_texts=tuple(f"a batch of {2**notch:,}" for notch in range(MAX_BATCH_LOG2 + 1)),
    quantity=Quantity(
        "integer", "", 0, MAX_BATCH_LOG2, f"notches for batches of 1 to {2**MAX_BATCH_LOG2:,}"
    ),
)


def render(values: Values) -> str:
    model = chosen_model(values, MODEL)
    hw = get_hardware(values[HARDWARE])
    fmt = values[FORMAT]
    context = values[ROOFLINE_CONTEXT]
    power = values[BATCH_LOG2]
    batch = 2**power

    def step(b: int) -> DecodeStep:
        return decode_step(
            model, hw, batch=b, context_tokens=context, weight_format=fmt, kv_format=KV_FORMAT
        )

    def memory_of(b: int) -> ServingMemory:
        return serving_memory(
            model, hw, weight_format=fmt, kv_format=KV_FORMAT, context_tokens=context, batch=b
        )

    pre = prefill(model, hw, prompt_tokens=context, weight_format=fmt, kv_format=KV_FORMAT)
    chosen = step(batch)
    single = step(1)
    marked = [step(b) for b in MARKED_BATCHES]
    memories = {b: memory_of(b) for b in {*MARKED_BATCHES, batch, 1}}
    compute_format = chosen.compute_format
    peak = hw.peak_flops_per_s(compute_format)
    ridge = ridge_point(hw, compute_format)

    prefill_mark = _mark_of(
        pre, f"Prefill of {a_or_an(context)} {context:,}-token prompt", "prefill", memories[1]
    )
    decode_marks = [
        _mark_of(s, f"Decode at batch {s.batch:,}", f"{s.batch:,}", memories[s.batch])
        for s in marked
    ]
    current = _mark_of(chosen, f"Your batch, {batch:,}", f"batch {batch:,}", memories[batch])
    label = (
        f"Roofline of the {hw.name}, maths in {compute_format}: bandwidth "
        f"{format_bandwidth(hw.bandwidth_bytes_per_s)}, peak {format_flops_per_s(peak)}, ridge "
        f"point {format_flops_per_byte(ridge)}. "
        + "; ".join(_describe(m) for m in (prefill_mark, *decode_marks, current))
        + "."
    )
    svg = roofline_svg(
        hardware=hw,
        peak_flops_per_s=peak,
        ridge=ridge,
        prefill_mark=prefill_mark,
        decode_marks=decode_marks,
        current=current,
        label=label,
    )

    mem = memories[batch]
    if not mem.fits:
        bound_text = (
            f"Batch {batch:,} does not fit: {batch:,} request{'s' if batch > 1 else ''} of "
            f"{context:,} tokens need {format_GB(mem.per_gpu_bytes)}, "
            f"{format_GB(mem.per_gpu_bytes - mem.capacity_bytes)} more than the "
            f"{format_GB(mem.capacity_bytes)} of one {hw.name}. The figures below are what it "
            f"would do if it fitted ({chosen.bound}-bound)."
        )
    elif chosen.bound == "memory":
        bound_text = (
            f"Batch {batch:,}: memory-bound, waiting on {format_GB(chosen.bytes_read)} of reads "
            "per step."
        )
    else:
        bound_text = (
            f"Batch {batch:,}: compute-bound. The {format_GB(chosen.bytes_read)} read per step "
            "now take less time than the maths; more requests make each step longer."
        )
    bound = tag(
        "p",
        esc(bound_text),
        class_="roof-bound",
        data_bound=chosen.bound,
        data_batch=str(batch),
        data_fits="true" if mem.fits else "false",
    )

    memory_text = f"{format_GB(mem.per_gpu_bytes)} of {format_GB(mem.capacity_bytes)}: " + (
        "fits on one GPU"
        if mem.fits
        else "does not fit on one GPU (the KV cache grows with the batch)"
    )
    # The two figures the step's prose names show; the rest wait in the details below.
    figures = definition_list(
        [
            (
                "Time per token, each user",
                at_best_and_expected(chosen.seconds, expected_decode_step_seconds(
                    model, hw, context_tokens=context, batch=batch, weight_format=fmt,
                    kv_format=KV_FORMAT)) + f" ({context:,}-token context)",
            ),
            ("Throughput, all users", format_tokens_per_s(chosen.tokens_per_s)),
        ]
    )
    more_figures = definition_list(
        [
            (
                "Arithmetic intensity",
                f"{format_flops_per_byte(chosen.arithmetic_intensity)} (ridge point {format_flops_per_byte(ridge)})",
            ),
            ("Speed each user sees", format_tokens_per_s(chosen.tokens_per_s_per_user)),
            ("Throughput against batch 1", f"× {chosen.tokens_per_s / single.tokens_per_s:,.1f}"),
            (
                "Maths actually done",
                f"{format_flops_per_s(chosen.flops / chosen.seconds)}, "
                f"{format_percent(chosen.flops / chosen.seconds / peak)} of the peak",
            ),
            (
                f"Memory for {batch:,} request{'s' if batch > 1 else ''} of {context:,} tokens",
                memory_text,
            ),
        ]
    )
    rows = [
        (
            f"{s.batch:,}" + (" (yours)" if s.batch == batch else ""),
            format_flops_per_byte(s.arithmetic_intensity),
            f"{s.bound}",
            format_seconds(s.seconds),
            format_tokens_per_s(s.tokens_per_s),
            format_tokens_per_s(s.tokens_per_s_per_user),
            _fits_text(memories[s.batch]),
        )
        for s in sorted({*marked, chosen}, key=lambda s: s.batch)
    ]
    rows.insert(
        0,
        (
            f"prefill, {context:,} tokens",
            format_flops_per_byte(pre.arithmetic_intensity),
            pre.bound,
            format_seconds(pre.seconds),
            format_tokens_per_s(context / pre.seconds),
            "",
            _fits_text(memories[1]),
        ),
    )
    batch_table = table(
        (
            "Batch",
            "FLOP per byte",
            "Bound",
            "Step time",
            "Tokens/s, all users",
            "Tokens/s, each user",
            f"Fits in {format_GB(hw.memory_bytes)}?",
        ),
        rows,
        caption=f"{model.name} on one {hw.name}, weights in {fmt}, {context:,} tokens of context",
    )
    notes = [
        "A hollow point (a batch too big for the GPU's memory) is drawn where it would sit if it "
        "fitted.",
        "Each point's time is the larger of bytes read / bandwidth and FLOPs / peak (raw "
        "datasheet figures, so a best case; real kernels reach about 60-80 % of each).",
        "Decode reads all the weights once per step for the whole batch, plus each request's "
        f"own KV cache ({KV_FORMAT}); so intensity grows with the batch until the KV cache "
        "reads dominate.",
        f"Prefill processes the whole {context:,}-token prompt in one pass: its FLOP per byte "
        "is roughly the prompt length.",
    ]
    if compute_format != fmt:
        notes.append(
            f"The {hw.name} has no {fmt} maths: weights are stored in {fmt} and the maths runs in "
            f"{compute_format}."
        )
    details = secondary(
        "All figures, and how points sit",
        more_figures + batch_table + tag("ul", "".join(tag("li", esc(n)) for n in notes)),
    )
    return bound + svg + figures + details


def command(values: Values) -> Command:
    """The roofline of the chosen chip with the marked batches and the slider's."""
    context = values[ROOFLINE_CONTEXT]
    return roofline_commands(values, MODEL, {
        "hardware": values[HARDWARE], "weight_format": values[FORMAT], "kv_format": KV_FORMAT,
        "context_tokens": context, "prompt_tokens": context,
        "batches": tuple(sorted({*MARKED_BATCHES, 2 ** values[BATCH_LOG2]}))})


WIDGET = Widget(
    name="roofline_chart",
    title="The roofline",
    fields=(MODEL, CONFIG, HARDWARE, FORMAT, ROOFLINE_CONTEXT, BATCH_LOG2),
    render=noting_your_model(render, MODEL),
    summary="A log-log roofline for one GPU and number format, with prefill and decode at "
    "several batch sizes on it; a batch slider shows throughput rising and time per token "
    "changing, and when decode turns compute-bound.",
    command=command,
)
