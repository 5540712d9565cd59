"""The lesson's copy for reading from disk, as one zip: every file of the offline build under
one folder, ``what-ai-workloads-need/``, with a short README.txt beside its index.html
(how to open it, what works offline). ``make build`` runs it:

    python tools/offline_zip.py build/offline build/what-ai-workloads-need-offline.zip
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

FOLDER = "what-ai-workloads-need"

README = """\
What AI workloads need: the lesson, for reading offline
========================================================

Open index.html in this folder with your browser. Every page, the glossary and the
cheat sheet work from disk, with no network.

What works from disk
- Every page and every number on it: the widgets show the numbers the engine computed
  when this copy was built, for their default inputs.
- Search, the glossary's tooltips, printing (the cheat sheet prints on one A4 page).

What needs a local server
- Live widgets (changing an input and seeing new numbers): browsers do not run the
  engine's scripts from files opened from disk. Serve this folder with any static
  server, for example, inside this folder:

      python3 -m http.server

  and open the address it prints (http://localhost:8000/). The engine then runs in
  your browser, still with no network beyond your own machine.

Every number comes from a small Python package you can also run in a terminal: see
the page "Get the engine".
"""


def write_offline_zip(site: Path, zip_path: Path) -> int:
    """Zip every file under ``site`` into ``zip_path`` under FOLDER/, with README.txt;
    returns the number of files written (README included). Names are sorted, so the same
    build gives the same members in the same order."""
    files = sorted(p for p in site.rglob("*") if p.is_file())
    if not (site / "index.html").is_file():
        raise SystemExit(f"{site} holds no index.html: build the offline copy first.")
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(zip_path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{FOLDER}/README.txt", README)
        for path in files:
            archive.write(path, f"{FOLDER}/{path.relative_to(site).as_posix()}")
    return len(files) + 1


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python tools/offline_zip.py SITE_DIR ZIP_PATH", file=sys.stderr)
        return 2
    count = write_offline_zip(Path(argv[0]), Path(argv[1]))
    print(f"{argv[1]}: {count} files under {FOLDER}/")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
