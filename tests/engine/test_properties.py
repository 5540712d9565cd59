"""Property tests: monotonic growth, the fits rule, and no stray exceptions or NaN."""

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.lesson.figures import network
from engine.lesson.figures import prose as figures
from engine.lesson.plans.plan_json import plan_to_dict
from engine.numbers.catalog import (
    generic_dense_model,
    get_hardware,
    list_hardware,
    list_models,
)
from engine.numbers.compute import training_flops
from engine.numbers.errors import EngineError
from engine.numbers.memory import serving_memory, training_memory
from engine.numbers.plan import plan
from engine.numbers.serving import decode_step, prefill

MODELS = [m.id for m in list_models()]
MODEL_SPECS = list_models()
CHIPS = [h.id for h in list_hardware()]
params_st = st.integers(min_value=20_000_000, max_value=10**13)
ctx_st = st.integers(min_value=1, max_value=1_000_000)
batch_st = st.integers(min_value=1, max_value=4096)
fast = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

weird = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**20, max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["1e9", "nan", "inf", "-1", "0", "8,192", "1_000", "", " 7 ", "bf16",
                     "llama-3.1-8b", "h100-sxm", "zero3", "train", "serve"]),
    st.lists(st.integers(), max_size=2),
)


@fast
@given(a=params_st, b=params_st, ctx=ctx_st, batch=batch_st)
def test_memory_grows_with_params(a, b, ctx, batch):
    lo, hi = sorted((a, b))
    m_lo, m_hi = generic_dense_model(lo), generic_dense_model(hi)
    assert (serving_memory(m_lo, get_hardware("h100-sxm"), context_tokens=ctx, batch=batch).parts["weights"]
            <= serving_memory(m_hi, get_hardware("h100-sxm"), context_tokens=ctx, batch=batch
                              ).parts["weights"])
    assert (training_memory(m_lo, get_hardware("h100-sxm")).state_bytes
            <= training_memory(m_hi, get_hardware("h100-sxm")).state_bytes)
    assert training_flops(lo, 1e12) <= training_flops(hi, 1e12)


@fast
@given(model=st.sampled_from(MODEL_SPECS), c1=ctx_st, c2=ctx_st, b1=batch_st, b2=batch_st)
def test_serving_grows_with_context_and_batch(model, c1, c2, b1, b2):
    (c1, c2), (b1, b2) = sorted((c1, c2)), sorted((b1, b2))
    # Past a sliding window the sums are equal in exact arithmetic; floats may differ in the
    # last place (Mistral 7B, batch 65: 51039388416.0 against 51039388415.99999).
    ulps = 1 + 1e-12
    lo = serving_memory(model, get_hardware("h100-sxm"), context_tokens=c1, batch=b1)
    hi = serving_memory(model, get_hardware("h100-sxm"), context_tokens=c2, batch=b2)
    assert lo.per_gpu_bytes <= hi.per_gpu_bytes * ulps
    assert (decode_step(model, get_hardware("h100-sxm"), context_tokens=c1, batch=b1).seconds
            <= decode_step(model, get_hardware("h100-sxm"), context_tokens=c2, batch=b2).seconds * ulps)
    assert (prefill(model, get_hardware("h100-sxm"), prompt_tokens=c1, batch=b1).seconds
            <= prefill(model, get_hardware("h100-sxm"), prompt_tokens=c2, batch=b2).seconds * ulps)


@fast
@given(model=st.sampled_from(MODELS), chip=st.sampled_from(CHIPS), ctx=ctx_st, batch=batch_st,
       gpus=st.integers(1, 64), task=st.sampled_from(["serve", "train"]),
       sharding=st.sampled_from(["none", "zero1", "zero2", "zero3"]))
def test_fits_iff_total_within_capacity(model, chip, ctx, batch, gpus, task, sharding):
    try:
        p = plan(model=model, hardware=chip, gpus=gpus, task=task, context_tokens=ctx,
                 batch=batch, sharding=sharding)
    except EngineError:
        return
    mem = p.memory
    assert mem.fits == (mem.per_gpu_bytes <= mem.capacity_bytes)
    assert math.isclose(sum(mem.parts.values()), mem.per_gpu_bytes, rel_tol=1e-9)
    json.dumps(plan_to_dict(p), allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(model=weird, params=weird, hardware=weird, gpus=weird, task=weird, ctx=weird,
       batch=weird, tokens=weird, mfu=weird, sharding=weird, fmt=weird)
def test_plan_gives_result_or_engine_error(model, params, hardware, gpus, task, ctx, batch,
                                           tokens, mfu, sharding, fmt):
    try:
        p = plan(model=model, params=params, hardware=hardware, gpus=gpus, task=task,
                 context_tokens=ctx, batch=batch, tokens=tokens, mfu=mfu, sharding=sharding,
                 weight_format=fmt)
    except EngineError as e:
        assert e.message
        return
    json.dumps(plan_to_dict(p), allow_nan=False)  # raises on NaN or infinity


@settings(max_examples=300, deadline=None)
@given(a=weird, b=weird, c=weird, d=weird)
def test_other_entries_give_result_or_engine_error(a, b, c, d):
    calls = [
        lambda: figures.train_time("llama-3.1-8b", a, gpus=b, mfu=c),
        lambda: network.bubble_share(a, b),
        lambda: plan(model="llama-3.1-8b", task="train", tokens=a, mfu=b, target_days=c,
                     global_batch_tokens=d),
        lambda: plan(model="llama-3.1-8b", task="train", gpus=a, tp=b, interleave=c, pp=d),
        lambda: plan(model="llama-3.1-8b", task="train", optimizer=a, convention=b,
                     micro_batch=c, seq_len=d),
        # The serving arithmetic is typed; its inputs are checked where they enter (plan()).
        lambda: plan(model="llama-3.1-8b", weight_format=a, kv_format=b, context_tokens=c,
                     batch=d),
        lambda: plan(model="llama-3.1-8b", gpus=a, serve_tp=b, prompt_tokens=c,
                     output_tokens=d),
        lambda: generic_dense_model(a),
    ]
    for call in calls:
        try:
            out = call()
        except EngineError:
            continue
        if isinstance(out, float):
            assert math.isfinite(out)
        elif hasattr(out, "to_dict"):
            json.dumps(out.to_dict(), allow_nan=False)


@fast
@given(params=st.integers(20_000_000, 10**15), tokens=st.floats(1, 1e16),
       gpus=st.integers(1, 10_000_000), mfu=st.floats(0.01, 1.0))
def test_huge_values_stay_finite(params, tokens, gpus, mfu):
    try:
        p = plan(params=params, task="train", tokens=tokens, gpus=gpus, mfu=mfu,
                 sharding="zero3")
    except EngineError:
        return
    json.dumps(plan_to_dict(p), allow_nan=False)
