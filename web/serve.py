"""Serve web/dist/ on 127.0.0.1 with the MIME types Pyodide needs.

    python web/serve.py [--port 8000] [--dir web/dist]

``.wasm`` goes out as ``application/wasm`` and ``.mjs`` as ``text/javascript``
(Python 3.11's table sends ``.mjs`` as ``application/javascript``). Cross-origin
isolation headers are set so ``performance.now()`` (and Python's perf_counter)
tick finely in the page.
"""

from __future__ import annotations

import argparse
import functools
import sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

DIST = Path(__file__).resolve().parent / "dist"
TYPES = {
    ".wasm": "application/wasm",
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".json": "application/json",
    ".whl": "application/zip",
    ".zip": "application/zip",
    ".css": "text/css",
    ".html": "text/html; charset=utf-8",
    ".svg": "image/svg+xml",
}


class Handler(SimpleHTTPRequestHandler):
    extensions_map: ClassVar[dict[str, str]] = {**SimpleHTTPRequestHandler.extensions_map, **TYPES}

    def end_headers(self) -> None:
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:
        if getattr(self.server, "verbose", False):
            super().log_message(format, *args)


def make_server(
    directory: Path = DIST, port: int = 8000, verbose: bool = False
) -> ThreadingHTTPServer:
    """A server for ``directory`` on 127.0.0.1 (``port=0`` picks a free port)."""
    if not (directory / "index.html").is_file():
        raise FileNotFoundError(
            f"{directory} has no index.html: run `make web` (python web/build.py) first"
        )
    server = ThreadingHTTPServer(
        ("127.0.0.1", port), functools.partial(Handler, directory=str(directory))
    )
    server.verbose = verbose  # type: ignore[attr-defined]
    return server


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--dir", type=Path, default=DIST)
    parser.add_argument("--verbose", action="store_true", help="log every request")
    args = parser.parse_args()
    try:
        server = make_server(args.dir, args.port, args.verbose)
    except (FileNotFoundError, OSError) as exc:
        print(f"eoc demo: {exc}", file=sys.stderr)
        return 1
    host, port = server.server_address[:2]
    print(f"eoc demo: serving {args.dir} at http://{host}:{port}/  (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
