"""What a Pyodide upgrade touches, checked against the installed node_modules/pyodide.

Four things are written for one Pyodide version; for each this prints whether it still
matches the installed Pyodide and, where it does not, what to do:

1. the version: package.json's pin, package-lock.json's and node_modules' (npm);
2. the two start-up modules the site replaces (macros/pyodide_lean.py's REVIEWED_STOCK: the
   SHA-256 of the stock pyodide/__init__.py and pyodide/_package_loader.py);
3. the bytecode magic (macros/runtime_bytecode.py's BYTECODE_MAGIC vs the installed
   Pyodide's importlib.util.MAGIC_NUMBER, read by booting it under Node);
4. the corpus (macros/corpus.py) run on the stock runtime and on the trimmed one the site
   ships, as the build does (macros/shipped_runtime.py; cached under build/, so a second
   run is quick): the same results, no module left out.

Offline: it reads node_modules and boots Pyodide under Node. Exit status 0 when all match.

    .venv/bin/python tools/pyodide_check.py          (make pyodide-check)
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from macros.pyodide_core import INSTALLED, installed_version, pinned_version  # noqa: E402
from macros.pyodide_lean import REVIEWED_STOCK, StockChangedError  # noqa: E402
from macros.runtime_bytecode import (  # noqa: E402
    BYTECODE_MAGIC,
    BytecodeMagicError,
    TrimmedRuntimeError,
)

# Boots the installed Pyodide (stock, as npm ships it) and prints its bytecode magic in hex.
MAGIC_SCRIPT = """
import { loadPyodide } from %s;
const pyodide = await loadPyodide();
console.log(pyodide.runPython("import importlib.util; importlib.util.MAGIC_NUMBER.hex()"));
"""


@dataclass(frozen=True)
class Check:
    """One thing an upgrade touches: ``subject``; whether it ``matches`` the installed
    Pyodide; ``found``, what was seen; ``todo``, what to do where it does not match."""

    subject: str
    matches: bool
    found: str
    todo: str = ""


def locked_version(root: Path) -> str | None:
    """The Pyodide version package-lock.json records, or None where it records none."""
    packages = json.loads((root / "package-lock.json").read_text()).get("packages", {})
    version = packages.get("node_modules/pyodide", {}).get("version")
    return None if version is None else str(version)


def check_version(root: Path) -> Check:
    pinned, locked, installed = pinned_version(root), locked_version(root), installed_version(root)
    found = f"package.json {pinned}, package-lock.json {locked}, node_modules {installed}"
    if pinned == locked == installed:
        return Check("version", True, found)
    todo = (
        "pin the new version exactly in package.json (no ^ or ~), then `npm install` "
        "(updates package-lock.json) or `npm ci` (installs what the lock records)"
    )
    return Check("version", False, found, todo)


def check_lean_modules(root: Path) -> list[Check]:
    stdlib = root / INSTALLED / "python_stdlib.zip"
    if not stdlib.exists():
        return [Check("lean start-up modules", False, f"no {stdlib}", "run `npm ci`")]
    stock = zipfile.ZipFile(io.BytesIO(stdlib.read_bytes()))
    checks = []
    for name, reviewed in REVIEWED_STOCK.items():
        subject = f"lean start-up module {name}"
        try:
            digest = hashlib.sha256(stock.read(name)).hexdigest()
        except KeyError:
            todo = "Pyodide no longer ships it: rework macros/pyodide_lean.py"
            checks.append(Check(subject, False, "missing from python_stdlib.zip", todo))
            continue
        found = f"sha256 {digest[:16]}..., reviewed {reviewed[:16]}..."
        todo = (
            f"diff the new {name} against the old one (unzip -p "
            "node_modules/pyodide/python_stdlib.zip), carry what start-up reads into "
            "macros/pyodide_lean.py's replacement, then set REVIEWED_STOCK to the new sha256 "
            f"{digest}"
        )
        checks.append(Check(subject, digest == reviewed, found, "" if digest == reviewed else todo))
    return checks


def installed_magic(root: Path) -> str:
    """The installed Pyodide's bytecode magic in hex, from booting it under Node."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("Node.js is not installed")
    module = json.dumps((root / INSTALLED / "pyodide.mjs").as_uri())
    done = subprocess.run(
        [node, "--input-type=module", "-e", MAGIC_SCRIPT % module],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"Pyodide did not start under Node: {done.stderr[-500:]}")
    return done.stdout.strip().splitlines()[-1]


def check_magic(root: Path) -> Check:
    expected = BYTECODE_MAGIC.hex()
    try:
        magic = installed_magic(root)
    except RuntimeError as error:
        return Check("bytecode magic", False, str(error), "install Node.js and run `npm ci`")
    found = f"installed Pyodide {magic}, BYTECODE_MAGIC {expected}"
    if magic == expected:
        return Check("bytecode magic", True, found)
    todo = (
        "a new Python: check that importlib._bootstrap_external._code_to_hash_pyc (used by "
        "macros/pyodide_compile.mjs) still exists, and tests/test_runtime_trim.py's search of "
        "the bytecode for names; then set macros/runtime_bytecode.py's BYTECODE_MAGIC to "
        f'bytes.fromhex("{magic}")'
    )
    return Check("bytecode magic", False, found, todo)


def check_corpus(root: Path) -> Check:
    """The build's own path (compile, ship into a scratch site, check) on the corpus."""
    from macros.pyodide_core import RuntimeMissingError
    from macros.shipped_runtime import ship_runtime

    subject = "corpus on the trimmed runtime"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            shipped = ship_runtime(root, Path(tmp))
    except (RuntimeMissingError, StockChangedError, BytecodeMagicError) as error:
        return Check(subject, False, f"not run: {error}", "fix the checks above first")
    except TrimmedRuntimeError as error:
        todo = (
            "the trimmed standard library misses what the site imports on the new Pyodide: "
            "see the error, then `.venv/bin/python -m pytest tests/test_runtime_trim.py`"
        )
        return Check(subject, False, str(error), todo)
    except RuntimeError as error:
        todo = "Pyodide failed under Node running macros/pyodide_compile.mjs: read its error"
        return Check(subject, False, str(error)[-800:], todo)
    found = f"same results on stock and shipped runtime ({shipped.download_bytes / 1e6:.1f} MB)"
    return Check(subject, True, found)


def all_checks(root: Path, *, corpus: bool = True) -> list[Check]:
    """Every check, in the order an upgrade meets them (the corpus last: it needs the rest)."""
    checks = [check_version(root), *check_lean_modules(root), check_magic(root)]
    if corpus:
        checks.append(check_corpus(root))
    return checks


def report(checks: list[Check]) -> str:
    lines = []
    for check in checks:
        lines.append(f"[{'ok' if check.matches else 'CHANGED'}] {check.subject}: {check.found}")
        if not check.matches:
            lines.append(f"    to do: {check.todo}")
    changed = sum(not check.matches for check in checks)
    lines.append(
        "All match the installed Pyodide."
        if not changed
        else f"{changed} of {len(checks)} do not match: see ARCHITECTURE.md, 'Upgrading Pyodide'."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tools/pyodide_check.py",
        description="Check what a Pyodide upgrade touches against node_modules/pyodide.",
    )
    parser.add_argument(
        "--no-corpus",
        action="store_true",
        help="skip the corpus run (the slow part on a first run: about a minute)",
    )
    args = parser.parse_args(argv)
    checks = all_checks(ROOT, corpus=not args.no_corpus)
    print(f"Pyodide upgrade check ({INSTALLED}):")
    print(report(checks))
    return 0 if all(check.matches for check in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
