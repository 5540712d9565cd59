"""First-hand measurements on a lent GPU for the reality page (run on the device machine).

Measures, with CUDA events (median of repeats, after warm-up, on random data):
- addressable device memory (bytes the driver reports; the card is sold as "141 GB");
- dense matrix products in bf16 and fp8 (e4m3, torch._scaled_mm) at several sizes, in FLOP/s;
- memory bandwidth: a device-to-device copy (bytes read + written) and a pure read (sum);
- a Llama 3.1 8B-shaped decode step (32 layers, hidden 4096, 32 query / 8 KV heads,
  FFN 14336 gated, vocabulary 128,256, bf16 random weights; RMSNorm, no rotary) in plain
  PyTorch with CUDA graphs, at several batch sizes and one context, and one prefill.

Also, when named: the 8B shapes at 8,192 and 32,768 tokens of context (llama_8b_long_context)
and Llama 3.1 70B shapes in bf16 on the one GPU (llama_70b_shaped; about 139 GB of weights
without the embedding table, which a decode step only indexes).

Usage (on the device machine): python3 bench/gpu_measure.py [OUT_DIR] [SECTION,SECTION...]
(default section: llama_8b_shaped; device, matmul and bandwidth always run)
Needs PyTorch with CUDA. Prints a table and writes gpu_measure.json. Nothing here runs in CI.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812  (the usual PyTorch name)

RESULTS: dict[str, Any] = {}


def bench(fn: Callable[[], object], repeats: int = 20, warmup: int = 5) -> float:
    """Median seconds of fn() over repeats, timed with CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def section(name: str, body: Callable[[], dict[str, Any]]) -> None:
    t = time.time()
    try:
        RESULTS[name] = body()
    except Exception as exc:  # one failed section must not lose the others
        RESULTS[name] = {"error": repr(exc)}
    print(f"[{name}] {time.time() - t:.1f} s: {json.dumps(RESULTS[name])}", flush=True)
    torch.cuda.empty_cache()


def device() -> dict[str, Any]:
    props = torch.cuda.get_device_properties(0)
    free, total = torch.cuda.mem_get_info()
    return {
        "name": props.name,
        "total_memory_bytes": props.total_memory,
        "mem_get_info_total_bytes": total,
        "mem_get_info_free_bytes": free,
        "multiprocessors": props.multi_processor_count,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
    }


def matmul() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m, n, k in [(8192, 8192, 8192), (16384, 16384, 8192), (4096, 4096, 4096), (2048, 2048, 2048)]:
        sets = [(torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                 torch.randn(k, n, device="cuda", dtype=torch.bfloat16)) for _ in range(3)]
        i = [0]

        def run() -> object:
            a, b = sets[i[0] % 3]  # noqa: B023, F821  (called before the loop moves on)
            i[0] += 1  # noqa: B023
            return a @ b

        s = bench(run, repeats=30)
        out[f"bf16_{m}x{n}x{k}_TFLOP_per_s"] = round(2 * m * n * k / s / 1e12, 1)
        del sets
    # fp8 e4m3 with per-tensor scales (what Hopper's fp8 tensor cores run)
    m = n = k = 8192
    a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
    one = torch.tensor(1.0, device="cuda")
    s = bench(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16), repeats=30)
    out["fp8_8192_TFLOP_per_s"] = round(2 * m * n * k / s / 1e12, 1)
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.float32)
    torch.backends.cuda.matmul.allow_tf32 = False
    s = bench(lambda: x @ x, repeats=10)
    out["fp32_8192_TFLOP_per_s"] = round(2 * 8192**3 / s / 1e12, 1)
    return out


