"""Keep-alive HTTP/1.1 connections to one server, one per thread, on the standard library.

:class:`eoc_native.remote.OpenAIBackend` sends every miss of ``eoc serve --upstream`` through
here, so its cost is paid on every answer the model gives. ``http.client`` does the least
work a request can cost in Python: measured against a local server on the 2-core test VM, a
request took 0.41 ms through it, 0.66 ms through urllib3's pool (which wraps it) and 1.23 ms
through httpx (``bench/serve.py`` times it again: "one call to the stub upstream"). What the
libraries add (proxies from the environment, redirects, retries, decompression) is either
unwanted here or done by the backend itself. What this module adds is what the backend needs:

* a connection per thread, kept alive and reused; one that fails on reuse (the server closed it
  while it idled) is replaced once, at once, without counting as a failed attempt;
* the connect timeout for connecting and the read timeout for every read after;
* responses read as they arrive (``read1``), so a stream's events come when sent; a response
  closed before its end closes its connection, which tells the server to stop.
"""

from __future__ import annotations

import http.client
import ssl
import threading
from urllib.parse import urlsplit

RESET = (
    ConnectionResetError,
    ConnectionAbortedError,
    BrokenPipeError,
    http.client.RemoteDisconnected,
)
"""What a kept-alive connection the server has closed raises when it is used again."""


class Connections:
    """Connections to the server of ``base_url`` (http or https), one per calling thread."""

    def __init__(self, base_url: str, *, connect_s: float, read_s: float) -> None:
        parts = urlsplit(base_url)
        self.https = parts.scheme == "https"
        self.host = parts.hostname or ""
        self.port = parts.port or (443 if self.https else 80)
        self.prefix = parts.path.rstrip("/")
        self.connect_s = connect_s
        self.read_s = read_s
        self._context = ssl.create_default_context() if self.https else None
        self._local = threading.local()
        self._all: set[http.client.HTTPConnection] = set()
        self._lock = threading.Lock()

    def _fresh(self) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection
        if self._context is not None:
            conn = http.client.HTTPSConnection(
                self.host, self.port, timeout=self.connect_s, context=self._context
            )
        else:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=self.connect_s)
        conn.connect()
        assert conn.sock is not None
        conn.sock.settimeout(self.read_s)
        with self._lock:
            self._all.add(conn)
        self._local.conn = conn
        return conn

    def _drop(self, conn: http.client.HTTPConnection) -> None:
        conn.close()
        with self._lock:
            self._all.discard(conn)
        if getattr(self._local, "conn", None) is conn:
            self._local.conn = None

    def request(
        self, method: str, path: str, body: bytes | None, headers: dict[str, str]
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """Send ``method`` ``prefix + path`` and read the response's head; the body is left to
        read (then :meth:`done`). Raises ``OSError`` or ``http.client.HTTPException``."""
        conn = getattr(self._local, "conn", None)
        reused = conn is not None and conn.sock is not None
        if not reused:
            conn = self._fresh()
        assert conn is not None
        try:
            conn.request(method, self.prefix + path, body=body, headers=headers)
            return conn, conn.getresponse()
        except RESET:
            self._drop(conn)
            if not reused:
                raise
        except BaseException:
            self._drop(conn)
            raise
        conn = self._fresh()  # the kept-alive one was closed by the server: once more, anew
        try:
            conn.request(method, self.prefix + path, body=body, headers=headers)
            return conn, conn.getresponse()
        except BaseException:
            self._drop(conn)
            raise

    def done(self, conn: http.client.HTTPConnection, resp: http.client.HTTPResponse) -> None:
        """After a response: its connection is kept when the body was read to its end and the
        server keeps it open, else closed (a stream stopped early must stop the server)."""
        # a body read to its length is over even though http.client has not marked it closed
        finished = resp.isclosed() or (not resp.chunked and resp.length == 0)
        resp.close()
        if not finished or resp.will_close:
            self._drop(conn)

    def close(self) -> None:
        """Close every connection (those of other threads too)."""
        with self._lock:
            conns, self._all = self._all, set()
        for conn in conns:
            conn.close()


__all__ = ["RESET", "Connections"]
