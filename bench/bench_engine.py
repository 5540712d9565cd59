"""Benchmark: plan() calls per second and the time of ``import engine`` (fresh process).

    .venv/bin/python bench/bench_engine.py

Targets (engine contract): >= 20,000 plan() calls/s in CPython; import engine < 50 ms.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CASES = [
    {"model": "llama-3.1-8b", "hardware": "h100-sxm", "task": "serve"},
    {
        "model": "llama-3.1-70b",
        "hardware": "h100-sxm",
        "gpus": 2,
        "task": "serve",
        "context_tokens": 32768,
        "batch": 4,
    },
    {"params": 7.5e9, "hardware": "a100-80gb", "gpus": 64, "task": "train", "sharding": "zero3"},
    {
        "model": "llama-3.1-405b",
        "hardware": "h100-sxm",
        "gpus": 16384,
        "task": "train",
        "tokens": 15.6e12,
        "mfu": 0.4,
    },
]


def import_ms(runs: int = 7) -> float:
    code = (
        "import time; t = time.perf_counter(); import engine; "
        "print((time.perf_counter() - t) * 1e3)"
    )
    times = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True
            ).stdout
        )
        for _ in range(runs)
    ]
    return statistics.median(times)


def import_plan_ms(runs: int = 5) -> float:
    code = (
        "import time; t = time.perf_counter(); from engine.plan import plan; "
        "plan(model='llama-3.1-8b'); print((time.perf_counter() - t) * 1e3)"
    )
    times = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True
            ).stdout
        )
        for _ in range(runs)
    ]
    return statistics.median(times)


def rate(fn: object, seconds: float = 1.0) -> float:
    assert callable(fn)
    n = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(200):
            fn()
        n += 200
    return n / elapsed


def main() -> None:
    from engine.plan import plan

    print(f"Python {sys.version.split()[0]}")
    for case in CASES:
        calls = rate(lambda case=case: plan(**case))
        with_dict = rate(lambda case=case: plan(**case).to_dict(), 0.5)
        label = ", ".join(f"{k}={v}" for k, v in case.items())
        print(f"plan({label}): {calls:,.0f} calls/s; with to_dict(): {with_dict:,.0f}/s")
    print(f"import engine (fresh process, median of 7): {import_ms():.1f} ms")
    print(
        f"import engine.plan + first plan() (fresh process, catalogue load): "
        f"{import_plan_ms():.1f} ms"
    )


if __name__ == "__main__":
    main()
