"""The lesson's stylesheets (mkdocs.yml extra_css, one file per subject) ship as one file:
each stylesheet in <head> is a request the first paint waits for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

STYLE_BUNDLE = "css/lesson-bundle.css"


def bundle_in_config(config: Any) -> None:
    """The pages link STYLE_BUNDLE alone; ``config.extra["style_sources"]`` keeps the
    stylesheets it bundles, in their order."""
    if STYLE_BUNDLE not in config.extra_css:
        config.extra["style_sources"] = [str(css) for css in config.extra_css]
        config.extra_css = [STYLE_BUNDLE]


def style_sources(config: Any) -> list[str]:
    """The stylesheets bundled (built into the site, but no page links them)."""
    return list(config.extra.get("style_sources", []))


def write_style_bundle(site: Path, config: Any) -> None:
    """``site/STYLE_BUNDLE``: each bundled stylesheet as built, headed by its name."""
    parts = [
        f"/* {name} */\n{(site / name).read_text('utf-8').strip()}\n"
        for name in style_sources(config)
    ]
    (site / STYLE_BUNDLE).write_text("\n".join(parts), "utf-8")
