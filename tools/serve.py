"""Serve a built site on this machine only, with the MIME types Pyodide needs.

Usage: python tools/serve.py [--host 127.0.0.1] [--port 8000] DIRECTORY   (--port 0: any free port)

Tests and the benchmark use :func:`serving`: it binds first (port 0, so the system picks a free
port and no other process can take it in between), then the caller builds for that address.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

MIME_TYPES = {".wasm": "application/wasm", ".mjs": "text/javascript", ".js": "text/javascript"}


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with correct types; quiet unless asked."""

    extensions_map: ClassVar[dict[str, str]] = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        **MIME_TYPES,
    }
    verbose = False

    def log_message(self, format: str, *args: object) -> None:
        if self.verbose:
            super().log_message(format, *args)


class SiteServer(http.server.ThreadingHTTPServer):
    """A threading server that says nothing when a browser drops a connection mid-response
    (it does, closing a page or a test's browser context)."""

    def handle_error(self, request: object, client_address: object) -> None:
        if isinstance(sys.exc_info()[1], ConnectionResetError | BrokenPipeError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


def make_server(directory: Path, host: str, port: int) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(SiteHandler, directory=str(directory))
    return SiteServer((host, port), handler)


def address(server: http.server.ThreadingHTTPServer) -> str:
    """The site's address on the port the server is bound to, ending with '/'."""
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}/"


@contextlib.contextmanager
def serving(directory: Path, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve ``directory`` from a background thread; yields its address ('http://host:port/').

    The port is bound before anything is built, so the address can go into the build
    (SITE_URL); the directory is read per request and may be filled or rebuilt meanwhile.
    """
    server = make_server(directory, host, port)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield address(server)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("directory", type=Path)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    if not (args.directory / "index.html").exists():
        print(f"{args.directory} has no index.html: run `make build` first.", file=sys.stderr)
        return 1
    server = make_server(args.directory, args.host, args.port)
    print(f"Serving the lesson at {address(server)}  (Ctrl+C to stop)", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
