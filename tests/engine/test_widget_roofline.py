"""The roofline chart (docs/steps/roofline.md). The engine's decode and prefill figures appear, the batch
slider moves the highlighted point as the engine says, the bound turns from memory to
compute at a large enough batch, bad input names its field, hostile text stays text."""

from __future__ import annotations

import html as html_module
import itertools
import json
import math
import re
from pathlib import Path

import pytest
import widget_text
from widget_text import text_of

from engine.browser import update
from engine.lesson.figures.decode import decode_flops_per_byte
from engine.lesson.figures.prose import ridge
from engine.numbers import roofline
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.errors import EngineError
from engine.numbers.memory import serving_memory
from engine.numbers.serving import DecodeStep, decode_step, prefill
from engine.registry import get_widget, widget_names
from engine.render.options import gpu_options, model_options
from engine.widgets.roofline_chart import MARKED_BATCHES, MAX_BATCH_LOG2
from engine.words.format import (
    format_flops_per_byte,
    format_flops_per_s,
    format_GB,
    format_seconds,
    format_tokens_per_s,
)

NAME = "roofline_chart"
HOSTILE = '<script>alert("x")</script>'


def render(**overrides: object) -> str:
    return widget_text.render(NAME, **overrides)


def figure(html: str, term: str) -> str:
    """The value shown for ``term`` in the widget's figures."""
    match = re.search(
        r"<dt>" + re.escape(html_module.escape(term, quote=True)) + r"</dt><dd>(.*?)</dd>", html
    )
    assert match, f"no figure {term!r}"
    return html_module.unescape(match.group(1))


def step(batch: int, context: int = 1024, fmt: str = "bf16") -> DecodeStep:
    return decode_step(
        get_model("llama-3.1-8b"),
        get_hardware("h100-sxm"),
        batch=batch,
        context_tokens=context,
        weight_format=fmt,
        kv_format="bf16",
    )


def test_registered_with_a_range_slider_and_the_lesson_defaults() -> None:
    assert NAME in widget_names()
    widget = get_widget(NAME)
    slider = widget.control("batch_log2")
    assert slider.kind == "range"
    assert (slider.minimum, slider.maximum, slider.step) == (0, MAX_BATCH_LOG2, "1")
    defaults = widget.defaults()
    assert defaults["model"] == "llama-3.1-8b"
    assert defaults["hardware"] == "h100-sxm"


def test_defaults_show_the_engines_single_user_decode_and_the_ridge() -> None:
    html = render()
    s = step(1)
    assert figure(html, "Time per token, each user").startswith(
        format_seconds(s.seconds) + " at best, "
    )
    assert figure(html, "Throughput, all users") == format_tokens_per_s(s.tokens_per_s)
    assert ridge("h100-sxm") in figure(html, "Arithmetic intensity")
    assert ridge("h100-sxm") == "295 FLOP/byte"  # the lesson's number
    assert 'data-bound="memory"' in html
    assert 'data-batch="1"' in html


def test_two_figures_show_and_the_rest_wait_in_one_closed_details() -> None:
    html = render()
    assert html.count("<details") == 2  # the rest of the figures, and the command
    start = html.index('<details class="widget-notes">')
    shown, shut = text_of(html[:start]), text_of(html[start:])
    for term in ("Time per token, each user", "Throughput, all users"):
        assert term in shown
    for term in ("Arithmetic intensity", "Speed each user sees", "Maths actually done",
                 "Tokens/s, each user", "Each point's time is the larger"):
        assert term not in shown and term in shut
    assert "4.52 ms at best, 6.52 ms expected" in shown  # the bound and the expected value


