"""Expert parallelism when serving a mixture of experts: DeepSeek-V3 on 8 x H200 at ep 8,
worked by hand; the refusals by name; ep 1 giving the tensor-parallel figures exactly."""

from __future__ import annotations

import math

import pytest

from engine.lesson.plans.plan_json import plan_json
from engine.numbers.catalog import as_hardware, resolve_model
from engine.numbers.catalog.links import collective_spec
from engine.numbers.errors import EngineError
from engine.numbers.expected_serving import expected_weight_bytes_read
from engine.numbers.expert_parallel import (
    busiest_group_copies,
    busiest_group_experts,
    check_expert_parallel,
    expert_parallel_step,
)
from engine.numbers.plan import plan
from engine.numbers.serving import experts_touched

DSV3 = resolve_model("deepseek-v3", None)
H200 = as_hardware("h200")
# One routed expert of one layer: gate, up and down projections of 7,168 x 2,048.
EXPERT_PARAMS = 3 * 7168 * 2048
MOE_LAYERS = 61 - 3


def _dsv3_plan(ep: object) -> object:
    return plan(model="deepseek-v3", hardware="h200", gpus=8, weight_format="fp8",
                kv_format="fp8", batch=128, context_tokens=4096, prompt_tokens=1024,
                output_tokens=256, ep=ep)


def test_deepseek_v3_shapes_used_by_hand() -> None:
    assert (DSV3.experts, DSV3.experts_per_token, DSV3.hidden) == (256, 8, 7168)
    assert DSV3.routed_params == 256 * MOE_LAYERS * EXPERT_PARAMS


def test_memory_per_gpu_unchanged_by_expert_parallelism() -> None:
    """E / ep = 32 experts a GPU, whole: 32 x 58 layers x 44,040,192 fp8 bytes = 81.74 GB,
    1 / 8 of the routed experts as tensor parallelism holds them; the rest (attention, the
    shared expert, the dense layers, the tables) split 8 ways as before; MLA's latent KV
    cache whole on every GPU: 576 x 61 x 1 byte a token x 128 x 4,096."""
    assert 32 * MOE_LAYERS * EXPERT_PARAMS == DSV3.routed_params / 8 == 81_738_596_352
    at8, at1 = _dsv3_plan(8), _dsv3_plan(None)
    assert at8.memory == at1.memory
    assert at8.memory.parts["weights"] == 671_026_419_200 / 8
    assert at8.memory.parts["kv_cache"] == 576 * 61 * 128 * 4096


def test_busiest_group_by_hand() -> None:
    """128 tokens x 8 copies over 8 groups: a mean of 128 copies a group; the largest of 8
    Poisson(128) counts is about 128 + 1.4236 sqrt(128) = 144.1 (the expected largest of 8
    standard normals, 1.4236), and that group reaches 32(1 - (31/32)^copies) experts."""
    copies = busiest_group_copies(256, 8, 8, 128)
    assert copies == pytest.approx(128 + 1.4236 * math.sqrt(128), abs=0.5)
    assert busiest_group_experts(DSV3, 8, 128) == pytest.approx(
        32 * (1 - (31 / 32) ** copies), rel=1e-12)
    # Never fewer than a balanced group's share of the experts reached.
    assert busiest_group_experts(DSV3, 8, 128) >= experts_touched(DSV3, 128) / 8


def test_expert_bytes_read_per_gpu_by_hand() -> None:
    """Each GPU reads its busiest-group share: the step's time is the busiest GPU's, so the
    whole replica counts 8 x that group's experts in place of the experts reached."""
    busiest = busiest_group_experts(DSV3, 8, 128)
    extra = (8 * busiest - experts_touched(DSV3, 128)) * EXPERT_PARAMS * MOE_LAYERS
    assert (expected_weight_bytes_read(DSV3, 1.0, 128, 8)
            - expected_weight_bytes_read(DSV3, 1.0, 128)) == pytest.approx(extra, rel=1e-9)
    per_gpu = busiest * EXPERT_PARAMS * MOE_LAYERS
    assert per_gpu == pytest.approx(80.9e9, rel=0.01)


def test_all_to_all_bytes_and_seconds_by_hand() -> None:
    """A decode step of 128 tokens: each GPU dispatches its 16 tokens' 8 copies of 7,168
    numbers in fp8 (917,504 B) and takes them back in bf16 (1,835,008 B), each an
    all-to-all over NVLink (450 GB/s each way, 80 % of it for collectives): 7/8 of the bytes
    at 360 GB/s plus NCCL's 3.6 us base and 7 steps of 0.47 us; 58 MoE layers."""
    step = expert_parallel_step(DSV3, H200, 128, 8, 8, "fp8")
    assert step.dispatch_bytes_per_gpu == 16 * 8 * 7168 * 1 == 917_504
    assert step.combine_bytes_per_gpu == 16 * 8 * 7168 * 2 == 1_835_008
    assert step.experts_per_gpu == 32
    bw = 450e9 * collective_spec().bandwidth_fraction
    latency = 3.6e-6 + 7 * 0.47e-6
    per_layer = 7 / 8 * (917_504 + 1_835_008) / bw + 2 * latency
    assert step.all_to_all_seconds_per_layer == pytest.approx(per_layer, rel=1e-9)
    assert step.all_to_all_seconds == pytest.approx(58 * per_layer, rel=1e-9)
    assert step.all_to_all_seconds == pytest.approx(1.187e-3, rel=1e-3)


