"""MkDocs hook: ship the browser runtime with the site after each build.

Copies the Pyodide core from node_modules (installed from npm at the exact version pinned in
package.json), with a standard library trimmed to what the site imports and precompiled
(macros/runtime_bytecode.py, which also proves the trimmed runtime renders everything), builds
the engine wheel as bytecode, and writes the two generated files the browser needs:
``js/runtime-config.js`` (where the wheel is) and ``sw.js`` (every file of the lesson, kept
for offline reading, and the build's version).
The site then requests nothing outside its own origin.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from html import unescape as unescape_html
from pathlib import Path
from typing import Any

from engine.browser import MAX_INPUT_CHARS
from engine.numbers.bounded_json import DEFAULT_MAX_DEPTH
from engine.render.options import ADDRESS_MAX_CHARS
from engine.render.table_labels import stack_tables
from macros.solid_archive import SUFFIX, solid_gzip

PYODIDE_CORE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
# The standard library ships as one gzip stream (macros/solid_archive.py), under this name.
STDLIB_SHIPPED = "python_stdlib.zip" + SUFFIX
SHIPPED_PYODIDE_FILES = tuple(
    STDLIB_SHIPPED if name == "python_stdlib.zip" else name for name in PYODIDE_CORE_FILES
)
# The lesson's stylesheets (mkdocs.yml extra_css, one file per subject) ship as one file: each
# stylesheet in <head> is a request the first paint waits for.
STYLE_BUNDLE = "css/lesson-bundle.css"
SCRIPT_FILES = (
    "js/file-notice.js",
    "js/lesson.js",
    "js/engine-client.js",
    "js/engine-worker.js",
    "js/offline.js",
    "js/store.js",
    "js/clock.js",
    "js/address.js",
    "js/share.js",
    "js/bounded.js",
    "js/progress.js",
    "js/runtime-config.js",
    STYLE_BUNDLE,
)


class RuntimeMissingError(Exception):
    """The Pyodide runtime is not installed where the build expects it."""


def _project_root(config: Any) -> Path:
    return Path(config.config_file_path).resolve().parent


def _check_pyodide(root: Path) -> str:
    """The installed Pyodide's version; RuntimeMissingError unless it is the pinned one."""
    pinned = json.loads((root / "package.json").read_text())["dependencies"]["pyodide"]
    source = root / "node_modules" / "pyodide"
    manifest = source / "package.json"
    if not manifest.exists():
        raise RuntimeMissingError(
            "node_modules/pyodide is missing: run `npm ci` (or `make build`, which does it)."
        )
    installed = str(json.loads(manifest.read_text())["version"])
    if installed != pinned:
        raise RuntimeMissingError(
            f"node_modules has Pyodide {installed} but package.json pins {pinned}: run `npm ci`."
        )
    return installed


def minimal_lock(stock_lock: bytes) -> bytes:
    """Pyodide's package lock without its packages (the site loads none): loadPyodide still
    reads the lock and checks its ``info`` (ABI version), so that part stays as npm ships it."""
    info = json.loads(stock_lock)["info"]
    return json.dumps({"info": info, "packages": {}}, sort_keys=True).encode()


def _copy_pyodide(root: Path, site: Path, stdlib_zip: bytes) -> None:
    """The Pyodide core into ``site/pyodide``: the trimmed, precompiled standard library (one
    gzip stream) and a lock without packages in place of the stock ones."""
    source = root / "node_modules" / "pyodide"
    target = site / "pyodide"
    target.mkdir(parents=True, exist_ok=True)
    for name in PYODIDE_CORE_FILES:
        if name == "python_stdlib.zip":
            (target / STDLIB_SHIPPED).write_bytes(solid_gzip(stdlib_zip))
        elif name == "pyodide-lock.json":
            (target / name).write_bytes(minimal_lock((source / name).read_bytes()))
        else:
            shutil.copy2(source / name, target / name)


OFFLINE_SEARCH_SHIM = "js/iframe-worker-shim.js"


def on_config(config: Any, **_: Any) -> Any:
    """In the copy for file://, load the search shim from the site, not from a CDN.

    Material's offline plugin adds ``https://unpkg.com/iframe-worker/shim`` to the polyfills;
    the same shim, pinned in package.json, is shipped with the site instead.
    """
    sys.path.insert(0, str(_project_root(config)))
    if STYLE_BUNDLE not in config.extra_css:
        config.extra["style_sources"] = [str(css) for css in config.extra_css]
        config.extra_css = [STYLE_BUNDLE]
    polyfills = config.extra.get("polyfills", [])
    if any("iframe-worker" in str(p) for p in polyfills):
        config.extra["polyfills"] = [
            OFFLINE_SEARCH_SHIM if "iframe-worker" in str(p) else p for p in polyfills
        ]
    return config


def on_page_content(html: str, **_: Any) -> str:
    """Every table of the page (markdown's too) labelled so that a phone can stack its rows;
    the markdown's heads may hold any character reference."""
    return stack_tables(html, unescape=unescape_html)