def test_the_chart_is_an_accessible_log_log_svg_with_ticks() -> None:
    html = render()
    # In a named, keyboard-reachable scroll box (phones scroll it rather than shrink it).
    assert re.search(
        r'<div class="chart-scroll" role="region" tabindex="0" aria-label="[^"]+"><svg', html
    )
    svg = re.search(r"<svg[^>]*>.*?</svg>", html, re.S)
    assert svg
    tag_open = svg.group(0)[: svg.group(0).index(">")]
    assert 'role="img"' in tag_open
    label = html_module.unescape(re.search(r'aria-label="([^"]*)"', tag_open).group(1))  # type: ignore[union-attr]
    assert "ridge point 295 FLOP/byte" in label
    assert "Prefill of a 1,024-token prompt" in label and "compute-bound" in label
    for b in MARKED_BATCHES:
        assert f"Decode at batch {b:,}" in label
    # decade ticks on both axes, and axis titles
    for tick in (">0.1<", ">1<", ">10<", ">100<", ">1,000<", ">10,000<"):
        assert tick in svg.group(0)
    assert ">1 TFLOP/s<" not in svg.group(0)  # the y ticks' unit is said once, in the axis title
    assert "arithmetic intensity" in svg.group(0) and "attainable TFLOP/s" in svg.group(0)
    assert svg.group(0).count('class="roof-decode') == len(MARKED_BATCHES)
    assert len(re.findall(r'<circle class="roof-current', svg.group(0))) == 1
    assert svg.group(0).count('class="roof-prefill"') == 1


def test_the_roof_bends_at_the_ridge_point() -> None:
    html = render()
    points = re.search(r'class="roof-line" points="([^"]+)"', html).group(1).split()  # type: ignore[union-attr]
    (_x0, y0), (xr, yr), (_x1, y1) = [tuple(map(float, p.split(","))) for p in points]
    assert yr == y1  # flat peak right of the ridge
    assert y0 > yr  # rising slope left of it (SVG y grows downwards)
    ridge_x = float(re.search(r'class="roof-ridge" x1="([0-9.]+)"', html).group(1))  # type: ignore[union-attr]
    assert ridge_x == xr
    # on a log axis, the ridge sits at log10(295) between the decade ticks
    decades = [float(x) for x in re.findall(r'class="roof-grid" x1="([0-9.]+)" y1="22"', html)]
    per_decade = decades[1] - decades[0]
    one = decades[1]  # the ticks run 0.1, 1, 10, ...
    assert ">0.1</text>" in html
    assert xr == pytest.approx(one + per_decade * math.log10(295.34), abs=0.2)


@pytest.mark.parametrize("power", range(0, MAX_BATCH_LOG2 + 1))
def test_the_slider_shows_the_engines_figures_for_its_batch(power: int) -> None:
    batch = 2**power
    html = render(batch_log2=power)
    s = step(batch)
    single = step(1)
    assert figure(html, "Throughput, all users") == format_tokens_per_s(s.tokens_per_s)
    assert figure(html, "Speed each user sees") == format_tokens_per_s(s.tokens_per_s_per_user)
    assert figure(html, "Time per token, each user").startswith(
        format_seconds(s.seconds) + " at best, "
    )
    assert figure(html, "Throughput against batch 1") == (
        f"× {s.tokens_per_s / single.tokens_per_s:,.1f}"
    )
    assert figure(html, "Arithmetic intensity").startswith(format_flops_per_byte(s.arithmetic_intensity))
    assert f'data-bound="{s.bound}"' in html
    assert f"Your batch, {batch:,}" in html


def test_throughput_rises_and_time_per_token_grows_with_the_batch() -> None:
    steps = [step(2**p) for p in range(MAX_BATCH_LOG2 + 1)]
    assert all(a.tokens_per_s < b.tokens_per_s for a, b in itertools.pairwise(steps))
    assert all(a.seconds <= b.seconds for a, b in itertools.pairwise(steps))


def test_the_bound_turns_compute_at_a_large_enough_batch_with_a_short_context() -> None:
    bounds = {}
    for power in range(MAX_BATCH_LOG2 + 1):
        html = render(batch_log2=power, context=128)
        bounds[power] = re.search(r'data-bound="(\w+)"', html).group(1)  # type: ignore[union-attr]
        assert bounds[power] == step(2**power, 128).bound
    assert bounds[0] == "memory" and bounds[MAX_BATCH_LOG2] == "compute"
    # once compute-bound, it stays so
    first = min(p for p, b in bounds.items() if b == "compute")
    assert all(bounds[p] == "compute" for p in range(first, MAX_BATCH_LOG2 + 1))
    assert "compute-bound" in text_of(render(batch_log2=first, context=128))
    # at the default 1,024 tokens of context the KV cache reads keep decode memory-bound
    assert 'data-bound="memory"' in render(batch_log2=MAX_BATCH_LOG2)


