"""tools/snapshot.py's command line: help and usage errors write no file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SNAPSHOT = Path(__file__).resolve().parent.parent / "tools" / "snapshot.py"


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SNAPSHOT), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_help_exits_0_and_writes_no_file(tmp_path: Path) -> None:
    done = _run(tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout and "output" in done.stdout
    assert list(tmp_path.iterdir()) == []


def test_a_missing_output_path_is_a_usage_error(tmp_path: Path) -> None:
    done = _run(tmp_path)
    assert done.returncode == 2
    assert "usage:" in done.stderr and "output" in done.stderr
    assert list(tmp_path.iterdir()) == []
