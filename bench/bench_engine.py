"""Benchmark: plan() calls per second, the time of ``import engine`` (fresh process), and
the cost of the calls the browser makes every frame or keystroke.

    .venv/bin/python bench/bench_engine.py

Targets: >= 20,000 plan() calls/s in CPython; import engine < 50 ms; training_run_at under
50 µs and a training-run widget frame under 2 ms (so an animation never waits on the engine).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from results import replace_section  # noqa: E402

LINES: list[str] = []


def report(line: str) -> None:
    """Print a figure and keep it for bench/RESULTS.md."""
    print(line)
    LINES.append(line)


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
        "import time; t = time.perf_counter(); from engine.numbers.plan import plan; "
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


def print_per_frame_costs() -> None:
    import json

    from engine.browser import update
    from engine.numbers.training_run import TrainingRunInputs, training_run_at
    from engine.registry import get_widget

    inputs = TrainingRunInputs(
        params=8.03e9, tokens=1e12, gpus=8, peak_flops_per_s=989.4e12, mfu=0.4
    )
    clock = iter(range(10**9))
    per_call = 1 / rate(lambda: training_run_at(inputs, float(next(clock) * 7)), 0.5)
    report(f"training_run_at(): {per_call * 1e6:.1f} µs per call (target < 50 µs)")
    widget = get_widget("training_run")
    values = widget.defaults()
    frames = iter(range(10**9))

    def frame() -> None:
        values["elapsed"] = str(next(frames) * 3e5)
        widget.run(values)

    report(f"training_run widget frame: {1e3 / rate(frame, 0.5):.2f} ms (target < 2 ms)")
    for name in ("model_size", "serve_plan", "playground"):
        payload = json.dumps(get_widget(name).defaults())
        per_update = 1e3 / rate(lambda name=name, payload=payload: update(name, payload), 0.5)
        report(f"update('{name}') through the browser entry point: {per_update:.2f} ms")


def print_server_simulation() -> None:
    """CPython's time to simulate 1,000 requests (Llama 3.1 8B on an H100, 1,024 in and 256
    out, closed loop at concurrency 64), median of 3."""
    from engine.numbers.catalog import get_hardware, get_model
    from engine.numbers.load.load_request import load_request, serve_load
    from engine.numbers.serve_request import serve_request

    serve = serve_request(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), gpus=1,
                          serve_tp=None, batch=1, weight_format="bf16", kv_format="bf16",
                          context_tokens=8192, prompt_tokens=1024, output_tokens=256)
    load = load_request(concurrency=64, requests=1000)
    assert load is not None
    times = []
    for _ in range(3):
        start = time.perf_counter()
        serve_load(serve, load)
        times.append(time.perf_counter() - start)
    report(f"server simulation, 1,000 requests at concurrency 64: "
           f"{statistics.median(times):.3f} s (target < 0.3 s)")


# Run inside Pyodide by print_pyodide_times(); its last expression is what it prints. The
# site's trimmed standard library has no statistics module: the median of 3 is sorted()[1].
_PYODIDE_SIMULATION = """
import sys, time
from engine.numbers.catalog import get_hardware, get_model
from engine.numbers.load.load_request import load_request, serve_load
from engine.numbers.serve_request import serve_request
serve = serve_request(get_model("llama-3.1-8b"), get_hardware("h100-sxm"), gpus=1,
                      serve_tp=None, batch=1, weight_format="bf16", kv_format="bf16",
                      context_tokens=8192, prompt_tokens=1024, output_tokens=256)
load = load_request(concurrency=64, requests=1000)
times = []
for _ in range(3):
    start = time.perf_counter()
    serve_load(serve, load)
    times.append(time.perf_counter() - start)
f"{sys.version.split()[0]} {sorted(times)[1]:.3f}"
"""

# dgx-1's saturated press and the curve after it, medians of 3 in `times`: run inside Pyodide
# by print_pyodide_times() and in CPython by print_dgx_traffic().
_PYODIDE_TRAFFIC = """
import time
from engine.lesson import cluster, dgx_load, dgx_view
from engine.widgets.dgx_traffic import WIDGET
deployed = cluster.deploy(cluster.new_cluster("dgx-1"), "llama-3.1-8b", (0,), "bf16",
                          8192, 16).state
