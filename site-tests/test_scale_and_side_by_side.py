"""Steps 6 and 10: training at scale follows the GPU count as the engine says; the side-by-side
table renders both jobs and goes live."""

from __future__ import annotations

from support import Site, Watched, wait_live, wait_matches_cpython

from engine.numbers.plan import plan
from engine.words.format import format_seconds


def test_training_at_scale_follows_the_gpu_count(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url("steps/training-at-scale/"))
    selector = "[data-widget=training_at_scale]"
    wait_live(page)
    wait_matches_cpython(page, "training_at_scale")

    def seconds(gpus: int) -> float:
        p = plan(
            model="llama-3.1-405b",
            hardware="h100-sxm",
            gpus=gpus,
            task="train",
            tokens=15.6e12,
            mfu=0.4,
            sharding="zero3",
            tp=8,
            target_days=90,
        )
        assert p.train is not None
        return p.train.seconds

    before = page.inner_text(selector + " .widget-result")
    assert format_seconds(seconds(16384)) in before
    page.fill(selector + " input[name=gpus]", "4096")
    wait_matches_cpython(page, "training_at_scale")
    after = page.inner_text(selector + " .widget-result")
    assert format_seconds(seconds(4096)) in after
    assert format_seconds(seconds(4096)) != format_seconds(seconds(16384))
    assert "beyond the 90-day target" in after

    # A count the tensor-parallel size does not divide: the engine's message, at the field.
    page.fill(selector + " input[name=gpus]", "1001")
    error = selector + " .widget-error[data-error-for=gpus]"
    page.wait_for_function("sel => document.querySelector(sel).textContent.length > 0", arg=error)
    assert "multiple of the tensor-parallel size" in page.inner_text(error)


def test_side_by_side_renders_both_columns_and_goes_live(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url("steps/side-by-side/"))
    selector = "[data-widget=side_by_side]"
    # Both columns are there before the engine loads (computed at build time).
    assert page.locator(selector + " td[data-column=train]").count() == 12
    assert page.locator(selector + " td[data-column=serve]").count() == 12
    wait_live(page)
    wait_matches_cpython(page, "side_by_side")
    page.fill(selector + " input[name=batch]", "64")
    wait_matches_cpython(page, "side_by_side")
    # Three rows show as the page opens; the work and batch rows sit in the closed rest.
    assert page.locator(selector + " .widget-result > .side-by-side td[data-column=serve]").count() == 3
    rest = str(page.text_content(selector + " .widget-result details"))
    assert "64 requests at a time" in rest and "64 requests decoded together" in rest
    # In view, only the cost row names the batch (its cost per million tokens depends on it).
    shown = page.inner_text(selector + " .widget-result")
    assert "generated, 64 requests at once" in shown and "64 requests at a time" not in shown
    assert page.locator(selector + " td[data-column=train]").count() == 12
    assert page.locator(selector + " td[data-column=serve]").count() == 12
