"""The kernel stack of a training step (fused or eager PyTorch), torchtitan's per-op
recomputation, and the same-die figures of the H100 NVL, GH200 and the 500 W H100, worked by
hand for Llama 3.1 8B on an H100 SXM (one micro-batch of 4,096 tokens, one layer's ops).

Eager bytes per number (kernel_rates.toml [elementwise_eager], counted from torchtitan's
Llama code): RMSNorm 36 forward in 8 kernels, 92 backward in 16; rotary 20 each way in 6
kernels (3 for q, 3 for k); SwiGLU 10 forward in 2 kernels, 18 backward in 3; GQA's
key/value repeat 2 bytes a number read or written, one kernel per tensor each way.
"""

import pytest

from engine.lesson.reality.measurements import Measurement
from engine.numbers import architecture
from engine.numbers.activations import layer_activations
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.catalog.kernel_rates import (
    matmul_shape_fraction,
    memory_stream_fraction,
    same_die_scale,
)
from engine.numbers.compute import training_flops_per_token
from engine.numbers.errors import EngineError
from engine.numbers.plan import plan
from engine.numbers.training_ops import StepShape, training_ops

T = 4096
D = 4096
STREAM = 3.35e12 * 0.866
KERNEL = 3e-6
LAYERS = 32
MODEL = get_model("llama-3.1-8b")
H100 = get_hardware("h100-sxm")


def _ops(kernels="fused", recompute="none"):
    ops = training_ops(MODEL, H100, StepShape(T, T, 1, LAYERS, 1, 1, 1, recompute,
                                              kernels=kernels), 2)
    return {o.name: o for o in ops.micro_batch}


def _per_layer(ops, name):
    return ops[name].seconds / LAYERS


def test_eager_norms_by_hand():
    # 65 RMSNorms (2 a layer and the final one), each 4,096 x 4,096 numbers.
    ops = _ops("eager")
    assert ops["norms (forward)"].seconds == pytest.approx(65 * (36 * T * D / STREAM
                                                                 + 8 * KERNEL))
    assert ops["norms (backward)"].seconds == pytest.approx(65 * (92 * T * D / STREAM
                                                                  + 16 * KERNEL))
    # With a fused RMSNorm the norms move the fused 4 and 6 bytes, one kernel each.
    fused_norm = _ops("eager-fused-norm")
    assert fused_norm["norms (forward)"].seconds == pytest.approx(
        65 * (4 * T * D / STREAM + KERNEL))


def test_eager_rotary_swiglu_and_kv_repeat_by_hand():
    ops = _ops("eager")
    # q and k, (32 + 8) heads x 128 wide.
    assert _per_layer(ops, "rotary embedding (forward)") == pytest.approx(
        20 * T * 40 * 128 / STREAM + 6 * KERNEL)
    assert _per_layer(ops, "activation (forward)") == pytest.approx(
        10 * T * 14336 / STREAM + 2 * KERNEL)
    assert _per_layer(ops, "activation (backward)") == pytest.approx(
        18 * T * 14336 / STREAM + 3 * KERNEL)
    # K and V: 8 KV heads read, 32 query heads written, 128 + 128 wide, 2 bytes each.
    assert _per_layer(ops, "key/value repeat (GQA)" + " (forward)") == pytest.approx(
        2 * T * (8 + 32) * 256 / STREAM + 2 * KERNEL)
    # Residual adds and the loss are one kernel in eager PyTorch too: the fused bytes.
    fused = _ops()
    for name in ("residual adds (forward)", "loss (fp32 cross-entropy)"):
        assert ops[name].seconds == pytest.approx(fused[name].seconds)
    assert not [n for n in fused if n.startswith("key/value repeat")]


def test_eager_is_slower_and_the_fused_norm_between():
    def step(k):
        return sum(o.seconds for o in _ops(k).values())

    assert step("fused") < step("eager-fused-norm") < step("eager")


def test_op_policy_recomputes_every_other_matmul():
    # torchtitan's order wq, wk, wv, wo, w1 (gate), w3 (up), w2 (down): the 2nd, 4th, 6th.
    assert architecture.op_policy_recomputed(MODEL) == {"attention.k", "attention.o",
                                                        "mlp.up"}
    per_token = training_flops_per_token(MODEL, T, "selective-op")
    # 2 FLOPs a weight: (1,024 + 4,096 + 14,336) x 4,096 per layer, 32 layers.
    assert per_token.recompute == pytest.approx(2 * (1024 + 4096 + 14336) * 4096 * 32)
    assert per_token.model == training_flops_per_token(MODEL, T, "none").model