def bandwidth() -> dict[str, Any]:
    n_bytes = 4 * 2**30
    src = torch.randn(n_bytes // 2, device="cuda", dtype=torch.bfloat16)
    dst = torch.empty_like(src)
    s_copy = bench(lambda: dst.copy_(src), repeats=20)
    s_read = bench(lambda: src.sum(dtype=torch.float32), repeats=20)
    return {
        "copy_bytes_read_plus_written": 2 * n_bytes,
        "copy_TB_per_s": round(2 * n_bytes / s_copy / 1e12, 3),
        "read_sum_TB_per_s": round(n_bytes / s_read / 1e12, 3),
    }


LLAMA_8B = (32, 4096, 32, 8, 128, 14336, 128256)
LLAMA_70B = (80, 8192, 64, 8, 128, 28672, 128256)


def llama_8b_shaped() -> dict[str, Any]:
    return llama_shaped(LLAMA_8B, [1, 8, 32, 64, 128, 256], [1024], [(1, 2048), (1, 8192), (8, 2048)])


def llama_8b_long_context() -> dict[str, Any]:
    return llama_shaped(LLAMA_8B, [1, 16], [8192, 32768], [])


def llama_8b_short_prefill() -> dict[str, Any]:
    """Short prompts, where fixed costs per kernel rather than FLOPs or bytes set the time:
    prefill of 1 x 16 ... 1 x 1,024 tokens run eagerly (no CUDA graph, as serving stacks run
    prefill), and one eager decode step for comparison with the graph-captured ones."""
    return llama_shaped(LLAMA_8B, [], [], [(1, 16), (1, 128), (1, 512), (1, 1024)],
                        eager_decode=True)


def llama_70b_shaped() -> dict[str, Any]:
    """Llama 3.1 70B shapes in bf16 (about 141 GB of weights) on the one GPU, if they fit."""
    return llama_shaped(LLAMA_70B, [1, 8], [1024], [(1, 2048)])


def llama_shaped(
    shape: tuple[int, ...],
    batches: list[int],
    contexts: list[int],
    prefills: list[tuple[int, int]],
    *,
    eager_decode: bool = False,
) -> dict[str, Any]:
    layers, hidden, heads, kv_heads, head_dim, ffn, vocab = shape
    dt = torch.bfloat16

    def w(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, device="cuda", dtype=dt) * 0.02

    blocks = [dict(qkv=w(hidden, (heads + 2 * kv_heads) * head_dim), o=w(heads * head_dim, hidden),
                   gate_up=w(hidden, 2 * ffn), down=w(ffn, hidden),
                   n1=torch.ones(hidden, device="cuda", dtype=dt), n2=torch.ones(hidden, device="cuda", dtype=dt))
              for _ in range(layers)]
    lm_head = w(hidden, vocab)
    weight_bytes = sum(t.numel() * 2 for b in blocks for t in b.values()) + lm_head.numel() * 2

    def rms(x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (hidden,), g, 1e-5)

    def forward(x: torch.Tensor, ks: list[torch.Tensor], vs: list[torch.Tensor], causal: bool) -> torch.Tensor:
        bsz, t, _ = x.shape
        for i, b in enumerate(blocks):
            h = rms(x, b["n1"]) @ b["qkv"]
            q, k, v = h.split([heads * head_dim, kv_heads * head_dim, kv_heads * head_dim], dim=-1)
            q = q.view(bsz, t, heads, head_dim).transpose(1, 2)
            if causal:
                k = k.view(bsz, t, kv_heads, head_dim).transpose(1, 2)
                v = v.view(bsz, t, kv_heads, head_dim).transpose(1, 2)
            else:  # decode: the new token's K/V go to the cache's last slot, attention over the cache
                ks[i][:, :, -1:, :] = k.view(bsz, t, kv_heads, head_dim).transpose(1, 2)
                vs[i][:, :, -1:, :] = v.view(bsz, t, kv_heads, head_dim).transpose(1, 2)
                k, v = ks[i], vs[i]
            a = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
            x = x + a.transpose(1, 2).reshape(bsz, t, heads * head_dim) @ b["o"]
            g, u = (rms(x, b["n2"]) @ b["gate_up"]).split([ffn, ffn], dim=-1)
            x = x + (F.silu(g) * u) @ b["down"]
        return x[:, -1, :] @ lm_head

    out: dict[str, Any] = {"weight_bytes": weight_bytes, "implementation":
                           "plain PyTorch, bf16, CUDA graph per decode step, SDPA attention"}
    with torch.no_grad():
        for context in contexts:
            for batch in batches:
                out.update(decode_step(forward, shape, weight_bytes, batch, context))
                torch.cuda.empty_cache()
        for batch, tokens in prefills:
            x = torch.randn(batch, tokens, hidden, device="cuda", dtype=dt)
            s = bench(lambda: forward(x, [], [], True), repeats=10, warmup=3)  # noqa: B023
            out[f"prefill_b{batch}_t{tokens}_ms"] = round(s * 1e3, 2)
            params = weight_bytes / 2
            out[f"prefill_b{batch}_t{tokens}_TFLOP_per_s_2N"] = round(2 * params * batch * tokens / s / 1e12, 1)
        if eager_decode:
            ks = [torch.randn(1, kv_heads, 1024, head_dim, device="cuda", dtype=dt) for _ in range(layers)]
            vs = [torch.randn(1, kv_heads, 1024, head_dim, device="cuda", dtype=dt) for _ in range(layers)]
            x = torch.randn(1, 1, hidden, device="cuda", dtype=dt)
            s = bench(lambda: forward(x, ks, vs, False), repeats=30)
            out["decode_b1_ctx1024_eager_ms"] = round(s * 1e3, 3)
    return out


def decode_step(
    forward: Callable[..., torch.Tensor],
    shape: tuple[int, ...],
    weight_bytes: int,
    batch: int,
    context: int,
) -> dict[str, float]:
    """One decode step over a full KV cache of ``context`` tokens, captured in a CUDA graph."""
    layers, hidden, _heads, kv_heads, head_dim, _ffn, _vocab = shape
    dt = torch.bfloat16
    ks = [torch.randn(batch, kv_heads, context, head_dim, device="cuda", dtype=dt) for _ in range(layers)]
    vs = [torch.randn(batch, kv_heads, context, head_dim, device="cuda", dtype=dt) for _ in range(layers)]
    x = torch.randn(batch, 1, hidden, device="cuda", dtype=dt)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            forward(x, ks, vs, False)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        forward(x, ks, vs, False)
    s = bench(graph.replay, repeats=30)
    kv_bytes = 2 * layers * batch * kv_heads * context * head_dim * 2
    key = f"decode_b{batch}_ctx{context}"
    return {
        f"{key}_ms": round(s * 1e3, 3),
        f"{key}_bytes_read_TB_per_s": round((weight_bytes + kv_bytes) / s / 1e12, 3),
        f"{key}_tokens_per_s": round(batch / s, 1),
    }


def main() -> None:
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    section("device", device)
    section("matmul", matmul)
    section("bandwidth", bandwidth)
    wanted = sys.argv[2].split(",") if len(sys.argv) > 2 else ["llama_8b_shaped"]
    for name in wanted:
        section(name, globals()[name])
    with open(f"{out_dir}/gpu_measure.json", "w") as f:
        json.dump(RESULTS, f, indent=1)
    try:
        import subprocess
        print(subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,clocks.sm,clocks.mem,power.draw",
                              "--format=csv"], capture_output=True, text=True).stdout)
    except OSError:
        pass


if __name__ == "__main__":
    main()
