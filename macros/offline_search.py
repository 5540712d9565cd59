"""In the copy for file://, the search shim loads from the site, not from a CDN.

Material's offline plugin adds ``https://unpkg.com/iframe-worker/shim`` to the polyfills; the
same shim, pinned in package.json, is shipped with the site instead.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from macros.pyodide_core import RuntimeMissingError

OFFLINE_SEARCH_SHIM = "js/iframe-worker-shim.js"
INSTALLED_SHIM = Path("node_modules") / "iframe-worker" / "shim" / "index.js"


def use_shipped_shim(config: Any) -> None:
    """The polyfills name OFFLINE_SEARCH_SHIM in place of the CDN's shim."""
    polyfills = config.extra.get("polyfills", [])
    if any("iframe-worker" in str(p) for p in polyfills):
        config.extra["polyfills"] = [
            OFFLINE_SEARCH_SHIM if "iframe-worker" in str(p) else p for p in polyfills
        ]


def copy_shim(root: Path, site: Path, config: Any) -> None:
    """The shim from node_modules into the site, where the polyfills name it."""
    if OFFLINE_SEARCH_SHIM in config.extra.get("polyfills", []):
        shim = root / INSTALLED_SHIM
        if not shim.exists():
            raise RuntimeMissingError("node_modules/iframe-worker is missing: run `npm ci`.")
        shutil.copy2(shim, site / OFFLINE_SEARCH_SHIM)
