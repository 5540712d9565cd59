"""Serve a built site on this machine only, with the MIME types Pyodide needs.

Usage: python tools/serve.py [--host 127.0.0.1] [--port 8000] [--gzip] DIRECTORY
(--port 0: any free port; --gzip: compress and let browsers cache as GitHub Pages does, see
COMPRESSIBLE_TYPES and HOST_MAX_AGE_S)

A site built for another address (SITE_URL) still works where it is served (its pages find
their own base), but its canonical links and sitemap name the address it was built for: the
server says so, and what to rebuild with (:func:`address_note`).

Tests and the benchmark use :func:`serving`: it binds first (port 0, so the system picks a free
port and no other process can take it in between), then the caller builds for that address.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gzip
import http.server
import io
import os
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, ClassVar

MIME_TYPES = {".wasm": "application/wasm", ".mjs": "text/javascript", ".js": "text/javascript"}

# What GitHub Pages gzips on the fly for a browser that accepts it: text types (HTML, CSS,
# JavaScript, JSON, SVG...: "GitHub Pages is already gzipping html, css, js, json",
# stackoverflow.com/a/34636569, quoted with a measurement in maxence-charriere/go-app#866)
# and, per that same report (2023, with a screenshot of the response), application/wasm.
# Archives (.zip, .whl) and images other than SVG go as they are: already compressed.
COMPRESSIBLE_TYPES = frozenset(
    {
        "text/html",
        "text/css",
        "text/javascript",
        "text/plain",
        "text/xml",
        "application/javascript",
        "application/json",
        "application/manifest+json",
        "application/xml",
        "application/wasm",
        "image/svg+xml",
    }
)
GZIP_LEVEL = 6  # gzip's and most servers' default; the host's own level is not published
# GitHub Pages lets a browser keep every response for 10 minutes ("cache-control:
# max-age=600", as its responses show: ja.stackoverflow.com/posts/47280, 2018). Without it a
# browser's cache would go by the files' modification times, which on a site built seconds
# before (the benchmark's) make every entry stale at once.
HOST_MAX_AGE_S = 600


@functools.lru_cache(maxsize=256)
def _gzipped(path: str, mtime_ns: int, size: int) -> bytes:
    """The file's bytes gzipped (cached while the file is unchanged: mtime and size)."""
    return gzip.compress(Path(path).read_bytes(), compresslevel=GZIP_LEVEL, mtime=0)


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with correct types; quiet unless asked."""

    extensions_map: ClassVar[dict[str, str]] = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        **MIME_TYPES,
    }
    verbose = False
    compress = False  # gzip COMPRESSIBLE_TYPES when the browser accepts it (--gzip)
    max_age_s: int | None = None  # Cache-Control: max-age on every response (--gzip)

    def end_headers(self) -> None:
        if self.max_age_s is not None:
            self.send_header("Cache-Control", f"max-age={self.max_age_s}")
        super().end_headers()

    def send_head(self) -> BinaryIO | None:
        compressed = self._compressed_head() if self.compress else None
        return compressed if compressed is not None else super().send_head()

    def _compressed_head(self) -> BinaryIO | None:
        """Headers and a gzipped body, as a compressing static host sends them; None where it
        would send the file as it is (another type, no gzip accepted, a redirect, a 404)."""
        if "gzip" not in self.headers.get("Accept-Encoding", ""):
            return None
        path = self.translate_path(self.path)
        if os.path.isdir(path):
            if not self.path.split("?", 1)[0].split("#", 1)[0].endswith("/"):
                return None
            path = os.path.join(path, "index.html")
        content_type = self.guess_type(path)
        if not os.path.isfile(path) or content_type.split(";")[0] not in COMPRESSIBLE_TYPES:
            return None
        stat = os.stat(path)
        modified = self.date_time_string(int(stat.st_mtime))
        if self.headers.get("If-Modified-Since") == modified:
            self.send_response(http.HTTPStatus.NOT_MODIFIED)
            self.end_headers()
            return io.BytesIO(b"")
        body = _gzipped(path, stat.st_mtime_ns, stat.st_size)
        self.send_response(http.HTTPStatus.OK)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Last-Modified", modified)
        self.end_headers()
        return io.BytesIO(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """A path with no file gets the site's own 404 page, as a static host serves it: the
        nearest ``404.html`` above the asked path (a site under a sub-path has its own), with
        status 404; other errors, and a site without one, as the standard library sends them."""
        page = self._not_found_page() if code == http.HTTPStatus.NOT_FOUND else None
        if page is None:
            super().send_error(code, message, explain)
            return
        body = page.read_bytes()
        self.send_response(code, message)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _not_found_page(self) -> Path | None:
        root = Path(self.directory).resolve()
        asked = Path(self.translate_path(self.path)).resolve()
        for folder in (asked, *asked.parents):
            if folder != root and root not in folder.parents:
                break
            if (folder / "404.html").is_file():
                return folder / "404.html"
        return None

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


class CompressingHandler(SiteHandler):
    """As GitHub Pages serves: compressed, and cached for HOST_MAX_AGE_S."""

    compress = True
    max_age_s = HOST_MAX_AGE_S


def make_server(
    directory: Path, host: str, port: int, compress: bool = False
) -> http.server.ThreadingHTTPServer:
    handler_class = CompressingHandler if compress else SiteHandler
    handler = functools.partial(handler_class, directory=str(directory))
    return SiteServer((host, port), handler)


def address(server: http.server.ThreadingHTTPServer) -> str:
    """The site's address on the port the server is bound to, ending with '/'."""
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}/"


@contextlib.contextmanager
def serving(
    directory: Path, host: str = "127.0.0.1", port: int = 0, compress: bool = False
) -> Iterator[str]:
    """Serve ``directory`` from a background thread; yields its address ('http://host:port/').

    The port is bound before anything is built, so the address can go into the build
    (SITE_URL); the directory is read per request and may be filled or rebuilt meanwhile.
    ``compress``: gzip what GitHub Pages gzips (COMPRESSIBLE_TYPES), and let the browser keep
    every response as long as it does (HOST_MAX_AGE_S).
    """
    server = make_server(directory, host, port, compress)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield address(server)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


_CANONICAL_RE = re.compile(r'<link rel="canonical" href="([^"]+)"')


def built_for(directory: Path) -> str | None:
    """The address the site in ``directory`` was built for (its home page's canonical link,
    which MkDocs writes from site_url), or None where it names none."""
    found = _CANONICAL_RE.search((directory / "index.html").read_text(encoding="utf-8"))
    return found.group(1) if found else None


def address_note(built: str | None, served: str) -> str:
    """What to tell the person serving a site built for ``built`` at ``served`` ('' when they
    agree)."""
    if built is None or built == served:
        return ""
    return (
        f"This site was built for {built}. It works at {served} too (its pages find their own "
        f"base), but its canonical links and sitemap name {built}. To build it for this "
        f"address: SITE_URL={served} make build"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("directory", type=Path)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--gzip",
        action="store_true",
        help="gzip text and wasm and send max-age, as GitHub Pages does",
    )
    args = parser.parse_args(argv)
    if not (args.directory / "index.html").exists():
        print(f"{args.directory} has no index.html: run `make build` first.", file=sys.stderr)
        return 1
    server = make_server(args.directory, args.host, args.port, args.gzip)
    print(f"Serving the lesson at {address(server)}  (Ctrl+C to stop)", flush=True)
    note = address_note(built_for(args.directory), address(server))
    if note:
        print(note, file=sys.stderr, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