def test_decode_step_at_ep_8() -> None:
    """The bound is the balanced, communication-free one, the same at ep 8 as at ep 1; the
    expected step adds the all-to-alls to the all-reduces and never beats the bound."""
    at8, at1 = _dsv3_plan(8), _dsv3_plan(None)
    assert at8.serve.tpot_seconds == at1.serve.tpot_seconds
    assert at8.serve.first_step == at1.serve.first_step
    e8, e1 = at8.serve.expected, at1.serve.expected
    step = expert_parallel_step(DSV3, H200, 128, 8, 8, "fp8")
    assert e8.communication_seconds_per_token == pytest.approx(
        e1.communication_seconds_per_token + step.all_to_all_seconds, rel=1e-12)
    assert e8.decode_seconds_per_token >= at8.serve.tpot_seconds
    assert e8.ttft_seconds >= at8.serve.ttft_at_batch_seconds
    assert e8.prefill_seconds >= at8.serve.prefill.seconds


def test_json_says_what_it_used() -> None:
    serve = plan_json(_dsv3_plan(8))["serve"]
    assert isinstance(serve, dict)
    assert serve["ep"] == 8
    ep = serve["expected"]["expert_parallel"]
    assert ep["dispatch_format"] == "fp8"
    assert ep["dispatch_bytes_per_gpu"] == 917_504
    assert ep["link"].startswith("NVLink")
    assert "ep" not in plan_json(_dsv3_plan(None))["serve"]


@pytest.mark.parametrize(("model", "gpus", "ep", "words"), [
    ("llama-3.1-8b", 2, 2, "dense model"),
    ("deepseek-v3", 8, 16, "cannot exceed"),
    ("deepseek-v3", 8, 3, "divide them"),
])
def test_refusals_name_ep(model: str, gpus: int, ep: int, words: str) -> None:
    with pytest.raises(EngineError) as refused:
        plan(model=model, hardware="h200", gpus=gpus, weight_format="fp8", ep=ep)
    assert refused.value.field == "ep"
    assert words in refused.value.message


def test_ep_must_divide_a_replica() -> None:
    with pytest.raises(EngineError) as refused:
        check_expert_parallel(DSV3, 4, 6)
    assert refused.value.field == "ep" and "must divide the GPUs" in refused.value.message


@pytest.mark.parametrize("model", ["deepseek-v3", "mixtral-8x7b", "llama-3.1-8b"])
def test_ep_1_gives_tensor_parallel_figures_exactly(model: str) -> None:
    def at(ep: object) -> dict[str, object]:
        return plan_json(plan(model=model, hardware="h200", gpus=8, weight_format="fp8",
                              batch=64, ep=ep))
    assert at(1) == at(None) == at("")


def test_ep_below_the_replica_splits_each_expert() -> None:
    """ep 4 of 8 GPUs: 64 experts a group, each split over 2 GPUs; still 1 / 8 a GPU."""
    p = plan(model="deepseek-v3", hardware="h200", gpus=8, weight_format="fp8", batch=64,
             ep=4)
    assert p.memory == plan(model="deepseek-v3", hardware="h200", gpus=8,
                            weight_format="fp8", batch=64).memory
    assert p.serve.expected.expert_parallel is not None
    assert p.serve.expected.expert_parallel.experts_per_gpu == 64


def test_server_under_load_adds_the_all_to_alls() -> None:
    """The simulated server's decode steps carry the same dispatch and combine seconds; ep 1
    is the tensor-parallel step."""
    from engine.numbers.load.step_time import step_time_model

    def model(ep: int) -> object:
        return step_time_model(DSV3, H200, weight_format="fp8", kv_format="fp8", gpus=8,
                               ep=ep)

    contexts = [1024] * 128
    one, eight = model(1).decode_run(contexts), model(8).decode_run(contexts)
    assert model(1) == step_time_model(DSV3, H200, weight_format="fp8", kv_format="fp8",
                                       gpus=8)
    step = expert_parallel_step(DSV3, H200, 128, 8, 8, "fp8")
    assert eight.fixed_seconds - one.fixed_seconds == pytest.approx(step.all_to_all_seconds,
                                                                    rel=1e-9)
    assert eight.weight_bytes > one.weight_bytes