def test_every_point_sits_on_the_roof() -> None:
    hw = get_hardware("h100-sxm")
    for batch in (1, 32, 512, 2048):
        s = step(batch, 128)
        achieved = s.flops / s.seconds
        roof = roofline.attainable_flops_per_s(s.arithmetic_intensity, hw)
        assert achieved == pytest.approx(roof, rel=1e-9)
    pre = prefill(get_model("llama-3.1-8b"), hw, prompt_tokens=1024)
    assert f"Prefill of a 1,024-token prompt: {format_flops_per_byte(pre.arithmetic_intensity)}" in (
        html_module.unescape(render())
    )


def test_the_memory_figure_says_when_a_big_batch_no_longer_fits() -> None:
    assert "fits on one GPU" in figure(render(), "Memory for 1 request of 1,024 tokens")
    big = figure(render(batch_log2=MAX_BATCH_LOG2), "Memory for 2,048 requests of 1,024 tokens")
    assert "does not fit" in big


def test_every_gpu_format_and_model_renders_finite_numbers() -> None:
    for hw_id, _ in gpu_options():
        for fmt in ("bf16", "fp8", "int4"):
            html = render(hardware=hw_id, format=fmt, batch_log2=MAX_BATCH_LOG2)
            assert not re.search(r"\b(nan|inf|infinity)\b", html.lower())
    for model_id, _ in model_options(with_custom=False):  # the models the widget offers
        render(model=model_id, batch_log2=3)


def test_a_chip_without_the_formats_maths_says_so() -> None:
    html = render(hardware="a100-80gb", format="fp8")
    assert "no fp8 maths" in text_of(html)
    assert "maths in bf16" in html_module.unescape(html)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("batch_log2", str(MAX_BATCH_LOG2 + 1)),
        ("batch_log2", "-1"),
        ("batch_log2", "2.5"),
        ("batch_log2", "nan"),
        ("context", "0"),
        ("context", "lots"),
        ("model", "gpt-9"),
        ("hardware", "abacus"),
        ("format", "fp32"),
        ("format", HOSTILE),
    ],
)
def test_bad_input_names_its_field(field: str, value: str) -> None:
    with pytest.raises(EngineError) as error:
        render(**{field: value})
    assert error.value.field == field


def test_hostile_input_through_the_browser_entry_point_is_refused_as_data() -> None:
    for field in ("model", "hardware", "format", "context", "batch_log2"):
        reply = json.loads(update(NAME, json.dumps({field: HOSTILE})))
        assert reply["field"] == field
        assert "internal" not in reply
    reply = json.loads(update(NAME, json.dumps({"batch_log2": "5"})))
    assert "<script" not in reply["html"]


def test_number_formats() -> None:
    assert format_flops_per_s(989.4e12) == "989 TFLOP/s"
    assert format_flops_per_s(3.43e12) == "3.43 TFLOP/s"
    assert format_flops_per_s(1.979e15) == "1.98 PFLOP/s"
    assert format_flops_per_s(120e9) == "120 GFLOP/s"
    assert format_flops_per_byte(295.34) == "295 FLOP/byte"
    assert format_flops_per_byte(1032.6) == "1,033 FLOP/byte"
    assert format_flops_per_byte(26.12) == "26.1 FLOP/byte"
    assert format_flops_per_byte(1.0) == "1 FLOP/byte"


def memory(batch: int, context: int = 1024) -> tuple[bool, float, float]:
    mem = serving_memory(
        get_model("llama-3.1-8b"),
        get_hardware("h100-sxm"),
        weight_format="bf16",
        kv_format="bf16",
        context_tokens=context,
        batch=batch,
    )
    return mem.fits, mem.per_gpu_bytes, mem.capacity_bytes


