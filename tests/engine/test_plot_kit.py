"""The plotting kit: shapes escape what they are given, coordinates are written one way,
scales map data to user units, labels never overlap, and every chart the widgets draw has
only SVG written by the kit (no element left open)."""

from __future__ import annotations

import re

import pytest

from engine.registry import get_widget, widget_names
from engine.render.placer import Placer, around, overlaps, text_box
from engine.render.plot import (
    PHONE_WIDTH,
    WIDTH,
    Bar,
    Frame,
    Narrow,
    Scale,
    bar_rows,
    caption_lines,
    chart,
    extra_caption_height,
    narrow_wrap,
    nice_axis_top,
    ticks,
)
from engine.render.svg import circle, line, num, polyline, rect, text

HOSTILE = "<script>alert(\"x\")</script> & 'q'"


def test_coordinates_have_at_most_two_decimals_and_no_trailing_zeros() -> None:
    assert [num(v) for v in (4, 4.0, 12.5, 3.14159, -0.001, 0.005, 1e-9)] == [
        "4", "4", "12.5", "3.14", "0", "0.01", "0",
    ]  # fmt: skip


def test_shapes_escape_text_titles_and_attributes() -> None:
    drawn = text(1, 2, HOSTILE) + rect(0, 0, 1, 1, title=HOSTILE, class_=HOSTILE)
    assert "<script>" not in drawn and "&lt;script&gt;" in drawn
    assert 'class="&lt;script&gt;alert(&quot;x&quot;)' in drawn


def test_childless_shapes_close_themselves_and_attributes_come_in_one_order() -> None:
    assert line(0, 1, 2, 3.456, class_="axis", stroke="red") == (
        '<line class="axis" x1="0" y1="1" x2="2" y2="3.46" stroke="red"/>'
    )
    assert rect(1, 2, 3, 4, class_="part-0", rx=3, data_side="cpu", title="t") == (
        '<rect class="part-0" data-side="cpu" x="1" y="2" width="3" height="4" rx="3">'
        "<title>t</title></rect>"
    )
    assert text(5, 6, "a", anchor="start") == '<text x="5" y="6">a</text>'
    assert 'text-anchor="end"' in text(5, 6, "a", anchor="end")
    assert polyline([(0, 0)]) == ""  # one point draws no line
    assert circle(1, 1, 4).endswith("/>")


def test_linear_and_log_scales() -> None:
    y = Scale(0.0, 10.0, 200.0, 20.0)  # a y-axis: the base at 200, the top at 20
    assert (y(0), y(5), y(10), y(20), y(-3)) == (200.0, 110.0, 20.0, 20.0, 200.0)
    assert Scale(0.0, 1.0, 0.0, 100.0, clamp=False)(1.5) == 150.0
    x = Scale(0.1, 1000.0, 0.0, 400.0, log=True, clamp=False)
    assert x(1.0) == pytest.approx(100.0) and x(100.0) == pytest.approx(300.0)
    assert x.decades() == pytest.approx([0.1, 1.0, 10.0, 100.0, 1000.0])
    assert Scale(3.0, 2000.0, 0, 1, log=True).decades() == pytest.approx([10.0, 100.0, 1000.0])


def test_nice_axis_tops() -> None:
    assert nice_axis_top(8.97) == (10.0, 2.5)
    assert nice_axis_top(0.0) == (1.0, 0.25)


def test_ticks_sit_under_the_x_axis_and_left_of_the_y_axis() -> None:
    f = Frame(640, 220, left=46, right=10, top=24, bottom=34)
    assert (f.plot_w, f.plot_h, f.base, f.end) == (584, 162, 186, 630)
    x = Scale(0.0, 1.0, f.left, f.end)
    drawn = ticks("x", x, [(0.5, "half")], f, grid={"class_": "grid"})
    assert drawn == (
        '<line class="grid" x1="338" y1="24" x2="338" y2="186"/>'
        '<text x="338" y="200" text-anchor="middle">half</text>'
    )
    y = Scale(0.0, 1.0, f.base, f.top)
    assert ticks("y", y, [(1.0, "top")], f) == '<text x="41" y="28" text-anchor="end">top</text>'


def test_labels_are_placed_where_they_meet_nothing_or_left_off() -> None:
    placer = Placer((0, 0, 200, 100))
    first = placer.place("label", around(50, 50, 5))
    second = placer.place("label", around(50, 50, 5))
    assert first is not None and second is not None and first != second
    assert not overlaps(
        text_box(*first[:2], "label", first[2]), text_box(*second[:2], "label", second[2])
    )
    placer.segments.append(((0, 20), (200, 20)))
    assert placer.place("crossed", [(10, 24, "start")]) is None  # the line runs through it
    assert placer.place("far too long a label for this box", [(0, 50, "start")]) is None


def test_bars_are_never_thinner_than_one_unit() -> None:
    drawn = bar_rows(
        [Bar("big", 100.0, "part-0"), Bar("tiny", 1e-9, "part-1", bold=True)],
        x=4,
        first_y=14,
        bar_h=10,
        pitch=30,
        units_per_value=6.0,
    )
    widths = re.findall(r'<rect class="part-\d" x="4" y="\d+" width="([0-9.]+)"', drawn)
    assert widths == ["600", "1"]
    assert '<text x="4" y="41" font-weight="700">tiny</text>' in drawn


