"""The shared SVG charts: memory parts keep one colour per quantity in every bar, and the
timeline's labels never meet (start, end, first-token marker)."""

from __future__ import annotations

import html as html_module
import re
from pathlib import Path

import pytest

from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.memory import serving_memory, training_memory, training_state_bytes_per_param
from engine.registry import get_widget
from engine.render.charts import memory_bar, part_class, timeline
from engine.words.labels import PARTS

CSS = "docs/css/parts.css"


def classes_by_label(html: str) -> dict[str, str]:
    """Legend label -> swatch class, and check the bar's rect uses the same class."""
    found = dict(
        (html_module.unescape(name), cls)
        for cls, name in re.findall(
            r'<span class="swatch ([^"]+)" aria-hidden="true"></span>([^:<]+):', html
        )
    )
    for cls, name in re.findall(r'<rect class="([^"]+)" [^>]*><title>([^:<]+):', html):
        assert found[html_module.unescape(name)] == cls
    return found


def test_a_part_is_coloured_by_its_id_not_its_position() -> None:
    serve = memory_bar({"weights": 1e9, "kv_cache": 2e9, "activations": 1e8}, 8e10, label="s")
    train = memory_bar(
        [("weights", 1e9), ("gradients", 1e9), ("optimizer_states", 4e9), ("activations", 1e9)],
        8e10,
        label="t",
    )
    a, b = classes_by_label(serve), classes_by_label(train)
    assert a["Activations"] == b["Activations"] == "part-activations"
    assert a["Weights"] == b["Weights"] == "part-weights"
    assert b["Optimiser states"] == "part-optimizer" != a["KV cache"]


def test_unknown_parts_fall_back_to_the_numbered_colours() -> None:
    assert part_class("something_else", 7) == "part-1"
    assert part_class("kv_cache", 0) == "part-kv-cache"
    html = memory_bar([("weights", 1e9), ("mystery_part", 1e9)], 8e10, label="x")
    assert classes_by_label(html) == {"Weights": "part-weights", "Mystery part": "part-1"}


def test_every_part_has_its_own_label_class_and_a_style() -> None:
    css = Path(CSS).read_text(encoding="utf-8")
    labels = [p.label for p in PARTS.values()]
    assert len(set(labels)) == len(labels)
    for key, p in PARTS.items():
        assert p.css_class, key
        assert f".chart .{p.css_class} {{ fill:" in css
        assert f".swatch.{p.css_class} {{ background:" in css
        assert f'[data-md-color-scheme="slate"] .chart .{p.css_class} ' in css


def test_every_memory_record_part_is_in_the_vocabulary() -> None:
    serve = serving_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"))
    train = training_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), optimizer="sgd-momentum",
                            convention="mixed-20")
    keys = set(serve.parts) | set(train.parts) | set(train.bytes_per_param)
    keys |= set(training_state_bytes_per_param("adam", "mixed-20"))
    assert keys <= set(PARTS)


def test_the_same_part_has_the_same_colour_in_every_widget() -> None:
    colours: dict[str, set[str]] = {}
    for name in ("train_vs_serve", "side_by_side", "capacity_gate", "model_size", "serve_plan"):
        widget = get_widget(name)
        for label, cls in classes_by_label(widget.run(widget.defaults()).html).items():
            colours.setdefault(label, set()).add(cls)
    assert {"Weights", "Activations", "Gradients", "Optimiser states"} <= set(colours)
    assert all(len(c) == 1 for c in colours.values()), colours


def drawings(html: str) -> list[tuple[float, str]]:
    """Each <svg> of a chart (the wide drawing, then the narrow one) with its viewBox width."""
    found = re.findall(r'<svg[^>]* viewBox="0 0 ([0-9.]+) [0-9.]+"[^>]*>.*?</svg>', html, re.S)
    svgs = re.findall(r"<svg.*?</svg>", html, re.S)
    assert len(found) == len(svgs) >= 1
    return [(float(w), svg) for w, svg in zip(found, svgs, strict=True)]


def test_a_chart_is_drawn_wide_and_again_narrow_for_a_phone() -> None:
    html = timeline([("p", "prefill", 0.0, 0.1), ("d", "decode", 0.1, 1.0)], label="t")
    assert [w for w, _ in drawings(html)] == [640, 270]
    assert 'class="chart chart-narrow timeline-narrow chart-phone"' in html


