"""Collectives over the catalogue's links, against values worked by hand.

Sources: link speeds from the datasheets in data/links.toml (H100 NVLink 900 GB/s both ways =
450 each way; DGX H100 ConnectX-7 400 Gb/s = 50 GB/s per GPU; PCIe Gen4 x16 ~32 GB/s each
way); latencies from NCCL's cost model (src/graph/tuning.cc: ring/LL base 3.6 us, 0.47 us per
NVLink step, 1.0 per PCIe step, 2.7 per network step); bus-bandwidth fraction 0.8 (nccl-tests
busbw 230-250 GB/s of 300 on 8 x A100).
"""

import pytest

from engine.numbers.catalog.hardware import list_hardware
from engine.numbers.catalog.links import get_links, list_links
from engine.numbers.communication import (
    all_gather_seconds,
    all_reduce_seconds,
    all_to_all_seconds,
    group_link,
    pipeline_bubble_fraction,
    reduce_scatter_seconds,
)

GB = 1e9


def test_every_chip_has_links():
    assert {h.id for h in list_hardware()} == {link.hardware_id for link in list_links()}


def test_h100_nvlink_is_450_each_way():
    # NVIDIA H100 datasheet: 900 GB/s per GPU, both directions together.
    assert get_links("h100-sxm").scale_up_bytes_per_s == 450 * GB
    assert get_links("h100-sxm").scale_out_bytes_per_s == 50 * GB  # 400 Gb/s NDR
    assert get_links("b200").scale_up_bytes_per_s == 900 * GB  # 1,800 both ways
    assert get_links("a100-80gb").scale_up_bytes_per_s == 300 * GB  # 600 both ways
    assert get_links("l40s").scale_up_bytes_per_s == 32 * GB  # PCIe Gen4 x16


def test_ring_all_reduce_8_h100_by_hand():
    # 1 GB over 8 GPUs: 2 x 7/8 x 1e9 / (450e9 x 0.8) = 4.8611 ms; latency 3.6 + 14 x 0.47 us.
    link = group_link(get_links("h100-sxm"), 8)
    assert link.servers == 1
    expected = 2 * 7 / 8 * 1e9 / 360e9 + (3.6 + 14 * 0.47) * 1e-6
    assert all_reduce_seconds(1e9, link) == pytest.approx(expected, rel=1e-12)
    assert all_reduce_seconds(1e9, link) == pytest.approx(4.8713e-3, rel=1e-4)


def test_small_all_reduce_is_latency():
    # Decode at batch 1 of an 8,192-wide model: 16 KB; the latency (10.2 us) dominates.
    link = group_link(get_links("h100-sxm"), 8)
    t = all_reduce_seconds(8192 * 2, link)
    assert 10e-6 < t < 11e-6


def test_all_gather_and_reduce_scatter_move_half_an_all_reduce():
    link = group_link(get_links("h100-sxm"), 8)
    ag = all_gather_seconds(1e9, link)
    assert ag == pytest.approx(7 / 8 * 1e9 / 360e9 + (3.6 + 7 * 0.47) * 1e-6, rel=1e-12)
    assert reduce_scatter_seconds(1e9, link) == ag
    assert all_to_all_seconds(1e9, link) == ag


def test_two_servers_are_limited_by_the_network():
    # 16 H100s in 2 DGX: min(450, 8 x 50) x 0.8 = 320 GB/s; 30 steps, 2 of them between servers.
    link = group_link(get_links("h100-sxm"), 16)
    assert link.servers == 2
    assert link.bytes_per_s == pytest.approx(320 * GB)
    lat = (3.6 + 28 * 0.47 + 2 * 2.7) * 1e-6
    assert all_reduce_seconds(0, link) == pytest.approx(lat, rel=1e-12)


def test_one_gpu_per_server_gets_one_nic():
    # Data-parallel groups beside tensor parallelism of 8: one GPU per server, 50 x 0.8 GB/s.
    link = group_link(get_links("h100-sxm"), 64, per_server=1)
    assert link.servers == 64
    assert link.bytes_per_s == pytest.approx(40 * GB)


def test_pcie_cards():
    # 2 x L40S over PCIe Gen4: 1 GB all-reduce = 2 x 1/2 x 1e9 / (32e9 x 0.8) + (3.6 + 2 x 1.0) us
    link = group_link(get_links("l40s"), 2)
    assert all_reduce_seconds(1e9, link) == pytest.approx(1e9 / 25.6e9 + 5.6e-6, rel=1e-12)
    # H100 PCIe: the NVLink bridge joins pairs only; four cards talk over PCIe Gen5.
    assert group_link(get_links("h100-pcie"), 2).link_bytes_per_s == 300 * GB
    assert group_link(get_links("h100-pcie"), 4).link_bytes_per_s == 64 * GB


def test_one_chip_costs_nothing():
    link = group_link(get_links("h100-sxm"), 1)
    assert all_reduce_seconds(1e12, link) == 0.0
    assert all_gather_seconds(1e12, link) == 0.0


def test_pipeline_bubble():
    # Narayanan et al. 2021 (section 2.2): (p - 1) / (m + p - 1); 4 stages, 12 micro-batches.
    assert pipeline_bubble_fraction(4, 12) == pytest.approx(3 / 15)
    assert pipeline_bubble_fraction(1, 5) == 0.0


def test_mi300x_collectives_follow_rccl_cost_model():
    # ROCm/rccl src/graph/tuning.cc: baseLat Ring/LL 12.0 us, 0.8 us per xGMI step. A 16 KB
    # all-reduce over 8 MI300X: 2 x 7/8 x 16,384 / (448e9 x 0.8) + (12.0 + 14 x 0.8) us
    # = 0.08 + 23.2 = 23.28 us (NCCL's NVLink figures would give 10.2 us).
    link = group_link(get_links("mi300x"), 8)
    by_hand = 2 * 7 / 8 * 16_384 / (448e9 * 0.8) + (12.0 + 14 * 0.8) * 1e-6
    assert all_reduce_seconds(16_384, link) == pytest.approx(by_hand, rel=1e-12)
    assert all_reduce_seconds(16_384, link) == pytest.approx(23.28e-6, rel=1e-3)
    assert "rccl" in get_links("mi300x").latency_source.lower()
    # NVIDIA chips keep NCCL's base latency.
    assert get_links("h100-sxm").base_latency_seconds == pytest.approx(3.6e-6)
