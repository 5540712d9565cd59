import pytest

from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.errors import EngineError
from engine.numbers.expected_serving import expected_weight_bytes_read
from engine.numbers.plan import plan
from engine.numbers.serving import (
    batching_table,
    decode_seconds,
    decode_step,
    experts_touched,
    prefill,
    request_timeline,
)

M, H = get_model("llama-3.1-8b"), get_hardware("h100-sxm")


def test_decode_memory_bound_at_batch_1():
    d = decode_step(M, H)
    assert d.bound == "memory"
    # Llama 3.1 8B: 8,030,261,248 parameters, of which its untied input embedding is
    # 128,256 x 4,096 = 525,336,576, looked up one row (4,096) per token, not streamed:
    # (8,030,261,248 - 525,336,576 + 4,096) x 2 bytes = 15,009,857,536 B over 3.35 TB/s.
    assert d.bytes_read == 15_009_857_536
    assert d.seconds == pytest.approx(15_009_857_536 / 3.35e12)


def test_tied_embeddings_are_read_once_as_the_head():
    # Llama 3.2 1B ties its table to the head: every parameter is read, and the lookups
    # add nothing (the rows are in the table the head streams).
    m = get_model("llama-3.2-1b")
    assert m.tied_embeddings
    assert decode_step(m, H, batch=8).bytes_read == m.params * 2


def test_decode_compute_bound_at_large_batch_short_context():
    d = decode_step(M, H, batch=1024, context_tokens=1)
    assert d.bound == "compute"
    assert d.tokens_per_s > decode_step(M, H).tokens_per_s


def test_moe_bound_reads_the_experts_its_tokens_reach():
    # One token reads k of E experts per layer; 256 tokens, each picking 2 of 8 uniformly,
    # miss an expert with probability (3/4)^256: they reach all 8, so the bound reads every
    # weight but the looked-up table, as the expected value does.
    one = decode_step(get_model("mixtral-8x7b"), H)
    many = decode_step(get_model("mixtral-8x7b"), H, batch=256)
    m = get_model("mixtral-8x7b")
    assert experts_touched(m, 1) == pytest.approx(2.0, rel=1e-12)
    assert experts_touched(m, 2) == pytest.approx(8 * (1 - 0.75 ** 2), rel=1e-12)  # 3.5
    # Mixtral's card: 12.9B active of 46.7B (top-2 of 8 experts), its 131,072,000-number
    # input table among them; bf16, no context read.
    assert one.bytes_read == pytest.approx((12.9e9 - 32_000 * 4096) * 2, rel=0.01)
    # All 46,702,792,704 parameters less the table, plus 256 rows of 4,096 = 46,572,769,280.
    assert many.bytes_read == pytest.approx(46_572_769_280 * 2, rel=1e-12)
    assert expected_weight_bytes_read(m, 2.0, 256) == many.bytes_read


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
