"""The step pages' old addresses, each kept as a small page that leads to its step.

The steps were once numbered in their file names, so their addresses were
``steps/NN-slug/``; they are now ``steps/slug/`` (the nav's order numbers them). Links to the
old addresses live on in bookmarks, shared links and search engines, so each one gets a page
of its own at the old place: a meta refresh with a relative address (it works on any static
host, under any sub-path, and with JavaScript off), a link for a reader whose browser does not
follow it, and an inline script that carries the old link's query and anchor across (a linked
widget's values). Nothing outside the site is requested.

The numbering is history, not the nav's: it is written out here as it was, and the build
refuses a target that is no longer a step.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

# Old folder under steps/ -> the step's folder now: the numbering the step files had before
# they were named by subject alone.
OLD_STEP_FOLDERS: dict[str, str] = {
    "01-pile-of-numbers": "pile-of-numbers",
    "02-ai-ml-dl": "ai-ml-dl",
    "03-training-needs-more-memory": "training-needs-more-memory",
    "04-train-it-anyway": "train-it-anyway",
    "05-training-run": "training-run",
    "06-training-at-scale": "training-at-scale",
    "07-drill-training-memory": "drill-training-memory",
    "08-serve-the-model": "serve-the-model",
    "09-follow-one-request": "follow-one-request",
    "10-side-by-side": "side-by-side",
    "11-cpu-and-gpu": "cpu-and-gpu",
    "12-same-prompt-on-cpus": "same-prompt-on-cpus",
    "13-compute": "compute",
    "14-capacity": "capacity",
    "15-bandwidth": "bandwidth",
    "16-roofline": "roofline",
    "17-drill-will-it-fit": "drill-will-it-fit",
    "18-where-ai-runs": "where-ai-runs",
    "19-five-questions": "five-questions",
    "20-cheat-sheet": "cheat-sheet",
    "21-playground": "playground",
}


def redirect_page(target: str) -> str:
    """The page at an old address: ``target`` is the step's folder beside it ('roofline')."""
    href = f"../{target}/"
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="robots" content="noindex">\n'
        f'<meta http-equiv="refresh" content="0; url={href}">\n'
        f'<link rel="canonical" href="{href}">\n'
        "<title>This step has moved</title>\n"
        f'<script>location.replace("{href}" + location.search + location.hash);</script>\n'
        "</head>\n<body>\n"
        f'<main><p>This step has moved: <a href="{href}">go to the step</a>.</p></main>\n'
        "</body>\n</html>\n"
    )


def write_old_addresses(site: Path, steps: Iterable[str]) -> None:
    """A redirect page at every old step address of the built ``site``; ``steps`` lists the
    steps' addresses now ('steps/roofline/'). Raises ValueError for a target that is not one."""
    now = set(steps)
    gone = sorted(old for old, new in OLD_STEP_FOLDERS.items() if f"steps/{new}/" not in now)
    if gone:
        raise ValueError(f"old step addresses lead to no step: {gone}; update OLD_STEP_FOLDERS")
    for old, new in OLD_STEP_FOLDERS.items():
        folder = site / "steps" / old
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "index.html").write_text(redirect_page(new), encoding="utf-8")
