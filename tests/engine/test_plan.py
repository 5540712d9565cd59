import json

import pytest

from engine.lesson.plans.plan_json import plan_to_dict
from engine.numbers.errors import EngineError
from engine.numbers.plan import plan
from engine.words.answers import answers


def _json(p):
    return json.loads(json.dumps(plan_to_dict(p), allow_nan=False))


def test_serve_plan_keys_and_parts_sum():
    d = _json(plan(model="llama-3.1-8b"))
    mem = d["memory"]
    assert sum(mem["parts"].values()) == pytest.approx(mem["per_gpu_bytes"])
    assert mem["fits"] is True and mem["capacity_bytes"] == round(79.11 * 2**30)
    # 2 x (8,030,261,248 - 525,336,576 embedding - 266,240 norm weights): no FLOPs for lookups.
    assert d["flops"]["per_token"] == 2 * 7_504_658_432
    assert d["serve"]["kv_cache_bytes_per_token"] == 131_072
    assert d["serve"]["bound"] == "memory"
    assert set(d["answers"]) == {"fits", "limit", "gpus", "failure", "cost"}


def test_train_plan_keys():
    d = _json(plan(model="llama-3.1-8b", task="train", tokens=1e12, gpus=8, sharding="zero3"))
    # Model FLOPs: 6 x 7,504,658,432 matmul weights + causal attention, 12 x 32 x 4,096 x
    # 4,097 / 2 per token (each token attends to itself and those before it); selective
    # recomputation adds the attention forward again, 4 x 32 x 4,096 x 4,097 / 2.
    model = 6 * 7_504_658_432 + 6 * 32 * 4096 * 4097
    assert d["train"]["model_flops"] == pytest.approx(model * 1e12)
    assert d["train"]["total_flops"] == pytest.approx((model + 2 * 32 * 4096 * 4097) * 1e12)
    assert d["train"]["global_batch_tokens"] == 4_194_304 and d["train"]["warnings"] == []
    # Replicated, the same job needs 16 bytes x 8.03e9 parameters of state per GPU alone: the
    # times come with a warning that the layout cannot start.
    whole = _json(plan(model="llama-3.1-8b", task="train", tokens=1e12, gpus=8))
    assert whole["memory"]["fits"] is False
    assert [w for w in whole["train"]["warnings"] if w.startswith("The layout does not fit")]
    assert d["train"]["seconds"] > 0 and d["memory"]["fits"] is True
    d2 = _json(plan(model="llama-3.1-8b", task="train"))
    assert "Chinchilla" in d2["train"]["tokens_source"]


def test_train_plan_suggests_what_fits():
    p = plan(model="llama-3.1-8b", task="train")
    assert not p.memory.fits and "ZeRO-3" in answers(p)["gpus"]


def test_target_days():
    p = plan(model="llama-3.1-405b", task="train", tokens=15.6e12, gpus=16384, target_days=30)
    assert p.train is not None and p.train.gpus_for_target is not None
    assert p.train.gpus_for_target > 16384


def test_cost_needs_price_when_catalogue_has_none():
    assert "No cloud price" in answers(plan(model="llama-3.2-1b", hardware="l4"))["cost"]
    assert "$" in answers(plan(model="llama-3.2-1b", hardware="l4", usd_per_gpu_hour=0.8))["cost"]


@pytest.mark.parametrize("kwargs", [
    {"model": "llama-3.1-8b", "task": "fly"},
    {"model": "llama-3.1-8b", "gpus": 0},
    {"model": "llama-3.1-8b", "task": "train", "mfu": 0},
    {"model": "llama-3.1-8b", "task": "train", "sharding": "zero4"},
    {"model": "nope"},
    {},
])
def test_bad_inputs(kwargs):
    with pytest.raises(EngineError):
        plan(**kwargs)


def test_first_token_bound_at_a_batch_is_a_request_joining_the_others() -> None:
    # A batch is that many requests kept running: a request joins the others, its prompt in
    # the step that decodes theirs (bound and expected alike). One request on an idle server
    # sees its first token after its own prompt alone (ttft_seconds, whatever the batch);
    # the batch's prompts arriving together are the prefill, in the total time.
    one = plan(model="llama-3.1-8b", hardware="h100-sxm", prompt_tokens=2048, batch=1).serve
    eight = plan(model="llama-3.1-8b", hardware="h100-sxm", prompt_tokens=2048, batch=8).serve
    assert one is not None and eight is not None
    assert eight.ttft_seconds == one.ttft_seconds == one.ttft_at_batch_seconds
    assert one.ttft_seconds < eight.ttft_at_batch_seconds < 1.1 * one.ttft_seconds
    assert eight.prefill.seconds > 7 * one.prefill.seconds
    assert eight.total_seconds == eight.prefill.seconds + eight.decode_seconds
    assert eight.ttft_at_batch_seconds <= eight.expected.ttft_seconds < eight.prefill.seconds
    assert eight.expected.prefill_seconds >= eight.prefill.seconds
    assert eight.expected.ttft_idle_seconds == one.expected.ttft_seconds
