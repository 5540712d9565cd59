"""The op-by-op parts of data/kernel_rates.toml (engine.numbers.catalog.kernel_rates): each
accessor returns the published or measured point exactly where there is one, and reads
between and beyond the points by its stated rule.

Peaks (hardware.toml): H100 SXM and H200 bf16 989.4 TFLOP/s, A100 80GB 312 TFLOP/s.
"""

import math

import pytest

from engine.numbers.catalog import get_hardware
from engine.numbers.catalog.efficiency import matmul_fraction, memory_fraction, power_cap_scale
from engine.numbers.catalog.kernel_rates import (
    adam_bytes_per_param,
    attention_rates,
    flash_attention_fraction,
    matmul_shape_fraction,
    measured_matmul_points,
    memory_stream_fraction,
    peak_power,
    sustained_load_scale,
)
from engine.numbers.errors import EngineError

H100 = get_hardware("h100-sxm")
H200 = get_hardware("h200")
A100 = get_hardware("a100-80gb")
PEAK = 989.4e12
# A training step holds the board at its power limit: every grid rate times what the H200's
# longest-running product (16384 x 16384 x 8192, 697.7 TFLOP/s) held against the grid's
# short-run 780.2 at its clamped shape 4096^3: 0.89426.
HELD = 697.7 / 780.2


@pytest.mark.parametrize(("m", "n", "k", "tflops"), [
    # OpenXLA's sm_90 table, batch 1, bf16 (rounded to 0.1 TFLOP/s in the catalogue)
    (4096, 4096, 4096, 780.2),
    (2048, 2048, 2048, 641.0),
    (1024, 1024, 1024, 252.8),
    (256, 4096, 4096, 418.4),
    (4096, 4096, 256, 398.6),
    (256, 256, 256, 6.7),
])
def test_a_listed_shape_returns_its_own_measurement_as_held_under_load(m, n, k, tflops):
    assert matmul_shape_fraction(H100, m, n, k).value == pytest.approx(
        tflops * HELD * 1e12 / PEAK, rel=1e-12)


def test_between_grid_points_the_rate_is_linear_in_log2_of_the_dimension():
    # m = 2896 (about 2^11.5) between 2048 and 4096, n = k = 4096: between the grid's 752.3
    # and 780.2 TFLOP/s, in proportion to log2(m).
    # By hand: log2(2,896) = 11.4998, so 752.3 + 0.4998 x (780.2 - 752.3) = 766.2 TFLOP/s,
    # held under load at 766.2 x 0.89426 = 685.2.
    mid = matmul_shape_fraction(H100, 2896, 4096, 4096).value
    assert mid * PEAK == pytest.approx(685.2e12, rel=1e-3)


def test_a_thin_product_takes_the_time_of_the_grids_smallest():
    # M = 16 tokens through a 4096 x 4096 matrix: as long as M = 256 (418.4 TFLOP/s), so the
    # rate is 16/256 of it; the H200 measured 45 us for M = 1 to 64 of a 4096 x 14336 matrix.
    at_256 = matmul_shape_fraction(H100, 256, 4096, 4096).value
    assert matmul_shape_fraction(H100, 16, 4096, 4096).value == pytest.approx(at_256 / 16)
    assert at_256 == pytest.approx(418.4e12 * HELD / PEAK)


