"""``eoc serve``'s access log: one line per request on standard error, as a server prints.

A text line (the default) reads::

    eoc serve: 127.0.0.1 "POST /v1/chat/completions" 200 cache 1,130 µJ estimated 0.4 ms 3f2a…

with the client's address, the method and path, the status, the stage that answered and what the
answer was charged (its µJ and whether the figure was measured or estimated; ``-`` for a request
that got no answer: an error, a listing), the time from the request's arrival to its answer, and
its request id (the ``x-request-id`` header). ``--log-format json`` writes the same fields as one
JSON object a line; ``--quiet`` writes none.
"""

from __future__ import annotations

import contextvars
import sys
import time
from collections.abc import Callable, MutableMapping
from typing import Any

import orjson

from eoc.errors import ConfigError
from eoc.response import Response
from eoc_native.serve.wire import summed

FORMATS = ("text", "json", "off")


class Line:
    """What one request's line says, filled in as it is answered."""

    __slots__ = ("answers", "client", "method", "path", "rid", "started", "status")

    def __init__(self, scope: MutableMapping[str, Any], rid: bytes) -> None:
        client = scope.get("client")
        self.client = str(client[0]) if client else "-"
        self.method = str(scope.get("method", "-"))
        # a path is percent-decoded: what would break the line (a newline, a quote) is shown as ?
        path = str(scope.get("path", "-"))[:200]
        if not path.isprintable() or '"' in path:
            path = "".join(c if c.isprintable() and c != '"' else "?" for c in path)
        self.path = path
        self.rid = rid.decode("ascii")
        self.started = time.perf_counter()
        self.status = 0
        self.answers: list[Response] = []
        """The answers given (several for a list of texts to embed)."""

    def fields(self) -> dict[str, Any]:
        stage, uj, provenance = summed(self.answers) if self.answers else (None, None, None)
        return {
            "client": self.client,
            "method": self.method,
            "path": self.path,
            "status": self.status,
            "stage": stage,
            "microjoules": uj,
            "provenance": provenance,
            "ms": round((time.perf_counter() - self.started) * 1000, 3),
            "request_id": self.rid,
        }


ANSWERED: contextvars.ContextVar[Line | None] = contextvars.ContextVar("eoc_access", default=None)
"""The line of the request being answered (where the server notes the answer it gave)."""


class AccessLog:
    """Writes each request's :class:`Line` once it is answered."""

    def __init__(self, form: str, write: Callable[[str], Any] | None = None) -> None:
        self.form = form
        self._write = write if write is not None else sys.stderr.write

    @classmethod
    def of(cls, form: str, write: Callable[[str], Any] | None = None) -> AccessLog | None:
        """The log for ``form`` (:data:`FORMATS`); ``None`` for ``"off"``.

        Raises:
            ConfigError: a form that is none of them.
        """
        if form not in FORMATS:
            raise ConfigError(f"the access log is one of {', '.join(FORMATS)}, not {form!r:.40}")
        return None if form == "off" else cls(form, write)

    @staticmethod
    def start(scope: MutableMapping[str, Any], rid: bytes) -> Line:
        return Line(scope, rid)

    def end(self, line: Line) -> None:
        f = line.fields()
        if self.form == "json":
            text = orjson.dumps(f).decode()
        else:
            charged = (
                "-"
                if f["microjoules"] is None
                else f"{f['stage']} {f['microjoules']:,} µJ {f['provenance']}"
            )
            text = (
                f'eoc serve: {f["client"]} "{f["method"]} {f["path"]}" {f["status"]} '
                f"{charged} {f['ms']:.1f} ms {f['request_id']}"
            )
        try:
            self._write(text + "\n")
        except (OSError, ValueError):  # a closed or full standard error loses a line, not a reply
            pass


__all__ = ["ANSWERED", "FORMATS", "AccessLog", "Line"]
