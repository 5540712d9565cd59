"""dgx-1's latency-throughput curve: its points are the load simulation's closed loops, output
per GPU rises with the requests at once up to the full batch, the ring is the reader's own
traffic, the set-up beside it is the one chosen, and the choice travels in the dgx-1 state;
the panel says what the traffic does instead of "idle"."""

from __future__ import annotations

import itertools
import json

import pytest

from engine.lesson import cluster, dgx_curve, dgx_load, dgx_view
from engine.numbers.catalog import get_hardware
from engine.numbers.catalog.server import scheduler_limits
from engine.widgets.dgx_panel import WIDGET as PANEL
from engine.widgets.dgx_traffic import WIDGET
from engine.words.format import format_percent


def deployed(weight_format: str = "bf16") -> cluster.ClusterState:
    r = cluster.deploy(cluster.new_cluster("dgx-1"), "llama-3.1-8b", (0,), weight_format,
                       8192, 16)
    assert r.accepted
    return r.state


def notch(rate: float) -> str:
    return str(cluster.TRAFFIC_RATES.index(rate))


def the_job(state: cluster.ClusterState) -> cluster.Job:
    job = dgx_load.serving_job(state)
    assert job is not None
    return job


@pytest.mark.parametrize("hardware", ["h100-sxm", "b200"])
def test_output_per_gpu_rises_with_the_batch_up_to_the_full_batch(hardware: str) -> None:
    serve = dgx_load.deployment(the_job(deployed()), get_hardware(hardware))
    cs = dgx_curve.concurrencies(serve)
    top = dgx_load.full_batch(serve)
    assert cs[0] == 1 and cs[-1] == top <= scheduler_limits(serve.hardware).max_running
    assert all(b == 2 * a for a, b in itertools.pairwise(cs[:-1]))
    points = dgx_curve.latency_curve(serve)
    assert [p.concurrency for p in points] == list(cs)
    rates = [p.output_tokens_per_s_per_gpu for p in points]
    assert rates == sorted(rates) and len(set(rates)) == len(rates)
    waits = [p.tpot_p50_seconds for p in points]
    assert waits[-1] > 5 * waits[0]  # each user pays for the batch
    # The last point is the capacity's run: the full batch keeps its KV cache whole.
    last = dgx_load.closed_loop(serve, top)
    assert last.preemptions == 0
    assert dgx_load.capacity_per_s(serve) == last.requests_per_s


def test_the_ring_is_the_readers_traffic() -> None:
    state = cluster.set_traffic(deployed(), 8.0, True, "fp8")
    job = the_job(state)
    serve = dgx_load.deployment(job, state.system.gpu)
    mark = dgx_curve.marked_point(serve, 8.0)
    run = dgx_load.under_load(serve, 8.0)
    assert (mark.output_tokens_per_s_per_gpu, mark.tpot_p50_seconds, mark.ttft_p50_seconds) == (
        run.output_tokens_per_s_per_gpu, run.tpot_seconds.p50, run.ttft_seconds.p50)
    assert mark.concurrency is None
    html = dgx_curve.curve_html(job, state.system.gpu, 8.0, "fp8", 8)
    assert html.count('data-marked="true"') == 2  # one ring a set-up
    assert "As deployed: Llama 3.1 8B, bf16" in html and "Fp8 weights: Llama 3.1 8B, fp8" in html


@pytest.mark.parametrize(("choice", "words"), [
    ("tp2", "2 × NVIDIA H100"), ("b200", "B200"), ("h200", "H200")])
def test_each_setup_beside_it(choice: str, words: str) -> None:
    state = deployed()
    other = dgx_curve.beside(the_job(state), state.system.gpu, choice, 8)
    assert not isinstance(other, str)
    assert words in dgx_curve.curve_html(the_job(state), state.system.gpu, 4.0, choice, 8)


def test_a_setup_that_cannot_be_drawn_says_why() -> None:
    state = deployed("fp8")
    html = dgx_curve.curve_html(the_job(state), state.system.gpu, 4.0, "fp8", 8)
    assert "already fp8" in html and html.count('data-marked="true"') == 1


def test_the_curve_is_one_click_away_and_kept_in_the_state() -> None:
    start = WIDGET.run(WIDGET.defaults({"state": dgx_view.dump_state(deployed()),
                                        "rate_notch": notch(8.0)}), "start")
    assert "data-curve-offer" in start.html and 'class="dgx-curve"' not in start.html
    shown = WIDGET.run(WIDGET.defaults({"state": start.set_inputs["state"],
                                        "rate_notch": notch(8.0), "curve_beside": "b200"}),
                       "curve")
    kept = dgx_view.load_state(shown.set_inputs["state"])
    assert kept.traffic == cluster.Traffic(8.0, True, "b200")
    assert 'data-curve="b200"' in shown.html and "data-curve-offer" not in shown.html
    assert json.loads(shown.set_inputs["state"])["traffic"]["curve_beside"] == "b200"
    # A reload puts the choice back in the form and draws the curve again.
    again = WIDGET.run(WIDGET.defaults({"state": shown.set_inputs["state"]}), "restore")
    assert again.set_inputs == {"rate_notch": notch(8.0), "curve_beside": "b200"}
    assert again.html == shown.html.replace(' data-frames-animate="true"', "")
    # Another choice while it shows redraws it beside that one.
    moved = WIDGET.run(WIDGET.defaults({"state": shown.set_inputs["state"],
                                        "rate_notch": notch(8.0), "curve_beside": "tp2"}))
    assert 'data-curve="tp2"' in moved.html
    # Stopped: no curve; started again, it is back.
    stopped = WIDGET.run(WIDGET.defaults({"state": moved.set_inputs["state"]}), "stop")
    assert 'class="dgx-curve"' not in stopped.html
    restarted = WIDGET.run(WIDGET.defaults({"state": stopped.set_inputs["state"],
                                            "rate_notch": notch(8.0)}), "start")
    assert 'data-curve="tp2"' in restarted.html


def test_a_foreign_setup_beside_the_curve_is_refused() -> None:
    data = json.loads(dgx_view.dump_state(deployed()))
    data["traffic"] = {"rate_per_s": 8.0, "on": True, "curve_beside": "tpu"}
    with pytest.raises(Exception) as err:
        dgx_view.load_state(json.dumps(data))
    assert getattr(err.value, "field", None) == "state"


def test_the_panel_says_what_the_traffic_does() -> None:
    state = deployed()
    idle = PANEL.run(PANEL.defaults({"state": dgx_view.dump_state(state)})).html
    assert "idle, waiting for requests" in idle and "serving, idle" in idle
    on = cluster.set_traffic(state, 8.0, True)
    html = PANEL.run(PANEL.defaults({"state": dgx_view.dump_state(on)})).html
    assert "idle" not in html and "serving job-1 (8 requests/s arriving)" in html
    busy = dgx_load.busy_shares(on)["job-1"]
    assert 0 < busy < 1
    assert f"busy {format_percent(busy)} of the time" in html
    off = cluster.set_traffic(state, 8.0, False)
    assert "idle, waiting for requests" in PANEL.run(
        PANEL.defaults({"state": dgx_view.dump_state(off)})).html
