"""The dgx_traffic widget: its figures are the CLI's serve.load for the same deployment and
rate, its verdict compares the rate with what the same simulation completes at a full batch,
and its settings travel in the dgx-1 state."""

from __future__ import annotations

import html
import io
import json
import re
from contextlib import redirect_stdout

import pytest

from engine.cli import main
from engine.lesson import cluster, dgx_load, dgx_view
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.catalog.server import scheduler_limits
from engine.numbers.errors import EngineError
from engine.numbers.memory import serving_memory
from engine.widgets.dgx_traffic import WIDGET
from engine.words.format import format_percent, format_seconds, format_tokens_per_s


def deployed() -> str:
    r = cluster.deploy(cluster.new_cluster("dgx-1"), "llama-3.1-8b", (0,), "bf16", 8192, 16)
    assert r.accepted
    return dgx_view.dump_state(r.state)


def cli_load(rate: str) -> dict[str, object]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["plan", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--gpus",
                     "1", "--task", "serve", "--rate", rate, "--requests", "200", "--batch",
                     "16", "--context", "8192", "--json"])
    assert code == 0
    load = json.loads(out.getvalue())["serve"]["load"]
    assert isinstance(load, dict)
    return load


def notch(rate: float) -> str:
    return str(cluster.TRAFFIC_RATES.index(rate))


def test_nothing_runs_before_start_and_the_default_state_is_unchanged() -> None:
    assert "traffic" not in json.loads(dgx_view.DEFAULT_STATE)
    html = WIDGET.run(WIDGET.defaults()).html
    assert "No model is serving" in html
    off = WIDGET.run(WIDGET.defaults({"state": deployed()}))
    assert "Traffic off" in off.html and "state" not in off.set_inputs


def test_start_shows_the_clis_figures_and_keeps_the_rate_in_the_state() -> None:
    out = WIDGET.run(WIDGET.defaults({"state": deployed(), "rate_notch": notch(8.0)}), "start")
    state = dgx_view.load_state(out.set_inputs["state"])
    assert state.traffic == cluster.Traffic(8.0, True)
    load = cli_load("8")
    ttft, tpot = load["ttft_seconds"], load["tpot_seconds"]
    assert isinstance(ttft, dict) and isinstance(tpot, dict)
    for words in (f"p50 {format_seconds(ttft['p50'])}, p99 {format_seconds(ttft['p99'])}",
                  f"p50 {format_seconds(tpot['p50'])}, p99 {format_seconds(tpot['p99'])}",
                  format_tokens_per_s(float(load["output_tokens_per_s"]))):  # type: ignore[arg-type]
        assert words in out.html
    # Hand-checked: 1,844 tokens/s at 8 requests/s; one H100 completes about 19 a second.
    assert "1,844 tokens/s" in out.html
    assert 'data-saturated="false"' in out.html and "Keeps up" in out.html
    assert out.html.count("data-frame=") == dgx_load.FRAMES
    assert 'data-frames-animate="true"' in out.html
    # A reload: the first render restores the slider, and plays nothing.
    again = WIDGET.run(WIDGET.defaults({"state": out.set_inputs["state"]}), "restore")
    assert again.set_inputs == {"rate_notch": notch(8.0)}
    assert "data-frames-animate" not in again.html and "1,844 tokens/s" in again.html


def test_saturated_says_what_would_keep_up() -> None:
    out = WIDGET.run(WIDGET.defaults({"state": deployed(), "rate_notch": notch(64.0)}), "start")
    assert 'data-saturated="true"' in out.html
    state = dgx_view.load_state(out.set_inputs["state"])
    job = dgx_load.serving_job(state)
    assert job is not None
    capacity = dgx_load.capacity_per_s(dgx_load.deployment(job, state.system.gpu))
    assert 18 < capacity < 20  # hand-checked: a full batch of 256 completes ~19 requests/s
    assert f"at most {capacity:,.1f} requests/s and 64 arrive" in out.html
    # 64 / 19 rounds up to 4 replicas, which keep up; fp8 and a B200 alone do not.
    assert "4 replicas" in out.html and "fp8 weights" in out.html and "B200" in out.html
    stopped = WIDGET.run(WIDGET.defaults({"state": out.set_inputs["state"]}), "stop")
    assert dgx_view.load_state(stopped.set_inputs["state"]).traffic == cluster.Traffic(64.0, False)


def test_the_slider_moved_while_running_changes_the_kept_rate() -> None:
    on = WIDGET.run(WIDGET.defaults({"state": deployed(), "rate_notch": notch(8.0)}), "start")
    moved = WIDGET.run(WIDGET.defaults({"state": on.set_inputs["state"],
                                        "rate_notch": notch(4.0)}))
    assert dgx_view.load_state(moved.set_inputs["state"]).traffic == cluster.Traffic(4.0, True)
    assert "data-frames-animate" not in moved.html


@pytest.mark.parametrize("traffic", [{"rate_per_s": 5, "on": True}, {"rate_per_s": 8},
                                     {"rate_per_s": 8, "on": 1}, "fast",
                                     {"rate_per_s": 8, "on": True, "x": 1}])
def test_a_foreign_traffic_setting_is_refused(traffic: object) -> None:
    data = json.loads(deployed())
    data["traffic"] = traffic
    with pytest.raises(EngineError) as err:
        dgx_view.load_state(json.dumps(data))
    assert err.value.field == "state"


