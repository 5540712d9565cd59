"""First-hand checks of the expected-time model's small effects (run on the device machine).

Measures, with CUDA events (median after warm-up, random data, one GPU):
- kernel latency: 1,000 tiny element-wise kernels captured in one CUDA graph, seconds each
  (the engine's per-kernel cost, data/efficiency.toml [kernels]);
- matrix products of a Llama 3.1 8B MLP shape (M x 4,096 times 4,096 x 14,336, bf16) for
  M = 1 to 8,192 tokens: the weights' bytes per second and the FLOP/s reached, to see where
  a step turns from reading weights to computing, and how sharp the turn is;
- short prefills of the Llama 3.1 8B shapes (128 and 512 tokens; 8 x 128) in plain PyTorch.

Usage (on the device machine): python3 bench/gpu_kernels.py [OUT_DIR]
Needs PyTorch with CUDA. Writes gpu_kernels.json. Nothing here runs in CI.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import torch
from gpu_measure import LLAMA_8B, RESULTS, bench, llama_shaped, section


def kernel_latency() -> dict[str, Any]:
    x = torch.zeros(4096, device="cuda")
    n = 1000
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        x.add_(1.0)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(n):
            x.add_(1.0)
    s = bench(graph.replay, repeats=20)
    return {"kernels": n, "graph_us_per_kernel": round(s / n * 1e6, 3)}


def gemm_small_m() -> dict[str, Any]:
    k, n = 4096, 14336
    w = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    out: dict[str, Any] = {"shape": f"M x {k} @ {k} x {n}, bf16"}
    for m in (1, 16, 64, 128, 256, 512, 1024, 2048, 8192):
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        s = bench(lambda: x @ w, repeats=50, warmup=10)  # noqa: B023
        out[f"m{m}_us"] = round(s * 1e6, 2)
        out[f"m{m}_weights_TB_per_s"] = round(k * n * 2 / s / 1e12, 3)
        out[f"m{m}_TFLOP_per_s"] = round(2 * m * k * n / s / 1e12, 1)
    return out


def llama_8b_short_prefill() -> dict[str, Any]:
    return llama_shaped(LLAMA_8B, [], [], [(1, 128), (1, 512), (8, 128)])


def main() -> None:
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    section("kernel_latency", kernel_latency)
    section("gemm_small_m", gemm_small_m)
    section("llama_8b_short_prefill", llama_8b_short_prefill)
    with open(f"{out_dir}/gpu_kernels.json", "w") as f:
        json.dump(RESULTS, f, indent=1)


if __name__ == "__main__":
    main()
