"""The widgets of cpu-and-gpu and same-prompt-on-cpus: a server's CPUs against a GPU, and the race between them.

The engine's numbers appear, ratios are GPU side / CPU side from the catalogue, bad input
names its field, hostile text is shown as text, and the race marks its end for the clock.
"""

from __future__ import annotations

import json
import re

import pytest
from widget_text import one_drawing, render, text_of

from engine.browser import update
from engine.numbers import quantities
from engine.numbers.catalog import get_hardware, get_model, get_system
from engine.numbers.catalog.efficiency import memory_fraction
from engine.numbers.code_paths import code_path, time_on_path
from engine.numbers.compute import training_flops_per_token
from engine.numbers.errors import EngineError
from engine.numbers.expected_serving import expected_prefill_seconds
from engine.numbers.serving import prefill
from engine.registry import get_widget, widget_names
from engine.render.widget import render_page_widget
from engine.widgets import cpu_gpu_race, cpu_vs_gpu
from engine.words.format import format_flops, format_ratio, format_seconds

HOSTILE = '<script>alert("x")</script>'


def test_both_widgets_are_registered() -> None:
    assert {"cpu_vs_gpu", "cpu_gpu_race"} <= set(widget_names())
    assert get_widget("cpu_gpu_race").clock
    assert not get_widget("cpu_vs_gpu").clock


# ------------------------------------------------------------------ cpu_vs_gpu (cpu-and-gpu)


def test_the_default_is_server_against_server_dgx1s_two_cpus_against_its_eight_gpus() -> None:
    system = get_system("dgx-1")
    widget = get_widget("cpu_vs_gpu")
    defaults = widget.defaults()
    assert defaults["cpu"] == system.cpu.id
    assert int(defaults["cpus"]) == system.cpu_count
    assert defaults["gpu"] == system.gpu.id
    assert int(defaults["gpus"]) == system.gpu_count == 8
    text = text_of(render("cpu_vs_gpu"))
    assert f"its {system.cpu_count} CPUs against all of its {system.gpu_count} GPUs" in text
    assert "its 2 CPUs against one of its 8 GPUs" in text_of(render("cpu_vs_gpu", gpus="1"))


def test_the_figures_are_the_catalogues_scaled_by_the_chip_counts() -> None:
    cpu, gpu = get_hardware("xeon-8480c"), get_hardware("h100-sxm")
    metrics = {m.key: m for m in cpu_vs_gpu.compare(cpu, 2, gpu, 8)}
    assert metrics["units"].cpu_value == 2 * cpu.compute_units
    assert metrics["lanes"].gpu_value == 8 * gpu.lanes
    assert metrics["peak_matrix"].cpu_value == 2 * cpu.peak_flops_per_s("bf16")
    assert metrics["peak_vector"].cpu_value == 2 * cpu.peak_flops_per_s("fp32")
    assert metrics["peak_matrix"].gpu_value == 8 * gpu.peak_flops_per_s("bf16")
    assert metrics["bandwidth"].cpu_value == 2 * cpu.bandwidth_bytes_per_s
    assert metrics["capacity"].gpu_value == 8 * gpu.memory_bytes
    # By hand: 8 x 989.4 / (2 x 114.688) AMX bf16 = 34.5; / (2 x 7.168) AVX-512 fp32 = 552.
    assert metrics["peak_matrix"].ratio == pytest.approx(34.5, rel=1e-3)
    assert metrics["peak_vector"].ratio == pytest.approx(552.1, rel=1e-3)
    # Measured: 0.803 x 7,915 (stas00 MAMF, H100) / (0.187 x 229.4) (oneDNN #1992, AMX).
    assert metrics["reached"].ratio == pytest.approx(0.803 * 7915.2 / (0.187 * 229.376), rel=1e-3)
    assert metrics["capacity"].ratio < 1  # the CPUs hold more memory


