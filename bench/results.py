"""Each benchmark owns one section of bench/RESULTS.md, between its begin/end markers."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def markers(name: str) -> tuple[str, str]:
    return (
        f"<!-- {name}: begin (written by bench/{name}.py; edits here are overwritten) -->",
        f"<!-- {name}: end -->",
    )


def replace_section(name: str, body: str) -> None:
    """Put ``body`` (markdown) between the markers of ``name``, keeping the other sections."""
    begin, end = markers(name)
    text = f"{begin}\n{body.rstrip()}\n{end}\n"
    current = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    if begin in current and end in current:
        head, rest = current.split(begin, 1)
        tail = rest.split(end, 1)[1].lstrip("\n")
        new = head + text + ("\n" + tail if tail else "")
    else:
        new = current.rstrip("\n") + "\n\n" + text
    RESULTS.write_text(new)
