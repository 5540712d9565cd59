"""A simulated server at a moment (serve_snapshot): the same run as serve_load, stopped at the
step under way; its counts are the run's state at that time, its blocks add up to the pool,
and a preemption is seen as it happens."""

from __future__ import annotations

import pytest

from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.load.load_request import load_request, serve_load, serve_snapshot
from engine.numbers.load.simulate import simulate, snapshot
from engine.numbers.load.step_time import step_time_model
from engine.numbers.serve_request import serve_request


def _serve(replicas: int = 1):  # type: ignore[no-untyped-def]
    return serve_request(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), gpus=replicas,
                         serve_tp=1, batch=replicas, weight_format="bf16", kv_format="bf16",
                         context_tokens=8192, prompt_tokens=1024, output_tokens=256)


@pytest.mark.parametrize(("replicas", "keywords"), [
    (1, {"rate": 1.0, "requests": 40}),  # idle between arrivals
    (1, {"rate": 8.0, "requests": 120}),
    (1, {"rate": 64.0, "requests": 120}),  # a queue
    (2, {"concurrency": 9, "requests": 30, "length_dist": "lognormal"}),
    (1, {"rate": 16.0, "requests": 60, "spec_tokens": 3, "spec_accept": 0.7}),
    (1, {"rate": 16.0, "requests": 60, "prefix_tokens": 512}),
    (1, {"rate": 16.0, "requests": 60, "scheduling": "overlapped"}),
])
def test_a_snapshot_is_the_runs_state_at_that_moment(replicas: int,
                                                     keywords: dict[str, object]) -> None:
    serve = _serve(replicas)
    load = load_request(**keywords)  # type: ignore[arg-type]
    assert load is not None
    run = serve_load(serve, load)
    shared = 512 // run.block_tokens if "prefix_tokens" in keywords else 0
    starts = [e.start_seconds for e in run.steps[0]]
    times = [run.duration_seconds * k / 9 for k in range(10)] + starts[:: max(len(starts) // 7, 1)]
    for t in times:
        shots = [serve_snapshot(serve, load, t, replica=r) for r in range(replicas)]
        state = run.state_at(t)
        assert sum(s.computing for s in shots) == state.running
        assert sum(len(s.queued) for s in shots) == state.waiting
        assert sum(s.finished for s in shots) == state.finished
        for s in shots:
            held = sum(r.blocks for r in s.running)
            assert held + s.shared_blocks + s.free_blocks == s.kv_blocks
            assert s.shared_blocks == shared
        if any(s.running for s in shots):  # a step under way: its blocks, as the run's
            assert sum(s.kv_blocks_used for s in shots) == state.kv_blocks_used


@pytest.mark.parametrize("keywords", [
    {"rate": 16.0, "requests": 100}, {"rate": 1.0, "requests": 30},
    # Its fullest is reached in a fast-forwarded decode run that goes on without taking a
    # block: the step kept is the run's first at that count, not its last.
    {"rate": 2.0, "requests": 60},
    {"concurrency": 40, "requests": 80, "length_dist": "lognormal"},
    {"rate": 16.0, "requests": 60, "spec_tokens": 3, "spec_accept": 0.7},
    {"rate": 8.0, "requests": 60, "scheduling": "overlapped"},
])
def test_the_run_keeps_its_fullest_step_as_a_snapshot_at_it_would(
        keywords: dict[str, object]) -> None:
    serve = _serve()
    load = load_request(**keywords)  # type: ignore[arg-type]
    assert load is not None
    run = serve_load(serve, load, fullest=True)
    assert run.to_dict() == serve_load(serve, load).to_dict()  # only kept, nothing changed
    peak = max(run.steps[0], key=lambda e: e.kv_blocks_used)
    shot = serve_snapshot(serve, load, peak.start_seconds)
    assert run.fullest == shot
    assert shot.start_seconds == peak.start_seconds and shot.seconds == peak.seconds
    assert shot.kv_blocks_used / shot.kv_blocks == run.kv_cache_peak_fraction
    assert {r.phase for r in shot.running} <= {"prefill", "decode"}
    # A running request holds the blocks for its tokens and those the step computes.
    for r in shot.running:
        assert r.blocks == -(-(r.tokens + r.step_tokens) // run.block_tokens)


def test_a_preemption_is_seen_in_the_step_that_makes_it() -> None:
    # Blocks of 16 tokens, 20 in the pool; three requests of 100 tokens in and 100 out need
    # 13 blocks each at their longest: the pool runs out and the newest running request is
    # put back at the front of the queue with its blocks freed.
    step = step_time_model(get_model("llama-3.1-8b"), get_hardware("h100-sxm"),
                           weight_format="bf16", kv_format="bf16", gpus=1)
    keywords = dict(prompts=[100] * 3, outputs=[100] * 3, concurrency=3, arrivals=None,
                    replicas=1, max_running=8, max_batched_tokens=512, kv_blocks=20,
                    block_tokens=16)
    run = simulate(step, rate=None, **keywords)  # type: ignore[arg-type]
    assert run.preemptions > 0
    first = next(e for e in run.steps[0] if e.preempted)
    shot = snapshot(step, time_seconds=first.start_seconds, **keywords)  # type: ignore[arg-type]
    assert len(shot.preempted) == first.preempted and shot.queued[:1] == shot.preempted
    assert all(r.index not in shot.preempted for r in shot.running)
    assert shot.kv_blocks_used == first.kv_blocks_used