def test_the_page_shows_every_figure_its_ratio_and_a_chart_for_each() -> None:
    html = render("cpu_vs_gpu")
    text = text_of(html)
    cpu, gpu = get_hardware("xeon-8480c"), get_hardware("h100-sxm")
    for metric in cpu_vs_gpu.compare(cpu, 2, gpu, 8):
        assert metric.cpu_text in text and metric.gpu_text in text
        assert format_ratio(metric.ratio) in text
        assert f'data-metric="{metric.key}"' in html
    assert "229.4 TFLOP/s" in text and "7,915.2 TFLOP/s" in text and "14.3 TFLOP/s" in text
    assert "AMX matrix units (bf16)" in text and "AVX-512 vector units (fp32)" in text
    assert "tensor cores (bf16, dense)" in text
    assert "614.4 GB/s" in text and "26.8 TB/s" in text
    # cores and lanes are in the table only, and the vector units' peak (a sliver beside the
    # tensor cores) is in the first chart's title: two maths charts and two memory charts
    assert one_drawing(html).count('role="img"') == 4
    assert '<svg class="chart paired-bars" data-metric="units"' not in html
    for label in re.findall(r'aria-label="([^"]*)"', html):
        assert label.strip()
    assert "NaN" not in text and "inf" not in text.lower().replace("infinity", "")


def test_the_bars_are_drawn_to_scale() -> None:
    html = render("cpu_vs_gpu")
    peak_svg = re.search(r'<svg[^>]*data-metric="peak_matrix".*?</svg>', html, re.S)
    assert peak_svg
    widths = dict(
        re.findall(r'data-side="(cpu|gpu)" x="[\d.]+" y="[\d.]+" width="([\d.]+)"', peak_svg[0])
    )
    cpu, gpu = get_hardware("xeon-8480c"), get_hardware("h100-sxm")
    expected = 2 * cpu.peak_flops_per_s("bf16") / (8 * gpu.peak_flops_per_s("bf16"))
    assert float(widths["cpu"]) / float(widths["gpu"]) == pytest.approx(expected, rel=1e-3)
    # By hand: 2 sockets x 114.7 TFLOP/s (the catalogue's AMX bf16 figure) / 8 x 989.4.
    assert float(widths["cpu"]) / float(widths["gpu"]) == pytest.approx(0.02898, rel=5e-3)


def test_the_low_confidence_cpu_peak_is_flagged_with_the_catalogues_note() -> None:
    text = text_of(render("cpu_vs_gpu"))
    assert "low-confidence" in text
    assert cpu_vs_gpu.readable(get_hardware("xeon-8480c").note) in text
    assert "56 cores × 1,024 FLOP/cycle" in text  # written for readers, not "x"
    assert "AMX" in text


def test_the_cpu_note_follows_the_chosen_cpu() -> None:
    html = render("cpu_vs_gpu", cpu="epyc-9654")
    text = text_of(html)
    epyc = get_hardware("epyc-9654")
    assert epyc.confidence == "low"
    assert 'data-chip="epyc-9654"' in html and 'data-chip="xeon-8480c"' not in html
    assert cpu_vs_gpu.readable(epyc.note) in text
    assert "AMX" not in text and "Intel" not in text
    # the note is said once, in the caution, not again in the notes list
    assert text.count(cpu_vs_gpu.readable(epyc.note)) == 1


@pytest.mark.parametrize(
    ("name", "overrides"),
    [("cpu_vs_gpu", {}), ("cpu_gpu_race", {}), ("capacity_gate", {})],
)
def test_tables_carry_no_class_so_the_theme_styles_them(
    name: str, overrides: dict[str, str]
) -> None:
    html = render(name, **overrides)
    assert "<table" in html
    assert not re.search(r"<table[^>]*class=", html)
    assert re.search(r'<div class="table-scroll [a-z0-9-]+" role="region"', html)


def test_changing_the_chips_changes_the_ratio() -> None:
    default = {
        m.key: m.ratio
        for m in cpu_vs_gpu.compare(get_hardware("xeon-8480c"), 2, get_hardware("h100-sxm"), 8)
    }
    html = render("cpu_vs_gpu", cpu="epyc-9654", gpu="b200", gpus="8")
    # The EPYC has no matrix units: its best path is its AVX-512 vector units in fp32.
    ratio = (
        8
        * get_hardware("b200").peak_flops_per_s("bf16")
        / (2 * get_hardware("epyc-9654").peak_flops_per_s("fp32"))
    )
    assert f'data-peak-ratio="{ratio:.6g}"' in html
    assert ratio != default["peak_matrix"]
    assert 'data-metric="peak_matrix"' not in html
    # Not dgx-1's chips: the verdict names the sides instead of the server.
    verdict = text_of(html.split("</p>")[0])
    assert verdict.strip().startswith("2 × AMD EPYC 9654 against 8 × NVIDIA B200")
    assert "dgx-1" not in verdict