def on_nav(nav: Any, config: Any, files: Any, **_: Any) -> Any:
    """Number the lesson's steps from the navigation's order, the one place a step's number
    comes from: each step page's title becomes 'Step N · title', and ``extra.lesson_steps``
    lists the steps' addresses in order (for the step_header macro, and for the page's
    script that ticks visited steps; see overrides/main.html)."""
    from macros.authoring import STEPS_FOLDER, AuthoringError, number_steps, step_title

    in_nav = [(page.file.src_uri, page.url) for page in nav.pages]
    steps = number_steps(in_nav)
    listed = {src for src, _ in in_nav}
    unlisted = [f.src_uri for f in files.documentation_pages() if f.src_uri.startswith(STEPS_FOLDER)]
    unlisted = [src for src in unlisted if src not in listed]
    if unlisted:
        raise AuthoringError(f"step pages missing from mkdocs.yml's nav: {', '.join(unlisted)}")
    for page in nav.pages:
        if page.url in steps:
            if not page.title:
                raise AuthoringError(f"{page.file.src_uri}: give the step a title in the nav.")
            page.title = step_title(steps.index(page.url) + 1, page.title)
    config.extra["lesson_steps"] = list(steps)
    return nav


def _copy_offline_search_shim(root: Path, site: Path, config: Any) -> None:
    if OFFLINE_SEARCH_SHIM in config.extra.get("polyfills", []):
        shim = root / "node_modules" / "iframe-worker" / "shim" / "index.js"
        if not shim.exists():
            raise RuntimeMissingError("node_modules/iframe-worker is missing: run `npm ci`.")
        shutil.copy2(shim, site / OFFLINE_SEARCH_SHIM)


def _bundle_styles(site: Path, config: Any) -> None:
    parts = [
        f"/* {name} */\n{(site / name).read_text('utf-8').strip()}\n"
        for name in config.extra.get("style_sources", [])
    ]
    (site / STYLE_BUNDLE).write_text("\n".join(parts), "utf-8")


# Each step's unrounded minutes, by address, as counted on its built page (on_post_page).
_step_minutes: dict[str, float] = {}


def on_post_page(output: str, page: Any, config: Any, **_: Any) -> str:
    """A step's header gets its minutes, counted on the page as built (widget output and
    all, closed <details> left out): see macros/reading_time.py."""
    from macros.authoring import finish_step_header

    html, minutes = finish_step_header(output)
    if minutes is not None:
        _step_minutes[page.url] = minutes
    return html


def _state_lesson_minutes(site: Path, config: Any) -> None:
    """The Home page's 'about N minutes' (and its text in the search index): N is the sum of
    the steps' unrounded minutes, rounded, known only now that every step is built."""
    from macros.authoring import LESSON_MINUTES_MARK, finish_lesson_minutes

    steps = config.extra["lesson_steps"]
    for path in [site / "index.html", *sorted((site / "search").glob("search_index.*"))]:
        if path.exists() and LESSON_MINUTES_MARK in (text := path.read_text("utf-8")):
            path.write_text(finish_lesson_minutes(text, _step_minutes, steps), "utf-8")


def on_post_build(config: Any, **_: Any) -> None:
    root = _project_root(config)
    site = Path(config.site_dir)
    _state_lesson_minutes(site, config)
    _bundle_styles(site, config)
    _copy_offline_search_shim(root, site, config)
    sys.path.insert(0, str(root))
    from macros.runtime_bytecode import browser_wheel, check_runtime, compile_runtime
    from macros.wheel import build_engine_wheel

    pyodide_version = _check_pyodide(root)
    with tempfile.TemporaryDirectory() as tmp:
        bytecode = compile_runtime(root, build_engine_wheel(root, Path(tmp)))
    _copy_pyodide(root, site, bytecode.stdlib_zip)
    with tempfile.TemporaryDirectory() as tmp:
        plain = browser_wheel(root, Path(tmp), bytecode)
        wheel = site / "wheels" / (plain.name + SUFFIX)
        wheel.parent.mkdir(parents=True, exist_ok=True)
        wheel.write_bytes(solid_gzip(plain.read_bytes()))
    check_runtime(root, wheel, site / "pyodide", bytecode)
    wheel_path = f"wheels/{wheel.name}"

    # What a first visit downloads to go live (the loading message states it).
    runtime_bytes = sum((site / "pyodide" / n).stat().st_size for n in SHIPPED_PYODIDE_FILES)
    runtime_bytes += wheel.stat().st_size
    runtime = {
        "wheel": wheel_path,
        "stdlib": f"pyodide/{STDLIB_SHIPPED}",
        "pyodide": pyodide_version,
        "download_MB": round(runtime_bytes / 1e6),
        # The engine's bounds on saved and linked text, for docs/js/bounded.js to apply before
        # such text reaches the worker (the engine applies them again).
        "max_input_chars": MAX_INPUT_CHARS,
        "max_json_depth": DEFAULT_MAX_DEPTH,
        # The longest value a page address carries (docs/js/address.js; the engine says so
        # beside a pasted config that is longer).
        "max_address_chars": ADDRESS_MAX_CHARS,
    }
    (site / "js" / "runtime-config.js").write_text(
        "// Generated by macros/build_hook.py at build time.\n"
        f"export const RUNTIME = {json.dumps(runtime, sort_keys=True)};\n"
    )

    runtime_files = [f"pyodide/{n}" for n in SHIPPED_PYODIDE_FILES] + [wheel_path, *SCRIPT_FILES]
    _write_service_worker(site, config, runtime_files)


def _write_service_worker(site: Path, config: Any, runtime: list[str]) -> None:
    """``sw.js`` with the list of every shipped file and the build's version (a digest of them
    all; see macros/service_worker.py). Runs last: it reads every file the build wrote."""
    from macros.service_worker import offline_files, write_service_worker

    template = (site / "sw.js").read_text("utf-8")
    left_out = config.extra.get("style_sources", [])
    files = offline_files(site, runtime, left_out, directory_urls=config.use_directory_urls)
    write_service_worker(site, template, files)
