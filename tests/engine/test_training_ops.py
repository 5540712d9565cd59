"""The op-by-op training step, worked by hand for one layer of Llama 3.1 8B on an H100 SXM.

One micro-batch of 1 x 4,096 tokens, no tensor parallelism. Rates from the catalogue:
OpenXLA's H100 matmul grid (kernel_rates.toml [matmul_shape."h100-sxm"]: 780.2 TFLOP/s at
4096^3, 751.7 at m 4096 x n 1024 x k 4096; beyond the grid the rate at its edge), each held
under a training load at 697.7 / 780.2 (this project's H200, 16384 x 16384 x 8192 after 0.27 s
of load, against the grid's short run at 4096^3); FlashAttention-2 on H100 (FlashAttention-3
paper figure 5: causal forward at head dim 128 and 4,096 tokens 319 TFLOP/s; FlashAttention-2
H100 forward + backward 294); 3.35 TB/s x 0.866 for a stream (Azure BabelStream copy); 3 us
per kernel.
"""

import pytest

from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.training_ops import StepShape, training_ops

T = 4096  # tokens in the micro-batch
STREAM = 3.35e12 * 0.866  # bytes/s
KERNEL = 3e-6  # s
LAYERS = 32
HELD = 697.7 / 780.2  # a training step's matmuls run at the power limit


def _ops(recompute="none"):
    ops = training_ops(get_model("llama-3.1-8b"), get_hardware("h100-sxm"),
                       StepShape(T, T, 1, LAYERS, 1, 1, 1, recompute), 2)
    return {o.name: o for o in ops.micro_batch}, ops


def _per_layer(name, recompute="none"):
    return _ops(recompute)[0][name].seconds / LAYERS


def _gemm(m, n, k, tflops):
    """One product at the grid's short-run ``tflops``, held under load."""
    return 2 * m * n * k / (tflops * HELD * 1e12) + KERNEL


def test_attention_projections_forward_by_hand():
    # q and o: 4096 x 4096 x 4096 at 780.2; k and v: n = 8 KV heads x 128 = 1,024 at 751.7.
    hand = 2 * _gemm(T, 4096, 4096, 780.2) + 2 * _gemm(T, 1024, 4096, 751.7)
    assert _per_layer("matmul: attention projections (forward)") == pytest.approx(hand)


def test_mlp_forward_by_hand():
    # gate and up: 4096 x 14336 x 4096, n beyond the grid: the grid's edge, 4096^3 (780.2);
    # down: 4096 x 4096 x 14336, k beyond it: the same. Held under load: 697.7 TFLOP/s.
    hand = 2 * _gemm(T, 14336, 4096, 780.2) + _gemm(T, 4096, 14336, 780.2)
    assert _per_layer("matmul: MLP (forward)") == pytest.approx(hand)


def test_attention_forward_and_backward_by_hand():
    # Forward FLOPs of one causal sequence: 2 x 32 heads x (128 + 128) x 4,096 x 4,097 / 2.
    flops = 2 * 32 * 256 * T * (T + 1) / 2
    forward = flops / 319e12 + KERNEL
    # Backward: 2.5 x the forward FLOPs in the pair's time less the forward's.
    backward = 3.5 * flops / 294e12 - flops / 319e12 + 3 * KERNEL
    assert _per_layer("attention (forward)") == pytest.approx(forward, rel=1e-9)
    assert _per_layer("attention (backward)") == pytest.approx(backward, rel=1e-9)
    # Selective recomputation runs the forward once more; none runs no other op again.
    assert _per_layer("recomputation: attention (forward)", "selective") == pytest.approx(forward)
    assert not [n for n in _ops()[0] if n.startswith("recomputation")]


def test_memory_bound_ops_by_hand():
    # Two RMSNorms read and write 4,096 x 4,096 16-bit numbers (4 bytes a number forward,
    # 6 backward); two residual adds read two and write one (6 each way); SwiGLU reads gate
    # and up and writes their product over 14,336 (6 forward, 10 backward); rotary reads
    # and writes q and k, (32 + 8) x 128 wide (4 each way).
    # The final norm before the output head is one more: 2 x 32 + 1 = 65 in all.
    d = 4096
    ops, _ = _ops()
    assert ops["norms (forward)"].seconds == pytest.approx(65 * (4 * T * d / STREAM + KERNEL))
    assert ops["norms (backward)"].seconds == pytest.approx(65 * (6 * T * d / STREAM + KERNEL))
    assert _per_layer("residual adds (forward)") == pytest.approx(6 * T * d * 2 / STREAM
                                                                  + 2 * KERNEL)
    assert _per_layer("activation (forward)") == pytest.approx(6 * T * 14336 / STREAM + KERNEL)
    assert _per_layer("activation (backward)") == pytest.approx(10 * T * 14336 / STREAM
                                                                + KERNEL)
    assert _per_layer("rotary embedding (forward)") == pytest.approx(4 * T * 40 * 128 / STREAM
                                                                     + KERNEL)
    assert _ops()[0]["norms (forward)"].limit == "memory"
    assert _ops()[0]["matmul: MLP (forward)"].limit == "compute"


def test_loss_and_optimizer_by_hand():
    ops, every = _ops()
    # The fp32 loss moves 24 bytes per logit: 4,096 tokens x 128,256 words, in 4 kernels.
    assert ops["loss (fp32 cross-entropy)"].seconds == pytest.approx(
        24 * T * 128256 / STREAM + 4 * KERNEL)
    # Adam reads 14 and writes 14 bytes per parameter (2-byte gradients), unsharded here.
    params = get_model("llama-3.1-8b").params
    adam = next(o for o in every.optimizer if o.name == "optimizer step (Adam)")
    assert adam.seconds == pytest.approx(28 * params / STREAM + KERNEL)


def test_matmul_flops_are_the_models():
    # The matmul ops do the model's forward FLOPs once and its backward twice: 6 x 7.50 billion
    # per token (the output head included).
    ops, _ = _ops()
    matmul = sum(o.flops for n, o in ops.items() if n.startswith("matmul"))
    assert matmul == pytest.approx(6 * 7_504_658_432 * T, rel=1e-12)


def test_tensor_parallel_splits_the_work():
    # Two GPUs: each does half the matmul FLOPs and the norms over half the tokens.
    model, hw = get_model("llama-3.1-8b"), get_hardware("h100-sxm")
    one = training_ops(model, hw, StepShape(T, T, 1, LAYERS, 1, 1, 1, "none"), 2)
    two = training_ops(model, hw, StepShape(T, T, 2, LAYERS, 1, 1, 1, "none"), 2)
    flops = {o.name: o.flops for o in one.micro_batch}
    halves = {o.name: o.flops for o in two.micro_batch}
    assert halves["matmul: MLP (forward)"] == pytest.approx(flops["matmul: MLP (forward)"] / 2)
    moved = {o.name: o.bytes for o in one.micro_batch}
    assert {o.name: o.bytes for o in two.micro_batch}["norms (forward)"] == pytest.approx(
        moved["norms (forward)"] / 2)