def test_a_batch_that_does_not_fit_is_flagged_in_headline_chart_and_table() -> None:
    fits, needed, capacity = memory(2048)
    assert not fits
    html = render(batch_log2=MAX_BATCH_LOG2)
    headline = text_of(re.search(r'<p class="roof-bound"[^>]*>.*?</p>', html).group(0))  # type: ignore[union-attr]
    assert "does not fit" in headline
    assert format_GB(needed) in headline and format_GB(needed - capacity) in headline
    assert "to stream from memory" not in headline  # not told as if it runs
    assert 'data-fits="false"' in html
    # the chart: hollow points with the reason in their titles and in the text alternative
    svg_open = re.search(r"<svg[^>]*>", html).group(0)  # type: ignore[union-attr]
    label = html_module.unescape(re.search(r'aria-label="([^"]*)"', svg_open).group(1))  # type: ignore[union-attr]
    assert f"Your batch, 2,048: {format_flops_per_byte(step(2048).arithmetic_intensity)}" in label
    assert "does not fit (needs " + format_GB(needed) in label
    not_fitting = [b for b in MARKED_BATCHES if not memory(b)[0]]
    assert not_fitting == [512]  # at 1,024 tokens of context, 512 requests are too many
    wide = re.search(r"<svg.*?</svg>", html, re.S).group(0)  # type: ignore[union-attr]
    assert wide.count('class="roof-decode roof-nofit"') == len(not_fitting)
    assert (
        "Decode at batch 512: " in label and "does not fit" in label.split("Decode at batch 512")[1]
    )
    assert "Hollow points (batch 512, 2,048) do not fit in memory." in text_of(html)
    # the table has a fits column with the engine's verdict for every row
    assert "Fits in 84.94 GB?" in text_of(html)
    for b in (*MARKED_BATCHES, 2048):
        ok, n_bytes, _ = memory(b)
        cell = f"yes, {format_GB(n_bytes)}" if ok else f"does not fit: {format_GB(n_bytes)}"
        assert f'<td data-label="Fits in 84.94 GB?">{cell}</td>' in html


def test_a_batch_that_fits_keeps_the_streaming_headline() -> None:
    html = render(batch_log2=3)
    assert 'data-fits="true"' in html
    assert f"Batch 8: memory-bound, waiting on {format_GB(step(8).bytes_read)} of reads" in text_of(html)
    assert "roof-nofit" not in render(batch_log2=3, context=128)


def _text_boxes(svg: str) -> list[tuple[str, float, float, float, float]]:
    boxes = []
    for attrs, text in re.findall(r"<text([^>]*)>([^<]*)</text>", svg):
        x = float(re.search(r' x="([0-9.-]+)"', attrs).group(1))  # type: ignore[union-attr]
        y = float(re.search(r' y="([0-9.-]+)"', attrs).group(1))  # type: ignore[union-attr]
        anchor = re.search(r'text-anchor="(\w+)"', attrs)
        w = len(html_module.unescape(text)) * 6.0  # 11 px text
        x0 = {"middle": x - w / 2, "end": x - w}.get(anchor.group(1) if anchor else "", x)
        boxes.append((html_module.unescape(text), x0, y - 9, x0 + w, y + 2))
    return boxes