def test_every_training_product_takes_the_rate_held_under_load_beyond_the_grid_too():
    # The scale: 697.7 measured at 16384 x 16384 x 8192 over the grid's 780.2 at 4096^3.
    held = sustained_load_scale(H100)
    assert held.value == pytest.approx(0.89426, abs=1e-5)
    assert "bench/measured/h200-2026-11-30.json" in held.source
    # A training matmul, 16,384 tokens x 4,096 -> 14,336: the grid's edge (4096^3, 780.2
    # TFLOP/s) held under load, 697.7 (0.705 of the peak); the H200's 8192 x 14336 x 4096
    # measured 693.4 over 83 ms of load, within 1 %.
    big = matmul_shape_fraction(H100, 16384, 14336, 4096)
    assert big.value == pytest.approx(697.7e12 / PEAK)
    assert "held under a training load" in big.name
    # Inside the grid the same: 4096^3 is the grid's own 780.2, held at 697.7.
    assert matmul_shape_fraction(H100, 4096, 4096, 4096).value == pytest.approx(697.7e12 / PEAK)
    # Serving compares a product's shape with the short-run large-matmul value (0.803), so
    # it reads the grid's short-run rate: 780.2 at 4096^3.
    short = matmul_shape_fraction(H100, 4096, 4096, 4096, training_load=False)
    assert short.value == pytest.approx(780.2e12 / PEAK)
    assert "held under a training load" not in short.name
    # The A100's measured rates had 10,000 warm-up iterations: no scale; it has no grid and
    # takes its nearest long measured product (fp16 8192^3, 253.7 of 312).
    assert sustained_load_scale(A100).value == 1.0
    a100 = matmul_shape_fraction(get_hardware("a100-80gb"), 8192, 6144, 4096)
    assert a100.value == pytest.approx(253.7 / 312)


def test_the_h200_reads_the_h100_grid_and_a_chip_without_one_the_large_matmul_value():
    # The H100 grid at 2048^3 (641.0 TFLOP/s) and 4096^3 (780.2), held under load: 573.2 and
    # 697.7, below the H200's own best large matmul (0.776).
    assert matmul_shape_fraction(H200, 2048, 2048, 2048).value == pytest.approx(
        641.0e12 * HELD / PEAK)
    assert matmul_shape_fraction(H200, 4096, 4096, 4096).value == pytest.approx(
        697.7e12 / PEAK)
    # A chip with neither a grid nor long measured products: its best large matmul.
    b200 = matmul_shape_fraction(get_hardware("b200"), 4096, 4096, 4096)
    assert b200.value == matmul_fraction(get_hardware("b200"), "bf16").value
    assert "no shape table" in b200.name
    # The A100's nearest long product to 4096^3 is 8192^3 (4096^3 is too short to count).
    assert matmul_shape_fraction(A100, 4096, 4096, 4096).value == pytest.approx(253.7 / 312)


def test_measured_points_outside_the_grid_are_fractions_of_their_formats_peak():
    h100_fp8 = {(p.m, p.n, p.k): p.fraction for p in measured_matmul_points(H100, "fp8")}
    # Azure ND H100 v5, cuBLASLt fp8: 1,216.9 and 1,377.3 TFLOP/s of 1,978.9
    assert h100_fp8[(4096, 4096, 4096)] == pytest.approx(1216.9 / 1978.9)
    assert h100_fp8[(16384, 16384, 16384)] == pytest.approx(1377.3 / 1978.9)
    a100 = {(p.m, p.n, p.k): p.fraction for p in measured_matmul_points(A100, "fp16")}
    assert a100[(8192, 8192, 8192)] == pytest.approx(253.7 / 312)
    h200 = {(p.m, p.n, p.k): p.fraction for p in measured_matmul_points(H200, "bf16")}
    assert h200[(8192, 8192, 8192)] == pytest.approx(767.7e12 / PEAK)
    assert h200[(2048, 14336, 4096)] == pytest.approx(749.9e12 / PEAK)
    assert measured_matmul_points(A100, "fp8") == ()


def test_a_matmul_dimension_must_be_positive():
    with pytest.raises(EngineError):
        matmul_shape_fraction(H100, 0, 4096, 4096)


