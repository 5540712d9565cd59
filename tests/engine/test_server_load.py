"""The simulated server under load: its scheduler worked by hand, its one-request case
against the engine's expected figures, and properties over random loads."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.errors import EngineError
from engine.numbers.expected_serving import expected_serve
from engine.numbers.load.load_request import load_request, serve_load
from engine.numbers.load.results import counted_percentiles, percentiles
from engine.numbers.load.scheduler import Scheduler, Sequence
from engine.numbers.load.step_time import PrefillChunk, step_time_model
from engine.numbers.serve_request import serve_request
from engine.numbers.serving import decode_seconds, prefill


def _work(sched: Scheduler) -> list[tuple[int, int]]:
    """(request index, tokens) of the next step, which is then completed at time 0."""
    step = sched.schedule()
    sched.complete(step, 0.0)
    return [(s.index, n) for s, n in step.work]


def test_two_requests_share_a_token_budget() -> None:
    # Budget 10. A (prompt 6, 3 out) is admitted with 6 tokens, leaving 4 of B's 8 for this
    # step; A's prefill emits its first token, B's half prefill none. Step 2: A decodes (1),
    # B prefills its last 4 and emits its first token. Step 3: both decode; A reaches 3
    # tokens, B 2: both finish.
    sched = Scheduler(max_running=8, max_batched_tokens=10, blocks=100, block_tokens=16)
    a, b = Sequence(0, 6, 3, 0.0), Sequence(1, 8, 2, 0.0)
    sched.add(a)
    sched.add(b)
    assert _work(sched) == [(0, 6), (1, 4)]
    assert (a.generated, b.generated) == (1, 0)
    assert _work(sched) == [(0, 1), (1, 4)]
    assert (a.generated, b.generated) == (2, 1)
    assert _work(sched) == [(0, 1), (1, 1)]
    assert (a.generated, b.generated) == (3, 2)
    assert sched.running == [] and sched.free_blocks == 100


def test_the_newest_request_is_preempted_and_recomputed() -> None:
    # Blocks of 4 tokens, 3 in the pool. A and B (prompt 4, 4 out) take one block each for
    # their prompts (1 left) and emit their first tokens. Step 2: A's decode needs a second
    # block (its 5th token): the last one. B's then needs one too: none left, so the newest
    # running request, B itself, is preempted (its block freed: 1 free) and nothing is
    # admitted this step. Step 3: A decodes within its 2 blocks; B, queued with 5 tokens to
    # recompute (prompt 4 + 1 produced), needs 2 blocks, only 1 free: it waits. Step 4: A
    # emits its 4th token and finishes (3 free). Step 5: B recomputes its 5 tokens in one
    # chunk and samples its 2nd token; steps 6 and 7 are its decodes.
    sched = Scheduler(max_running=8, max_batched_tokens=100, blocks=3, block_tokens=4)
    a, b = Sequence(0, 4, 4, 0.0), Sequence(1, 4, 4, 0.0)
    sched.add(a)
    sched.add(b)
    assert _work(sched) == [(0, 4), (1, 4)]
    step = sched.schedule()
    assert [(s.index, n) for s, n in step.work] == [(0, 1)] and step.preempted == 1
    sched.complete(step, 0.0)
    assert (b.computed, b.blocks, b.preemptions, sched.free_blocks) == (0, 0, 1, 1)
    assert _work(sched) == [(0, 1)]
    assert _work(sched) == [(0, 1)]
    assert a.generated == 4 and sched.free_blocks == 3
    assert _work(sched) == [(1, 5)]
    assert b.generated == 2
    assert _work(sched) == [(1, 1)]
    assert _work(sched) == [(1, 1)]
    assert b.generated == 4 and sched.free_blocks == 3


def test_a_long_prompt_is_prefilled_in_chunks_beside_a_decode() -> None:
    # Budget 8. A (prompt 4, 5 out) runs first and emits its first token. B (prompt 20)
    # arrives: each step A's decode takes 1 token of the budget and B's prefill the other
    # 7: chunks of 7, 7, then the 6 left, whose step emits B's first token. A's decodes
    # attend to 5, 6 and 7 tokens; B's chunks have 0, 7 and 14 tokens cached before them.
    sched = Scheduler(max_running=8, max_batched_tokens=8, blocks=100, block_tokens=16)
    a, b = Sequence(0, 4, 5, 0.0), Sequence(1, 20, 2, 0.0)
    sched.add(a)
    assert _work(sched) == [(0, 4)]
    sched.add(b)
    seen = []
    for _ in range(3):
        step = sched.schedule()
        seen.append([(s.index, n, s.computed) for s, n in step.work])
        sched.complete(step, 0.0)
    assert seen == [[(0, 1, 4), (1, 7, 0)], [(0, 1, 5), (1, 7, 7)], [(0, 1, 6), (1, 6, 14)]]
    assert (a.generated, b.generated) == (4, 1)


def _serve(model: str = "llama-3.1-8b", hardware: str = "h100-sxm", gpus: int = 1,
           prompt: int = 1024, output: int = 256, tp: object = None):  # type: ignore[no-untyped-def]
    return serve_request(get_model(model), get_hardware(hardware), gpus=gpus, serve_tp=tp,
                         batch=1, weight_format="bf16", kv_format="bf16", context_tokens=8192,
                         prompt_tokens=prompt, output_tokens=output)


@pytest.mark.parametrize(("model", "hardware", "gpus"), [
    ("llama-3.1-8b", "h100-sxm", 1), ("llama-3.1-70b", "h200", 4), ("mistral-7b", "a100-80gb", 1),
    ("mixtral-8x7b", "h100-sxm", 2),
])
def test_one_request_on_an_idle_server_is_the_expected_figures(model: str, hardware: str,
                                                                gpus: int) -> None:
    req = _serve(model, hardware, gpus)
    exp = expected_serve(req.model, req.hardware, prompt_tokens=1024, output_tokens=256,
                         gpus=gpus)
    one = load_request(concurrency=1, requests=1)
    assert one is not None
    gpu_only = serve_load(req, one, host_costs=False)
    assert gpu_only.ttft_seconds.p50 == pytest.approx(exp.prefill_seconds, rel=1e-12)
    assert gpu_only.tpot_seconds.p50 == pytest.approx(exp.decode_seconds_per_token, rel=1e-9)
    assert gpu_only.e2e_seconds.p50 == pytest.approx(exp.total_seconds, rel=1e-9)
    # With the host's time between steps: one step's worth of it per token.
    run = serve_load(req, one)
    step = step_time_model(req.model, req.hardware, weight_format="bf16", kv_format="bf16",
                           gpus=gpus)
    host = step.host_seconds(1)
    assert host == pytest.approx(2.0e-4 + 2.07e-5)
    assert run.ttft_seconds.p50 == pytest.approx(exp.prefill_seconds + host, rel=1e-12)
    assert run.tpot_seconds.p50 == pytest.approx(exp.decode_seconds_per_token + host, rel=1e-9)
    assert run.preemptions == 0 and run.requests == 1


def test_a_step_of_one_prefill_chunk_is_the_expected_prefill() -> None:
    req = _serve()
    step = step_time_model(req.model, req.hardware, weight_format="bf16", kv_format="bf16",
                           gpus=1, host_costs=False)
    for s in (16, 512, 4096):
        exp = expected_serve(req.model, req.hardware, prompt_tokens=s, output_tokens=2)
        assert step.seconds([PrefillChunk(s, 0)], []) == pytest.approx(exp.prefill_seconds,
                                                                         rel=1e-12)


def test_the_load_is_checked_where_it_enters() -> None:
    assert load_request() is None
    for kwargs, field in ((dict(concurrency=0), "concurrency"), (dict(rate="fast"), "rate"),
                          (dict(concurrency=1, rate=1), "rate"),
                          (dict(concurrency=2, length_dist="zipf"), "length_dist"),
                          (dict(concurrency=2, length_cv=0.3), "length_cv"),
                          (dict(requests=5), "requests"),
                          (dict(concurrency=2, seed=-1), "seed"),
                          (dict(rate=2, requests=10**9), "requests")):
        with pytest.raises(EngineError) as err:
            load_request(**kwargs)  # type: ignore[arg-type]
        assert err.value.field == field


def test_a_request_longer_than_the_kv_cache_is_refused() -> None:
    load = load_request(concurrency=1, requests=1)
    assert load is not None
    with pytest.raises(EngineError) as err:
        serve_load(_serve(prompt=2_000_000, output=10), load)
    assert err.value.field == "prompt_tokens"


SMALL = _serve("llama-3.2-1b", "h100-sxm", 1, 512, 64)


@settings(max_examples=25, deadline=None)
@given(concurrency=st.integers(1, 64), seed=st.integers(0, 1000),
       dist=st.sampled_from(["fixed", "uniform", "normal", "lognormal"]),
       rate=st.one_of(st.none(), st.floats(0.5, 500)))
def test_no_request_beats_its_idle_bound_and_throughput_stays_under_the_peak(
        concurrency: int, seed: int, dist: str, rate: float | None) -> None:
    load = load_request(concurrency=None if rate else concurrency, rate=rate, requests=40,
                        length_dist=dist, seed=seed)
    assert load is not None
    run = serve_load(SMALL, load)
    m, hw = SMALL.model, SMALL.hardware
    again = serve_load(SMALL, load)
    assert again.to_dict() == run.to_dict()
    # The simulation keeps no per-request record in its result; replay the lengths.
    import random

    from engine.numbers.load.lengths import draw_lengths
    rng = random.Random(seed)
    prompts = draw_lengths(rng, load.length_dist, 512, 40, most=10_000_000)
    outputs = draw_lengths(rng, load.length_dist, 64, 40, most=10_000_000)
    fastest = min(prefill(m, hw, prompt_tokens=p).seconds
                  + decode_seconds(m, hw, prompt_tokens=p, output_tokens=o)
                  for p, o in zip(prompts, outputs, strict=True))
    assert run.e2e_seconds.p50 >= fastest
    assert min(run.ttft_seconds.p50, run.ttft_seconds.mean) > 0
    peak, _ = hw.compute_peak("bf16")
    from engine.numbers.architecture import forward_flops_per_token
    assert run.output_tokens_per_s <= peak / forward_flops_per_token(m)
    assert 0 <= run.kv_cache_peak_fraction <= 1


def test_the_state_at_a_time_reads_the_steps() -> None:
    load = load_request(concurrency=4, requests=8)
    assert load is not None
    run = serve_load(SMALL, load)
    assert run.state_at(-1.0).running == 0
    mid = run.state_at(run.duration_seconds / 2)
    assert mid.running + mid.waiting <= 4 and mid.running >= 1
    end = run.state_at(run.duration_seconds + 1.0)
    assert end.finished == 8 and end.running == 0
    assert len(run.timeline) == 64
    data = run.to_dict()
    assert "steps" not in data and data["concurrency"] == 4
    assert set(data["ttft_seconds"]) == {"p50", "p90", "p99", "mean"}  # type: ignore[arg-type]


def test_the_command_line_adds_serve_load_only_under_a_load(
        capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from engine.cli import main

    base = ["plan", "--model", "llama-3.2-1b", "--hardware", "h100-sxm", "--json"]
    assert main(base) == 0
    assert "load" not in json.loads(capsys.readouterr().out)["serve"]
    assert main([*base, "--concurrency", "4", "--requests", "12", "--length-dist", "normal",
                 "--length-cv", "0.3", "--seed", "7", "--ttft-target", "1"]) == 0
    load = json.loads(capsys.readouterr().out)["serve"]["load"]
    assert load["concurrency"] == 4 and load["requests"] == 12
    assert load["goodput"]["ttft_target_seconds"] == 1.0
    assert main(["sweep", "--model", "llama-3.2-1b", "--rate", "2,4", "--requests", "10",
                 "--json"]) == 0
    assert [r["rate"] for r in json.loads(capsys.readouterr().out)] == [2.0, 4.0]
    for bad, flag in ((["--concurrency", "0"], "--concurrency"), (["--rate", "-1"], "--rate"),
                      (["--concurrency", "2", "--length-dist", "zipf"], "--length-dist")):
        assert main([*base, *bad]) == 2
        assert json.loads(capsys.readouterr().out)["error"].startswith(flag)
    assert main(["sweep", "--model", "llama-3.2-1b"]) == 2


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=10.0), max_size=40))
def test_counted_percentiles_are_those_of_the_repeated_values(values: list[float]) -> None:
    counts: dict[float, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    assert counted_percentiles(counts) == percentiles(values)


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.floats(min_value=0.0, max_value=10.0), st.integers(1, 3000),
                       max_size=12))
def test_counted_percentiles_of_values_repeated_thousands_of_times(
        counts: dict[float, int]) -> None:
    # Counts from 64 on are summed as doublings (v, 2v, 4v, ... by the count's bits): the
    # mean must be the repeated list's fsum to the last bit all the same.
    values = [v for v, c in counts.items() for _ in range(c)]
    assert counted_percentiles(counts) == percentiles(values)


@pytest.mark.parametrize("model", ["llama-3.1-8b", "mistral-7b", "gemma-2-9b"])
def test_a_run_of_decode_steps_is_timed_as_each_step_alone(model: str) -> None:
    # Contexts on both sides of a 4,096-token window, crossing it during the run.
    step = step_time_model(get_model(model), get_hardware("h100-sxm"), weight_format="bf16",
                           kv_format="bf16", gpus=1)
    contexts = [4090, 17, 4096, 5000, 4093, 1]
    run = step.decode_run(contexts)
    for later in range(0, 12):
        assert run.seconds(later) == step.seconds([], [c + later for c in contexts])