def test_one_gpu_of_dgx1_is_named_as_such() -> None:
    assert "against one of its 8 GPUs" in text_of(render("cpu_vs_gpu", gpus="1"))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("cpu", "h100-sxm"),  # a GPU is not a CPU choice
        ("cpu", HOSTILE),
        ("gpu", "xeon-8480c"),
        ("gpu", "nope"),
        ("cpus", "0"),
        ("cpus", "1.5"),
        ("cpus", "nan"),
        ("gpus", "1e9"),
        ("gpus", ""),
    ],
)
def test_cpu_vs_gpu_refuses_bad_input_naming_the_field(field: str, value: str) -> None:
    with pytest.raises(EngineError) as caught:
        render("cpu_vs_gpu", **{field: value})
    assert caught.value.field == field


def test_hostile_text_is_refused_by_field_and_never_reaches_the_page_as_markup() -> None:
    reply = json.loads(update("cpu_vs_gpu", json.dumps({"cpu": HOSTILE, "gpus": HOSTILE})))
    assert reply["field"] in {"cpu", "gpus"}  # shown by the browser as text, next to the field
    page = render_page_widget(get_widget("cpu_vs_gpu"), "w1", {})
    assert "<script" not in page


# ------------------------------------------------------------------ cpu_gpu_race (same-prompt-on-cpus)


def race(**overrides: str) -> tuple[str, dict[str, str]]:
    """Render the race; returns its HTML and the inputs after any the engine set."""
    widget = get_widget("cpu_gpu_race")
    values = widget.defaults(overrides)
    result = widget.run(values)
    values.update(result.set_inputs)
    return result.html, values


def at(values: dict[str, str], elapsed: float) -> str:
    widget = get_widget("cpu_gpu_race")
    result = widget.run({**values, "elapsed": repr(elapsed)})
    assert not result.set_inputs  # the same race: nothing reset
    return result.html


def lane(html: str, kind: str) -> dict[str, str]:
    found = re.search(rf'<div class="race-lane race-{kind}"([^>]*)>', html)
    assert found, kind
    return dict(re.findall(r'([\w-]+)="([^"]*)"', found[1]))


def expected_prefill(tokens: int = quantities.TYPICAL_PROMPT_TOKENS, model: str = "llama-3.1-8b",
                     path: str = "matrix") -> tuple[float, float]:
    """(CPUs, GPUs) expected seconds of the race's default prefill: all eight GPUs."""
    system = get_system("dgx-1")
    cpu_pre = prefill(get_model(model), system.cpu, prompt_tokens=tokens, gpus=system.cpu_count)
    share = memory_fraction(system.cpu, "bf16").value
    cpu = time_on_path(code_path(system.cpu, path), system.cpu_count, flops=cpu_pre.flops,
                       memory_seconds=cpu_pre.memory_seconds, memory_share=share).expected_seconds
    gpu_pre = prefill(get_model(model), system.gpu, prompt_tokens=tokens, gpus=8)
    gpu = expected_prefill_seconds(get_model(model), system.gpu, gpu_pre, "bf16")[0]
    return cpu, gpu


def test_a_time_on_a_code_path_is_worked_out_from_its_peak_and_what_it_reaches() -> None:
    # dgx-1's two Xeon 8480C through AMX: 229.4 TFLOP/s on paper, 42.9 TFLOP/s reached in a
    # tuned matrix multiply (cpu_vs_gpu's chart). 229.376e12 FLOPs: 1 s at best, 5.35 s expected.
    amx = code_path(get_hardware("xeon-8480c"), "matrix")
    maths = time_on_path(amx, 2, flops=229.376e12)
    assert maths.bound_seconds == pytest.approx(1.0)
    assert maths.expected_seconds == pytest.approx(229.376 / 42.893312)
    assert maths.limit == "compute"
    # Reading the bytes takes 10 s at the datasheet bandwidth, 20 s at half of it: memory rules.
    reads = time_on_path(amx, 2, flops=229.376e12, memory_seconds=10.0, memory_share=0.5)
    assert (reads.bound_seconds, reads.expected_seconds, reads.limit) == (10.0, 20.0, "memory")