def test_op_policy_recomputation_by_hand():
    ops = _ops(recompute="selective-op")
    again = ops["recomputation: every other matmul and the memory-bound ops"].seconds
    fused = _ops()

    def gemm(m, n, k, tflops):
        # the grid's short-run rate, held under a training load at 697.7 / 780.2
        return 2 * m * n * k / (tflops * 697.7 / 780.2 * 1e12) + KERNEL

    # k (4096 x 1024 x 4096 at 751.7), o (4096^3 at 780.2), up (4096 x 14336 x 4096, beyond
    # the grid: its edge, 780.2), and every memory-bound op of the forward pass once more.
    matmuls = LAYERS * (gemm(T, 1024, 4096, 751.7) + gemm(T, 4096, 4096, 780.2)
                        + gemm(T, 14336, 4096, 780.2))
    memory = sum(fused[n].seconds for n in ("residual adds (forward)", "activation (forward)",
                                            "rotary embedding (forward)"))
    memory += fused["norms (forward)"].seconds * 64 / 65  # not the final norm
    assert again == pytest.approx(matmuls + memory)
    assert "recomputation: attention (forward)" not in ops


def test_op_policy_keeps_less_than_megatrons_selective():
    # Per token per layer: the input 4,096, q 4,096, v 1,024, attention's output 4,096, the
    # gate 14,336 and down's output 4,096, 2 bytes each, and 32 fp32 log-sum-exps.
    kept = layer_activations(MODEL, seq_len=T, micro_batch=1, recompute="selective-op")
    hand = T * (2 * (4096 + 4096 + 1024 + 4096 + 14336 + 4096) + 4 * 32)
    total = kept.norms + kept.attention + kept.softmax_stats + kept.mlp + kept.dropout_masks
    assert total == pytest.approx(hand)
    megatron = layer_activations(MODEL, seq_len=T, micro_batch=1, recompute="selective")
    assert total < (megatron.norms + megatron.attention + megatron.mlp)


def test_the_plan_takes_and_checks_the_kernel_stack():
    def mfu(**k):
        p = plan(model="llama-3.1-8b", hardware="h100-sxm", gpus=8, task="train",
                 sharding="zero3", seq_len=8192, **k)
        return p.train.expected.mfu

    assert mfu() == mfu(kernels="fused")
    assert mfu(kernels="eager") < mfu(kernels="eager-fused-norm") < mfu()
    with pytest.raises(EngineError) as refused:
        mfu(kernels="compiled")
    assert refused.value.field == "kernels"


def test_the_h100_nvl_takes_the_sxm_grid_at_its_pcie_siblings_rate_per_sm():
    nvl = get_hardware("h100-nvl")
    scale = same_die_scale(nvl)
    assert scale.value == pytest.approx(492.84 / 114 * 132 / 797.51)
    assert "H100 PCIe" in scale.name
    rate = matmul_shape_fraction(nvl, 4096, 4096, 4096).value * nvl.peak_flops_per_s("bf16")
    # held under a training load as the SXM's: 780.2 x 697.7 / 780.2
    assert rate == pytest.approx(697.7e12 * scale.value)
    assert same_die_scale(H100).value == 1.0


def test_the_h100_dies_without_a_stream_measurement_take_the_sxms():
    for chip in ("gh200", "h100-nvl", "h100-hbm2e-500w"):
        basis = memory_stream_fraction(get_hardware(chip))
        assert basis.value == 0.866
        assert "H100 SXM's fraction" in basis.source


def _row(**extra):
    row = dict(id="t", group="train", task="train", model="llama-3.1-8b", params=None,
               model_note="", hardware="h100-sxm", hardware_note="", gpus=8,
               metric="train_mfu", scope="system", value=0.4, value_text="40 %",
               stack="a stack", source="a source, 2024", note="", tokens=1e12, seq_len=4096, global_batch_tokens=524288,
               kernels_basis="not stated")
    row.update(extra)
    return Measurement(**row)


def test_a_training_row_says_which_kernels_its_source_ran():
    assert _row(kernels="eager").kernels == "eager"
    with pytest.raises(EngineError) as refused:
        _row(kernels_basis="")
    assert refused.value.field == "kernels_basis"
    with pytest.raises(EngineError) as refused:
        _row(kernels="compiled")
    assert refused.value.field == "kernels"
