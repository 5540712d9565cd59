"""The worked problems that end each section: their numbers come from the engine's figures,
the story each solution tells holds at those numbers, and the drills' feedback links to the
problem on its page."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from engine.browser import update
from engine.lesson import dgx_load
from engine.lesson.figures.prose import get_figure
from engine.numbers.catalog import get_hardware, resolve_model
from engine.numbers.memory import kv_cache_bytes, kv_cache_bytes_per_token
from engine.numbers.serve_request import serve_request

ROOT = Path(__file__).resolve().parents[2]
WORKED = '<details class="worked-problem" id="worked-problem" markdown>'
SECTION_RE = re.compile(r'^  - "\d+\. [^"]+":\n((?:      - .*\n)+)', re.MULTILINE)
PAGE_RE = re.compile(r"(steps/[\w-]+)\.md")


def _sections_last_steps() -> list[str]:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    last = []
    for block in SECTION_RE.findall(nav):
        pages = PAGE_RE.findall(block)
        last.append(pages[-1])
    return last


def test_each_of_the_seven_sections_ends_with_one_closed_worked_problem() -> None:
    last = _sections_last_steps()
    assert len(last) == 7
    for page in last:
        text = (ROOT / "docs" / f"{page}.md").read_text(encoding="utf-8")
        assert text.count(WORKED) == 1, page
        body = text.split(WORKED, 1)[1].split("</details>", 1)[0]
        assert "<summary>Worked problem: " in body, page
        # The solution's numbers are the engine's: every step of it names a figure.
        steps = re.findall(r"^\d\. .*?(?=^\d\. |\Z)", body.split("</summary>", 1)[1],
                           re.MULTILINE | re.DOTALL)
        assert len(steps) >= 3, page
        assert sum('figure("' in s for s in steps) >= len(steps) - 1, page


def test_a_matmul_with_a_layers_weights_does_about_the_batch_in_flops_per_byte() -> None:
    shape = get_figure("layer_matrix_shape")("llama-3.1-8b")
    assert shape == "4,096 × 14,336"
    at = {b: get_figure("layer_matmul_intensity")("llama-3.1-8b", batch=b) for b in (1, 8, 512)}
    assert at[1] == "1 FLOP/byte" and at[8].startswith("7.9")
    # At 512 the batch is no longer small beside the widths: fewer FLOPs per byte than B.
    assert float(at[512].split()[0]) < 512


def test_a_requests_kv_cache_is_the_per_token_figure_times_its_context() -> None:
    m = resolve_model(model_id="llama-3.1-70b")
    assert kv_cache_bytes(m, 32768) == kv_cache_bytes_per_token(m) * 32768
    assert get_figure("kv_per_request")("llama-3.1-70b", context=32768) == "10.74 GB"


def test_the_replica_count_is_at_least_what_keeps_up_and_meets_the_target() -> None:
    keep_up = int(get_figure("replicas_from_capacity")("llama-3.1-8b", rate=50))
    needed = int(get_figure("replicas_needed")("llama-3.1-8b", rate=50, ttft_s=0.05))
    # The page's story: capacity is the floor, the latency target asks for more.
    assert needed > keep_up
    over = get_figure("replicas_ttft")("llama-3.1-8b", rate=50)
    within = get_figure("replicas_ttft")("llama-3.1-8b", rate=50, ttft_s=0.05)
    assert over.endswith(" ms") and float(over.split()[0]) > 50
    assert within.endswith(" ms") and float(within.split()[0]) <= 50


def test_one_replicas_capacity_is_dgx_1s_saturation_rate() -> None:
    # Step 19's capacity is the figure step 8's traffic verdict says: the same closed loop,
    # as many requests at once as the H100's 31,592 KV blocks hold whole (80 blocks each
    # for 1,024 + 255 stored tokens: 394), twice that many in all.
    model, hardware = resolve_model(model_id="llama-3.1-8b"), get_hardware("h100-sxm")
    serve = serve_request(model, hardware, gpus=1, serve_tp=1, batch=1, weight_format="bf16",
                          kv_format="bf16", context_tokens=1280, prompt_tokens=1024,
                          output_tokens=256)
    assert dgx_load.full_batch(serve) == 394
    capacity = dgx_load.capacity_per_s(serve)
    assert get_figure("replica_capacity")("llama-3.1-8b") == f"{capacity:,.1f} requests/s"
    assert get_figure("replica_capacity")("llama-3.1-8b") == "19.9 requests/s"


def test_a_measured_runs_days_follow_from_its_own_mfu_and_gpus() -> None:
    days = get_figure("measured_run_days")("llama3-405b-16k-gpus-mfu")
    assert days.endswith(" days") and 60 < float(days.split()[0]) < 80
    assert get_figure("measured_run_gpus")("llama3-405b-16k-gpus-mfu") == "16,384"


def test_the_drills_feedback_links_to_the_worked_problem_on_its_page() -> None:
    for name, page in (("drill_training_memory", "drill-training-memory"),
                       ("drill_will_it_fit", "drill-will-it-fit"),
                       ("drill_speed", "drill-will-it-fit")):
        text = (ROOT / "docs" / "steps" / f"{page}.md").read_text(encoding="utf-8")
        assert f'widget("{name}")' in text and WORKED in text
        out = json.loads(update(name, json.dumps(
            {"seed": "7", "answer": "1", "fits": "yes", "limit": "memory", "action": "check"})))
        assert 'href="#worked-problem"' in out["html"], (name, out)
        # The link names the problem it leads to (its summary's title on that page), and
        # claims no more than that it works one of the section's sums.
        title = re.search(r"<summary>Worked problem: ([^<]+)</summary>", text)
        assert title is not None, page
        link = re.search(r'href="#worked-problem">The worked problem below</a>([^<]+)<',
                         out["html"])
        assert link is not None, (name, out)
        assert html.unescape(link.group(1)) == (
            f", {title.group(1)}, works one of this section's sums step by step.")
        assert "solves one such question" not in out["html"]


def test_the_prompt_on_the_cpus_counts_the_weights_a_token_multiplies_and_says_so() -> None:
    # Llama 3.1 8B: 8,030,261,248 parameters less the input embedding (128,256 x 4,096 =
    # 525,336,576, looked up) and the 65 norm vectors of 4,096 (counted as 0 FLOPs) leaves
    # 7,504,658,432 multiplied weights: 2 x that x 2,000 tokens = 3.0019 x 10^13 FLOPs, not
    # 2 x 8.03 billion x 2,000 = 3.21 x 10^13.
    assert get_figure("tokens_flops")("llama-3.1-8b", tokens=2000) == "3.00 × 10^13 FLOPs"
    text = (ROOT / "docs" / "steps" / "same-prompt-on-cpus.md").read_text(encoding="utf-8")
    flops_step = text.split("1. **FLOPs:**", 1)[1].split("2. **", 1)[0]
    assert "but the input embedding" in flops_step
