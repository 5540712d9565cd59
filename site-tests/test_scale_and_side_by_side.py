"""Training at scale follows the GPU count as the engine says; the side-by-side
table renders both jobs and goes live."""

from __future__ import annotations

from playwright.sync_api import expect
from support import (
    Site,
    Watched,
    hidden_in_details,
    result,
    visible_text,
    wait_for_error,
    wait_live,
    wait_matches_cpython,
    widget,
)

from engine.numbers.plan import plan
from engine.words.format import format_seconds

# The calculator's defaults, Meta's layout for the 405B (tests/engine/test_widget_training.py).
META_LAYOUT = {"sharding": "zero1", "tp": 8, "pp": 16, "interleave": 2, "seq_len": 8192,
               "global_batch_tokens": 16_777_216}


def test_training_at_scale_follows_the_gpu_count(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url("steps/training-at-scale/"))
    scale = widget(page, "training_at_scale")
    gpu_count = scale.get_by_label("GPU count", exact=True)
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
            target_days=90,
            **META_LAYOUT,
        )
        assert p.train is not None
        return p.train.seconds

    before = visible_text(result(scale))
    assert format_seconds(seconds(16384)) in before
    gpu_count.fill("4096")
    wait_matches_cpython(page, "training_at_scale")
    after = visible_text(result(scale))
    assert format_seconds(seconds(4096)) in after
    assert format_seconds(seconds(4096)) != format_seconds(seconds(16384))
    assert "beyond the 90-day target" in after

    # A count the tensor-parallel size does not divide: the engine's message, at the field.
    gpu_count.fill("1001")
    assert "multiple of the tensor-parallel size" in wait_for_error(gpu_count)


def test_training_at_scale_takes_its_pipeline_stages_from_the_address_and_the_field(
        watched: Watched, root_site: Site) -> None:
    # Meta's layout but 8 pipeline stages: each GPU holds twice the layers, and the state no
    # longer fits (95.75 GB of 84.94 GB); 8 x 3 does not divide 16,384 GPUs.
    page = watched.page
    page.goto(root_site.page_url("steps/training-at-scale/") + "?training_at_scale.pp=8")
    scale = widget(page, "training_at_scale")
    stages = scale.locator("[name=pp]")
    wait_live(page)
    expect(stages).to_have_value("8")
    wait_matches_cpython(page, "training_at_scale")
    eight = plan(model="llama-3.1-405b", hardware="h100-sxm", gpus=16384, task="train",
                 tokens=15.6e12, mfu=0.4, target_days=90, **{**META_LAYOUT, "pp": 8})
    assert not eight.memory.fits
    assert "it does not fit" in result(scale).text_content()
    stages.fill("3")
    assert "multiple of tensor parallel × pipeline stages" in wait_for_error(stages)
    stages.fill("16")
    wait_matches_cpython(page, "training_at_scale")
    assert "it fits" in result(scale).text_content()


def test_side_by_side_shows_both_jobs_before_and_after_going_live(watched: Watched, root_site: Site) -> None:
    page = watched.page
    page.goto(root_site.page_url("steps/side-by-side/"))
    selector = "[data-widget=side_by_side]"
    both = widget(page, "side_by_side")
    # Cells carry their column (train or serve) in a data attribute, the layout under test.
    # Both columns are there before the engine loads (computed at build time).
    assert page.locator(selector + " td[data-column=train]").count() == 12
    assert page.locator(selector + " td[data-column=serve]").count() == 12
    wait_live(page)
    wait_matches_cpython(page, "side_by_side")
    both.get_by_label("Requests at once", exact=True).fill("64")
    wait_matches_cpython(page, "side_by_side")
    # Four rows show as the page opens (measured, tail, scheduling, cost on one basis); the
    # work and batch rows sit in the closed rest.
    assert page.locator(selector + " .widget-result > .side-by-side td[data-column=serve]").count() == 4
    rest = hidden_in_details(result(both))
    assert "64 requests at a time" in rest and "64 requests decoded together" in rest
    # In view, only the cost row names the batch (its cost per million tokens depends on it).
    shown = visible_text(result(both))
    assert "generated, 64 requests at once" in shown and "64 requests at a time" not in shown
    assert page.locator(selector + " td[data-column=train]").count() == 12
    assert page.locator(selector + " td[data-column=serve]").count() == 12
