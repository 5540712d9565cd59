"""Layers left in host memory (--gpu-layers) in plan(), the command line and the playground,
against hand-worked values for Llama 3.1 8B on an RTX 4090 (PCIe Gen4 x16 to its host)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest
import widget_text

from engine.cli import main
from engine.lesson.plans.plan_json import plan_to_dict
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.errors import EngineError
from engine.numbers.expected_serving import memory_fraction
from engine.numbers.offload import host_link, layer_params, offload
from engine.numbers.plan import plan

# A layer: q, o 4,096^2 + k, v 4,096 x 1,024 + MLP 3 x 4,096 x 14,336 + 2 norms of 4,096
# = 218,112,000 parameters; 32 of them (8,030,261,248 less the embedding, head and final
# norm, 1,050,677,248). 16 in bf16 in host memory: 6,979,584,000 bytes.
LAYER = 218_112_000
HOST_16 = 16 * LAYER * 2
PARAMS = 8_030_261_248
# A decode step reads every weight but the input embedding's other rows: 7,504,924,672
# parameters streamed + one 4,096 row per token (the embedding is untied), in bf16.
READ_1 = (7_504_924_672 + 4096) * 2
KV_PER_TOKEN = 2 * 32 * 8 * 128 * 2  # K and V, 32 layers, 8 heads of 128, bf16: 131,072
PCIE4 = 31.5e9  # 16 GT/s x 16 lanes x 128/130 / 8 bits


def _plan(**kw: object):  # type: ignore[no-untyped-def]
    args: dict[str, object] = {"model": "llama-3.1-8b", "hardware": "rtx-4090",
                               "gpu_layers": 16, **kw}
    return plan(**args)


def test_the_host_link_comes_from_the_chips_link_spec() -> None:
    hw = get_hardware("rtx-4090")
    assert hw.link_spec().host_link_bytes_per_s == PCIE4
    assert host_link(hw).bytes_per_s == PCIE4 and host_link(hw).name == "PCIe Gen4 x16"
    assert host_link(get_hardware("h100-sxm")).bytes_per_s == 63.0e9  # HGX H100: Gen5
    assert host_link(get_hardware("t4")).bytes_per_s == 15.75e9  # Gen3
    assert host_link(get_hardware("gh200")).bytes_per_s == 450e9  # NVLink-C2C 900 both ways


def test_the_split_of_the_weights_by_hand() -> None:
    m, hw = get_model("llama-3.1-8b"), get_hardware("rtx-4090")
    assert layer_params(m) == 32 * LAYER == PARAMS - 1_050_677_248
    o = offload(m, hw, 16, "bf16")
    assert o is not None and o.host_layers == 16 and o.host_weight_bytes == HOST_16
    assert offload(m, hw, 32) is None  # every layer on the GPU: nothing offloaded


def test_memory_per_gpu_and_in_host_memory() -> None:
    p = _plan()
    # 16.06 GB of bf16 weights less the 6.98 GB in host memory: 9.08 GB on the GPU.
    assert p.memory.parts["weights"] == PARAMS * 2 - HOST_16 == 9_080_938_496
    assert p.memory.host_weight_bytes == HOST_16
    data = plan_to_dict(p)["serve"]
    assert isinstance(data, dict)
    assert data["offload"]["host_weight_bytes"] == HOST_16
    assert data["offload"]["host_link_bytes_per_s"] == PCIE4
    # Two GPUs in tensor parallel: each holds half of each part, each reads half over its link.
    two = _plan(gpus=2)
    assert two.memory.parts["weights"] == (PARAMS * 2 - HOST_16) / 2
    assert two.serve is not None and two.serve.offload is not None
    assert two.serve.offload.host_weight_bytes_per_gpu == HOST_16 / 2


def test_decode_and_prefill_bounds_read_the_offloaded_layers_over_pcie() -> None:
    p = _plan(prompt_tokens=1024)
    s = p.serve
    assert s is not None
    # First decode step, context 1,025: HBM reads (15.01 GB less the 6.98 GB offloaded, plus
    # the KV cache 1,025 x 131,072) at 1,008 GB/s, then 6.98 GB at 31.5 GB/s:
    # 7.97 ms + 221.57 ms = 229.7 ms (compute: 16 GFLOP at 165 TFLOP/s, 0.1 ms).
    link = HOST_16 / PCIE4
    assert s.first_step.host_link_seconds == pytest.approx(link)
    assert link == pytest.approx(0.2215741, rel=1e-6)
    hbm = (READ_1 - HOST_16 + 1025 * KV_PER_TOKEN) / 1.008e12
    assert s.first_step.seconds == pytest.approx(hbm + link, rel=1e-9)
    assert s.first_step.bound == "memory"
    # The prefill reads the offloaded weights once too: 221.6 ms of its bound.
    assert s.prefill.host_link_seconds == pytest.approx(link)
    assert s.prefill.seconds >= link
    # All on the GPU: 15.0 ms a token; half the layers in host memory: about 15 times that.
    alone = _plan(prompt_tokens=1024, gpu_layers=None).serve
    assert alone is not None
    assert s.tpot_seconds / alone.tpot_seconds == pytest.approx(15.27, rel=1e-2)


def test_expected_times_read_the_link_at_its_rate_and_hbm_at_its_measured_share() -> None:
    s, alone = _plan().serve, _plan(gpu_layers=None).serve
    assert s is not None and alone is not None
    # The offload moves 6.98 GB from HBM (at the measured share of 1,008 GB/s) to the link
    # (at 31.5 GB/s): the expected step grows by about link - moved HBM time.
    f = memory_fraction(get_hardware("rtx-4090"), "bf16").value
    moved = HOST_16 / (1.008e12 * f)
    grown = s.expected.decode_seconds_per_token - alone.expected.decode_seconds_per_token
    assert grown == pytest.approx(HOST_16 / PCIE4 - moved, rel=2e-2)
    assert s.expected.decode_seconds_per_token > s.tpot_seconds
    assert any("host link" in b.name for b in s.expected.basis)


def test_a_request_joining_the_batch_reads_the_offloaded_layers_over_the_link_too() -> None:
    # Batch 8: the joining step prefills 512 prompt tokens beside 7 decodes, one pass that
    # reads the 16 offloaded layers' weights once over the link (a dense model: all of them).
    s, alone = _plan(batch=8).serve, _plan(batch=8, gpu_layers=None).serve
    assert s is not None and alone is not None
    link = HOST_16 / PCIE4
    assert s.joining.host_link_seconds == pytest.approx(link)
    assert alone.joining.host_link_seconds == 0.0
    # The bound: HBM reads less the offloaded bytes, plus their time over the link (the
    # step stays memory-bound on a 4090 with half its layers on the host).
    moved = HOST_16 / 1.008e12
    assert s.joining.memory_seconds == pytest.approx(
        alone.joining.memory_seconds - moved + link, rel=1e-9)
    assert s.ttft_at_batch_seconds == s.joining.seconds >= link
    # Expected: the link at its rate, the rest of the memory at HBM's measured share, the
    # maths partly overlapped with both; the moved bytes' HBM time at that share comes off.
    f = memory_fraction(get_hardware("rtx-4090"), "bf16").value
    memory = link + (alone.joining.memory_seconds - moved) / f
    assert s.expected.ttft_seconds > memory
    grown = s.expected.ttft_seconds - alone.expected.ttft_seconds
    assert 0 < grown < link - moved / f
    assert s.expected.ttft_idle_seconds > alone.expected.ttft_idle_seconds


def test_a_mixture_reads_only_the_experts_its_tokens_reach_from_host_memory() -> None:
    m = get_model("mixtral-8x7b")
    p = plan(model=m, hardware="h100-sxm", gpu_layers=16, weight_format="fp8")
    s = p.serve
    assert s is not None and s.offload is not None
    # One token reaches 2 of 8 experts: of the 16 offloaded layers' weights (1 byte each in
    # fp8), the shared part whole and a quarter of the routed experts cross the link.
    shared = layer_params(m) - m.routed_params
    read = 16 / 32 * (shared + m.routed_params * 2 / 8)
    assert s.first_step.host_link_seconds == pytest.approx(read / 63.0e9)
    assert s.offload.host_weight_bytes == pytest.approx(16 / 32 * layer_params(m))


def test_every_layer_on_the_gpu_is_the_plan_without_offload() -> None:
    assert plan_to_dict(_plan(gpu_layers=32)) == plan_to_dict(_plan(gpu_layers=None))
    # On a unified-memory chip too: nothing is offloaded, so nothing is refused.
    plan(model="llama-3.1-8b", hardware="apple-m2-ultra", gpu_layers=32)


@pytest.mark.parametrize(("kw", "words"), [
    ({"gpu_layers": 33}, "32 layers"), ({"gpu_layers": -1}, "too small"),
    ({"gpu_layers": 1.5}, "whole number"), ({"gpu_layers": "nan"}, ""),
    ({"gpu_layers": "1e400"}, ""), ({"gpu_layers": "<script>"}, ""),
    ({"gpu_layers": 8, "hardware": "apple-m2-ultra"}, "unified memory"),
    ({"gpu_layers": 8, "hardware": "xeon-8480c"}, "does not say"),
    ({"gpu_layers": 8, "task": "train"}, "serving"),
])
def test_bad_layer_counts_and_chips_are_refused_by_name(kw: dict[str, object], words: str
                                                        ) -> None:
    with pytest.raises(EngineError) as e:
        _plan(**kw)
    assert e.value.field == "gpu_layers" and words in e.value.message


def _cli(args: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(args)
    return code, out.getvalue() + err.getvalue()


def test_cli_takes_gpu_layers_and_refuses_hostile_values() -> None:
    base = ["plan", "--model", "llama-3.1-8b", "--hardware", "rtx-4090"]
    code, text = _cli([*base, "--gpu-layers", "16", "--json"])
    assert code == 0
    data = json.loads(text)
    assert data["serve"]["offload"]["host_weight_bytes"] == HOST_16
    assert data["memory"]["parts"]["weights"] == PARAMS * 2 - HOST_16
    code, text = _cli([*base, "--gpu-layers", "16"])
    assert code == 0 and "16 of 32 layers stay in host memory: 6.98 GB" in text
    assert "PCIe Gen4 x16" in text
    for value in ("1e9999", "-1", "💥", "\x00", "33"):
        code, text = _cli([*base, "--gpu-layers", value])
        assert code == 2 and "--gpu-layers" in text and "Traceback" not in text


def test_the_playground_asks_for_the_layers_and_shows_the_split() -> None:
    text = widget_text.render("playground", model="llama-3.1-8b", hardware="rtx-4090",
                              gpu_layers="16")
    assert "16 of 32 layers stay in host memory" in text and "--gpu-layers 16" in text
    with pytest.raises(EngineError) as e:
        widget_text.render("playground", model="llama-3.1-8b", hardware="rtx-4090",
                           gpu_layers="<script>alert(1)</script>")
    assert e.value.field == "gpu_layers"