def _label_boxes(svg: str) -> list[tuple[str, float, float, float, float]]:
    boxes = []
    for attrs, text in re.findall(r"<text([^>]*)>([^<]*)</text>", svg):
        x = float(re.search(r' x="([0-9.-]+)"', attrs).group(1))  # type: ignore[union-attr]
        y = float(re.search(r' y="([0-9.-]+)"', attrs).group(1))  # type: ignore[union-attr]
        anchor = re.search(r'text-anchor="(\w+)"', attrs)
        w = len(html_module.unescape(text)) * 6.0
        x0 = {"middle": x - w / 2, "end": x - w}.get(anchor.group(1) if anchor else "", x)
        boxes.append((html_module.unescape(text), x0, y - 9, x0 + w, y + 2))
    return boxes


@pytest.mark.parametrize(
    ("phases", "scale", "marker"),
    [
        ([("p", "prefill", 0.0, 0.069), ("d", "decode", 0.069, 0.49)], 19.5, None),  # short bar
        ([("p", "prefill", 0.0, 0.0165), ("d", "decode", 0.0165, 1.44)], 0.0, 0.0165),
        ([("p", "prefill", 0.0, 4.0), ("d", "decode", 4.0, 0.1)], 0.0, 4.0),  # marker at the right
        ([("p", "prefill", 0.0, 0.001), ("d", "decode", 0.001, 0.001)], 100.0, 0.001),
    ],
)
def test_timeline_labels_do_not_meet(
    phases: list[tuple[str, str, float, float]], scale: float, marker: float | None
) -> None:
    html = timeline(
        phases,
        label="t",
        scale_seconds=scale,
        marker_seconds=marker,
        marker_label="first token 16.5 ms" if marker is not None else "",
    )
    for width, svg in drawings(html):
        _timeline_labels_apart(svg, width, marker)


def _timeline_labels_apart(svg: str, width: float, marker: float | None) -> None:
    boxes = _label_boxes(svg)
    texts = [b[0] for b in boxes]
    assert "0 s" in texts and len(boxes) == (3 if marker is not None else 2)
    assert all(x0 >= 0 and x1 <= width for _, x0, _, x1, _ in boxes), boxes
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not (a[1] < b[3] and b[1] < a[3] and a[2] < b[4] and b[2] < a[4]), (a, b)
    if marker is not None:
        line = re.search(
            r'<line class="capacity" x1="([0-9.]+)" y1="([0-9.]+)" x2="[0-9.]+" y2="([0-9.]+)"',
            svg,
        )
        assert line
        mx, ly1, ly2 = (float(v) for v in line.groups())
        for text, x0, y0, x1, y1 in boxes:
            crossed = x0 < mx < x1 and y0 < ly2 and ly1 < y1
            assert not crossed, f"{text!r} is crossed by the first-token line"
        # the marker's label is above the bar, the time axis below it
        bar_y = float(re.search(r'<rect class="track" x="4" y="([0-9.]+)"', svg).group(1))  # type: ignore[union-attr]
        label_y = {t: y1 for t, _, _, _, y1 in boxes}
        assert label_y["first token 16.5 ms"] < bar_y < label_y["0 s"]


def test_a_short_bar_keeps_its_end_label_at_its_end() -> None:
    html = timeline([("d", "decode", 0.0, 0.559)], label="t", scale_seconds=19.5)
    svg = drawings(html)[0][1]  # the wide drawing
    end = re.search(r'<text x="([0-9.]+)" y="\d+">559 ms</text>', svg)
    assert end, svg  # just past the bar's end, left-aligned, clear of "0 s"
    bar_end = 4 + 632 * 0.559 / (19.5 * 1.02)
    assert float(end.group(1)) >= bar_end


def test_memory_bar_labels_stay_on_the_chart_and_off_the_capacity_line() -> None:
    # DeepSeek-V3 on one H100: 1,344 GB against 80 GB puts the capacity line near the left
    # edge, where a label ending at it would be cut and the line would cross "used ...".
    for width, svg in drawings(memory_bar([("Weights", 1344e9)], 80e9, label="m")):
        line = re.search(r'<line class="capacity" x1="([0-9.]+)"', svg)
        assert line
        cap_x = float(line.group(1))
        assert cap_x < 60
        for text, x0, _, x1, _ in _label_boxes(svg):
            assert x0 >= 0 and x1 <= width, text
            if text.startswith("used"):
                assert not x0 < cap_x < x1, "the capacity line crosses the total"
    # With room, the capacity figure ends at its line, right-aligned.
    roomy = memory_bar([("Weights", 16e9)], 80e9, label="m")
    assert re.search(r'text-anchor="end">capacity 80 GB</text>', roomy)
