"""Offloading layers to host memory, against hand-worked values."""

from __future__ import annotations

import pytest

from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.errors import EngineError
from engine.numbers.offload import host_link_bytes_per_s, offload


def test_rtx_4090_llama_8b_with_16_of_32_layers_on_the_gpu() -> None:
    m, hw = get_model("llama-3.1-8b"), get_hardware("rtx-4090")
    assert host_link_bytes_per_s(hw) == 31.5e9  # PCIe Gen4 x16: 16 GT/s x 16 x 128/130 / 8
    o = offload(m, hw, 16, "bf16")
    # A layer: q, o 4,096^2 + k, v 4,096 x 1,024 + MLP 3 x 4,096 x 14,336 + 2 norms of 4,096
    # = 218,112,000 parameters (32 of them: 8,030,261,248 less the embedding, head and final
    # norm, 1,050,677,248); 16 of them in bf16 on the host: 6.98 GB read over PCIe.
    assert o.host_bytes == 16 * 218_112_000 * 2
    assert o.gpu_weight_bytes == 8_030_261_248 * 2 - 16 * 218_112_000 * 2
    # 9.08 GB / 1,008 GB/s + 6.98 GB / 31.5 GB/s = 9.0 ms + 221.6 ms a token.
    assert o.weight_read_seconds == pytest.approx(
        9_080_938_496 / hw.bandwidth_bytes_per_s + 6_979_584_000 / 31.5e9)
    # All 32 on the GPU: 16.06 GB / 1,008 GB/s = 15.9 ms; half offloaded is 14.5 times that.
    assert o.weight_read_seconds == pytest.approx(14.47 * offload(m, hw, 32).weight_read_seconds,
                                                  rel=1e-3)


def test_sxm_parts_use_their_boards_link_and_unified_memory_is_refused() -> None:
    assert host_link_bytes_per_s(get_hardware("h100-sxm")) == 63.0e9
    with pytest.raises(EngineError) as e:
        host_link_bytes_per_s(get_hardware("apple-m2-ultra"))
    assert e.value.field == "gpu_layers"
