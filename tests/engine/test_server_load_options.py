"""Speculative decoding, prefix caching and overlapped scheduling in the simulated server,
worked by hand."""

from __future__ import annotations

import pytest

from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.errors import EngineError
from engine.numbers.expected_serving import (
    expected_weight_bytes_read,
    overlap,
    tp_all_reduce_seconds,
)
from engine.numbers.load.load_request import (
    LoadRequest,
    load_options,
    load_request,
    serve_load,
)
from engine.numbers.load.prefix_cache import PrefixCache
from engine.numbers.load.scheduler import Scheduler, Sequence
from engine.numbers.load.simulate import simulate
from engine.numbers.load.speculative import (
    draft_head_model,
    expected_tokens_per_step,
    spec_decode,
)
from engine.numbers.load.step_time import PrefillChunk, step_time_model
from engine.numbers.serve_request import ServeRequest, serve_request


def _work(sched: Scheduler) -> list[tuple[int, int]]:
    step = sched.schedule()
    sched.complete(step, 0.0)
    return [(s.index, n) for s, n in step.work]


def test_tokens_per_verification_follow_leviathan_eq_1() -> None:
    # (1 - 0.8^5) / (1 - 0.8) = (1 - 0.32768) / 0.2 = 3.3616; at acceptance 1 all k + 1.
    assert expected_tokens_per_step(4, 0.8) == pytest.approx(3.3616, abs=1e-12)
    assert expected_tokens_per_step(4, 1.0) == 5.0
    assert expected_tokens_per_step(4, 0.0) == 1.0


def test_a_verification_asks_for_k_plus_1_tokens_and_yields_the_expected_ones() -> None:
    # Prompt 4, 12 out, 4 draft tokens at 3.3616 a verification, blocks of 4 tokens. Step 1
    # prefills 4 and emits the first token. Each later step verifies 5 tokens; the running
    # total 3.36, 6.72, 10.08, 13.45 has floors 3, 6, 10, 13: it emits 3, 3, 4, then the
    # 1 left of the 12 (capped), and the KV cache keeps the tokens accepted.
    sched = Scheduler(max_running=8, max_batched_tokens=100, blocks=10, block_tokens=4,
                      spec_tokens=4, spec_tokens_per_step=expected_tokens_per_step(4, 0.8))
    a = Sequence(0, 4, 12, 0.0)
    sched.add(a)
    assert _work(sched) == [(0, 4)]
    generated = []
    for _ in range(4):
        assert _work(sched) == [(0, 5)]
        generated.append(a.generated)
        assert a.computed == a.prompt + a.generated - 1 or a.generated == 12
    assert generated == [4, 7, 11, 12]
    assert sched.running == [] and sched.free_blocks == 10


def test_a_verification_that_does_not_fit_the_budget_waits() -> None:
    # Budget 7, 4 draft tokens: A's verification takes 5, B's 5 do not fit the 2 left.
    sched = Scheduler(max_running=8, max_batched_tokens=7, blocks=100, block_tokens=16,
                      spec_tokens=4, spec_tokens_per_step=2.0)
    a, b = Sequence(0, 3, 9, 0.0), Sequence(1, 3, 9, 0.0)
    sched.add(a)
    sched.add(b)
    assert _work(sched) == [(0, 3), (1, 3)]
    assert _work(sched) == [(0, 5)]
    assert (a.generated, b.generated) == (3, 1)


def test_a_verification_step_reads_the_weights_once_and_computes_every_token() -> None:
    # One request whose next token attends to c = 1,000 tokens, 4 draft tokens: 5 tokens'
    # matmul FLOPs beside one read of the weights; its KV cache (c + 4 tokens, every
    # layer) read once; attention for contexts c .. c + 4 (5c + 10 tokens a layer).
    m, hw = get_model("llama-3.1-8b"), get_hardware("h100-sxm")
    st = step_time_model(m, hw, weight_format="bf16", kv_format="bf16", gpus=1)
    c, q = 1000, 5
    one = st.seconds([], [c])
    verify = st.seconds([], [c], decode_tokens=q)
    weights = expected_weight_bytes_read(m, st.bytes_per_number, q)
    bw, pk = st.bandwidth_bytes_per_s, st.peak_flops_per_s
    by_hand = (overlap(weights / bw, q * st.forward_flops_per_token / pk
                       * st.matmul_seconds_per_raw)
               + overlap(m.layers * (c + q - 1) * st.kv_bytes_per_layer_token / bw,
                         m.layers * (q * c + 10) * st.attention_flops_per_layer_token / pk
                         * st.attention_seconds_per_raw)
               + st.kernel_seconds + tp_all_reduce_seconds(m, q, st.link))
    assert verify == pytest.approx(by_hand, rel=1e-12)
    assert st.seconds([], [c], decode_tokens=1) == one
    # Cheaper than five requests' decodes (five KV reads) and dearer than one.
    assert one < verify < st.seconds([], [c + k for k in range(q)])