notch = str(cluster.TRAFFIC_RATES.index(64.0))
press, drawn = [], []
for _ in range(3):
    dgx_load.forget_runs()
    start = time.perf_counter()
    on = WIDGET.run(WIDGET.defaults({"state": dgx_view.dump_state(deployed),
                                     "rate_notch": notch}), "start")
    press.append(time.perf_counter() - start)
    start = time.perf_counter()
    WIDGET.run(WIDGET.defaults({"state": on.set_inputs["state"], "rate_notch": notch,
                                "curve_beside": "fp8"}), "curve")
    drawn.append(time.perf_counter() - start)
times = (sorted(press)[1], sorted(drawn)[1])
f"{times[0]:.3f} {times[1]:.3f}"
"""

# The playground's "Find the cheapest plan" pressed at its defaults (serving Llama 3.1 8B at
# 16 requests in flight, TTFT p90 <= 0.5 s, TPOT p90 <= 50 ms; training it on 1e12 tokens in
# 30 days), the search and its page, medians of 3 in `times`: run inside Pyodide by
# print_pyodide_times() and in CPython by print_search().
_PYODIDE_SEARCH = """
import time
from engine.widgets.plan_search import WIDGET
serve, train = [], []
for _ in range(3):
    start = time.perf_counter()
    WIDGET.run(WIDGET.defaults(), "search")
    serve.append(time.perf_counter() - start)
    start = time.perf_counter()
    WIDGET.run(WIDGET.defaults({"task": "train"}), "search")
    train.append(time.perf_counter() - start)
times = (sorted(serve)[1], sorted(train)[1])
f"{times[0]:.3f} {times[1]:.3f}"
"""


# dgx-1's batch picture (engine/lesson/dgx_batch.py): at 8 (the default) and 64 requests/s,
# the run alone, the run keeping its fullest step, and the picture drawn from it; then a
# whole update of the widget at 8 requests/s from empty caches. Medians of 3 in `rows`: run
# inside Pyodide by print_pyodide_times() and in CPython by print_dgx_batch().
_PYODIDE_BATCH = """
import time
from engine.lesson import cluster, dgx_load, dgx_view
from engine.lesson.dgx_batch import batch_html
from engine.numbers.load.load_request import load_request, serve_load
from engine.widgets.dgx_traffic import WIDGET
state = cluster.deploy(cluster.new_cluster("dgx-1"), "llama-3.1-8b", (0,), "bf16", 8192,
                       16).state
job = dgx_load.serving_job(state)
serve = dgx_load.deployment(job, dgx_load.job_gpu(state, job))
def median(call):
    times = []
    for _ in range(3):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return sorted(times)[1]
rows = []
for rate in (8.0, 64.0):
    load = load_request(rate=rate, requests=dgx_load.REQUESTS)
    run = serve_load(serve, load, fullest=True)
    filling = dgx_load.filling_words(serve, run.requests)
    rows.append((rate, median(lambda: serve_load(serve, load)),
                 median(lambda: serve_load(serve, load, fullest=True)),
                 median(lambda: batch_html(run.fullest, tuple(range(run.requests)),
                                           run.block_tokens, run.preemptions, filling))))
notch = str(cluster.TRAFFIC_RATES.index(8.0))
kept = dgx_view.dump_state(state)
def update():
    dgx_load.forget_runs()
    WIDGET.run(WIDGET.defaults({"state": kept, "rate_notch": notch}), "start")