def test_the_prefill_times_are_the_engines_bound_and_expected() -> None:
    html, values = race()
    t_cpu, t_gpu = expected_prefill()
    text = text_of(html)
    assert format_seconds(t_cpu) in text and format_seconds(t_gpu) in text
    assert float(lane(html, "cpu")["data-seconds"]) == pytest.approx(t_cpu)
    assert float(lane(html, "gpu")["data-seconds"]) == pytest.approx(t_gpu)
    assert t_gpu < t_cpu
    # The bound: compute-bound, so time = FLOPs / peak of all eight GPUs.
    system = get_system("dgx-1")
    flops = prefill(get_model("llama-3.1-8b"), system.gpu, prompt_tokens=quantities.TYPICAL_PROMPT_TOKENS, gpus=8).flops
    bound = float(lane(html, "gpu")["data-bound-seconds"])
    assert bound == pytest.approx(flops / (8 * system.gpu.peak_flops_per_s("bf16")))
    assert f"{format_seconds(bound)} at best, {format_seconds(t_gpu)} expected" in text
    assert format_flops(flops) in text
    assert values["race"] == f"prefill;llama-3.1-8b;{quantities.TYPICAL_PROMPT_TOKENS};8;matrix"


def test_the_reader_chooses_the_cpu_code_path() -> None:
    amx, _ = race()
    vector, _ = race(path="vector")
    t_amx, t_vector = expected_prefill(), expected_prefill(path="vector")
    assert float(lane(amx, "cpu")["data-seconds"]) == pytest.approx(t_amx[0])
    assert float(lane(vector, "cpu")["data-seconds"]) == pytest.approx(t_vector[0])
    assert "AVX-512 vector units (fp32)" in text_of(vector)
    assert "14.3 TFLOP/s" in text_of(vector)  # 2 x 56 cores x 64 FLOP/cycle x 2.0 GHz


def test_the_training_step_is_six_n_d_over_the_peak_of_the_whole_server() -> None:
    system = get_system("dgx-1")
    model = get_model("llama-3.1-8b")
    flops = training_flops_per_token(model).model * 1048576
    t_gpu = flops / (8 * system.gpu.peak_flops_per_s("bf16"))
    t_cpu = flops / (system.cpu_count * system.cpu.peak_flops_per_s("bf16"))
    html, values = race(task="train")
    text = text_of(html)
    assert format_flops(flops) in text
    assert format_seconds(t_gpu) in text and format_seconds(t_cpu) in text
    assert float(lane(html, "gpu")["data-bound-seconds"]) == pytest.approx(t_gpu)
    # By hand: (6 x 7,504,658,432 matmul weights + causal attention, 12 x 32 x 4,096 x
    # 4,097 / 2) x 1,048,576 tokens = 48.25e9 x 1,048,576 = 5.059e16 FLOPs / (8 x 989.4e12)
    # = 6.39 s.
    assert t_gpu == pytest.approx(6.392, rel=1e-3)
    # The server trains it: its state is sharded over the eight GPUs, and fits.
    assert "sharded over the 8 GPUs" in text and "which fits" in text
    expected_cpu = float(lane(html, "cpu")["data-seconds"])
    assert values["speed"] == cpu_gpu_race.pick_speed(expected_cpu)
    # One GPU is still there to choose, and says it could not hold the training state.
    one = text_of(race(task="train", gpus="1")[0])
    assert "does not fit" in one  # 128.5 GB of state against one H100's 80 GB


def test_the_race_runs_gpu_first_and_marks_its_end() -> None:
    html, values = race()
    t_cpu, t_gpu = expected_prefill()
    assert "data-clock-done" not in html
    assert "Press Start" in text_of(html)
    middle = at(values, (t_gpu + t_cpu) / 2)
    assert lane(middle, "gpu").get("data-finished") == "true"
    assert "data-finished" not in lane(middle, "cpu")
    assert "data-clock-done" not in middle
    assert "still working" in text_of(middle)
    early = at(values, t_gpu / 2)
    assert 'value="0.5000"' in early
    end = at(values, t_cpu * 1.01)
    assert "data-clock-done" in end
    assert lane(end, "cpu").get("data-finished") == "true"
    assert "Both done" in text_of(end)


