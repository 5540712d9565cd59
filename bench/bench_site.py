"""Site benchmark: build time, time to the first live widget, input latency and bytes.

Usage: .venv/bin/python bench/bench_site.py   (also run by `make bench`)
A quick look: BENCH_REPEATS=2 BENCH_BUILDS=1 .venv/bin/python bench/bench_site.py (prints,
writes nothing).

Prints the figures and rewrites the site section of bench/RESULTS.md (between the
``bench_site`` markers; the rest of the file is kept). No assertion, no pass or fail: the
targets are printed next to the figures.

1. Build: wall time of ``mkdocs build --strict`` (site-tests' ``build_site``), median of 3.
2. Time to the first live widget on steps/pile-of-numbers/: from navigation start to the
   moment a ``[data-widget]`` is ``data-state="live"`` and the engine has replaced its
   ``.widget-result``; cold (new browser context: empty cache, no service worker) and warm
   (same context, second navigation: HTTP cache and service worker warm). Compared with a
   bare page generated in the built site (page -> module worker -> loadPyodide -> engine
   wheel -> ``import engine.browser`` -> 'ready'), measured in the same run.
3. Input-to-update latency once live, timed in the page (performance.now() before the input
   event, MutationObserver on ``.widget-result``).
4. Bytes on the wire up to first contentful paint, up to live, and once the service worker
   has settled; which Pyodide requests started before first paint (none: on a first visit the
   page hints at all the runtime's files at first paint, low priority, as it starts the
   worker: partials/boot-engine.html), and whether the page downloaded any runtime file twice
   (a hint whose request the worker's own did not match).
5. Throttled cold visits (Chrome DevTools Protocol: Network.emulateNetworkConditions,
   Emulation.setCPUThrottlingRate) of the lesson and the stock bare page, interleaved, for
   each of PROFILES: fewer repeats (THROTTLED_REPEATS), each visit being seconds long.

The site is served gzipped as GitHub Pages serves it (tools/serve.py's COMPRESSIBLE_TYPES:
text types and wasm; archives as they are); bytes are reported compressed (on the wire) and
raw (the files' sizes).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "site-tests"))

import pytest  # noqa: E402
from playwright.sync_api import Browser, BrowserContext, Page, Request, sync_playwright  # noqa: E402
from support import CHROMIUM, CHROMIUM_ARGS, build_site  # noqa: E402

from macros.pyodide_core import PYODIDE_CORE_FILES, STDLIB_SHIPPED  # noqa: E402
from macros.runtime_bytecode import CACHE_DIR_ENV  # noqa: E402
from tools.serve import COMPRESSIBLE_TYPES, GZIP_LEVEL, serving  # noqa: E402

PAGE = "steps/pile-of-numbers/"
WIDGET = "[data-widget=model_size]"
# Environment overrides for a quick look while working; RESULTS.md is then left alone.
REPEATS = int(os.environ.get("BENCH_REPEATS", "5"))
BUILDS = int(os.environ.get("BENCH_BUILDS", "3"))
QUICK = "BENCH_REPEATS" in os.environ or "BENCH_BUILDS" in os.environ
THROTTLED_REPEATS = int(os.environ.get("BENCH_THROTTLED_REPEATS", "3"))
INPUT_ROUNDS = 40  # per kind (select, typed field): 80 samples in all
TIMEOUT_MS = 120_000
sys.path.insert(0, str(ROOT / "bench"))
from results import RESULTS, markers, replace_section  # noqa: E402

BEGIN, END = markers("bench_site")
FIGURES = ROOT / "build" / "bench-site-figures.json"


@dataclass(frozen=True)
class Profile:
    """A reader's connection, as DevTools emulates it: download rate, round trip, CPU slow-down."""

    name: str
    down_Mbit_per_s: float
    up_Mbit_per_s: float
    rtt_ms: float
    cpu_slowdown: float
    note: str


PROFILES = (
    Profile("home", 20.0, 5.0, 40.0, 1.0, "a home connection"),
    Profile("phone", 9.0, 3.0, 170.0, 4.0, "a phone on 4G"),
)
# Targets: first live widget / stock bare page, on the plain run and on each profile.
TARGET_RATIO = 0.35
TARGET_RATIO_THROTTLED = 0.6
TARGET_BYTES_COMPRESSED = 5e6

# Two bare pages, the same but for the runtime they load: "stock" takes Pyodide exactly as npm
# ships it (copied from node_modules), "bare" the site's own copy (its standard library partly
# precompiled at build time, macros/runtime_bytecode.py).
BARE_PAGES = {"stock": "bench-stock-pyodide/", "bare": "pyodide/"}
WHEEL_SUFFIXES = (".whl", ".whl.gz", ".zip.gz")  # the core wheel and the chunks
RUNTIME_SCRIPTS = ("/js/engine-worker.js", "/js/runtime-config.js")

BARE_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Bare Pyodide (benchmark)</title></head>
<body><p>Bare page: loads Pyodide and the engine wheel in a module worker.</p>
<script type="module">
const worker = new Worker(new URL("./bench-__KIND__-worker.js", import.meta.url), { type: "module" });
worker.addEventListener("message", (event) => {
  if (event.data === "ready") window.__bareReady = performance.now();
  else window.__bareFailed = String(event.data && event.data.failed);
});
worker.postMessage({ type: "init", wheel: "__WHEEL__" });
</script>
</body></html>
"""

# Both take the engine wheel as the site ships it, one gzip stream (macros/solid_archive.py):
# `.gz` downloads are decompressed as the lesson's worker does; "bare" takes the standard
# library the same way (__STDLIB__), "stock" npm's python_stdlib.zip. "stock" installs the
# wheel with Pyodide's own installer (unpackArchive), "bare" imports it from the archive as the
# lesson's worker does (__INSTALL__: the site's runtime has no installer, macros/pyodide_lean.py).
BARE_WORKER = """import { loadPyodide } from "./__RUNTIME__pyodide.mjs";

