"""The authoring macros: widget, figure and table render from the engine, and a bad line
fails the build with the page and the engine's message."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.lesson.figures.network import hop_bandwidth
from engine.numbers.catalog import get_hardware
from engine.words.format import format_bandwidth
from macros import authoring

ROOT = Path(__file__).resolve().parent.parent


def test_widget_html_has_the_testability_contract() -> None:
    html = authoring.widget_html("serve_plan", "page-a", {"model": "llama-3.1-70b"})
    assert '<div class="widget"' in html and 'data-widget="serve_plan"' in html
    assert 'data-state="static"' in html
    assert "<output" in html and "<label for=" in html
    assert "141.1 GB" in html  # 70B weights in bf16, computed at build time


def test_widget_ids_are_unique_within_a_page() -> None:
    authoring.reset_page_counter("page-b")
    first = authoring.widget_html("model_size", "page-b", {})
    second = authoring.widget_html("model_size", "page-b", {})
    assert 'id="w-model-size-1"' in first and 'id="w-model-size-2"' in second


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: authoring.widget_html("nope", "p", {}), "Unknown widget 'nope'"),
        (lambda: authoring.widget_html("serve_plan", "p", {"gpu": "x"}), "has no input 'gpu'"),
        (lambda: authoring.widget_html("serve_plan", "p", {"model": "gpt-9"}), "Unknown model"),
        (lambda: authoring.widget_html("serve_plan", "p", {"context": "-1"}), "Context"),
        (lambda: authoring.figure_text("nope", {}), "Unknown figure 'nope'"),
        (lambda: authoring.figure_text("weights", {"modle": "x"}), "unexpected keyword"),
        (lambda: authoring.table_html("nope", {}), "Unknown table 'nope'"),
    ],
)
def test_bad_macro_calls_raise_a_clear_authoring_error(call: object, message: str) -> None:
    with pytest.raises(authoring.AuthoringError, match=message):
        call()  # type: ignore[operator]


def test_figures_match_the_lesson() -> None:
    assert authoring.figure_text("weights", {"model": "llama-3.1-8b"}) == "16.06 GB"
    assert authoring.figure_text("params_exact", {"model": "llama-3.1-8b"}) == "8,030,261,248"
    # An "80 GB" H100: 79.11 GiB a program can allocate (vllm-project/vllm #27508).
    assert authoring.figure_text("capacity", {"hardware": "h100-sxm"}) == "84.94 GB"
    assert authoring.figure_text("capacity_GiB", {"hardware": "h100-sxm"}) == "79.11 GiB"
    # The name's 80 GB are GiB: 80 x 2^30 = 85,899,345,920 bytes (docs/steps/capacity.md).
    assert authoring.figure_text("capacity_name", {"hardware": "h100-sxm"}) == "80 GB"
    assert authoring.figure_text("capacity_name_bytes", {"hardware": "h100-sxm"}) == "85.9 GB"
    approx = {"model": "llama-3.1-8b", "hardware": "h100-sxm", "approx": True}
    assert authoring.figure_text("serve_total", approx) == "19 GB"
    # The prose of training-at-scale and compute: "one H100 at 40 %", "35-55 % is good"
    assert authoring.figure_text("mfu_assumed", {}) == "40 %"
    assert authoring.figure_text("mfu_good_band", {}) == "35 to 55 %"
    # AWQ paper (Lin et al., MLSys 2024), Table 4: Llama 2 7B at INT4 g128, 5.60 vs 5.47 FP16.
    quality = authoring.figure_text("format_quality", {"format": "awq-int4"})
    assert "5.60 against 5.47" in quality and "Table 4" in quality


def test_a_bad_widget_line_fails_the_build_with_its_message(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (tmp_path / "macros").symlink_to(ROOT / "macros")  # the plugin looks beside mkdocs.yml
    (docs / "index.md").write_text('# Page\n\n{{ widget("serve_plan", gpu="h100") }}\n')
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\n"
        "plugins:\n"
        "  - macros:\n"
        "      module_name: macros\n"
        "      on_undefined: strict\n"
        "      on_error_fail: true\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"}
    completed = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode != 0
    output = completed.stdout + completed.stderr
    assert "Widget 'serve_plan' has no input 'gpu'" in output


def test_steps_are_numbered_by_the_navigation_order_alone() -> None:
    nav = [
        ("index.md", ""),
        ("steps/b.md", "steps/b/"),
        ("glossary.md", "glossary/"),
        ("steps/a.md", "steps/a/"),
    ]
    steps = authoring.number_steps(nav)
    assert steps == ("steps/b/", "steps/a/")
    header = authoring.step_header({}, "steps/a/", "Some words here.", steps)
    assert 'data-step="2"' in header
    built, minutes = authoring.finish_step_header(f"<article>{header}<p>Some words here.</p></article>")
    assert "Step 2 of 2 · about 1 minute (3 words)" in built
    assert minutes == 3 / 238
    assert authoring.step_title(2, "Serve the model") == "Step 2 · Serve the model"
    with pytest.raises(authoring.AuthoringError, match="step page"):
        authoring.step_header({}, "glossary/", "Words.", steps)


def test_the_glossarys_nvlink_says_both_directions_and_each_way_as_the_catalogue() -> None:
    # The glossary is plain text (tooltips on every page): its NVLink figures must be the
    # catalogue's, the datasheet's both-ways total beside the per-direction hop the pages use.
    glossary = (Path(__file__).parents[1] / "includes" / "glossary.md").read_text()
    line = next(x for x in glossary.splitlines() if x.startswith("*[NVLink]: "))
    both_ways = format_bandwidth(get_hardware("h100-sxm").interconnect_bytes_per_s)
    each_way = hop_bandwidth("h100-sxm", "scale_up")
    assert f"{both_ways} per H100" in line and "both directions" in line
    assert f"{each_way} each way" in line
