"""Benchmark: the bytes the offline cache holds (every file docs/sw.js keeps, as the build
listed them in site/sw.js), raw and gzip-compressed, and how much of it a reader downloads
beyond what opening the first step already loaded.

    make build && .venv/bin/python bench/offline_bytes.py [SITE_DIR]

That nothing of the saved lesson is requested before the first widget is live is checked in
the browser by site-tests/test_offline_lesson.py (the server's request log against the time the
widget went live).
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from results import replace_section  # noqa: E402

FIRST_PAGE = "steps/pile-of-numbers/"
MB = 1e6


@dataclass(frozen=True)
class Bytes:
    """A group of files: how many, their bytes as built and gzip-compressed (level 6)."""

    files: int
    raw: int
    gzip: int

    def row(self, name: str) -> str:
        return f"| {name} | {self.files} | {self.raw / MB:.2f} | {self.gzip / MB:.2f} |"


def _listed(site: Path, name: str) -> object:
    match = re.search(rf"^const {name} = (.*);$", (site / "sw.js").read_text(), re.M)
    if not match:
        raise SystemExit(f"{site}/sw.js has no {name}: run `make build` first.")
    return json.loads(match.group(1))


def _file(site: Path, path: str) -> Path:
    return site / (path + "index.html" if path == "" or path.endswith("/") else path)


def measure(site: Path, paths: list[str]) -> Bytes:
    data = [_file(site, p).read_bytes() for p in paths]
    return Bytes(len(data), sum(map(len, data)), sum(len(gzip.compress(d, 6)) for d in data))


def _first_page_files(site: Path, install: list[str]) -> list[str]:
    """What opening the first step loads: its page and everything kept at install but the
    offline page (the runtime, the lesson's scripts, the theme, the search worker and index,
    the sitemap)."""
    return [FIRST_PAGE] + [p for p in install if not p.startswith("offline")]


def main(argv: list[str]) -> int:
    site = Path(argv[0]) if argv else ROOT / "site"
    files = _listed(site, "FILES")
    install = _listed(site, "INSTALL")
    assert isinstance(files, dict) and isinstance(install, list)
    everything = sorted(files)
    pages = [p for p in everything if p == "" or p.endswith("/")]
    first = _first_page_files(site, install)
    groups = {
        "kept at install (runtime, lesson scripts, theme, search index, sitemap, offline page)": measure(
            site, install
        ),
        "pages (steps, going further, reality check, glossary, authors, home)": measure(
            site, [p for p in pages if p not in install]
        ),
        "**the whole offline cache**": measure(site, everything),
        "of which the first visit to step 1 already loaded": measure(site, first),
        "**downloaded for offline reading beyond that visit**": measure(
            site, [p for p in everything if p not in first]
        ),
    }
    lines = [
        "## Offline cache",
        "",
        f"Made by `.venv/bin/python bench/offline_bytes.py` on the site `make build` writes "
        f"(version `{_listed(site, 'VERSION')}`): the files the service worker keeps "
        "(`docs/sw.js`, lists from `macros/service_worker.py`), by the bytes they have as built "
        "and gzip-compressed at level 6 (what a server sending them compressed would send; "
        "`tools/serve.py` sends them raw). MB = 10^6 bytes.",
        "",
        "| files | count | MB raw | MB gzip |",
        "|---|---:|---:|---:|",
        *(b.row(name) for name, b in groups.items()),
        "",
        "Nothing of it is requested before the first widget is live: "
        "`site-tests/test_offline_lesson.py` compares the server's request log with the "
        "moment the first widget went live (no other page before it), and that a reader who "
        "opted out or whose browser saves data gets no other page at all.",
    ]
    print("\n".join(lines))
    replace_section("offline_bytes", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
