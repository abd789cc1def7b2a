"""Bounded reads and strict JSON: every file, stream or document eoc reads goes through here.

* :func:`read_bounded` reads at most ``limit`` bytes and refuses anything larger *while
  reading* (``stat()`` says nothing useful about ``/dev/zero``, a FIFO or standard input). A
  path is opened without blocking, so a named pipe nobody writes to is an empty read, not a
  hang; a pipe or device that goes quiet for :data:`IDLE_S` seconds is refused, standard input
  when it is a pipe too. A missing path,
  a folder or a file that may not be read is said to be just that
  (:class:`~eoc.errors.InputUnreadable`), never "too large".
* :func:`loads_strict` parses JSON and refuses, with a typed error, what Python's ``json`` would
  accept or crash on: duplicate keys, ``NaN``/``Infinity``, integers of more than 40 digits
  (Python raises a plain ``ValueError`` past 4,300), floats that overflow, and nesting deeper
  than ``max_depth`` (which would otherwise end in ``RecursionError``).

Pure standard library, so it runs in the browser too.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

from eoc._compat import IN_PYODIDE
from eoc.errors import BadJson, InputError, InputTooLarge, InputUnreadable

MAX_INT_DIGITS = 40
"""Longest integer literal accepted in JSON (a µJ figure fits in 20 digits)."""
MAX_DEPTH = 64
"""Deepest nesting of JSON arrays and objects accepted."""
_CHUNK = 1 << 16
IDLE_S = 30.0
"""Longest wait for the next bytes from a pipe or device (a regular file never waits)."""
TOTAL_S = 120.0
"""Longest a pipe or device may take to send all it sends."""
# a JSON string as one token (so brackets inside it are skipped), or one bracket
_TOKENS = re.compile(r'"(?:[^"\\]++|\\.)*+"|[\[\]{}]')


def read_bounded(
    source: str | Path,
    limit: int,
    *,
    what: str = "input",
    error: type[InputError] = InputTooLarge,
    stdin_ok: bool = True,
) -> bytes:
    """The bytes of ``source`` (a path, or ``-`` for standard input), at most ``limit`` of them.

    Raises:
        ``error``: the source is larger than ``limit`` bytes.
        InputUnreadable: the path does not exist, is a folder, may not be read, or is a pipe or
            device that sent nothing for :data:`IDLE_S` seconds (``error`` instead, when the
            caller named one other than :class:`~eoc.errors.InputTooLarge`).
    """
    name = str(source)
    unreadable = InputUnreadable if error is InputTooLarge else error
    if name == "-" and stdin_ok:
        return _read_stdin(limit, what, error, unreadable)
    # without blocking: opening a named pipe that has no writer would wait forever (the browser's
    # file system has no pipes)
    nonblocking = 0 if IN_PYODIDE else getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(name, os.O_RDONLY | nonblocking)
    except FileNotFoundError:
        raise unreadable(f"{name} does not exist: pass the path of a {what} file") from None
    except IsADirectoryError:
        raise unreadable(f"{name} is a folder, not a {what} file") from None
    except PermissionError:
        raise unreadable(f"cannot read {what} {name}: permission denied") from None
    except OSError as exc:
        raise unreadable(f"cannot read {what} {name}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise unreadable(f"{name} is a folder, not a {what} file")
        if stat.S_ISREG(mode):
            if nonblocking:
                os.set_blocking(fd, True)
            with os.fdopen(fd, "rb", closefd=False) as f:
                return _read_limited(f, limit, what, name, error)
        kind = "a named pipe" if stat.S_ISFIFO(mode) else "a device or socket"
        named = f"{name} ({kind})"
        return _read_limited(_Waiting(fd, named, what, unreadable), limit, what, named, error)
    except OSError as exc:
        raise unreadable(f"cannot read {what} {name}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _read_stdin(
    limit: int, what: str, error: type[InputError], unreadable: type[InputError]
) -> bytes:
    """Standard input, at most ``limit`` bytes. A pipe or socket that goes quiet is refused as a
    named pipe is (:class:`_Waiting`); a file is read as it is; a terminal waits for its user
    (who ends the input with Ctrl-D, or stops with Ctrl-C)."""
    stream = sys.stdin.buffer
    try:
        fd = stream.fileno()
        mode = os.fstat(fd).st_mode
    except (AttributeError, OSError, ValueError):  # a stand-in stream (tests), or closed
        fd, mode = -1, 0
    if IN_PYODIDE or fd < 0 or stat.S_ISREG(mode) or os.isatty(fd):
        return _read_limited(stream, limit, what, "standard input", error)
    named = "standard input (a pipe)" if stat.S_ISFIFO(mode) else "standard input"
    blocking = os.get_blocking(fd)
    os.set_blocking(fd, False)
    try:
        waiting = _Waiting(
            fd, named, what, unreadable, hint=f"send the whole {what}, or pass a file"
        )
        return _read_limited(waiting, limit, what, named, error)
    finally:
        os.set_blocking(fd, blocking)


class _Waiting:
    """Reads a pipe or device opened without blocking: each read returns what is there, the end
    (b""), or waits at most :data:`IDLE_S` for more and :data:`TOTAL_S` in all."""

    def __init__(
        self,
        fd: int,
        name: str,
        what: str,
        unreadable: type[InputError],
        *,
        hint: str = "pass a file, or - for standard input",
    ) -> None:
        import time  # not at import: only a pipe or device needs a clock

        self._fd, self._name, self._what, self._unreadable = fd, name, what, unreadable
        self._hint = hint
        self._clock = time.monotonic
        self._deadline = self._clock() + TOTAL_S

    def read(self, n: int) -> bytes:
        import select  # the browser has no pipes, and no select to wait on one

        while True:
            try:
                # first without waiting: a pipe with no writer reads as its end at once (select
                # would not wake for it on Linux until a writer had come and gone)
                return os.read(self._fd, n)
            except BlockingIOError:
                wait = max(0.0, min(IDLE_S, self._deadline - self._clock()))
                ready, _, _ = select.select([self._fd], [], [], wait)
                if not ready:
                    raise self._unreadable(
                        f"{self._name} sent nothing for {wait:g} s while eoc waited for the "
                        f"{self._what}: {self._hint}"
                    ) from None


def _read_limited(stream: Any, limit: int, what: str, name: str, error: type[InputError]) -> bytes:
    parts: list[bytes] = []
    size = 0
    while True:
        chunk = stream.read(min(_CHUNK, limit + 1 - size))
        if not chunk:
            break
        parts.append(chunk)
        size += len(chunk)
        if size > limit:
            raise error(
                f"{name} is larger than {limit:,} bytes, the most eoc reads as a {what}: "
                "pass the right file"
            )
    return b"".join(parts)


def decode_utf8(data: bytes, *, what: str = "input", error: type[InputError] = BadJson) -> str:
    """``data`` as UTF-8 text (a leading BOM dropped); the error names the line of a bad byte."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(
            f"{what} is not UTF-8 text (bad byte at line {line}): save it as UTF-8"
        ) from None


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise BadJson(f"an integer of {len(text)} digits is larger than any figure eoc reads")
    return int(text)