rows.append(("update", median(update), 0.0, 0.0))
";".join(" ".join(str(v) for v in row) for row in rows)
"""


def _batch_lines(where: str, rows: list[list[str]]) -> None:
    """Report the rows of _PYODIDE_BATCH (rate, run, run keeping its fullest step, drawing;
    then "update" and its time)."""
    for rate, plain, kept, drawn in rows[:-1]:
        report(f"dgx-1 batch picture{where}, {rate} requests/s: the run {float(plain) * 1e3:.1f} ms, "
               f"keeping its fullest step {float(kept) * 1e3:.1f} ms, the picture drawn "
               f"{float(drawn) * 1e3:.1f} ms (median of 3)")
    report(f"dgx-1 traffic{where}, an update at 8 requests/s from empty caches (run, capacity, "
           f"picture): {float(rows[-1][1]) * 1e3:.0f} ms (median of 3)")


def print_pyodide_times() -> None:
    """The same 1,000-request simulation as print_server_simulation(), inside Pyodide under
    Node on the runtime the site ships (median of 3); skipped, and said, without Node or
    node_modules."""
    import shutil
    import tempfile

    from macros.runtime_bytecode import browser_archives, compile_runtime
    from macros.solid_archive import solid_gzip, unpacked
    from macros.wheel import build_engine_wheel

    node = shutil.which("node")
    if node is None or not (ROOT / "node_modules" / "pyodide" / "pyodide.mjs").exists():
        report("server simulation in Pyodide: skipped (needs Node and `npm ci`)")
        return
    with tempfile.TemporaryDirectory(prefix="bench-pyodide-") as tmp:
        out = Path(tmp)
        bytecode = compile_runtime(ROOT, build_engine_wheel(ROOT, out / "plain"))
        archives = browser_archives(ROOT, out, bytecode).paths
        for archive in archives:
            archive.write_bytes(unpacked(solid_gzip(archive.read_bytes(), ROOT)))
        wheel, chunks = archives[0], [str(path) for path in archives[1:]]
        stdlib = out / "python_stdlib.zip"
        stdlib.write_bytes(unpacked(solid_gzip(bytecode.stdlib_zip, ROOT)))
        script = out / "simulate.py"
        script.write_text(_PYODIDE_SIMULATION)
        done = subprocess.run([node, str(ROOT / "bench" / "pyodide_time.mjs"), str(wheel),
                               str(stdlib), str(script), *chunks], capture_output=True, text=True,
                              timeout=600, check=False)
        traffic = out / "traffic.py"
        traffic.write_text(_PYODIDE_TRAFFIC)
        pressed = subprocess.run([node, str(ROOT / "bench" / "pyodide_time.mjs"), str(wheel),
                                  str(stdlib), str(traffic), *chunks], capture_output=True, text=True,
                                 timeout=600, check=False)
        batch = out / "batch.py"
        batch.write_text(_PYODIDE_BATCH)
        pictured = subprocess.run([node, str(ROOT / "bench" / "pyodide_time.mjs"), str(wheel),
                                   str(stdlib), str(batch), *chunks], capture_output=True,
                                  text=True, timeout=600, check=False)
        search = out / "search.py"
        search.write_text(_PYODIDE_SEARCH)
        searched = subprocess.run([node, str(ROOT / "bench" / "pyodide_time.mjs"), str(wheel),
                                   str(stdlib), str(search), *chunks], capture_output=True,
                                  text=True, timeout=600, check=False)
    if done.returncode != 0:
        report(f"server simulation in Pyodide: failed ({done.stderr.strip()[-300:]})")
        return
    version, seconds = done.stdout.split()
    report(f"server simulation in Pyodide {version} (Node), 1,000 requests at concurrency "
           f"64: {float(seconds):.3f} s (median of 3)")
    if pressed.returncode != 0:
        report(f"dgx-1 traffic in Pyodide: failed ({pressed.stderr.strip()[-300:]})")
        return
    press, drawn = pressed.stdout.split()
    report(f"dgx-1 traffic in Pyodide (Node), a saturated press (64 requests/s, 8B on one "
           f"H100): {float(press):.3f} s; then its curve beside fp8 weights: {float(drawn):.3f} s "
           "(median of 3)")
    if pictured.returncode != 0:
        report(f"dgx-1 batch picture in Pyodide: failed ({pictured.stderr.strip()[-300:]})")
        return
    _batch_lines(" in Pyodide", [row.split() for row in pictured.stdout.split(";")])
    if searched.returncode != 0:
        report(f"playground search in Pyodide: failed ({searched.stderr.strip()[-300:]})")
        return
    serve, train = searched.stdout.split()
    report(f"playground's 'Find the cheapest plan' in Pyodide (Node), at its defaults: serving "
           f"{float(serve):.3f} s, training {float(train):.3f} s (median of 3)")


def print_dgx_traffic() -> None:
    """CPython's time for dgx-1's traffic widget at 64 requests/s to Llama 3.1 8B on one
    H100 (saturated: the run, its capacity and three alternatives simulated), then for its
    latency-throughput curve beside fp8 weights after that press; each press from empty
    caches, median of 3 (a printed figure, no target)."""
    ran: dict[str, object] = {}
    exec(_PYODIDE_TRAFFIC, ran)
    press, drawn = ran["times"]  # type: ignore[misc]
    report(f"dgx-1 traffic, a saturated press (64 requests/s, 8B on one H100): "
           f"{press:.3f} s; then its curve beside fp8 weights: {drawn:.3f} s")


def print_dgx_batch() -> None:
    """CPython's times for dgx-1's batch picture (see _PYODIDE_BATCH; printed, no target)."""
    ran: dict[str, object] = {}
    exec(_PYODIDE_BATCH, ran)
    rows = ran["rows"]
    assert isinstance(rows, list)
    _batch_lines("", [[str(v) for v in row] for row in rows])


def print_search() -> None:
    """The searches' own wall-clock time over the whole catalogue: serving Llama 3.1 8B at 4
    requests/s (1,024 in, 256 out, TTFT p90 <= 0.5 s, TPOT p90 <= 50 ms) and training it on
    1e12 tokens in 30 days (a printed figure, no target)."""
    from engine.numbers.catalog import get_model
    from engine.numbers.search.serve import search_serving, serve_search_request
    from engine.numbers.search.train import search_training, train_search_request

    m = get_model("llama-3.1-8b")
    serve = search_serving(serve_search_request(m, prompt_tokens=1024, output_tokens=256,
                                                rate=4, ttft_p90=0.5, tpot_p90=0.05))
    report(f"search, serving at 4 requests/s: {serve.seconds:.2f} s ({serve.timed:,} of "
           f"{serve.candidates:,} set-ups simulated, {serve.ranking_requests:,} requests "
           f"each, winners on {serve.confirm_requests:,})")
    train = search_training(train_search_request(m, tokens=1e12, deadline_days=30))
    report(f"search, training 1e12 tokens in 30 days: {train.seconds:.2f} s ({train.timed:,} "
           f"of {train.candidates:,} set-ups timed)")
    ran: dict[str, object] = {}
    exec(_PYODIDE_SEARCH, ran)
    pressed_serve, pressed_train = ran["times"]  # type: ignore[misc]
    report(f"playground's 'Find the cheapest plan' at its defaults: serving {pressed_serve:.3f} "
           f"s, training {pressed_train:.3f} s (median of 3)")


def main() -> None:
    from engine.lesson.plans.plan_json import plan_to_dict
    from engine.numbers.plan import plan

    report(f"Python {sys.version.split()[0]}")
    for case in CASES:
        calls = rate(lambda case=case: plan(**case))
        with_dict = rate(lambda case=case: plan_to_dict(plan(**case)), 0.5)
        label = ", ".join(f"{k}={v}" for k, v in case.items())
        report(f"plan({label}): {calls:,.0f} calls/s; with plan_to_dict(): {with_dict:,.0f}/s")
    print_per_frame_costs()
    print_server_simulation()
    print_pyodide_times()
    print_dgx_traffic()
    print_dgx_batch()
    print_search()
    report(f"import engine (fresh process, median of 7): {import_ms():.1f} ms")
    report(
        f"import engine.numbers.plan + first plan() (fresh process, catalogue load): "
        f"{import_plan_ms():.1f} ms"
    )
    load = os.getloadavg()[0]
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    body = [
        "## Engine",
        "",
        f"Made by `make bench` (or `.venv/bin/python bench/bench_engine.py`) on {when}, "
        f"{os.cpu_count()} CPU cores, load average {load:.1f} at the end. Targets: >= 20,000 "
        "plan() calls/s, import engine < 50 ms, training_run_at < 50 µs, a training-run frame "
        "< 2 ms.",
        "",
        *(f"- {line}" for line in LINES),
    ]
    replace_section("bench_engine", "\n".join(body))


if __name__ == "__main__":
    main()