def test_the_one_layer_head_keeps_the_embedding_and_head() -> None:
    # Llama 3.1 8B's head: the embedding and the output head (128,256 x 4,096 each), one
    # layer (attention 4,096 x (4,096 + 1,024 + 1,024 + 4,096), the MLP 3 x 4,096 x 14,336,
    # two norms of 4,096) and the final norm.
    head = draft_head_model(get_model("llama-3.1-8b"))
    layer = 4096 * (4096 + 1024 + 1024 + 4096) + 3 * 4096 * 14336 + 2 * 4096
    assert head.layers == 1
    assert head.params == 2 * 128256 * 4096 + layer + 4096 == 1_268_789_248


def _serve(prompt: int = 1024, output: int = 64) -> ServeRequest:
    return serve_request(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), gpus=1,
                         serve_tp=None, batch=1, weight_format="bf16", kv_format="bf16",
                         context_tokens=2048, prompt_tokens=prompt, output_tokens=output)


def _load(**kwargs: object) -> LoadRequest:
    load = load_request(**kwargs)  # type: ignore[arg-type]
    assert load is not None
    return load


def test_one_speculative_request_is_its_steps_added_by_hand() -> None:
    # One request (prompt 1,024, 9 out) alone, no host costs, 2 draft tokens at acceptance
    # 0.5: 1.75 tokens a verification, running totals 1.75, 3.5, 5.25, 7, 8.75: it emits
    # 1, 2, 2, 2 and then the 1 left, after the prefill's first token. Each verification
    # step: the target's 3-token verification plus the head's 2 draft decode steps.
    m, hw = get_model("llama-3.1-8b"), get_hardware("h100-sxm")
    st = step_time_model(m, hw, weight_format="bf16", kv_format="bf16", gpus=1,
                         host_costs=False)
    spec = spec_decode(st, tokens=2, acceptance=0.5, draft=None)
    r = simulate(st, prompts=[1024], outputs=[9], concurrency=1, arrivals=None, rate=None,
                 replicas=1, max_running=8, max_batched_tokens=8192, kv_blocks=1000,
                 block_tokens=16, spec=spec)
    t = st.seconds([PrefillChunk(1024, 0)], [])
    assert r.ttft_seconds.p50 == t
    context = 1025
    for emitted in (1, 2, 2, 2, 1):
        t += (st.seconds([], [context], decode_tokens=3)
              + spec.draft.seconds([], [context]) + spec.draft.seconds([], [context + 1]))
        context += emitted
    assert r.e2e_seconds.p50 == pytest.approx(t, rel=1e-12)
    assert r.tpot_seconds.p50 == pytest.approx((t - r.ttft_seconds.p50) / 8, rel=1e-12)


def test_speculation_speeds_decoding_and_a_draft_model_costs_more_than_heads() -> None:
    serve = _serve()
    plain = serve_load(serve, _load(concurrency=4, requests=8))
    heads = serve_load(serve, _load(
        concurrency=4, requests=8, spec_tokens=4, spec_accept=0.8))
    draft = serve_load(serve, _load(
        concurrency=4, requests=8, spec_tokens=4, spec_accept=0.8, draft_model="llama-3.2-1b"))
    assert heads.tpot_seconds.p50 < draft.tpot_seconds.p50 < plain.tpot_seconds.p50
    # The draft model's weights and KV cache take room from the pool.
    assert draft.kv_cache_peak_fraction > heads.kv_cache_peak_fraction
    assert load_options(_load(concurrency=1, spec_tokens=4, spec_accept=0.8)) == {
        "speculative": {"draft_tokens": 4, "acceptance": 0.8,
                        "tokens_per_step": expected_tokens_per_step(4, 0.8),
                        "draft_model": None}}


