"""bench_engine.py's dgx-1 pieces (_PYODIDE_BATCH, _PYODIDE_TRAFFIC) inside Pyodide under
Node on the runtime the site ships, timed by the Node process's CPU time
(``process.cpuUsage()``, user and system, in place of the scripts' ``time.perf_counter()``):
on a machine shared with other work, wall-clock times there are several times a quiet run's.

Usage: .venv/bin/python bench/pyodide_cpu.py DIR RUNS [batch] [traffic]
DIR keeps the archives built from the working tree (delete it after changing the engine);
each of RUNS Node processes prints the script's result (each figure a median of 3, in s).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_engine  # noqa: E402

from macros.runtime_bytecode import browser_archives, compile_runtime  # noqa: E402
from macros.solid_archive import solid_gzip, unpacked  # noqa: E402
from macros.wheel import build_engine_wheel  # noqa: E402

_CPU = ("from js import process as _process\n"
        "def _cpu():\n"
        "    used = _process.cpuUsage()\n"
        "    return (used.user + used.system) / 1e6\n")
_SCRIPTS = {"batch": bench_engine._PYODIDE_BATCH, "traffic": bench_engine._PYODIDE_TRAFFIC}


def archives(out: Path) -> list[str]:
    """The engine wheel, then its chunks, built into ``out`` once (the standard library zip
    beside them), as print_pyodide_times() builds them."""
    listed = out / "archives.txt"
    if not listed.exists():
        out.mkdir(parents=True, exist_ok=True)
        bytecode = compile_runtime(ROOT, build_engine_wheel(ROOT, out / "plain"))
        paths = browser_archives(ROOT, out, bytecode).paths
        for path in paths:
            path.write_bytes(unpacked(solid_gzip(path.read_bytes(), ROOT)))
        (out / "python_stdlib.zip").write_bytes(unpacked(solid_gzip(bytecode.stdlib_zip, ROOT)))
        listed.write_text("\n".join(str(path) for path in paths))
    return listed.read_text().split("\n")


def main() -> None:
    out, runs = Path(sys.argv[1]), int(sys.argv[2])
    wheel, *chunks = archives(out)
    for name in sys.argv[3:] or ["batch"]:
        script = out / f"{name}.py"
        script.write_text(_CPU + _SCRIPTS[name].replace("time.perf_counter()", "_cpu()"))
        for _ in range(runs):
            done = subprocess.run(["node", str(ROOT / "bench" / "pyodide_time.mjs"), wheel,
                                   str(out / "python_stdlib.zip"), str(script), *chunks],
                                  capture_output=True, text=True, timeout=600, check=False)
            print(name, done.stdout.strip() or done.stderr.strip()[-500:], flush=True)


if __name__ == "__main__":
    main()
