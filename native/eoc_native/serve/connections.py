"""Connections under abuse: a deadline for a request's headers, a cap on open connections with a
clear refusal, and a bound on how long and how often one connection is kept alive.

uvicorn reads headers without a deadline and takes connections until the process runs out of
file descriptors, so a thousand sockets each sending a byte every two seconds ("slowloris") kept
``/healthz`` from answering for a minute. :func:`guarded_protocol` returns uvicorn's HTTP protocol
(httptools) with, per connection:

* **a header deadline**: from the moment a connection opens, or a response ends and the
  connection is kept alive, the next request's headers must be whole within ``header_timeout_s``
  (trickling bytes does not extend it); past it the client gets ``408`` and the connection is
  closed;
* **a cap**: past ``max_connections`` open connections, the one that has waited longest for its
  headers is closed with ``408`` to make room (a slow client loses its place to a new one); if
  none is waiting, the new connection gets ``503`` with ``retry-after`` and is closed;
* **a bounded keep-alive**: an idle connection is closed after ``keep_alive_s`` (uvicorn's own
  timer), and after ``max_requests`` requests the response says ``connection: close``.

The refusals are JSON bodies in the OpenAI error shape, as every other error of the server.
"""

from __future__ import annotations

import asyncio
from typing import Any

from eoc_native import require
from eoc_native.serve.wire import error_body

DEFAULT_HEADER_TIMEOUT_S = 10.0
DEFAULT_MAX_CONNECTIONS = 512
DEFAULT_KEEP_ALIVE_S = 5
DEFAULT_MAX_REQUESTS = 1000


def _response(status: int, reason: bytes, kind: str, message: str, code: str) -> bytes:
    body = error_body(status, kind, message, code)
    head = [
        b"HTTP/1.1 %d %s\r\n" % (status, reason),
        b"content-type: application/json\r\n",
        b"content-length: %d\r\n" % len(body),
        b"connection: close\r\n",
    ]
    if status == 503:
        head.append(b"retry-after: 1\r\n")
    return b"".join(head) + b"\r\n" + body


def guarded_protocol(
    *,
    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    max_requests: int = DEFAULT_MAX_REQUESTS,
) -> type[Any]:
    """uvicorn's httptools protocol with the guards of this module (pass it as ``http=``)."""
    impl: Any = require("uvicorn.protocols.http.httptools_impl", package="uvicorn[standard]")
    late = _response(
        408,
        b"Request Timeout",
        "RequestTimeout",
        f"the request's headers did not arrive within {header_timeout_s:g} s: send them whole",
        "header_timeout",
    )
    busy = _response(
        503,
        b"Service Unavailable",
        "Busy",
        f"{max_connections} connections are open, the most this server keeps: retry soon",
        "too_many_connections",
    )

    class GuardedHttp(impl.HttpToolsProtocol):  # type: ignore[misc]
        """See :mod:`eoc_native.serve.connections`."""

        waiting_since: float | None = None  # when it began waiting for headers (None: not)
        _deadline: asyncio.TimerHandle | None = None
        _served = 0

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            if len(self.connections) > max_connections and not self._make_room():
                self._close_with(busy)
                return
            self._await_headers()

        def _make_room(self) -> bool:
            """Close the connection that has waited longest for its headers; False if none is."""
            slow = [
                c
                for c in self.connections
                if c is not self and getattr(c, "waiting_since", None) is not None
            ]
            if not slow:
                return False
            min(slow, key=lambda c: c.waiting_since)._close_with(late)
            return True

        def _await_headers(self) -> None:
            self.waiting_since = self.loop.time()
            self._deadline = self.loop.call_later(header_timeout_s, self._close_with, late)

        def _stop_waiting(self) -> None:
            self.waiting_since = None
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _close_with(self, response: bytes) -> None:
            self._stop_waiting()
            self.connections.discard(self)
            if not self.transport.is_closing():
                self.transport.write(response)
                self.transport.close()

        def on_headers_complete(self) -> None:
            self._stop_waiting()
            super().on_headers_complete()
            self._served += 1
            if self._served >= max_requests and self.cycle is not None:
                self.cycle.keep_alive = False  # this response says connection: close

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and not self.pipeline:
                self._await_headers()  # the next request's headers, within the same deadline

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_waiting()
            super().connection_lost(exc)

    return GuardedHttp


__all__ = [
    "DEFAULT_HEADER_TIMEOUT_S",
    "DEFAULT_KEEP_ALIVE_S",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_MAX_REQUESTS",
    "guarded_protocol",
]