@pytest.mark.parametrize(("chip", "kernel", "direction", "head_dim", "causal", "seqlen",
                          "tflops"), [
    # FlashAttention-3 paper, Figure 5 (forward) and Figure 6 (backward), H100 SXM5
    ("h100-sxm", "fa3", "forward", 128, False, 16384, 648),
    ("h100-sxm", "fa3", "forward", 128, True, 2048, 521),
    ("h100-sxm", "fa3", "forward", 64, True, 512, 197),
    ("h100-sxm", "fa3", "forward", 256, False, 16384, 756),
    ("h100-sxm", "fa2", "forward", 128, False, 4096, 368),
    ("h100-sxm", "fa3", "backward", 128, False, 8192, 559),
    ("h100-sxm", "fa2", "backward", 64, False, 16384, 291),
    # FlashAttention-2 paper, forward + backward, H100 and A100 (Figure 4)
    ("h100-sxm", "fa2", "forward_backward", 128, True, 16384, 328),
    ("a100-80gb", "fa2", "forward_backward", 64, False, 2048, 162),
    ("a100-80gb", "fa2", "forward_backward", 128, True, 16384, 189),
])
def test_a_published_attention_point_returns_its_rate(chip, kernel, direction, head_dim,
                                                      causal, seqlen, tflops):
    hw = get_hardware(chip)
    got = flash_attention_fraction(hw, kernel, direction, head_dim, causal, seqlen)
    assert got.value == pytest.approx(tflops * 1e12 / hw.peak_flops_per_s("bf16"), rel=1e-12)
    assert got.source


def test_attention_between_lengths_is_log_linear_and_holds_its_ends():
    # fa3 forward, head dim 128, causal: 521 at 2k and 579 at 4k; 3k is 0.585 of the way.
    three_k = flash_attention_fraction(H100, "fa3", "forward", 128, True, 3072).value
    w = math.log2(3072 / 2048)
    assert three_k == pytest.approx((521 * (1 - w) + 579 * w) * 1e12 / PEAK)
    assert flash_attention_fraction(H100, "fa3", "forward", 128, True, 128).value == \
        pytest.approx(292e12 / PEAK)
    assert flash_attention_fraction(H100, "fa3", "forward", 128, True, 131072).value == \
        pytest.approx(616e12 / PEAK)


def test_a_gap_the_legend_hid_is_interpolated_over():
    # fa3 forward, head dim 256, no mask: the 1k label is hidden; 512 -> 482, 2k -> 707.
    got = flash_attention_fraction(H100, "fa3", "forward", 256, False, 1024).value
    assert got == pytest.approx((482 + 707) / 2 * 1e12 / PEAK)


def test_attention_the_papers_did_not_measure_is_an_error():
    with pytest.raises(EngineError):
        flash_attention_fraction(H100, "fa3", "backward", 128, True, 4096)
    with pytest.raises(EngineError):
        flash_attention_fraction(A100, "fa3", "forward", 128, False, 4096)


def test_a_causal_mask_and_the_backward_pass_reach_less_of_the_peak():
    forward = flash_attention_fraction(H100, "fa3", "forward", 128, False, 4096).value
    causal = flash_attention_fraction(H100, "fa3", "forward", 128, True, 4096).value
    backward = flash_attention_fraction(H100, "fa3", "backward", 128, False, 4096).value
    assert causal < forward and backward < forward


def test_the_elementwise_stream_is_a_measured_copy_and_other_chips_fall_back():
    assert memory_stream_fraction(H200).value == 0.886  # 4.255 of 4.8 TB/s, first-hand
    assert abs(4.255 / 4.8 - 0.886) < 5e-4
    assert memory_stream_fraction(H100).value == 0.866  # BabelStream copy 2.90 of 3.35
    assert memory_stream_fraction(A100).value == 0.79  # 1.61 of 2.039
    b200 = get_hardware("b200")
    fallback = memory_stream_fraction(b200)
    assert fallback.value == memory_fraction(b200, "bf16").value
    assert "no stream measurement" in fallback.name


