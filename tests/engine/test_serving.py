import pytest

from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.errors import EngineError
from engine.numbers.expected_serving import expected_weight_bytes_read
from engine.numbers.plan import plan
from engine.numbers.serving import (
    batching_table,
    decode_seconds,
    decode_step,
    prefill,
    request_timeline,
)

M, H = get_model("llama-3.1-8b"), get_hardware("h100-sxm")


def test_decode_memory_bound_at_batch_1():
    d = decode_step(M, H)
    assert d.bound == "memory"
    assert d.seconds == pytest.approx(16_060_522_496 / 3.35e12)


def test_decode_compute_bound_at_large_batch_short_context():
    d = decode_step(M, H, batch=1024, context_tokens=1)
    assert d.bound == "compute"
    assert d.tokens_per_s > decode_step(M, H).tokens_per_s


def test_moe_bound_reads_only_the_fewest_experts():
    # The bound counts k of E experts per layer at any batch (all tokens may pick the same
    # two): a lower bound on bytes; the expected value counts the distinct experts touched.
    one = decode_step(get_model("mixtral-8x7b"), H)
    many = decode_step(get_model("mixtral-8x7b"), H, batch=256)
    assert one.bytes_read == many.bytes_read
    m = get_model("mixtral-8x7b")
    top2 = (m.params - m.routed_params + m.routed_params * 2 / 8) * 2
    assert many.bytes_read == pytest.approx(top2, rel=1e-12)
    # Mixtral's card: 12.9B active of 46.7B (top-2 of 8 experts); bf16, no context read.
    assert one.bytes_read == pytest.approx(12.9e9 * 2, rel=0.01)
    assert expected_weight_bytes_read(m, 2.0, 256) == pytest.approx(46_702_792_704 * 2,
                                                                    rel=1e-3)


def test_prefill_compute_bound():
    p = prefill(M, H, prompt_tokens=4096)
    assert p.bound == "compute"
    assert p.flops > 2 * 8_030_261_248 * 4096


@pytest.mark.parametrize("batch,prompt,out", [(1, 1024, 256), (64, 100, 3000), (512, 1, 500),
                                              (2048, 10, 200)])
def test_decode_sum_matches_step_by_step(batch, prompt, out):
    exact = sum(decode_step(M, H, batch=batch, context_tokens=prompt + i).seconds
                for i in range(1, out))
    assert decode_seconds(M, H, prompt_tokens=prompt, output_tokens=out,
                          batch=batch) == pytest.approx(exact, rel=1e-9)


def test_timeline_phases_contiguous():
    t = request_timeline(M, H, prompt_tokens=1000, output_tokens=300, queue_seconds=0.5)
    assert t.phases[0].kind == "queue" and t.phases[1].kind == "prefill"
    end = 0.0
    for p in t.phases:
        assert p.start_seconds == pytest.approx(end)
        end = p.start_seconds + p.length_seconds
    assert end == pytest.approx(t.total_seconds)
    assert sum(p.tokens for p in t.phases if p.kind == "decode") == 299
    assert t.ttft_seconds == pytest.approx(0.5 + t.prefill.seconds)
    assert len(t.phases) <= 42


def test_long_answer_costs_more_than_long_question():
    long_q = request_timeline(M, H, prompt_tokens=2000, output_tokens=50)
    long_a = request_timeline(M, H, prompt_tokens=50, output_tokens=2000)
    assert long_a.total_seconds > 5 * long_q.total_seconds


def test_batching_table_throughput_rises():
    rows = batching_table(M, H, batches=(1, 8, 64))
    assert rows[0].tokens_per_s < rows[1].tokens_per_s < rows[2].tokens_per_s
    with pytest.raises(EngineError):
        batching_table(M, H, batches=())


def test_bad_inputs():
    # Checked where the inputs enter: plan()'s serving request.
    with pytest.raises(EngineError, match="Prompt length"):
        plan(model=M, hardware=H, prompt_tokens=0, output_tokens=1)
    with pytest.raises(EngineError, match="Batch must be a number, not NaN"):
        plan(model=M, hardware=H, batch=float("nan"))
