"""Fine-tuning with adapters in plan(), the command line and its fields, against hand-worked
values for Llama 3.1 8B (32 layers, hidden 4,096, 8 key/value heads of 128: K and V are
4,096 x 1,024)."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

import pytest

from engine.cli import main
from engine.numbers import adapters
from engine.numbers.architecture import forward_flops_per_token
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.errors import EngineError
from engine.numbers.memory import training_memory
from engine.numbers.plan import plan

# LoRA rank 16 on the attention projections, per layer r (d + k): q and o 16 x (4,096 +
# 4,096) = 131,072 each, k and v 16 x (4,096 + 1,024) = 81,920 each: 425,984; x 32 layers.
ATTN_R16_PARAMS = 32 * (2 * 16 * 8192 + 2 * 16 * 5120)
LLAMA_8B_PARAMS = 8_030_261_248


def _lora_plan(**kw: object):  # type: ignore[no-untyped-def]
    args: dict[str, object] = {"model": "llama-3.1-8b", "task": "train", "adapter": "lora",
                               "rank": 16, "targets": "attn", **kw}
    return plan(**args)


def test_lora_rank_16_on_attention_holds_13_6_million_parameters() -> None:
    assert ATTN_R16_PARAMS == 13_631_488
    p = _lora_plan()
    assert p.memory.adapter is not None
    assert p.memory.adapter.trainable_params == ATTN_R16_PARAMS


def test_lora_bytes_per_gpu_by_hand() -> None:
    p = _lora_plan(recompute="full")
    parts = p.memory.parts
    assert parts["frozen_weights"] == LLAMA_8B_PARAMS * 2  # 16.06 GB of bf16
    assert parts["adapter_weights"] == 2 * ATTN_R16_PARAMS  # 27.3 MB
    assert parts["adapter_gradients"] == 2 * ATTN_R16_PARAMS
    assert parts["adapter_optimizer_states"] == 8 * ATTN_R16_PARAMS  # 109 MB
    # Activations as full training's: the gradient flows back through every layer.
    full = training_memory(get_model("llama-3.1-8b"), get_hardware("h100-sxm"),
                           recompute="full")
    assert parts["activations"] == full.parts["activations"]
    assert p.memory.per_gpu_bytes == pytest.approx(
        LLAMA_8B_PARAMS * 2 + 12 * ATTN_R16_PARAMS + full.parts["activations"] + 1.5e9)
    assert p.memory.fits and p.min_gpus == 1


def test_plan_and_step_4_table_use_the_one_function() -> None:
    m, hw = get_model("llama-3.1-8b"), get_hardware("h100-sxm")
    one = adapters.adapter_memory(m, hw, method="qlora", rank=16, targets="all-linear",
                                  recompute="full")
    p = plan(model="llama-3.1-8b", task="train", adapter="qlora", targets="all",
             recompute="full")
    assert p.memory.parts == one.parts
    assert p.memory.per_gpu_bytes == one.per_gpu_bytes


def test_frozen_base_skips_its_weight_gradients() -> None:
    p = _lora_plan()
    full = plan(model="llama-3.1-8b", task="train")
    assert p.train is not None and full.train is not None
    fwd = forward_flops_per_token(get_model("llama-3.1-8b"))
    # Forward and dX only (2 x forward) for the base, 3 x forward for the adapters (2 x params).
    assert p.train.per_token.matmul == pytest.approx(2 * fwd + 3 * 2 * ATTN_R16_PARAMS)
    assert full.train.per_token.matmul == pytest.approx(3 * fwd)
    ops = {o.name: o for o in p.train.expected.ops}
    full_ops = {o.name: o for o in full.train.expected.ops}
    mlp_fwd, mlp_bwd = "matmul: MLP (forward)", "matmul: MLP (backward)"
    assert ops[mlp_bwd].flops == pytest.approx(ops[mlp_fwd].flops)  # dX only
    assert full_ops[mlp_bwd].flops == pytest.approx(2 * full_ops[mlp_fwd].flops)
    tokens = p.train.expected.tokens_per_step
    assert ops["matmul: adapters (forward)"].flops == pytest.approx(2 * ATTN_R16_PARAMS * tokens)
    assert ops["matmul: adapters (backward)"].flops == pytest.approx(
        4 * ATTN_R16_PARAMS * tokens)
    assert p.train.expected.step_seconds < full.train.expected.step_seconds


def test_mlp_and_all_targets_by_hand() -> None:
    mlp = 32 * 3 * 16 * (4096 + 14336)
    p = _lora_plan(targets="mlp")
    assert p.memory.adapter is not None and p.memory.adapter.trainable_params == mlp
    p = _lora_plan(targets="all")
    assert p.memory.adapter is not None
    assert p.memory.adapter.trainable_params == mlp + ATTN_R16_PARAMS


@pytest.mark.parametrize(("kw", "field"), [
    ({"adapter": "dora"}, "adapter"), ({"rank": 0}, "rank"), ({"rank": "nan"}, "rank"),
    ({"rank": 10**9}, "rank"), ({"targets": "qkv"}, "targets"), ({"tp": 2, "gpus": 2}, "tp"),
    ({"sharding": "zero3", "gpus": 2}, "sharding"), ({"optimizer": "sgd"}, "optimizer"),
])
def test_bad_adapter_inputs_name_their_field(kw: dict[str, object], field: str) -> None:
    with pytest.raises(EngineError) as e:
        _lora_plan(**kw)
    assert e.value.field == field


def _cli(args: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(args)
    return code, out.getvalue() + err.getvalue()


def test_cli_plans_an_adapter_run_and_refuses_hostile_values() -> None:
    code, text = _cli(["plan", "--model", "llama-3.1-8b", "--task", "train", "--adapter",
                       "lora", "--rank", "16", "--targets", "attn"])
    assert code == 0 and "adapter weights 0.027 GB" in text and "rank 16" in text
    for flag, value in (("--adapter", "💥"), ("--rank", "1e9999"), ("--targets", "\x00"),
                        ("--rank", "-1")):
        code, text = _cli(["plan", "--model", "llama-3.1-8b", "--task", "train",
                           "--adapter", "lora", flag, value])
        assert code == 2 and flag in text and "Traceback" not in text
