"""Bytes on the wire by the first live widget, without the times: one cold visit each of the
lesson and the two bare pages, measured as `make bench` measures them (bench/bench_site.py:
the same server compressing as GitHub Pages does, the same page, the same byte counts).

Bytes do not depend on the machine's load, so this runs on a busy machine where the whole
benchmark's times would mean little. It reads the built site (run `make build` first) and
changes nothing there (the bare pages go into a copy).

Usage: .venv/bin/python bench/bytes_by_live.py [SITE_DIR]   (default: site)
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_site import (
    CHROMIUM,
    CHROMIUM_ARGS,
    PAGE,
    byte_counts,
    files_by_live,
    fmt_bytes,
    run_pair,
    serving,
    write_bare_pages,
)


def main() -> int:
    built = Path(sys.argv[1] if len(sys.argv) > 1 else "site")
    if not (built / "index.html").exists():
        print(f"no built site in {built}: run `make build` first", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="bytes-by-live-") as tmp:
        site_dir = Path(tmp) / "site"
        shutil.copytree(built, site_dir)
        write_bare_pages(site_dir)
        with serving(site_dir, compress=True) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                for kind in ("lesson", "bare", "stock"):
                    bare = kind != "lesson"
                    target = url + (f"bench-{kind}.html" if bare else PAGE)
                    cold, _, page = run_pair(browser, target, kind, bare)
                    counts = byte_counts(cold, site_dir)
                    print(
                        f"{kind} cold: {fmt_bytes(counts.to_live)} on the wire by "
                        f"{'the first live widget' if not bare else 'ready'}, "
                        f"{fmt_bytes(counts.raw_to_live)} raw"
                    )
                    if not bare:
                        for name, raw, on_wire in files_by_live(cold, site_dir):
                            print(f"  {name}: {fmt_bytes(raw)} -> {fmt_bytes(on_wire)}")
                    page.context.close()
            finally:
                browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
