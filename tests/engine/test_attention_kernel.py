"""The attention kernel a stack trains with: FlashAttention-2 by default, or the Triton port of
FlashAttention that LLM Foundry's MPT ran (attn_impl 'triton'), worked by hand.

Rates (kernel_rates.toml, the FlashAttention-2 paper's forward + backward figures, causal,
head dim 128): on the A100 the Triton port ran 68 TFLOP/s at 2k tokens and 78 at 8k, against
FlashAttention-1's 69 and 80; on the H100 (no Triton bars) FlashAttention-1 ran 108 and 135.
The H100's Triton rate is its FlashAttention-1 run times the A100's Triton / FlashAttention-1
ratio at the same length.
"""

import pytest

from engine.lesson.reality.measurements import Measurement
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.catalog.kernel_rates import attention_rates
from engine.numbers.errors import EngineError
from engine.numbers.plan import plan
from engine.numbers.training_ops import StepShape, training_ops

H100 = get_hardware("h100-sxm")
A100 = get_hardware("a100-80gb")
H100_PEAK = 989.4e12
A100_PEAK = 312e12
KERNEL = 3e-6  # s per kernel


def test_triton_on_h100_is_fa1_times_the_a100_ratio():
    for seq, fa1_h100, triton_a100, fa1_a100 in ((2048, 108, 68, 69), (8192, 135, 78, 80)):
        rates = attention_rates(H100, 128, True, seq, "triton")
        hand = fa1_h100 * triton_a100 / fa1_a100 * 1e12 / H100_PEAK
        # Only a forward + backward run: both directions take its rate.
        assert rates.forward.value == pytest.approx(hand, rel=1e-12)
        assert rates.backward.value == pytest.approx(hand, rel=1e-12)
        assert "fa1's run there" in rates.forward.source


def test_triton_on_a100_is_its_own_run():
    rates = attention_rates(A100, 128, True, 2048, "triton")
    assert rates.forward.value == pytest.approx(68e12 / A100_PEAK, rel=1e-12)


def test_triton_attention_op_by_hand():
    # Llama 3.1 8B, one sequence of 2,048 tokens on an H100 SXM: forward FLOPs of a causal
    # sequence per layer 2 x 32 heads x (128 + 128) x 2,048 x 2,049 / 2, at the Triton rate,
    # one kernel; backward 2.5 x those FLOPs at the same rate, three kernels.
    t = 2048
    rate = 108 * 68 / 69 * 1e12
    flops = 2 * 32 * 256 * t * (t + 1) / 2
    ops = training_ops(get_model("llama-3.1-8b"), H100,
                       StepShape(t, t, 1, 32, 1, 1, 1, "none", attention="triton"), 2)
    by_name = {o.name: o.seconds / 32 for o in ops.micro_batch}
    assert by_name["attention (forward)"] == pytest.approx(flops / rate + KERNEL, rel=1e-9)
    assert by_name["attention (backward)"] == pytest.approx(2.5 * flops / rate + 3 * KERNEL,
                                                            rel=1e-9)
    assert any(b.name.startswith("attention kernel of a training step (FlashAttention's "
                                 "Triton port") for b in ops.basis)


def test_plan_takes_the_attention_kernel_and_refuses_others():
    common = dict(model="llama-3.1-8b", hardware="h100-sxm", gpus=8, task="train",
                  seq_len=2048, sharding="zero3", recompute="none")
    fa2 = plan(**common).train.expected
    triton = plan(**common, attention="triton").train.expected
    assert triton.step_seconds > fa2.step_seconds
    with pytest.raises(EngineError) as refused:
        plan(**common, attention="fa9")
    assert refused.value.field == "attention"


def test_a_row_naming_another_kernel_says_where_it_is_read():
    fields = dict(id="x", group="train", task="train", model=None, params=1e9, model_note="m",
                  hardware="h100-sxm", hardware_note="", scope="system", note="",
                  gpus=8, metric="train_tokens_per_s_per_gpu", value=1.0, value_text="1",
                  stack="s", source="s 2023", tokens=1e12, seq_len=2048, global_batch_tokens=524288,
                  kernels_basis="not stated", attention="triton")
    with pytest.raises(EngineError) as refused:
        Measurement(**fields)
    assert refused.value.field == "attention_basis"
    assert Measurement(**fields, attention_basis="its yaml").attention == "triton"
