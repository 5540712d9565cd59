"""dgx-1's latency-throughput curve: the deployment's output tokens/s per GPU against each
user's time per output token (p50), as more requests run at once, with the reader's traffic
marked on it and a second set-up drawn beside it.

Each point is :func:`engine.lesson.dgx_load.closed_loop`: one replica kept at C requests at
once, 2C requests in all, C = 1, 2, 4, ... and last the most its KV cache holds whole
(:func:`~engine.lesson.dgx_load.full_batch`), the run that also measures the set-up's
capacity. A bigger batch shares each weight read among more requests, so output per GPU
rises; but each request still reads its own KV cache every step, and joining prompts
interrupt the decodes, so every user waits longer for each token. The marked point is the
reader's own traffic (:func:`~engine.lesson.dgx_load.under_load`, an open loop at a rate).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.lesson import cluster
from engine.lesson.dgx_load import closed_loop, deployment, full_batch, under_load
from engine.numbers.architecture import check_tensor_parallel
from engine.numbers.catalog import HardwareSpec, get_hardware
from engine.numbers.catalog.server import scheduler_limits
from engine.numbers.errors import EngineError
from engine.numbers.formats import FORMATS
from engine.numbers.load.results import LoadResult
from engine.numbers.records import Record
from engine.numbers.serve_request import ServeRequest
from engine.render.html import esc, tag
from engine.render.plot import Frame, Scale, axes, chart, legend, nice_axis_top, ticks
from engine.render.svg import circle, polyline, text
from engine.words.format import format_seconds, format_tokens_per_s

# The choices of cluster.CURVE_BESIDE as a reader reads them.
BESIDE_LABELS = {"fp8": "fp8 weights", "tp2": "tensor parallel over twice the GPUs",
                 "b200": "on a B200", "h200": "on an H200"}
# Narrow enough for a 390 px phone to show it whole at 11 px text (docs/css/dgx.css).
WIDTH = 320
HEIGHT = 220
STYLES = ("lt-deployed", "lt-beside")


@dataclass(frozen=True, slots=True)
class CurvePoint(Record):
    """One run on the curve: ``concurrency`` requests kept at once (None: the reader's
    traffic at a rate), its output tokens/s per GPU, and its p50 time per output token and
    to first token (s)."""

    concurrency: int | None
    output_tokens_per_s_per_gpu: float
    tpot_p50_seconds: float
    ttft_p50_seconds: float


def point_of(r: LoadResult) -> CurvePoint:
    return CurvePoint(r.concurrency, r.output_tokens_per_s_per_gpu, r.tpot_seconds.p50,
                      r.ttft_seconds.p50)


def concurrencies(serve: ServeRequest) -> tuple[int, ...]:
    """1, 2, 4, ... below the full batch, then the full batch itself."""
    top = full_batch(serve)
    out = []
    c = 1
    while c < top:
        out.append(c)
        c *= 2
    return (*out, top)


def latency_curve(serve: ServeRequest) -> tuple[CurvePoint, ...]:
    """The curve's points, one closed loop at each of :func:`concurrencies`."""
    return tuple(point_of(closed_loop(serve, c)) for c in concurrencies(serve))


def marked_point(serve: ServeRequest, rate: float) -> CurvePoint:
    """The reader's traffic at ``rate`` requests/s on ``serve``, as a point of the curve."""
    return point_of(under_load(serve, rate))


def beside(job: cluster.Job, hardware: HardwareSpec, choice: str,
           gpu_count: int) -> ServeRequest | str:
    """The set-up ``choice`` (one of cluster.CURVE_BESIDE) as a serving request, or the
    sentence saying why it cannot be drawn beside ``job``."""
    tp = len(job.gpus)
    if choice == "fp8":
        if FORMATS[job.weight_format].bytes_per_number <= FORMATS["fp8"].bytes_per_number:
            return f"Its weights are already {job.weight_format}: nothing to draw beside it."
        return deployment(job, hardware, weight_format="fp8")
    if choice == "tp2":
        if 2 * tp > gpu_count:
            return f"Tensor parallel over {2 * tp} GPUs needs more than dgx-1's {gpu_count}."
        try:
            check_tensor_parallel(cluster.model_named(job.model_id), 2 * tp, "tp")
        except EngineError as error:
            return error.message
        return deployment(job, hardware, tp=2 * tp)
    other = get_hardware(choice)
    if other.id == hardware.id:
        return f"It already runs on the {other.name}."
    return deployment(job, other)


def _label(serve: ServeRequest, what: str) -> str:
    return (f"{what}: {serve.model.name}, {serve.weight_format}, {serve.tp} × "
            f"{serve.hardware.name}")


def milliseconds(seconds: float) -> str:
    """A time per token as the curve says it: '74 ms', '6.74 ms'."""
    return f"{seconds * 1e3:,.0f} ms" if seconds >= 0.01 else format_seconds(seconds)