def test_speculative_and_prefix_inputs_are_checked_where_they_enter() -> None:
    for kwargs, field in (({"spec_tokens": 4}, "spec_accept"),
                          ({"spec_accept": 0.5}, "spec_accept"),
                          ({"spec_tokens": 0, "spec_accept": 0.5}, "spec_tokens"),
                          ({"spec_tokens": 4, "spec_accept": 1.5}, "spec_accept"),
                          ({"prefix_hit": 0.5}, "prefix_hit"),
                          ({"prefix_tokens": 64, "prefix_hit": -1}, "prefix_hit")):
        with pytest.raises(EngineError) as exc:
            load_request(concurrency=4, **kwargs)
        assert exc.value.field == field
    with pytest.raises(EngineError) as exc:
        serve_load(_serve(), _load(
            concurrency=1, spec_tokens=4, spec_accept=0.5, draft_model="mistral-7b"))
    assert exc.value.field == "draft_model"
    assert _load(concurrency=1, prefix_tokens=64).prefix_hit == 1.0


def test_hits_are_spread_evenly_and_share_whole_blocks() -> None:
    half = PrefixCache(100, 0.5)
    assert [half.hits(i) for i in range(6)] == [False, True] * 3
    assert [PrefixCache(100, 0.25).hits(i) for i in range(8)] == [False, False, False,
                                                                   True] * 2
    # 100 tokens in blocks of 16: 6 whole blocks, 96 tokens; never the prompt's last token.
    assert half.shared_blocks(16) == 6
    assert half.cached_tokens(1, 1000, 16) == 96
    assert half.cached_tokens(1, 50, 16) == 48
    assert half.cached_tokens(1, 33, 16) == 32
    assert half.cached_tokens(0, 1000, 16) == 0


def test_a_hit_prefills_only_past_the_prefix_and_holds_only_its_own_blocks() -> None:
    # Blocks of 4, a pool of 10 with 2 shared (an 8-token prefix). A (prompt 10, 3 out)
    # hits: it prefills its last 2 tokens and needs 1 block of its own (10 tokens: 3
    # blocks, 2 shared). Preempted, it would restart from the 8 cached.
    sched = Scheduler(max_running=8, max_batched_tokens=100, blocks=10, block_tokens=4)
    sched.free_blocks -= 2
    a = Sequence(0, 10, 3, 0.0, computed=8, cached=8)
    sched.add(a)
    assert _work(sched) == [(0, 2)]
    assert (a.blocks, sched.free_blocks) == (1, 7)
    assert _work(sched) == [(0, 1)]  # 11 tokens: still 3 blocks
    assert _work(sched) == [(0, 1)]
    assert sched.free_blocks == 8


def test_one_request_that_hits_the_prefix_is_its_short_prefill() -> None:
    m, hw = get_model("llama-3.1-8b"), get_hardware("h100-sxm")
    st = step_time_model(m, hw, weight_format="bf16", kv_format="bf16", gpus=1,
                         host_costs=False)
    run = simulate(st, prompts=[1024], outputs=[2], concurrency=1, arrivals=None, rate=None,
                   replicas=1, max_running=8, max_batched_tokens=8192, kv_blocks=1000,
                   block_tokens=16, prefix=PrefixCache(512, 1.0))
    assert run.ttft_seconds.p50 == st.seconds([PrefillChunk(512, 512)], [])
    # The pool's peak: the 32 shared blocks and the request's own 33 (1,025 - 512 tokens).
    assert run.kv_cache_peak_fraction == (32 + 33) / 1000
    plain = serve_load(_serve(), _load(concurrency=8, requests=16))
    cached = serve_load(_serve(), _load(
        concurrency=8, requests=16, prefix_tokens=512, prefix_hit=1.0))
    assert cached.ttft_seconds.p50 < plain.ttft_seconds.p50


