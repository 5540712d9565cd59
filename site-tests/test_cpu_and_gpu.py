"""A CPU and a GPU, compared, and the same prompt on the CPUs: the comparison follows the chips chosen, and the race plays,
the GPU finishing first, with the engine's times; with reduced motion it still advances."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Browser, Locator, Page
from support import (
    Site,
    Watched,
    open_watched,
    result,
    run_axe,
    visible_text,
    wait_for_error,
    wait_live,
    wait_matches_cpython,
    widget,
)

from engine.numbers.catalog import get_hardware

COMPARE_PAGE = "steps/cpu-and-gpu/"
RACE_PAGE = "steps/same-prompt-on-cpus/"
COMPARE = "[data-widget=cpu_vs_gpu]"
RACE = "[data-widget=cpu_gpu_race]"


def field(page: Page, name: str, label: str) -> Locator:
    return widget(page, name).get_by_label(label, exact=True)


def peak_ratio(page: Page) -> float:
    """The peak ratio the comparison states, as its data attribute holds it unrounded."""
    return float(str(page.get_attribute(COMPARE + " [data-peak-ratio]", "data-peak-ratio")))


def test_changing_the_chips_changes_the_ratio_as_the_engine_says(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(COMPARE_PAGE))
    wait_live(page)
    wait_matches_cpython(page, "cpu_vs_gpu", COMPARE)
    before = peak_ratio(page)
    xeon, h100 = get_hardware("xeon-8480c"), get_hardware("h100-sxm")
    # Server against server: eight H100s' dense bf16 peak over two Xeons' AMX bf16 peak.
    assert before == float(
        f"{8 * h100.peak_flops_per_s('bf16') / (2 * xeon.peak_flops_per_s('bf16')):.6g}"
    )
    # four charts, each drawn wide and narrow (one shown at a time)
    assert page.locator(COMPARE + ' svg.chart:not(.chart-narrow)[role="img"]').count() == 4

    field(page, "cpu_vs_gpu", "CPU").select_option("epyc-9654")
    page.wait_for_function(
        "([sel, r]) => Number(document.querySelector(sel + ' [data-peak-ratio]').dataset.peakRatio) !== r",
        arg=[COMPARE, before],
    )
    wait_matches_cpython(page, "cpu_vs_gpu", COMPARE)
    epyc = get_hardware("epyc-9654")
    # No matrix units: the EPYC's best path is its AVX-512 vector units, in fp32.
    expected = 8 * h100.peak_flops_per_s("bf16") / (2 * epyc.peak_flops_per_s("fp32"))
    assert peak_ratio(page) == float(f"{expected:.6g}")

    field(page, "cpu_vs_gpu", "GPU").select_option("b200")
    field(page, "cpu_vs_gpu", "GPUs").fill("8")
    expected = (
        8 * get_hardware("b200").peak_flops_per_s("bf16") / (2 * epyc.peak_flops_per_s("fp32"))
    )
    page.wait_for_function(
        "([sel, r]) => Number(document.querySelector(sel + ' [data-peak-ratio]').dataset.peakRatio) === r",
        arg=[COMPARE, float(f"{expected:.6g}")],
    )
    wait_matches_cpython(page, "cpu_vs_gpu", COMPARE)
    assert "8 × NVIDIA B200" in visible_text(result(widget(page, "cpu_vs_gpu")))

    # A bad count is refused next to its field; the last good result stays.
    sockets = field(page, "cpu_vs_gpu", "CPU sockets")
    sockets.fill("0")
    assert wait_for_error(sockets)
    assert sockets.get_attribute("aria-invalid") == "true"


def press_start(page: Page) -> None:
    """Press Start until the clock runs (its buttons are wired after the first live render)."""
    for _ in range(100):
        widget(page, "cpu_gpu_race").get_by_role("button", name="Start", exact=True).click()
        if page.get_attribute(RACE, "data-clock-state") == "playing":
            return
        time.sleep(0.1)
    raise AssertionError("the clock never started")


def lane_finished(page: Page, kind: str) -> bool:
    """Whether the lane (gpu or cpu) is marked finished: data attributes, the thing under test."""
    return page.locator(f"{RACE} .race-lane[data-lane={kind}][data-finished]").count() == 1


def test_in_the_race_the_gpu_finishes_first_with_the_engines_times(
    watched: Watched, root_site: Site
) -> None:
    page = watched.page
    page.goto(root_site.page_url(RACE_PAGE))
    wait_live(page)
    inputs = wait_matches_cpython(page, "cpu_gpu_race", RACE).inputs
    assert inputs["elapsed"] == "0"
    assert (inputs["gpus"], inputs["path"]) == ("8", "matrix")  # server against server
    assert not lane_finished(page, "gpu") and not lane_finished(page, "cpu")
    t_gpu = float(str(page.get_attribute(RACE + " [data-lane=gpu]", "data-seconds")))
    t_cpu = float(str(page.get_attribute(RACE + " [data-lane=cpu]", "data-seconds")))
    assert t_gpu < t_cpu

    press_start(page)
    page.wait_for_selector(RACE + " .race-lane[data-lane=gpu][data-finished]", timeout=20_000)
    assert not lane_finished(page, "cpu"), "the GPU and the CPUs finished together"
    assert page.locator(RACE + " .widget-result [data-clock-done]").count() == 0
    page.wait_for_selector(RACE + " .widget-result [data-clock-done]", timeout=40_000)
    page.wait_for_function(
        "sel => document.querySelector(sel).dataset.clockState === 'paused'", arg=RACE
    )
    assert lane_finished(page, "cpu")
    inputs = wait_matches_cpython(page, "cpu_gpu_race", RACE).inputs
    assert float(inputs["elapsed"]) >= t_cpu
    assert "Both done" in visible_text(result(widget(page, "cpu_gpu_race")))

    # A training step instead: the engine restarts the race at a speed that suits it.
    field(page, "cpu_gpu_race", "Race").select_option("train")
    page.wait_for_function(
        "sel => document.querySelector(sel + ' .widget-controls [name=race]').value.startsWith('train')",
        arg=RACE,
    )
    inputs = wait_matches_cpython(page, "cpu_gpu_race", RACE).inputs
    assert inputs["elapsed"] == "0"
    assert float(inputs["speed"]) > 1

    # The CPUs' vector units instead of their matrix units: a new race, the engine's times.
    amx = float(str(page.get_attribute(RACE + " [data-lane=cpu]", "data-seconds")))
    field(page, "cpu_gpu_race", "CPU code path").select_option("vector")
    page.wait_for_function(
        "sel => document.querySelector(sel + ' .widget-controls [name=race]').value.endsWith('vector')",
        arg=RACE,
    )
    wait_matches_cpython(page, "cpu_gpu_race", RACE)
    assert float(str(page.get_attribute(RACE + " [data-lane=cpu]", "data-seconds"))) > amx


def test_with_reduced_motion_the_race_still_advances(
    browser: Browser, root_site: Site
) -> None:
    w = open_watched(browser, reduced_motion="reduce")
    try:
        page = w.page
        page.goto(root_site.page_url(RACE_PAGE))
        wait_live(page)
        assert page.evaluate("matchMedia('(prefers-reduced-motion: reduce)').matches")
        press_start(page)
        # Once a second: the first tick starts the count, the next ones move the race on.
        page.wait_for_function(
            """sel => {
              const p = document.querySelector(sel + ' .race-lane[data-lane=gpu] progress');
              return p && Number(p.value) > 0;
            }""",
            arg=RACE,
            timeout=5_000,
        )
        page.wait_for_selector(RACE + " .race-lane[data-lane=gpu][data-finished]", timeout=20_000)
        assert not lane_finished(page, "cpu")
        page.wait_for_selector(RACE + " .widget-result [data-clock-done]", timeout=40_000)
        wait_matches_cpython(page, "cpu_gpu_race", RACE)
        assert w.console_errors == []
    finally:
        w.context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("path", [COMPARE_PAGE, RACE_PAGE])
def test_the_comparison_and_the_race_pass_axe_in_both_colour_schemes(
    browser: Browser, root_site: Site, scheme: str, path: str
) -> None:
    w = open_watched(browser, color_scheme=scheme)
    try:
        w.page.goto(root_site.page_url(path))
        wait_live(w.page)
        assert run_axe(w.page) == []
        assert w.console_errors == []
    finally:
        w.context.close()