const plainFetch = self.fetch.bind(self);
self.fetch = async (...args) => {
  const response = await plainFetch(...args);
  if (!response.ok || !String(args[0]).endsWith(".gz")) return response;
  const body = response.body.pipeThrough(new DecompressionStream("gzip"));
  return new Response(body, { status: response.status, headers: response.headers });
};

self.addEventListener("message", async (event) => {
  try {
    const pyodide = await loadPyodide({
      indexURL: new URL("./__RUNTIME__", import.meta.url).href,
      stdLibURL: new URL("./__RUNTIME____STDLIB__", import.meta.url).href,
      fullStdLib: false,
    });
    const response = await fetch(new URL(event.data.wheel, import.meta.url));
    if (!response.ok) throw new Error(`engine wheel: HTTP ${response.status}`);
    const wheel = await response.arrayBuffer();
    __INSTALL__
    pyodide.pyimport("engine.browser");
    postMessage("ready");
  } catch (error) {
    postMessage({ failed: String(error && error.message ? error.message : error) });
  }
});
"""
INSTALL = {
    "stock": 'pyodide.unpackArchive(wheel, "wheel");',
    "bare": 'pyodide.FS.writeFile("/lib/engine.zip", new Uint8Array(wheel));\n'
    '    pyodide.pyimport("sys").path.insert(0, "/lib/engine.zip");',
}

# Installed in every page before its own scripts: first contentful paint, when the first
# Worker is constructed and when it says 'ready', when a widget turns live and when the
# engine first replaces a live widget's result. Everything is performance.now() in the page
# (navigation start = 0).
PROBE = """(() => {
  const b = (window.__bench = { fcp: null, workerStart: null, ready: null, live: null, liveUpdated: null });
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        if (e.name === "first-contentful-paint" && b.fcp === null) b.fcp = e.startTime;
      }
    }).observe({ type: "paint", buffered: true });
  } catch (e) {}
  const NativeWorker = window.Worker;
  if (NativeWorker) {
    window.Worker = class extends NativeWorker {
      constructor(url, options) {
        const t = performance.now();
        super(url, options);
        // Only the engine's worker (the theme starts its own search worker).
        if (!/engine-worker|bench-(bare|stock)-worker/.test(String(url))) return;
        if (b.workerStart === null) b.workerStart = t;
        this.addEventListener("message", (event) => {
          const d = event.data;
          if (b.ready === null && d && (d === "ready" || d.type === "ready")) b.ready = performance.now();
        });
      }
    };
  }
  new MutationObserver((records) => {
    const now = performance.now();
    for (const r of records) {
      const el = r.target;
      if (r.type === "attributes") {
        // A widget turns live once the engine's first result is on screen.
        if (b.live === null && el.dataset.state === "live" && el.matches("[data-widget]")) {
          b.live = now;
          if (b.liveUpdated === null) b.liveUpdated = now;
        }
      } else if (b.liveUpdated === null && el.closest) {
        const result = el.closest(".widget-result");
        const widget = result && result.closest("[data-widget]");
        if (widget && widget.dataset.state === "live") b.liveUpdated = now;
      }
    }
  }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-state"] });
})();"""

# Runs in the page once a widget is live: INPUT_ROUNDS inputs on one control, alternating
# values, each timed from just before the input event to the MutationObserver callback that
# sees the engine's new .widget-result; a frame passes between inputs.
INPUT_LOOP = """async ({ sel, name, values, rounds }) => {
  const root = document.querySelector(sel);
  const out = root.querySelector(".widget-result");
  const control = root.querySelector(`.widget-controls [name="${name}"]`);
  const times = [];
  let changed = 0;
  for (let i = 0; i < rounds; i++) {
    const before = out.innerHTML;
    let observer;
    const updated = new Promise((resolve, reject) => {
      observer = new MutationObserver(() => resolve(performance.now()));
      observer.observe(out, { childList: true, subtree: true, characterData: true });
      setTimeout(() => reject(new Error("no update within 5 s")), 5000);
    });
    const t0 = performance.now();
    control.value = values[i % values.length];
    control.dispatchEvent(new Event("input", { bubbles: true }));
    const t1 = await updated;
    observer.disconnect();
    times.push(t1 - t0);
    if (out.innerHTML !== before) changed++;
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  }
  return { times, changed };
}"""

SW_SETTLED = """async () => {
  const reg = await navigator.serviceWorker.ready;
  const deadline = performance.now() + 20000;
  while (performance.now() < deadline) {
    for (const key of await caches.keys()) {
      const cache = await caches.open(key);
      // The worker keeps each file under its digest (?sha=...): docs/sw.js.
      if (await cache.match(location.href.split("#")[0], { ignoreSearch: true })) return !!reg.active;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}"""


@dataclass
class Load:
    """One navigation: in-page times (ms from navigation start) and the requests it made."""

    kind: str
    dcl: float
    fcp: float
    worker_start: float
    ready: float
    live: float | None
    done: float  # lesson: first live update; bare: 'ready' posted by the page itself
    time_origin: float
    requests: list[Request] = field(default_factory=list)


@dataclass
class Wire:
    url: str
    start: float  # epoch ms
    end: float  # epoch ms
    transferred: int
    by_service_worker: bool
    raw: int  # the file's own size (what an uncompressing host would send), 0 if not sent
    body: int  # bytes of body on the wire (0: a cache hit or a 304)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def chromium_version() -> str:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=30)
        return out.stdout.strip()
    return "unknown"


def build_with_retry(site_dir: Path, url: str) -> float:
    """Seconds for one `mkdocs build --strict`; one retry after a pause if it fails."""
    for attempt in (1, 2):
        shutil.rmtree(site_dir, ignore_errors=True)
        start = time.perf_counter()
        try:
            build_site(site_dir, url)
        except pytest.fail.Exception as failure:
            if attempt == 2:
                raise SystemExit(f"mkdocs build failed twice:\n{failure}") from None
            print("  build failed (the engine may be changing under us); retrying in 5 s")
            time.sleep(5)
            continue
        return time.perf_counter() - start
    raise AssertionError("unreachable")


def write_bare_pages(site_dir: Path) -> None:
    wheels = sorted((site_dir / "wheels").glob("*.whl.gz"))
    if not wheels:
        raise SystemExit(f"no engine wheel in {site_dir / 'wheels'}")
    wheel = f"wheels/{wheels[-1].name}"
    stock = site_dir / BARE_PAGES["stock"]
    stock.mkdir()
    for name in PYODIDE_CORE_FILES:
        shutil.copy2(ROOT / "node_modules" / "pyodide" / name, stock / name)
    for kind, runtime in BARE_PAGES.items():
        html = BARE_HTML.replace("__WHEEL__", wheel).replace("__KIND__", kind)
        (site_dir / f"bench-{kind}.html").write_text(html)
        stdlib = STDLIB_SHIPPED if kind == "bare" else "python_stdlib.zip"
        (site_dir / f"bench-{kind}-worker.js").write_text(
            BARE_WORKER.replace("__RUNTIME__", runtime)
            .replace("__STDLIB__", stdlib)
            .replace("__INSTALL__", INSTALL[kind])
        )


def new_context(browser: Browser) -> BrowserContext:
    context = browser.new_context()
    context.set_default_timeout(TIMEOUT_MS)
    context.add_init_script(PROBE)
    return context


def navigate(page: Page, url: str, kind: str, bare: bool) -> Load:
    requests: list[Request] = []

    def keep(request: Request) -> None:
        requests.append(request)

    page.goto("about:blank")  # so a second visit is a plain navigation, not a reload
    page.context.on("requestfinished", keep)
    try:
        page.goto(url, wait_until="commit", timeout=TIMEOUT_MS)
        if bare:
            page.wait_for_function(
                "() => window.__bareReady !== undefined || window.__bareFailed !== undefined",
                timeout=TIMEOUT_MS,
                polling=50,
            )
            failed = page.evaluate("() => window.__bareFailed")
            if failed:
                raise RuntimeError(f"bare page failed: {failed}")
        else:
            page.wait_for_function(
                "() => window.__bench.liveUpdated !== null || [...document.querySelectorAll("
                "'[data-widget]')].some(w => w.dataset.state === 'error')",
                timeout=TIMEOUT_MS,
                polling=50,
            )
        page.wait_for_function("() => window.__bench.fcp !== null", timeout=TIMEOUT_MS)
        probe: dict[str, Any] = page.evaluate(
            "() => ({...window.__bench, bare: window.__bareReady ?? null, dcl: performance"
            ".getEntriesByType('navigation')[0].domContentLoadedEventStart,"
            " origin: performance.timeOrigin})"
        )
    finally:
        # Requests finishing later (the service worker's precache) are counted by settle().
        page.context.remove_listener("requestfinished", keep)
    if not bare and probe["liveUpdated"] is None:
        status = page.inner_text(WIDGET + " .widget-status")
        raise RuntimeError(f"the widget did not go live: {status}")
    done = probe["bare"] if bare else probe["liveUpdated"]
    load = Load(
        kind=kind,
        dcl=probe["dcl"],
        fcp=probe["fcp"],
        worker_start=probe["workerStart"],
        ready=probe["ready"],
        live=probe["live"],
        done=done,
        time_origin=probe["origin"],
        requests=requests,
    )
    return load


def settle(page: Page, load: Load) -> bool:
    """Wait for the service worker to be active and to hold this page; count its requests."""

    def keep(request: Request) -> None:
        load.requests.append(request)

    page.context.on("requestfinished", keep)
    try:
        ok = bool(page.evaluate(SW_SETTLED))
        page.wait_for_timeout(300)  # let the last requestfinished events arrive
    finally:
        page.context.remove_listener("requestfinished", keep)
    return ok


def raw_size(site_dir: Path, url: str) -> int | None:
    """Size of the built file ``url`` names, or None (not a file of the site)."""
    path = url.split("://", 1)[-1].split("/", 1)[-1].split("?", 1)[0].split("#", 1)[0]
    candidate = site_dir / path
    if candidate.is_dir():
        candidate = candidate / "index.html"
    return candidate.stat().st_size if candidate.is_file() else None


def wire(requests: list[Request], site_dir: Path) -> list[Wire]:
    rows = []
    for r in requests:
        if r.headers.get("service-worker-navigation-preload"):
            # The service worker's navigation preload: Playwright never reports its sizes
            # (sizes() waits forever), so count its body from Content-Length.
            response = r.response()
            length = response.headers.get("content-length", "0") if response else "0"
            body_size, headers_size = (int(length) if length.isdigit() else 0), 0
        else:
            sizes = r.sizes()
            body_size, headers_size = sizes["responseBodySize"], sizes["responseHeadersSize"]
        encoded = body_size + headers_size
        if body_size == 0:
            # Chromium reports no body size for worker scripts fetched from the network;
            # fall back to Content-Length (cache and service-worker hits report less than 0).
            response = r.response()
            if response is not None and response.status == 200:
                length = response.headers.get("content-length", "0")
                encoded += int(length) if length.isdigit() else 0
        timing = r.timing
        start = timing["startTime"]
        end = start + max(timing["responseEnd"], 0.0)
        transferred = max(encoded, 0)
        raw = (raw_size(site_dir, r.url) or body_size) if transferred > 0 else 0
        body = max(encoded - headers_size, 0)
        rows.append(Wire(r.url, start, end, transferred, r.service_worker is not None, raw, body))
    return rows


@dataclass
class Bytes:
    to_fcp: int
    to_live: int
    raw_to_live: int  # the same responses' files, uncompressed
    sw_to_live: int  # of to_live: fetched by the service worker (its precache)
    settled: int
    requests_to_fcp: int
    requests_total: int
    pyodide_before_fcp: list[str]
    first_pyodide_ms: float | None
    runtime_twice: list[str]  # runtime files whose body the page (not its service worker) got twice


def byte_counts(load: Load, site_dir: Path) -> Bytes:
    rows = wire(load.requests, site_dir)
    fcp_epoch = load.time_origin + load.fcp
    live_epoch = load.time_origin + load.done
    pyodide = [w for w in rows if "/pyodide/" in w.url and not w.by_service_worker]
    return Bytes(
        to_fcp=sum(w.transferred for w in rows if w.end <= fcp_epoch),
        to_live=sum(w.transferred for w in rows if w.end <= live_epoch),
        raw_to_live=sum(w.raw for w in rows if w.end <= live_epoch),
        sw_to_live=sum(w.transferred for w in rows if w.end <= live_epoch and w.by_service_worker),
        settled=sum(w.transferred for w in rows),
        requests_to_fcp=sum(1 for w in rows if w.end <= fcp_epoch),
        requests_total=len(rows),
        pyodide_before_fcp=[w.url.rsplit("/", 1)[-1] for w in pyodide if w.start < fcp_epoch],
        first_pyodide_ms=min((w.start - load.time_origin for w in pyodide), default=None),
        runtime_twice=downloaded_twice(rows),
    )


def downloaded_twice(rows: list[Wire]) -> list[str]:
    """The runtime's files (site paths) whose body the page, its workers included, received
    more than once: the service worker's precache, which downloads on its own, is left out."""
    bodies = Counter(
        w.url.split("?", 1)[0].split("/", 3)[-1]
        for w in rows
        if w.body and not w.by_service_worker and is_runtime_file(w.url)
    )
    return sorted(path for path, count in bodies.items() if count > 1)


def is_runtime_file(url: str) -> bool:
    """Pyodide's files, the engine wheel, and the engine worker's own scripts."""
    path = url.split("?", 1)[0]
    return "/pyodide/" in path or path.endswith(WHEEL_SUFFIXES) or path.endswith(RUNTIME_SCRIPTS)


def run_pair(browser: Browser, url: str, kind: str, bare: bool) -> tuple[Load, Load, Page]:
    """A cold navigation in a fresh context, then a warm one in the same context."""
    context = new_context(browser)
    page = context.new_page()
    cold = navigate(page, url, f"{kind} cold", bare)
    if not bare:
        if not settle(page, cold):
            print("  (service worker not settled within 20 s)")
    else:
        page.wait_for_timeout(300)
    warm = navigate(page, url, f"{kind} warm", bare)
    return cold, warm, page


def throttled_visit(
    browser: Browser, url: str, kind: str, profile: Profile, site_dir: Path
) -> tuple[Load, Bytes]:
    """One cold visit (fresh context) on ``profile``'s emulated connection and CPU."""
    context = new_context(browser)
    try:
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send(
            "Network.emulateNetworkConditions",
            {
                "offline": False,
                "latency": profile.rtt_ms,
                "downloadThroughput": profile.down_Mbit_per_s * 1e6 / 8,
                "uploadThroughput": profile.up_Mbit_per_s * 1e6 / 8,
            },
        )
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": profile.cpu_slowdown})
        bare = kind != "lesson"
        target = url + (f"bench-{kind}.html" if bare else PAGE)
        load = navigate(page, target, f"{kind} {profile.name}", bare)
        return load, byte_counts(load, site_dir)
    finally:
        context.close()


def files_by_live(load: Load, site_dir: Path) -> list[tuple[str, int, int]]:
    """(file, raw bytes, bytes on the wire) of each response finished by the first live
    widget: the runtime's files one by one, the rest (page, theme, scripts) as one row."""
    live_epoch = load.time_origin + load.done
    rows = [w for w in wire(load.requests, site_dir) if w.end <= live_epoch and w.transferred]
    runtime = [w for w in rows if "/pyodide/" in w.url or w.url.endswith(WHEEL_SUFFIXES)]
    out = [(w.url.rsplit("/", 2)[-2] + "/" + w.url.rsplit("/", 1)[-1], w.raw, w.transferred)
           for w in sorted(runtime, key=lambda w: -w.transferred)]
    rest = [w for w in rows if w not in runtime]
    out.append((f"page, theme and scripts ({len(rest)} files)", sum(w.raw for w in rest),
                sum(w.transferred for w in rest)))
    return out


def throttled_runs(browser: Browser, url: str, site_dir: Path) -> dict[str, Any]:
    """Per profile: the lesson's and the stock page's cold visits (interleaved), summarised."""
    out: dict[str, Any] = {}
    for profile in PROFILES:
        print(f"Throttled cold visits, {profile.name} ({profile.note}), "
              f"{THROTTLED_REPEATS} each...")
        visits: dict[str, list[tuple[Load, Bytes]]] = {"lesson": [], "stock": []}
        for i in range(THROTTLED_REPEATS):
            for kind in (("lesson", "stock") if i % 2 == 0 else ("stock", "lesson")):
                load, counted = throttled_visit(browser, url, kind, profile, site_dir)
                visits[kind].append((load, counted))
                print(f"  {profile.name} {kind}: {load.done:,.0f} ms (fcp {load.fcp:.0f}, "
                      f"{fmt_bytes(counted.to_live)} by then)")
        summary: dict[str, Any] = {}
        for kind, rows in visits.items():
            summary[kind] = {
                "fcp": median([load.fcp for load, _ in rows]),
                "done": median([load.done for load, _ in rows]),
                "runs": [load.done for load, _ in rows],
                "to_fcp": median([b.to_fcp for _, b in rows]),
                "to_live": median([b.to_live for _, b in rows]),
                "raw_to_live": median([b.raw_to_live for _, b in rows]),
                "pyodide_before_fcp": sorted({n for _, b in rows for n in b.pyodide_before_fcp}),
                "runtime_twice": sorted({n for _, b in rows for n in b.runtime_twice}),
            }
        summary["ratio"] = summary["lesson"]["done"] / summary["stock"]["done"]
        summary["paired"] = median(
            [a.done / b.done for (a, _), (b, _) in zip(visits["lesson"], visits["stock"],
                                                       strict=True)]
        )
        out[profile.name] = summary
    return out


def runtime_downloads_with_a_disk_cache(browser_type: Any, url: str) -> dict[str, int]:
    """One cold visit in a persistent profile (an on-disk HTTP cache, as a reader has):
    bytes of the runtime (Pyodide core and engine wheel) from the network, for the page and
    for the service worker's precache."""
    totals = {"page": 0, "service worker": 0, "service worker from cache": 0}
    with tempfile.TemporaryDirectory(prefix="bench-profile-") as profile:
        context = browser_type.launch_persistent_context(
            profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS
        )
        try:
            finished: list[Request] = []
            context.on("requestfinished", lambda request: finished.append(request))
            page = context.new_page()
            page.goto(url + PAGE, timeout=TIMEOUT_MS)
            page.wait_for_function(
                f"() => document.querySelector('{WIDGET}').dataset.state === 'live'",
                timeout=TIMEOUT_MS,
            )
            page.evaluate(SW_SETTLED)
            page.wait_for_timeout(500)
            for r in finished:
                if "/pyodide/" not in r.url and not r.url.endswith(WHEEL_SUFFIXES):
                    continue
                body = r.sizes()["responseBodySize"]
                if r.service_worker is None:
                    totals["page"] += max(body, 0)
                elif body > 0:
                    totals["service worker"] += body
                else:
                    totals["service worker from cache"] += 1
        finally:
            context.close()
    return totals


def input_latency(page: Page) -> dict[str, Any]:
    page.evaluate(
        """async (sel) => {
             const root = document.querySelector(sel);
             if (!root || root.dataset.state !== "live") throw new Error("widget not live");
           }""",
        WIDGET,
    )
    select = page.evaluate(
        INPUT_LOOP,
        {
            "sel": WIDGET,
            "name": "model",
            "values": ["llama-3.1-70b", "llama-3.1-8b"],
            "rounds": INPUT_ROUNDS,
        },
    )
    # Typing needs the model on "a parameter count I type" (not timed).
    page.evaluate(INPUT_LOOP, {"sel": WIDGET, "name": "model", "values": ["custom"], "rounds": 1})
    typed = page.evaluate(
        INPUT_LOOP,
        {"sel": WIDGET, "name": "params", "values": ["70e9", "7e9"], "rounds": INPUT_ROUNDS},
    )
    return {"select": select, "typed": typed}


def fmt_ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f} ms"


def fmt_bytes(n: float) -> str:
    return f"{n / 1e6:.2f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"


def section(figures: dict[str, Any]) -> str:
    f = figures
    lines = [
        BEGIN,
        "## Site",
        "",
        f"Made by `make bench` (or `.venv/bin/python bench/bench_site.py`) on {f['date']}, "
        f"on {f['nproc']} CPU cores ({f['cpu']}; load average {f['load']:.1f} at the start), "
        f"{f['chromium']}, headless, against "
        "`tools/serve.py --gzip` on 127.0.0.1: compressed as GitHub Pages serves a site "
        f"(gzip, level {GZIP_LEVEL}, for {', '.join(sorted(COMPRESSIBLE_TYPES))}; archives "
        "such as the standard-library zip and the engine wheel as they are). Except in the "
        "throttled visits there is no network latency: those wire times are CPU and local I/O.",
        "",
        *(
            [
                f"**The machine was busy when this ran (load average {f['load']:.1f} on "
                f"{f['nproc']} cores): the times below are noisy; rerun on a quiet machine "
                "before reading anything into the ratios.**",
                "",
            ]
            if f["load"] > (f["nproc"] or 1)
            else []
        ),
        "What each figure is:",
        "",
        "- **Build**: wall time of `mkdocs build --strict` (engine wheel and Pyodide copy "
        f"included), {BUILDS} builds.",
        f"- **First live widget**: on `{PAGE}`, from navigation start to the moment the widget "
        'is `data-state="live"` and the engine has replaced its `.widget-result` '
        "(in-page `performance.now()`). *Cold*: new browser context (empty HTTP cache, no "
        "service worker). *Warm*: same context, second navigation (HTTP cache and service "
        "worker warm). *Bare*: a page generated in the built site that only does page -> "
        "module worker -> `loadPyodide` -> engine wheel -> `import engine.browser` "
        "-> 'ready' (no theme, no deferral), twice: *stock* loads Pyodide exactly as npm "
        "ships it (the target's reference), *bare* loads the site's own copy of the same "
        "runtime, whose standard library the build trimmed and precompiled "
        "(`macros/runtime_bytecode.py`): "
        "lesson / bare is the lesson machinery's own overhead. Medians of "
        f"{REPEATS}, the three pages interleaved in the same run. Target: lesson / stock <= "
        f"{TARGET_RATIO}.",
        "- **Input to update**: once live, inputs on the model select and typed into the "
        "parameter-count field (alternating values, the output really changes), from just "
        "before the input event to the MutationObserver callback that sees the engine's new "
        "`.widget-result`, timed in the page. Target: p95 < 16 ms.",
        "- **Bytes**: encoded bytes on the wire (headers + body, compressed where the host "
        "compresses; cache and service-worker hits count 0) for responses finished by first "
        "contentful paint, by the first live widget, and once the service worker has "
        "installed and cached the page; *raw*: the same files' sizes, uncompressed. Target: "
        f"<= {TARGET_BYTES_COMPRESSED / 1e6:.0f} MB compressed by the first live widget.",
        "- **Throttled**: cold visits (new context) with the network and CPU emulated through "
        "the Chrome DevTools Protocol (`Network.emulateNetworkConditions`, "
        "`Emulation.setCPUThrottlingRate`): "
        + "; ".join(
            f"*{p.name}* ({p.note}): {p.down_Mbit_per_s:g} Mbit/s down, {p.up_Mbit_per_s:g} "
            f"up, {p.rtt_ms:g} ms round trip"
            + (f", CPU slowed {p.cpu_slowdown:g}x" if p.cpu_slowdown != 1 else ", CPU as it is")
            for p in PROFILES
        )
        + f". Lesson and stock page interleaved, {THROTTLED_REPEATS} visits each (fewer "
        "than above: each is seconds long on 2 cores). The emulation applies to the engine's "
        "worker too (checked: a worker's fetch and busy loop slow down as the page's do); "
        "the service worker's precache is not throttled. Target: lesson / stock <= "
        f"{TARGET_RATIO_THROTTLED}.",
        "",
        "### Build",
        "",
        f"`mkdocs build --strict`: first build **{f['builds'][0]:.2f} s** (with an empty "
        "bytecode cache: Pyodide under Node compiles the engine and the standard-library "
        f"modules the site uses); rebuilds (cache warm): "
        f"{', '.join(f'{t:.2f}' for t in f['builds'][1:]) or 'none'} s.",
        "",
        "### Time to the first live widget (medians, ms from navigation start)",
        "",
        "| | lesson cold | bare cold | stock cold | lesson warm | bare warm | stock warm |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    t = f["timeline"]
    columns = [f"{k} {temp}" for temp in ("cold", "warm") for k in ("lesson", "bare", "stock")]
    for label, key in [
        ("first contentful paint", "fcp"),
        ("DOMContentLoaded (page scripts run)", "dcl"),
        ("worker constructed", "worker_start"),
        ("engine 'ready' message", "ready"),
        ("widget live + result updated (bare, stock: 'ready')", "done"),
    ]:
        lines.append(f"| {label} | " + " | ".join(fmt_ms(t[k][key]) for k in columns) + " |")
    lines += [
        "",
        "Ratio of the medians, first live widget / bare page's 'ready':",
        "",
        "| | cold | warm | median of per-repeat ratios (cold, warm) |",
        "|---|---:|---:|---:|",
        f"| lesson / stock Pyodide (target <= {TARGET_RATIO}) | **{f['ratio_stock_cold']:.3f}** | "
        f"**{f['ratio_stock_warm']:.3f}** | {f['paired_stock_cold']:.3f}, "
        f"{f['paired_stock_warm']:.3f} |",
        f"| lesson / bare page on the site's runtime | {f['ratio_bare_cold']:.3f} | "
        f"{f['ratio_bare_warm']:.3f} | {f['paired_bare_cold']:.3f}, "
        f"{f['paired_bare_warm']:.3f} |",
        "",
        f"Engine 'ready' to 'ready' against the bare page on the same runtime (same work, "
        f"without the first render): cold {f['ready_ratio_cold']:.3f}, warm "
        f"{f['ready_ratio_warm']:.3f}. From the engine's 'ready' to the first live result (the "
        f"first render, which the bare pages do not do): cold {f['first_render_cold']:.0f} ms, "
        f"warm {f['first_render_warm']:.0f} ms (medians).",
        "",
        "All runs (ms, first live widget / bare page's 'ready'):",
        "",
    ]
    for kind in columns:
        lines.append(f"- {kind}: " + ", ".join(f"{v:.0f}" for v in f["runs"][kind]))
    lat = f["latency"]
    lines += [
        "",
        "### Input to update, once live",
        "",
        "| input | samples | output changed | p50 | p95 | max |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, row in lat.items():
        lines.append(
            f"| {label} | {row['n']} | {row['changed']} | {row['p50']:.1f} ms | "
            f"{row['p95']:.1f} ms | {row['max']:.1f} ms |"
        )
    lines += ["", "Target: p95 < 16 ms.", "", "### Bytes (medians over the runs)", ""]
    lines += [
        "| | by first contentful paint | by first live widget | raw | once the service worker settled |",
        "|---|---:|---:|---:|---:|",
    ]
    for kind, b in f["bytes"].items():
        lines.append(
            f"| {kind} | {fmt_bytes(b['to_fcp'])} ({b['requests_to_fcp']} responses) | "
            f"{fmt_bytes(b['to_live'])}"
            + (f" (service worker: {fmt_bytes(b['sw_to_live'])})" if b["sw_to_live"] else "")
            + f" | {fmt_bytes(b['raw_to_live'])} | {fmt_bytes(b['settled'])} "
            f"({b['requests_total']} requests) |"
        )
    lines += [
        "",
        "The lesson's files by the first live widget (first cold run):",
        "",
        "| file | raw | on the wire |",
        "|---|---:|---:|",
        *(f"| {name} | {fmt_bytes(raw)} | {fmt_bytes(sent)} |" for name, raw, sent in f["files"]),
        f"| **all** | {fmt_bytes(sum(r for _, r, _ in f['files']))} | "
        f"**{fmt_bytes(sum(s for _, _, s in f['files']))}** |",
    ]
    lines += [
        "",
        f"Pyodide requests started before first paint: {f['pyodide_before_fcp']}. "
        f"First Pyodide request: {f['first_pyodide']} after navigation start "
        f"(median, lesson cold; FCP {fmt_ms(t['lesson cold']['fcp'])}). On a first visit the "
        "page hints at all the runtime's files (`<link rel=preload fetchpriority=low>`) at "
        "first paint as it starts the worker, which then takes them from the HTTP cache or "
        "joins their downloads. Runtime files the page downloaded more than "
        f"once (lesson, cold and warm): {f.get('runtime_twice', 'not counted')}.",
    ]
    if f["bytes"]["stock warm"]["to_live"] > 1e6:
        lines += [
            "",
            "Note: Playwright's browser contexts are off the record, so their HTTP cache lives "
            "in memory and did not keep the largest Pyodide file: the bare pages download it "
            "again when warm, and the lesson's service worker downloads the runtime a second "
            "time (its precache) while the cold lesson load finishes.",
        ]
    disk = f["disk_cache"]
    lines += [
        "",
        "With an on-disk HTTP cache (one cold visit in a persistent Chromium profile, as a "
        f"reader's browser has): the page downloaded {fmt_bytes(disk['page'])} of runtime; "
        f"the service worker's precache downloaded {fmt_bytes(disk['service worker'])} and "
        f"took {disk['service worker from cache']} runtime files from the HTTP cache.",
    ]
    lines += [
        "",
        "### Throttled cold visits (medians)",
        "",
        "| profile | page | first contentful paint | first live widget (stock: 'ready') "
        "| bytes by first paint | by live: on the wire | raw | Pyodide requested before first paint |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, row in f["throttled"].items():
        for kind in ("lesson", "stock"):
            k = row[kind]
            lines.append(
                f"| {name} | {kind} | {fmt_ms(k['fcp'])} | {fmt_ms(k['done'])} | "
                f"{fmt_bytes(k['to_fcp'])} | {fmt_bytes(k['to_live'])} | "
                f"{fmt_bytes(k['raw_to_live'])} | "
                f"{', '.join(k['pyodide_before_fcp']) or 'nothing'} |"
            )
    lines += ["", f"Lesson / stock, first live widget (target <= {TARGET_RATIO_THROTTLED}):", ""]
    for name, row in f["throttled"].items():
        runs = "; ".join(
            f"{kind} " + ", ".join(f"{v:.0f}" for v in row[kind]["runs"])
            for kind in ("lesson", "stock")
        )
        lines.append(
            f"- {name}: **{row['ratio']:.3f}** (median of per-visit ratios "
            f"{row['paired']:.3f}; runs, ms: {runs}); runtime files the lesson page "
            f"downloaded more than once: {', '.join(row['lesson'].get('runtime_twice', [])) or 'none'}"
        )
    lines += [
        END,
    ]
    return "\n".join(lines) + "\n"


def write_results(text: str) -> None:
    replace_section("bench_site", text.replace(BEGIN, "").replace(END, "").strip("\n"))


def timed(label: str, fn: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    value = fn()
    print(f"  {label}: {time.perf_counter() - start:.1f} s")
    return value


def main() -> int:
    if sys.argv[1:2] == ["--render"]:
        return report(json.loads(Path(sys.argv[2]).read_text()), time.perf_counter())
    if not Path(CHROMIUM).exists():
        print(f"Chromium is missing at {CHROMIUM}: run `make chromium`.", file=sys.stderr)
        return 1
    began = time.perf_counter()
    figures: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "cpu": cpu_model(),
        "chromium": chromium_version(),
        "load": os.getloadavg()[0],
    }
    with tempfile.TemporaryDirectory(prefix="bench-site-") as tmp, serving(
        Path(tmp) / "site", compress=True
    ) as url:
        print(f"Building the site {BUILDS} times (mkdocs build --strict)...")
        site_dir = Path(tmp) / "site"
        builds = []
        # The first build compiles the runtime's bytecode (an empty cache, as on a fresh
        # clone); the next ones find it cached, as a rebuild after editing a page does.
        os.environ[CACHE_DIR_ENV] = str(Path(tmp) / "bytecode-cache")
        for i in range(BUILDS):
            builds.append(build_with_retry(site_dir, url))
            print(f"  build {i + 1}: {builds[-1]:.2f} s")
        figures["builds"] = builds
        write_bare_pages(site_dir)

        kinds = ("lesson", "bare", "stock")
        runs: dict[str, list[Load]] = {f"{k} {t}": [] for k in kinds for t in ("cold", "warm")}
        bytes_rows: dict[str, list[Bytes]] = {k: [] for k in runs}
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                print(
                    f"Loading {PAGE} and the two bare pages, cold then warm, {REPEATS} times each..."
                )
                latency_raw: dict[str, Any] = {}
                for i in range(REPEATS):
                    order = kinds[i % 3 :] + kinds[: i % 3]  # each goes first in turn
                    for kind in order:
                        bare = kind != "lesson"
                        target = url + (f"bench-{kind}.html" if bare else PAGE)
                        cold, warm, page = run_pair(browser, target, kind, bare)
                        runs[f"{kind} cold"].append(cold)
                        runs[f"{kind} warm"].append(warm)
                        # Request sizes must be read while the context is open.
                        bytes_rows[f"{kind} cold"].append(byte_counts(cold, site_dir))
                        bytes_rows[f"{kind} warm"].append(byte_counts(warm, site_dir))
                        print(
                            f"  run {i + 1} {kind}: cold {cold.done:,.0f} ms, warm {warm.done:,.0f} ms"
                            f" (fcp {cold.fcp:.0f}/{warm.fcp:.0f}, worker at "
                            f"{cold.worker_start:.0f}/{warm.worker_start:.0f})"
                        )
                        if not bare and i == 0:
                            figures["files"] = files_by_live(cold, site_dir)
                        if not bare and i == REPEATS - 1:
                            print("Input-to-update latency on the live (warm) lesson page...")
                            latency_raw = timed("inputs", lambda p=page: input_latency(p))
                        page.context.close()
                print("One cold visit with an on-disk cache (persistent profile)...")
                figures["disk_cache"] = runtime_downloads_with_a_disk_cache(p.chromium, url)
                figures["throttled"] = throttled_runs(browser, url, site_dir)
            finally:
                browser.close()

    timeline = {
        k: {
            "dcl": median([x.dcl for x in v]),
            "fcp": median([x.fcp for x in v]),
            "worker_start": median([x.worker_start for x in v]),
            "ready": median([x.ready for x in v]),
            "done": median([x.done for x in v]),
        }
        for k, v in runs.items()
    }
    figures["timeline"] = timeline
    figures["runs"] = {k: [x.done for x in v] for k, v in runs.items()}
    for temp in ("cold", "warm"):
        lesson = runs[f"lesson {temp}"]
        for base in ("stock", "bare"):
            other = runs[f"{base} {temp}"]
            figures[f"ratio_{base}_{temp}"] = (
                timeline[f"lesson {temp}"]["done"] / timeline[f"{base} {temp}"]["done"]
            )
            figures[f"paired_{base}_{temp}"] = median(
                [a.done / b.done for a, b in zip(lesson, other, strict=True)]
            )
        figures[f"ready_ratio_{temp}"] = (
            timeline[f"lesson {temp}"]["ready"] / timeline[f"bare {temp}"]["ready"]
        )
        figures[f"first_render_{temp}"] = median([x.done - x.ready for x in lesson])

    latency = {}
    everything: list[float] = []
    changed_all = 0
    for label, key in [("model select", "select"), ("typed parameter count", "typed")]:
        times = latency_raw[key]["times"]
        everything += times
        changed_all += latency_raw[key]["changed"]
        latency[label] = {
            "n": len(times),
            "changed": latency_raw[key]["changed"],
            "p50": percentile(times, 0.5),
            "p95": percentile(times, 0.95),
            "max": max(times),
        }
    latency["all"] = {
        "n": len(everything),
        "changed": changed_all,
        "p50": percentile(everything, 0.5),
        "p95": percentile(everything, 0.95),
        "max": max(everything),
    }
    figures["latency"] = latency

    figures["bytes"] = {
        k: {
            "to_fcp": median([b.to_fcp for b in rows]),
            "to_live": median([b.to_live for b in rows]),
            "raw_to_live": median([b.raw_to_live for b in rows]),
            "sw_to_live": median([b.sw_to_live for b in rows]),
            "settled": median([b.settled for b in rows]),
            "requests_to_fcp": round(median([b.requests_to_fcp for b in rows])),
            "requests_total": round(median([b.requests_total for b in rows])),
        }
        for k, rows in bytes_rows.items()
    }
    early = sorted(
        {
            name
            for b in bytes_rows["lesson cold"] + bytes_rows["lesson warm"]
            for name in b.pyodide_before_fcp
        }
    )
    figures["pyodide_before_fcp"] = (
        ("yes: " + ", ".join(early)) if early else "none (lesson, cold and warm)"
    )
    firsts = [
        b.first_pyodide_ms for b in bytes_rows["lesson cold"] if b.first_pyodide_ms is not None
    ]
    figures["first_pyodide"] = fmt_ms(median(firsts)) if firsts else "n/a"
    twice = sorted(
        {p for b in bytes_rows["lesson cold"] + bytes_rows["lesson warm"] for p in b.runtime_twice}
    )
    figures["runtime_twice"] = ", ".join(twice) or "none"

    # Kept, so that a change to the report's wording can be re-rendered without a new run:
    # .venv/bin/python bench/bench_site.py --render build/bench-site-figures.json
    FIGURES.parent.mkdir(parents=True, exist_ok=True)
    FIGURES.write_text(json.dumps(figures, indent=1))
    return report(figures, began)


def report(figures: dict[str, Any], began: float) -> int:
    text = section(figures)
    print()
    print(text.replace(BEGIN + "\n", "").replace(END + "\n", ""))
    if QUICK:
        print("BENCH_REPEATS/BENCH_BUILDS set: bench/RESULTS.md left as it was.")
        return 0
    write_results(text)
    print(f"Wrote {RESULTS.relative_to(ROOT)} ({time.perf_counter() - began:.0f} s in all).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
