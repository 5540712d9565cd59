"""Does the engine's capacity hold on a real GPU? (run on the device machine)

Allocates, in 256 MiB pieces, as much device memory as one process can get after the CUDA
context, and then the bytes the engine says serving Llama 3.1 70B in bf16 with an
8,192-token context needs on this chip (weights + KV cache + activations; the runtime
overhead allowance is what the context takes). Prints a JSON summary.

Usage (on the device machine): python3 bench/fit_check.py [OUT_DIR]
Needs PyTorch with CUDA. Nothing here runs in CI.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.numbers.memory import RUNTIME_OVERHEAD_BYTES, serving_memory

PIECE_BYTES = 256 * 2**20
HARDWARE = {"NVIDIA H200": "h200", "NVIDIA H100 80GB HBM3": "h100-sxm"}


def grab(limit_bytes: float) -> int:
    """Bytes allocated in PIECE_BYTES pieces, up to ``limit_bytes`` or until out of memory."""
    held = []
    got = 0
    try:
        while got + PIECE_BYTES <= limit_bytes:
            held.append(torch.empty(PIECE_BYTES, dtype=torch.uint8, device="cuda"))
            got += PIECE_BYTES
    except torch.OutOfMemoryError:
        pass
    del held
    torch.cuda.empty_cache()
    return got


def main() -> None:
    props = torch.cuda.get_device_properties(0)
    free, total = torch.cuda.mem_get_info()
    hw_id = HARDWARE.get(props.name)
    out: dict[str, object] = {"device": props.name, "total_memory_bytes": props.total_memory,
                              "free_after_context_bytes": free, "mem_get_info_total": total}
    out["max_allocatable_bytes"] = grab(float("inf"))
    if hw_id is not None:
        mem = serving_memory("llama-3.1-70b", hw_id)
        need = mem.per_gpu_bytes - RUNTIME_OVERHEAD_BYTES
        out.update({
            "engine_hardware": hw_id, "engine_capacity_bytes": mem.capacity_bytes,
            "engine_fits": mem.fits, "engine_needs_bytes": mem.per_gpu_bytes,
            "engine_needs_without_overhead_bytes": need,
            "allocated_what_the_engine_needs": grab(need) + PIECE_BYTES > need,
            "context_and_reserve_bytes": props.total_memory - int(out["max_allocatable_bytes"]),
            "engine_overhead_allowance_bytes": RUNTIME_OVERHEAD_BYTES,
        })
    text = json.dumps(out, indent=1)
    print(text)
    if len(sys.argv) > 1:
        Path(sys.argv[1], "fit_check.json").write_text(text + "\n")


if __name__ == "__main__":
    main()
