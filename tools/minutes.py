"""Print each step's reading time by the reader model, and the lesson's total, on a built site.

    .venv/bin/python tools/minutes.py [SITE_DIR]   (default: site)

The same count `site-tests/test_minutes.py` checks (macros/reading_time.py: visible words at
the model's pace plus each widget's minutes), with the exact minutes before rounding, so an
author sees what a change of words costs before the test does. Steps are listed in the
order of their folders; a folder whose page shows no words (an old address that redirects)
is left out.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from macros import reading_time


def main(site: Path) -> int:
    pages = sorted((site / "steps").glob("*/index.html"))
    if not pages:
        print(f"No built steps under {site}/steps: run `make build` first.", file=sys.stderr)
        return 1
    total_minutes = 0.0
    total_words = 0
    for page in pages:
        reading = reading_time.read_page(page.read_text(encoding="utf-8"))
        widgets = sum(reading.widget_minutes)
        if not reading.words and not widgets:
            continue
        minutes = reading_time.exact_minutes(reading.words, widgets)
        total_minutes += minutes
        total_words += reading.words
        print(f"{page.parent.name:32s} {reading.words:5d} words  widgets {widgets:5.2f} min"
              f"  {minutes:6.2f} min")
    print(f"{'lesson':32s} {total_words:5d} words  {total_minutes:28.2f} min")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "site")))