def _parse_float(text: str) -> float:
    if len(text) > 400:
        raise BadJson("a number literal longer than 400 characters is not a figure eoc reads")
    value = float(text)
    if not math.isfinite(value):
        raise BadJson(f"the number {text[:40]} overflows a float")
    return value


def _parse_constant(name: str) -> Any:
    raise BadJson(f"{name} is not a JSON number: write a finite number")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise BadJson(f"the key {key!r:.60} appears twice in one object")
        out[key] = value
    return out


def _nesting_ok(text: str, max_depth: int) -> bool:
    """True unless brackets outside strings nest deeper than ``max_depth``.

    Checked before parsing: the json module recurses per level, which ends in RecursionError
    natively and in a fatal stack overflow of the whole runtime under Pyodide.
    """
    if text.count("[") + text.count("{") <= max_depth:
        return True
    depth = 0
    for m in _TOKENS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > max_depth:
                return False
        elif c in "]}":
            depth -= 1
    return True


def loads_strict(text: str | bytes, *, what: str = "document", max_depth: int = MAX_DEPTH) -> Any:
    """Parse JSON strictly (see the module docstring).

    Raises:
        BadJson: with the reason and, for syntax errors, the line.
    """
    if isinstance(text, bytes):
        text = decode_utf8(text, what=what)
    elif text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise BadJson(f"{what} is empty (a file with nothing in it, or a pipe nobody wrote to)")
    if not _nesting_ok(text, max_depth):
        raise BadJson(
            f"{what}: JSON nested deeper than {max_depth} levels is not a document eoc reads"
        )
    try:
        doc = json.loads(
            text,
            parse_int=_parse_int,
            parse_float=_parse_float,
            parse_constant=_parse_constant,
            object_pairs_hook=_no_duplicates,
        )
    except BadJson as exc:
        raise BadJson(f"{what}: {exc.reason}") from None
    except json.JSONDecodeError as exc:
        raise BadJson(f"{what} is not JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise BadJson(
            f"{what}: JSON nested deeper than {max_depth} levels is not a document eoc reads"
        ) from None
    except ValueError as exc:  # what the json module raises beyond the hooks (int digit limit)
        raise BadJson(f"{what}: {exc}") from None
    return doc


def read_json(
    source: str | Path, limit: int, *, what: str = "document", stdin_ok: bool = True
) -> Any:
    """Read at most ``limit`` bytes of ``source`` and parse them with :func:`loads_strict`."""
    return loads_strict(read_bounded(source, limit, what=what, stdin_ok=stdin_ok), what=what)


__all__ = [
    "IDLE_S",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "TOTAL_S",
    "decode_utf8",
    "loads_strict",
    "read_bounded",
    "read_json",
]