def test_a_chart_is_an_image_with_its_text_alternative_in_a_named_scroll_box() -> None:
    drawn = chart("", css="demo", name="a demo", label=HOSTILE, height=50, data={"metric": "p"})
    assert drawn == (
        '<div class="chart-scroll" role="region" tabindex="0" '
        'aria-label="Chart: a demo (scrolls sideways on narrow screens)">'
        '<svg class="chart demo" data-metric="p" viewBox="0 0 640 50" role="img" '
        'aria-label="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#x27;q&#x27;">'
        "</svg></div>"
    )


@pytest.mark.parametrize("name", widget_names())
def test_every_chart_sits_in_its_scroll_box(name: str) -> None:
    """docs/css/lesson.css keeps a boxed chart at least 640 px wide (11 px text or more), a
    narrow drawing at least 320 px (270 px for class chart-phone: plot.PHONE_WIDTH), shown
    only in a pair with its wide drawing."""
    widget = get_widget(name)
    html = widget.run(widget.defaults()).html
    charts = re.findall(r'<svg class="chart ([^"]*)"[^>]*viewBox="0 0 (\d+) ', html)
    boxed = re.findall(r'<div class="chart-scroll[^"]*"[^>]*><svg class="chart ', html)
    assert len(boxed) == len(charts), name
    wide = [w for css, w in charts if not css.startswith("chart-narrow")]
    narrow = [(w, css.endswith(" chart-phone")) for css, w in charts
              if css.startswith("chart-narrow")]
    assert set(wide) <= {"640"} and set(narrow) <= {("320", False), ("270", True)}, name
    # Every chart is drawn twice (issue 28 §4): a phone sees each whole, drawn for its width.
    assert html.count('<div class="chart-pair">') == len(narrow) == len(wide), name


def test_a_narrow_drawing_is_paired_with_its_wide_one_in_two_boxes() -> None:
    drawn = chart("W", css="demo", name="a demo", label="L", height=50,
                  narrow=Narrow("N", height=80))
    assert drawn == (
        '<div class="chart-pair"><div class="chart-scroll" role="region" tabindex="0" '
        'aria-label="Chart: a demo">'
        '<svg class="chart demo" viewBox="0 0 640 50" role="img" aria-label="L">W</svg></div>'
        '<div class="chart-scroll narrow" role="region" tabindex="0" aria-label="Chart: a demo">'
        '<svg class="chart chart-narrow demo-narrow" viewBox="0 0 320 80" role="img" '
        'aria-label="L">N</svg></div></div>'
    )


SVG_ELEMENTS = {"svg", "g", "line", "polyline", "polygon", "rect", "circle", "text", "title"}


@pytest.mark.parametrize("name", widget_names())
def test_every_widget_svg_is_balanced_and_uses_the_kits_elements_only(name: str) -> None:
    widget = get_widget(name)
    html = widget.run(widget.defaults()).html
    for svg in re.findall(r"<svg.*?</svg>", html, re.S):
        opened = re.findall(r"<([a-z]+)\b[^>]*?(/?)>", svg)
        assert {element for element, _ in opened} <= SVG_ELEMENTS, name
        stack: list[str] = []
        for match in re.finditer(r"<(/?)([a-z]+)\b[^>]*?(/?)>", svg):
            closing, element, self_closed = match.groups()
            if closing:
                assert stack.pop() == element, name
            elif not self_closed:
                stack.append(element)
        assert stack == [], name


def test_a_narrow_drawing_wraps_a_long_caption_at_word_breaks_and_moves_the_bars_down() -> None:
    long = Bar("InfiniBand NDR 400 Gb/s, one ConnectX-7 per GPU (DGX H100): 50 GB/s", 1.0, "part-0")
    short = Bar("Memory: 3.35 TB/s", 2.0, "part-1")
    assert caption_lines(long.caption, None) == [long.caption]
    lines = caption_lines(long.caption, 262)
    # 6.4 units a character (placer.CHAR_W): 262 units hold 40 characters
    assert lines == ["InfiniBand NDR 400 Gb/s, one ConnectX-7", "per GPU (DGX H100): 50 GB/s"]
    assert narrow_wrap(PHONE_WIDTH, 262) == 262 and narrow_wrap(WIDTH, 632) is None
    assert extra_caption_height([long, short], 262) == 13
    drawn = bar_rows([long, short], x=4, first_y=20, bar_h=10, pitch=30, units_per_value=1,
                     wrap_w=262)
    texts = re.findall(r'<text x="4" y="([0-9.]+)">([^<]*)</text>', drawn)
    bars_y = re.findall(r'<rect class="part-[01]" x="4" y="([0-9.]+)"', drawn)
    # the first caption's two lines above its bar (moved down one line), the next bar after it
    assert texts == [("17", lines[0]), ("30", lines[1]), ("60", "Memory: 3.35 TB/s")]
    assert bars_y == ["33", "63"]