def test_the_speed_suits_the_race_and_changing_the_race_restarts_it() -> None:
    _html, values = race()
    t_cpu, _ = expected_prefill()
    real = t_cpu / float(values["speed"])
    assert 2 < real < 40  # watchable
    assert values["speed"] in {v for v, _ in cpu_gpu_race.SPEEDS}
    # Mid-race, the reader switches to a training step: it starts again from zero.
    widget = get_widget("cpu_gpu_race")
    result = widget.run({**values, "elapsed": "0.03", "task": "train"})
    assert result.set_inputs["elapsed"] == "0"
    assert float(result.set_inputs["speed"]) > float(values["speed"])
    assert "Press Start" in text_of(result.html)
    # Changing only the speed keeps the race where it is.
    kept = widget.run({**values, "elapsed": "0.03", "speed": "0.1"})
    assert not kept.set_inputs


def test_a_short_prompt_is_memory_bound_and_says_so() -> None:
    html, _ = race(prompt_tokens="1")
    assert "limited by memory bandwidth" in text_of(html)


def test_the_page_starts_with_the_race_set_up() -> None:
    page = render_page_widget(get_widget("cpu_gpu_race"), "r1", {})
    assert f'name="race" value="prefill;llama-3.1-8b;{quantities.TYPICAL_PROMPT_TOKENS};8;matrix"' in page
    assert 'data-clock="play"' in page


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("task", "decode"),
        ("path", "gpu"),
        ("gpus", "3"),
        ("model", HOSTILE),
        ("prompt_tokens", "0"),
        ("prompt_tokens", "2.5"),
        ("prompt_tokens", "1e9"),  # beyond the model's context
        ("tokens_per_step", "-5"),
        ("tokens_per_step", "inf"),
        ("speed", "0"),
        ("elapsed", "-1"),
        ("elapsed", "nan"),
    ],
)
def test_the_race_refuses_bad_input_naming_the_field(field: str, value: str) -> None:
    with pytest.raises(EngineError) as caught:
        race(**{field: value})
    assert caught.value.field == field


def test_the_race_through_the_browser_entry_point() -> None:
    reply = json.loads(update("cpu_gpu_race", json.dumps({"elapsed": "10", "race": HOSTILE})))
    assert reply["set"]["elapsed"] == "0"  # a race it did not know: started afresh
    assert "<script" not in reply["html"]
    page = render_page_widget(get_widget("cpu_gpu_race"), "r1", {"race": HOSTILE})
    assert "<script" not in page
    bad = json.loads(update("cpu_gpu_race", json.dumps({"model": HOSTILE})))
    assert bad["field"] == "model"


def test_the_working_is_kept_in_closed_details_and_the_fit_stays_in_view() -> None:
    prefill_html, _ = race()
    assert "<details" in prefill_html and "<details open" not in prefill_html
    assert '<ul class="widget-notes"></ul>' not in prefill_html
    # One details: each lane gives its two times in view; the rows that repeat them, the
    # working, both kinds of work and the notes are inside.
    assert prefill_html.count("<details") == 1
    seen, inside = prefill_html.split("<details")
    t_cpu, t_gpu = expected_prefill()
    assert format_seconds(t_cpu) in text_of(seen) and format_seconds(t_gpu) in text_of(seen)
    assert "Time on" not in seen and "Time on" in inside
    assert "At best: FLOPs at the paper peak" in text_of(inside)
    assert f"Prefill of {quantities.TYPICAL_PROMPT_TOKENS:,} prompt tokens" in text_of(inside)
    assert "sooner by" in text_of(seen)
    train_html, _ = race(task="train")
    seen = train_html.split("<details")[0]
    assert "sharded over the 8 GPUs" in text_of(seen)
    compare_html = render("cpu_vs_gpu")
    # One closed details holds the table, the sources and the caution; the charts stay in view.
    assert compare_html.count("<details") == 1 and "<details open" not in compare_html
    seen, notes = compare_html.split("<details")
    assert "All figures, sources and caveats" in notes
    assert "oneDNN issue #1992" in text_of(notes) and "<caption" in notes
    assert "low-confidence" in text_of(notes) and "low-confidence" not in text_of(seen)
    assert one_drawing(seen).count('role="img"') == 4 and "GPU / CPU = 34.5×" in text_of(seen)
