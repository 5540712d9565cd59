"""cuDNN's fused attention (``attention`` 'cudnn'), the kernel Transformer Engine picks on
Hopper: timed at the FlashAttention-3 paper's cuDNN bars (Figure 5 forward, Figure 6 backward
without a mask), its causal backward at that rate times FlashAttention-2's own causal / no-mask
backward ratio. Hand-worked at 8,192 tokens, head dim 128, on an H100 SXM (989.4 TFLOP/s)."""

import pytest

from engine.numbers.catalog import get_hardware
from engine.numbers.catalog.kernel_rates import attention_rates, training_attention_kernel
from engine.numbers.plan import plan

H100 = get_hardware("h100-sxm")
PEAK = 989.4e12
# FlashAttention-3 paper, Figure 5 (causal, head dim 128, 8k): cuDNN 529 TFLOP/s forward.
CUDNN_FORWARD = 529e12
# Figure 6 (no mask, head dim 128, 8k): cuDNN 518 backward, FlashAttention-2 318.
CUDNN_BACKWARD_NO_MASK = 518e12
FA2_BACKWARD_NO_MASK = 318e12
# FlashAttention-2's causal backward: its forward + backward (308, FlashAttention-2 paper's H100
# figure) less its forward (333, FlashAttention-3 Figure 5): 2.5 / (3.5 / 308 - 1 / 333).
FA2_BACKWARD_CAUSAL = 2.5 / (3.5 / 308e12 - 1 / 333e12)


def test_the_causal_rates_at_8k_tokens():
    assert pytest.approx(299.02e12, rel=1e-4) == FA2_BACKWARD_CAUSAL
    r = attention_rates(H100, 128, True, 8192, "cudnn")
    assert r.forward.value == pytest.approx(CUDNN_FORWARD / PEAK, rel=1e-9)
    expected_backward = CUDNN_BACKWARD_NO_MASK * FA2_BACKWARD_CAUSAL / FA2_BACKWARD_NO_MASK
    assert expected_backward == pytest.approx(487.09e12, rel=1e-4)
    assert r.backward.value == pytest.approx(expected_backward / PEAK, rel=1e-9)
    assert "Figure 6" in r.backward.source and "causal / no-mask" in r.backward.source


def test_without_a_mask_the_backward_is_the_measured_one():
    r = attention_rates(H100, 128, False, 8192, "cudnn")
    assert r.backward.value == pytest.approx(CUDNN_BACKWARD_NO_MASK / PEAK, rel=1e-9)
    assert r.forward.value == pytest.approx(600e12 / PEAK, rel=1e-9)  # Figure 5: 600


def test_a_step_with_cudnn_runs_attention_faster_and_the_rest_the_same():
    common = dict(model="llama-3.1-8b", hardware="h100-sxm", gpus=8, task="train",
                  seq_len=8192)
    fa2 = plan(**common).train.expected
    cudnn = plan(**common, attention="cudnn").train.expected
    ops = {o.name: o.seconds for o in fa2.ops}
    faster = {o.name: o.seconds for o in cudnn.ops}
    # Compute-bound forward, plus 3 us of fixed cost a kernel: about 529 / 333 faster.
    assert ops["attention (forward)"] / faster["attention (forward)"] == pytest.approx(
        529 / 333, rel=2e-3)
    assert ops["matmul: MLP (forward)"] == faster["matmul: MLP (forward)"]
    assert cudnn.mfu > fa2.mfu
    assert cudnn.seconds > cudnn.bound_seconds
    (basis,) = [b for b in cudnn.basis if b.name.startswith("attention kernel of a training")]
    assert "TE v1.2" in basis.source and "sm90" in basis.source


def test_the_kernel_is_named_in_the_basis():
    assert "cuDNN" in training_attention_kernel("cudnn").name