def test_reset_forgets_the_traffic() -> None:
    state = cluster.set_traffic(dgx_view.load_state(deployed()), 8.0, True)
    assert cluster.reset(state).traffic is None
    assert dgx_view.load_state(dgx_view.dump_state(state)).traffic == cluster.Traffic(8.0, True)


def test_the_batch_picture_is_the_clis_run_at_its_fullest_step() -> None:
    out = WIDGET.run(WIDGET.defaults({"state": deployed(), "rate_notch": notch(8.0)}), "start")
    load = cli_load("8")
    blocks, block_tokens = load["kv_blocks_per_replica"], load["block_tokens"]
    assert isinstance(blocks, int) and block_tokens == 16
    used = round(float(load["kv_cache_peak_fraction"]) * blocks)  # type: ignore[arg-type]
    # The CLI's run, kept at its fullest step: the same figures as the widget's picture.
    state = dgx_view.load_state(out.set_inputs["state"])
    job = dgx_load.serving_job(state)
    assert job is not None
    run = dgx_load.under_load(dgx_load.deployment(job, dgx_load.job_gpu(state, job)), 8.0)
    shot = run.fullest
    assert shot is not None and shot.kv_blocks == blocks and shot.kv_blocks_used == used
    at = run.state_at(shot.time_seconds)
    assert (shot.computing, len(shot.queued), shot.finished) == (at.running, at.waiting,
                                                                 at.finished)
    picture = out.html[out.html.index('<details class="widget-notes dgx-batch"'):]
    assert f"{used:,} of {blocks:,} blocks of 16 tokens used" in picture
    assert f"{shot.free_blocks:,} free" in picture and f"{blocks - used:,} free" in picture
    decoding = sum(1 for r in shot.running if r.phase == "decode")
    assert (f"At that step: {at.running:,} running ({decoding:,} decoding, 0 prefilling a "
            f"chunk), {at.waiting:,} queued, {at.finished:,} finished, {shot.not_arrived:,} "
            "not yet arrived.") in picture
    # Pinned: 32 requests decoding hold 2,320 blocks, 158 done, 10 still to come. Each holds
    # 64 blocks for its 1,024-token prompt and one more for every 16 tokens of answer.
    assert (used, decoding, shot.finished, shot.not_arrived) == (2320, 32, 158, 10)
    assert all(r.blocks == 64 + (r.tokens + 1 - 1024 + 15) // 16 for r in shot.running)
    # A square a request: one path a state, as many squares in it as requests in that state.
    squares = re.findall(r'<path class="(kv-[a-z]+)" d="([^"]*)"', picture)
    counted = {css: d.count("M") for css, d in squares}
    assert counted["kv-decode"] == decoding
    assert counted["kv-finished"] == shot.finished and counted["kv-later"] == shot.not_arrived
    assert "<details open" not in out.html  # closed: the reader opens it on purpose
    # When the cache fills, from the engine: 31,592 blocks hold 394 requests of 1,024 + 256
    # tokens whole (80 blocks each for the 1,279 stored), the saturation run's batch; 200
    # requests, at any rate, never hold that many blocks.
    serve = dgx_load.deployment(job, dgx_load.job_gpu(state, job))
    assert dgx_load.whole_requests(serve) == dgx_load.full_batch(serve) == 394
    peak = dgx_load.closed_loop(serve, 394).kv_cache_peak_fraction
    assert peak > 0.95
    assert ("The blocks hold 394 requests of 1,280 tokens whole, so the cache fills only with "
            "about that many running at once, as in the saturation run behind “at most 19.9 "
            f"requests/s” ({format_percent(peak)} at its fullest); this run's 200 requests "
            "never get there, at any rate.") in html.unescape(picture)


def test_the_deployments_room_is_the_simulations_kv_cache() -> None:
    alone = cluster.deploy(cluster.new_cluster("dgx-1"), "llama-3.1-8b", (0,), "bf16", 8192, 16)
    shared = cluster.deploy(alone.state, "mistral-7b", (0,), "bf16", 8192, 16)
    tp4 = cluster.deploy(cluster.new_cluster("dgx-1"), "llama-3.1-70b", (0, 1, 2, 3), "bf16",
                         8192, 16)
    for result in (alone, shared, tp4):
        assert result.accepted
        job = dgx_load.serving_job(result.state)
        assert job is not None
        run = dgx_load.under_load(dgx_load.deployment(job, dgx_load.job_gpu(result.state, job)),
                                  8.0)
        tokens = run.kv_blocks_per_replica * run.block_tokens
        assert f"room for {tokens:,} tokens of context" in result.message
    # A second model on the GPU leaves the newest less room than the first had; vLLM reads the
    # device's whole 80 GiB, so the second server keeps an H100's defaults (8,192 tokens a
    # step, 1,024 sequences: its working space and logits as the first one's), not a small
    # GPU's.
    assert "room for 505,472 tokens" in alone.message
    assert "room for 250,784 tokens" in shared.message
    shared_gpu = shared.state.gpu_as_found((0,))
    assert shared_gpu.memory_bytes < 70 * 2**30
    assert scheduler_limits(shared_gpu) == scheduler_limits(get_hardware("h100-sxm"))
    # The CLI serves an empty GPU: the first deployment's figure.
    assert cli_load("8")["kv_blocks_per_replica"] == 505_472 // 16
    # And the plan's room (steps 14, 19, 21) is the same figure, whatever its batch.
    for batch in (1, 16):
        mem = serving_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"),
                             context_tokens=8192, batch=batch)
        assert mem.max_context_tokens_that_fit == 505_472