def test_the_command_line_takes_speculative_decoding_and_a_shared_prefix(
        capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from engine.cli import main

    base = ["plan", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--concurrency", "4",
            "--requests", "8"]
    assert main([*base, "--json", "--spec-tokens", "4", "--spec-accept", "0.8",
                 "--draft-model", "llama-3.2-1b", "--prefix-tokens", "512"]) == 0
    load = json.loads(capsys.readouterr().out)["serve"]["load"]
    assert load["speculative"] == {"draft_tokens": 4, "acceptance": 0.8,
                                   "tokens_per_step": expected_tokens_per_step(4, 0.8),
                                   "draft_model": "llama-3.2-1b"}
    assert load["prefix_cache"] == {"tokens": 512, "hit": 1.0}
    assert main([*base, "--spec-tokens", "4", "--spec-accept", "0.8"]) == 0
    assert "4 draft tokens by one-layer heads, acceptance 0.8: 3.36 tokens a step" in (
        capsys.readouterr().out)
    assert main(["sweep", "--model", "llama-3.1-8b", "--concurrency", "1,2", "--requests", "4",
                 "--prefix-tokens", "256", "--prefix-hit", "0.5", "--json"]) == 0
    assert [r["prefix_cache"]["hit"] for r in json.loads(capsys.readouterr().out)] == [0.5, 0.5]
    assert main([*base, "--json", "--spec-tokens", "4"]) == 2
    assert json.loads(capsys.readouterr().out)["error"].startswith("--spec-accept")


def test_an_overlapped_step_takes_the_longer_of_the_gpu_and_the_host() -> None:
    # The host's time between steps of n sequences is 0.2 ms + 20.7 us x n: 20.9 ms at
    # n = 1,000. Synchronous, it follows the GPU's; overlapped, it runs beside it.
    m, hw = get_model("llama-3.1-8b"), get_hardware("h200")
    sync = step_time_model(m, hw, weight_format="fp8", kv_format="fp8", gpus=1)
    over = step_time_model(m, hw, weight_format="fp8", kv_format="fp8", gpus=1,
                           scheduling="overlapped")
    assert sync.host_seconds(1000) == pytest.approx(0.0209, abs=1e-12)
    assert sync.step_seconds(0.030, 1000) == pytest.approx(0.0509, abs=1e-12)
    assert over.step_seconds(0.030, 1000) == 0.030
    assert over.step_seconds(0.010, 1000) == pytest.approx(0.0209, abs=1e-12)


def test_one_request_overlapped_saves_the_host_time_of_each_of_its_steps() -> None:
    # One request alone (prompt 16, 4 out): a prefill step and 3 decode steps, each far
    # longer on the GPU than the host's 0.2 ms + 20.7 us for one sequence; overlapped, the
    # request ends 4 x 0.2207 ms = 0.8828 ms sooner, its first token 0.2207 ms sooner.
    serve = _serve()
    sync = serve_load(serve, _load(concurrency=1, requests=1, prompt_lengths=[16],
                                   output_lengths=[4]))
    over = serve_load(serve, _load(concurrency=1, requests=1, prompt_lengths=[16],
                                   output_lengths=[4], scheduling="overlapped"))
    assert sync.e2e_seconds.p50 - over.e2e_seconds.p50 == pytest.approx(4 * 0.0002207,
                                                                         abs=1e-12)
    assert sync.ttft_seconds.p50 - over.ttft_seconds.p50 == pytest.approx(0.0002207,
                                                                          abs=1e-12)
    assert load_options(_load(concurrency=1, scheduling="overlapped")) == {
        "scheduling": "overlapped"}
    assert load_options(_load(concurrency=1)) == {}


def test_the_scheduling_is_checked_where_it_enters(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from engine.cli import main

    with pytest.raises(EngineError) as exc:
        load_request(concurrency=4, scheduling="eager")
    assert exc.value.field == "scheduling"
    with pytest.raises(EngineError) as exc:
        load_request(scheduling="overlapped")
    assert exc.value.field == "scheduling"
    base = ["plan", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--concurrency", "4",
            "--requests", "8"]
    assert main([*base, "--json", "--scheduling", "overlapped"]) == 0
    assert json.loads(capsys.readouterr().out)["serve"]["load"]["scheduling"] == "overlapped"
    assert main([*base, "--scheduling", "overlapped"]) == 0
    assert "concurrency 4, overlapped scheduling: TTFT" in capsys.readouterr().out