def test_the_peak_power_matches_the_hardware_entry_and_its_clock_its_peak():
    for hw in (H100, H200):
        p = peak_power(hw)
        assert p is not None and p.watts == hw.power_W == 700
        # 1,830 MHz x 528 tensor cores x 1,024 FLOP per clock = 989.4 TFLOP/s
        assert p.clock_MHz * 1e6 * 528 * 1024 == pytest.approx(hw.peak_flops_per_s("bf16"),
                                                               rel=1e-4)
    assert peak_power(A100) is None


def test_adam_reads_and_writes_28_bytes_a_parameter_with_bf16_gradients():
    # read fp32 master 4 + moments 4 + 4 + bf16 grad 2 = 14; write 4 + 4 + 4 + bf16 copy 2
    assert adam_bytes_per_param(2).value == 28
    assert adam_bytes_per_param(4).value == 30  # fp32 gradients (Megatron's main_grad)
    with pytest.raises(EngineError):
        adam_bytes_per_param(3)


def test_a_chip_at_its_rated_power_is_not_scaled():
    for chip in ("h100-sxm", "h200", "a100-80gb", "h800", "gh200", "h100-nvl"):
        assert power_cap_scale(get_hardware(chip)).value == 1.0


def test_the_500_w_h100_keeps_the_sxm_peak_and_scales_its_compute_rates_by_500_700():
    capped = get_hardware("h100-hbm2e-500w")
    assert capped.peak_flops_per_s("bf16") == H100.peak_flops_per_s("bf16")  # the bound
    assert capped.bandwidth_bytes_per_s == 2.4e12
    scale = power_cap_scale(capped)
    assert scale.value == pytest.approx(500 / 700)
    for shape in ((8192, 4096, 14336), (1024, 1024, 1024), (4096, 4096, 4096)):
        assert (matmul_shape_fraction(capped, *shape).value
                == pytest.approx(matmul_shape_fraction(H100, *shape).value * 500 / 700))
    a, b = attention_rates(capped, 128, True, 8192), attention_rates(H100, 128, True, 8192)
    assert a.forward.value == pytest.approx(b.forward.value * 500 / 700)
    assert a.backward.value == pytest.approx(b.backward.value * 500 / 700)
    assert "power cap" in a.forward.name
    # memory-bound ops keep the stream fraction of the uncapped die (the SXM's)
    assert memory_stream_fraction(capped).value == memory_stream_fraction(H100).value
    assert "power cap" not in memory_stream_fraction(capped).name


def test_the_cap_rule_reproduces_the_one_gemm_measured_under_a_cap():
    # GB300 at 500 W of 1,400: 617 TFLOP/s measured, 1,600-2,174 at its rated power
    lo, hi = 500 / 1400 * 1600, 500 / 1400 * 2174
    assert lo < 617 < hi


def test_same_die_chips_share_the_h100_sxm_rates():
    for chip in ("h800", "gh200"):
        hw = get_hardware(chip)
        assert (matmul_shape_fraction(hw, 8192, 4096, 14336).value
                == matmul_shape_fraction(H100, 8192, 4096, 14336).value)
        assert (attention_rates(hw, 128, True, 4096).forward.value
                == attention_rates(H100, 128, True, 4096).forward.value)


def test_serving_runs_the_500_w_h100_under_its_cap_as_training_does():
    from engine.numbers.catalog import get_model
    from engine.numbers.expected_serving import expected_serve, maths_rates

    capped = get_hardware("h100-hbm2e-500w")
    for hw in (capped, H100):
        rates = maths_rates(hw, "bf16", "bf16")
        scale = power_cap_scale(hw).value
        assert rates.matmul == pytest.approx(matmul_fraction(hw, "bf16").value * scale)
    m = get_model("llama-3.1-8b")
    # Serving's basis names the cap, as training's does.
    served = expected_serve(m, capped, prompt_tokens=8192, output_tokens=2)
    assert any("power cap" in b.name for b in served.basis)
