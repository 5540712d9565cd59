"""The runtime files a page with widgets hints at on a first visit, all at once at first
paint, so that the worker finds them on the way instead of asking for them one after the
other as it starts (partials/boot-engine.html).

The pages are rendered before the runtime ships (the build hook's on_post_build), so the list
is known from the names the shipped files will have; :func:`check_preloaded` then compares it
with what shipped, and the build fails if a hint names a file the site does not have (the
worker would download the file a second time under its real name).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from macros.pyodide_core import STDLIB_SHIPPED
from macros.solid_archive import SUFFIX
from macros.wheel import wheel_file_name

# config.extra's key for the list (site paths), read by partials/boot-engine.html.
PRELOAD_EXTRA = "runtime_preload"


class PreloadMismatchError(Exception):
    """A preload hint names a file the built site's runtime does not have."""


def runtime_preload(project_root: Path) -> list[str]:
    """Site paths of what the engine's worker fetches to start, in the order it asks for
    them: its own script and its imports, Pyodide's loader, then the large files (the wasm,
    whose bytes set the pace, first). The engine's core only: the chunks a page's widgets
    need differ from page to page, and the worker asks for them as soon as the page names
    its widgets, while Pyodide starts (docs/js/engine-worker.js)."""
    return [
        "js/engine-worker.js",
        "pyodide/pyodide.mjs",
        "js/runtime-config.js",
        "pyodide/pyodide.asm.mjs",
        "pyodide/pyodide-lock.json",
        "pyodide/pyodide.asm.wasm",
        f"pyodide/{STDLIB_SHIPPED}",
        f"wheels/{wheel_file_name(project_root)}{SUFFIX}",
    ]


def put_in_config(config: Any, project_root: Path) -> None:
    """``config.extra[PRELOAD_EXTRA]``: the list, for the pages' templates."""
    config.extra[PRELOAD_EXTRA] = runtime_preload(project_root)


def check_preloaded(preloaded: list[str], shipped: list[str]) -> None:
    """PreloadMismatchError unless every preloaded site path is among the ``shipped`` ones."""
    missing = sorted(set(preloaded) - set(shipped))
    if missing:
        raise PreloadMismatchError(
            f"the pages preload {', '.join(missing)}, which the runtime did not ship"
        )
