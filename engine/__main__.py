"""``python -m engine``: the command line (see engine.cli).

A reader that stops reading early (``python -m engine catalog | head``) closes the pipe:
the command then ends quietly, as Unix tools do, with the status a shell gives a process
that a broken pipe stopped (128 + SIGPIPE's 13), rather than a traceback.
"""

from __future__ import annotations

import os
import sys

from engine.cli import main

BROKEN_PIPE_STATUS = 141

if __name__ == "__main__":
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # Python flushes stdout again at exit, which would fail and print to stderr: point it
        # at the null device first.
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        status = BROKEN_PIPE_STATUS
    sys.exit(status)
