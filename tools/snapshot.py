"""A byte-for-byte snapshot of what the engine produces, to prove a refactor changed nothing.

Records, as one JSON document, the cases of ``macros/corpus.py``: every widget rendered at
its defaults and with each control moved, every plan case (the parity cases plus a grid of
models x chips x tasks), every table, and the CLI's output for a set of command lines.
Compare two snapshots with ``cmp`` or ``diff``; the built site is compared separately
(``diff -r`` of the HTML pages).

    .venv/bin/python tools/snapshot.py build/snapshot-before.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from macros import corpus  # noqa: E402  (the project root goes on sys.path first)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="tools/snapshot.py",
        description="Write every widget, plan, table and CLI output of the engine as one "
        "JSON file, to compare before and after a change (cmp or diff).",
    )
    parser.add_argument("output", type=Path, help="the JSON file to write (folders are made)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    path: Path = parse_args(argv).output
    snapshot = {
        "widgets": corpus.widget_results(),
        "plans": corpus.plan_results(),
        "tables": corpus.table_results(),
        "cli": corpus.cli_results(),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(snapshot, indent=1, sort_keys=True, default=str))
    print(f"{path}: {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