def _svg(lines: list[tuple[str, str, tuple[CurvePoint, ...], CurvePoint]]) -> str:
    """The lines (name, style, points, the reader's traffic on that set-up) on shared
    linear axes from zero; the text alternative gives every point."""
    f = Frame(WIDTH, HEIGHT, left=44, right=10, top=22, bottom=34)
    every = [p for _, _, pts, mark in lines for p in (*pts, mark)]
    x_top, x_step = nice_axis_top(max(p.tpot_p50_seconds for p in every) * 1e3)
    y_top, y_step = nice_axis_top(max(p.output_tokens_per_s_per_gpu for p in every))
    xs = Scale(0.0, x_top, f.left, f.end)
    ys = Scale(0.0, y_top, f.base, f.top)
    x_marks = [(k * x_step, f"{k * x_step:g}") for k in range(round(x_top / x_step) + 1)]
    y_marks = [(k * y_step, f"{k * y_step:,.0f}") for k in range(round(y_top / y_step) + 1)]
    grid = {"class_": "roof-grid", "stroke_width": 0.5}
    shapes = [axes(f), ticks("x", xs, x_marks, f, grid=grid), ticks("y", ys, y_marks, f, grid=grid)]
    words = []
    for name, style, pts, mark in lines:
        px = [(xs(p.tpot_p50_seconds * 1e3), ys(p.output_tokens_per_s_per_gpu)) for p in pts]
        shapes.append(polyline(px, class_=f"line {style}", fill="none", stroke="currentColor",
                               stroke_width=2.5))
        shapes += [circle(x, y, 2.5, class_=f"dot {style}", fill="currentColor") for x, y in px]
        shapes.append(circle(xs(mark.tpot_p50_seconds * 1e3),
                             ys(mark.output_tokens_per_s_per_gpu), 6, class_=f"mark {style}",
                             fill="none", stroke="currentColor", stroke_width=2.5,
                             data_marked="true"))
        words.append(f"{name}: " + "; ".join(
            f"{p.concurrency:,} at once, {format_tokens_per_s(p.output_tokens_per_s_per_gpu)} "
            f"per GPU at {milliseconds(p.tpot_p50_seconds)} a token" for p in pts)
            + f"; your traffic, {format_tokens_per_s(mark.output_tokens_per_s_per_gpu)} at "
            f"{milliseconds(mark.tpot_p50_seconds)}")
    shapes.append(text(f.left + f.plot_w / 2, HEIGHT - 4, "Time per output token, p50 (ms)",
                       anchor="middle"))
    shapes.append(text(4, 12, "Output tokens/s per GPU"))
    return chart("".join(shapes), css="lt-curve", name="throughput against latency",
                 label="Output per GPU against time per output token. " + ". ".join(words)
                 + ".", width=WIDTH, height=HEIGHT)


def curve_html(job: cluster.Job, hardware: HardwareSpec, rate: float, choice: str,
               gpu_count: int) -> str:
    """The curve of ``job``'s deployment and of the set-up ``choice`` beside it, each with
    the reader's ``rate`` marked, a legend and the words that read it."""
    mine = deployment(job, hardware)
    other = beside(job, hardware, choice, gpu_count)
    lines = [(_label(mine, "As deployed"), STYLES[0], latency_curve(mine),
              marked_point(mine, rate))]
    if isinstance(other, ServeRequest):
        label = BESIDE_LABELS[choice]
        lines.append((_label(other, label[0].upper() + label[1:]), STYLES[1],
                      latency_curve(other), marked_point(other, rate)))
    first, last = lines[0][2][0], lines[0][2][-1]
    gain = last.output_tokens_per_s_per_gpu / first.output_tokens_per_s_per_gpu
    limit = ("vLLM's limit on running requests"
             if last.concurrency == scheduler_limits(hardware).max_running
             else "all its KV cache holds whole")
    reading = (f"From 1 request at a time to {last.concurrency:,} ({limit}), output per GPU "
               f"grows {gain:,.0f}-fold, from "
               f"{format_tokens_per_s(first.output_tokens_per_s_per_gpu)} to "
               f"{format_tokens_per_s(last.output_tokens_per_s_per_gpu)}, and each user's time "
               f"per token from {milliseconds(first.tpot_p50_seconds)} to {milliseconds(last.tpot_p50_seconds)}"
               f" (first token, p50: {milliseconds(first.ttft_p50_seconds)} to "
               f"{milliseconds(last.ttft_p50_seconds)}). Dots: 1, 2, 4, … requests at once, twice as "
               f"many in all; rings: your {rate:g} requests/s.")
    out = tag("p", esc("Latency against throughput"), class_="dgx-curve-title")
    out += _svg(lines) + legend([(style, name) for name, style, _, _ in lines])
    out += tag("p", esc(reading), class_="dgx-curve-reading")
    if isinstance(other, str):
        out += tag("p", esc(other), class_="dgx-curve-none")
    return tag("div", out, class_="dgx-curve", data_curve=choice)