@pytest.mark.parametrize(
    ("context", "power"),
    [(128, MAX_BATCH_LOG2), (128, 9), (1024, 0), (1024, MAX_BATCH_LOG2), (100_000, 3)]
    + [(128, p) for p in range(MAX_BATCH_LOG2 + 1)],
)
@pytest.mark.parametrize(("drawing", "plot_left"), [(0, 86), (1, 40)], ids=["wide", "narrow"])
def test_chart_labels_do_not_overlap_each_other_the_points_or_the_ridge(
    context: int, power: int, drawing: int, plot_left: float
) -> None:
    html = render(context=context, batch_log2=power)
    svg = re.findall(r"<svg.*?</svg>", html, re.S)[drawing]
    base = float(
        re.search(
            r'class="roof-ridge" x1="[0-9.]+" y1="[0-9.]+" x2="[0-9.]+" y2="([0-9.]+)"', svg
        ).group(1)
    )  # type: ignore[union-attr]
    # the labels inside the plot (the axis ticks and titles sit outside it)
    boxes = [b for b in _text_boxes(svg) if b[1] >= plot_left and b[4] <= base]
    for a, b in itertools.combinations(boxes, 2):
        overlap = a[1] < b[3] and b[1] < a[3] and a[2] < b[4] and b[2] < a[4]
        assert not overlap, f"{a[0]!r} overlaps {b[0]!r}"
    ridge_x = float(re.search(r'class="roof-ridge" x1="([0-9.]+)" y1="([0-9.]+)"', svg).group(1))  # type: ignore[union-attr]
    ridge_top = float(re.search(r'class="roof-ridge" x1="[0-9.]+" y1="([0-9.]+)"', svg).group(1))  # type: ignore[union-attr]
    marks = [
        (float(x), float(y), 7.0)
        for x, y in re.findall(
            r'<circle class="roof-decode[^"]*" cx="([0-9.]+)" cy="([0-9.]+)"', svg
        )
    ]
    marks += [
        (float(x), float(y), 10.0)
        for x, y in re.findall(
            r'<circle class="roof-current[^"]*" cx="([0-9.]+)" cy="([0-9.]+)"', svg
        )
    ]
    diamond = re.search(r"rotate\(45 ([0-9.]+) ([0-9.]+)\)", svg)
    assert diamond
    marks.append((float(diamond.group(1)), float(diamond.group(2)), 7.0))
    for text, x0, y0, x1, y1 in boxes:
        assert not (x0 < ridge_x < x1 and y1 > ridge_top), f"{text!r} crosses the ridge line"
        for mx, my, r in marks:
            hit = x0 < mx + r and mx - r < x1 and y0 < my + r and my - r < y1
            assert not hit, f"{text!r} covers a point at {mx}, {my}"
    # the slider's batch is always labelled
    assert f"batch {2**power:,}" in svg


@pytest.mark.parametrize(
    ("context", "power", "hardware"),
    [(1024, 0, "h100-sxm"), (128, 9, "b200"), (100_000, 3, "h100-sxm"), (128, 11, "a100-80gb"), (1024, 4, "l4"), (1024, 0, "t4")],
)
def test_a_phone_gets_its_own_drawing_with_every_label_inside_320_units(
    context: int, power: int, hardware: str
) -> None:
    html = render(context=context, batch_log2=power, hardware=hardware)
    narrow = re.findall(r"<svg.*?</svg>", html, re.S)[1]
    assert '<svg class="chart chart-narrow roofline-narrow"' in narrow
    assert 'viewBox="0 0 320 300"' in narrow
    # the roof, the ridge and its figure are drawn; every text lies inside the viewBox
    assert 'class="roof-line"' in narrow and 'class="roof-ridge"' in narrow
    assert ">ridge " in narrow
    for text, x0, _, x1, _ in _text_boxes(narrow):
        assert x0 >= 0 and x1 <= 320, text
    # fewer decade labels than the wide drawing when the axis spans more than four
    wide = re.findall(r"<svg.*?</svg>", html, re.S)[0]
    assert len(re.findall(r'y="268" text-anchor="middle">[0-9.kMB]+</text>', narrow)) <= 4
    assert len(re.findall(r'y="288" text-anchor="middle">[0-9.,]+</text>', wide)) >= 4


def test_the_prose_batch_1_intensity_names_its_case_beside_the_charts() -> None:
    # Step roofline's prose quotes decode at batch 1 with no context; the chart beside it
    # starts at its own context, whose KV reads and attention give another figure. The
    # prose says which case it is, so the two never read as two figures for one case.
    page = (Path(__file__).parents[2] / "docs" / "steps" / "roofline.md").read_text()
    sentence = page.split('{{ figure("decode_flops_per_byte") }}', 1)[1].split(". ", 1)[0]
    assert "no context" in sentence
    m, hw = get_model("llama-3.1-8b"), get_hardware("h100-sxm")
    assert decode_flops_per_byte() == format_flops_per_byte(
        decode_step(m, hw, batch=1, context_tokens=0).arithmetic_intensity)
