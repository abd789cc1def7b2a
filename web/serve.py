"""Serve web/dist/ on 127.0.0.1 with the MIME types Pyodide needs.

    python web/serve.py [--port 8000] [--dir web/dist]

``.wasm`` goes out as ``application/wasm`` and ``.mjs`` as ``text/javascript``
(Python 3.11's table sends ``.mjs`` as ``application/javascript``). Cross-origin
isolation headers are set so ``performance.now()`` (and Python's perf_counter)
tick finely in the page, and so the model in the page can run on several threads
(SharedArrayBuffer); ``--no-isolation`` leaves them out, and the page's model then
runs on one thread and says so.

Only regular files whose real path lies inside the served folder are sent: a symlink out of it,
a folder without ``index.html`` (no listings), a device or a FIFO is a 404, and a NUL in the path
(raw or ``%00``) is a 400 with a body, never a dropped connection.
"""

from __future__ import annotations

import argparse
import email.utils
import errno
import functools
import os
import stat
import sys
import urllib.parse
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import BinaryIO, ClassVar

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
    """Serves files of one folder, with the types and headers the page needs, and nothing else."""

    extensions_map: ClassVar[dict[str, str]] = {**SimpleHTTPRequestHandler.extensions_map, **TYPES}

    def send_head(self) -> BinaryIO | None:
        """Headers for a GET or HEAD, and the open file to send, or ``None`` after an error."""
        url_path = self.path.split("?", 1)[0].split("#", 1)[0]
        # A NUL makes os.stat raise ValueError, which the base class lets drop the connection.
        if "\x00" in urllib.parse.unquote(url_path, errors="surrogateescape"):
            self.send_error(HTTPStatus.BAD_REQUEST, "A NUL character in the path")
            return None
        try:
            target = self._target(url_path)
        except (OSError, ValueError):  # ValueError covers UnicodeError: a path no file can have
            target = None
        if target == "redirect":
            parts = urllib.parse.urlsplit(self.path)
            location = urllib.parse.urlunsplit((*parts[:2], parts[2] + "/", *parts[3:]))
            self.send_response(HTTPStatus.MOVED_PERMANENTLY)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        if target is None:
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        try:
            f = open(target, "rb")  # do_GET copies it out, then closes it
        except OSError:
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        try:
            fs = os.fstat(f.fileno())
            if not stat.S_ISREG(fs.st_mode):  # swapped for a non-file since _target looked
                raise OSError("not a regular file")
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-type", self.guess_type(target))
            self.send_header("Content-Length", str(fs.st_size))
            self.send_header("Last-Modified", email.utils.formatdate(fs.st_mtime, usegmt=True))
            self.end_headers()
        except OSError:
            f.close()
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        except BaseException:
            f.close()
            raise
        return f

    def _target(self, url_path: str) -> str | None:
        """The real path of the regular file to send, or ``None`` (404): outside the folder,
        a folder without ``index.html``, missing, or not a regular file. ``"redirect"`` (never a
        real path, which is absolute) for a folder with an index asked for without its slash.
        Symlinks are followed, then the real path is checked like any other.
        """
        root = os.path.realpath(self.directory)
        real = os.path.realpath(self.translate_path(url_path))
        if not _inside(real, root):
            return None
        folder = os.path.isdir(real)
        if folder:  # its index.html or nothing; the index may itself be a symlink
            real = os.path.realpath(os.path.join(real, "index.html"))
            if not _inside(real, root):
                return None
        try:
            mode = os.stat(real).st_mode
        except OSError:
            return None
        if not stat.S_ISREG(mode):  # a device or FIFO: open() could block or never end
            return None
        return "redirect" if folder and not url_path.endswith("/") else real

    def list_directory(self, path: str | os.PathLike[str]) -> None:
        """Never list a folder (send_head does not call this; it is here for anything that does)."""
        self.send_error(HTTPStatus.NOT_FOUND, "File not found")
        return None

    def end_headers(self) -> None:
        if getattr(self.server, "isolation", True):
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:
        if getattr(self.server, "verbose", False):
            super().log_message(format, *args)


def _inside(real: str, root: str) -> bool:
    """True when the real path ``real`` is ``root`` or lies under it."""
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def make_server(
    directory: Path = DIST, port: int = 8000, verbose: bool = False, isolation: bool = True
) -> ThreadingHTTPServer:
    """A server for ``directory`` on 127.0.0.1 (``port=0`` picks a free port); ``isolation``
    False leaves out the cross-origin isolation headers."""
    if not (directory / "index.html").is_file():
        raise FileNotFoundError(
            f"{directory} has no index.html: run `make web` (python web/build.py) first"
        )
    server = ThreadingHTTPServer(
        ("127.0.0.1", port), functools.partial(Handler, directory=str(directory))
    )
    server.verbose = verbose  # type: ignore[attr-defined]
    server.isolation = isolation  # type: ignore[attr-defined]
    return server


def shown(folder: Path) -> str:
    """``folder`` relative to the current folder when it lies inside it, else as given."""
    try:
        return str(folder.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(folder)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--dir", type=Path, default=DIST)
    parser.add_argument("--verbose", action="store_true", help="log every request")
    parser.add_argument(
        "--no-isolation",
        action="store_true",
        help="leave out the cross-origin isolation headers (the page's model runs on one thread)",
    )
    args = parser.parse_args()
    try:
        server = make_server(args.dir, args.port, args.verbose, isolation=not args.no_isolation)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            print(
                f"eoc demo: port {args.port} on 127.0.0.1 is already in use (another demo or "
                f"server?): stop it, or pick another port: make demo PORT={args.port + 1} "
                f"(python web/serve.py --port {args.port + 1})",
                file=sys.stderr,
            )
        elif exc.errno == errno.EACCES:
            print(
                f"eoc demo: port {args.port} needs privileges this user lacks: "
                "pick one above 1023 with make demo PORT=8000",
                file=sys.stderr,
            )
        else:
            print(f"eoc demo: {exc}", file=sys.stderr)
        return 1
    port = server.server_address[1]
    print(
        f"eoc demo: serving {shown(args.dir)} at http://127.0.0.1:{port}/  (Ctrl-C to stop)",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
