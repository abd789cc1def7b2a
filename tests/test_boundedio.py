"""Bounded reads and strict JSON: hostile input gets a typed error, never a traceback."""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest

from eoc.errors import BadJson, ConfigError, InputTooLarge, InputUnreadable
from eoc.files import bounded as boundedio
from eoc.files.bounded import decode_utf8, loads_strict, read_bounded
from tests.helpers import IN_BROWSER


@pytest.mark.parametrize(
    "text,words",
    [
        ('{"a": 1, "a": 2}', "appears twice"),
        ("[" * 70 + "]" * 70, "deeper than 64"),  # within Python's limit: caught by the walk
        ("[" * 100_000, "deeper than 64"),  # beyond it: RecursionError, translated
        ("1" * 5000, "digits"),
        ("NaN", "not a JSON number"),
        ("1e999", "overflows"),
        ("{not json", "not JSON"),
    ],
)
def test_hostile_json_is_bad_json_with_the_reason(text: str, words: str) -> None:
    with pytest.raises(BadJson, match=words):
        loads_strict(text)


def test_strict_json_reads_ordinary_documents_and_drops_a_bom() -> None:
    assert loads_strict('\ufeff{"a": [1, 2.5, "x", null, true]}') == {
        "a": [1, 2.5, "x", None, True]
    }
    assert loads_strict(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}


def test_bad_utf8_names_its_line() -> None:
    with pytest.raises(BadJson, match="line 3"):
        decode_utf8(b'{\n"a":\n"\xff"}')


def test_a_read_stops_at_its_limit(tmp_path) -> None:
    f = tmp_path / "big"
    f.write_bytes(b"x" * 1001)
    assert read_bounded(f, 1001) == b"x" * 1001
    with pytest.raises(InputTooLarge, match="larger than 1,000 bytes"):
        read_bounded(f, 1000)


def test_a_folder_or_a_missing_path_is_said_to_be_one_not_too_large(tmp_path) -> None:
    with pytest.raises(InputUnreadable, match="is a folder, not a receipt file"):
        read_bounded(tmp_path, 10, what="receipt")
    with pytest.raises(InputUnreadable, match="does not exist"):
        read_bounded(tmp_path / "nothing.json", 10)
    with pytest.raises(ConfigError, match="does not exist"):  # a caller's own error class stays
        read_bounded(tmp_path / "nothing.pem", 10, error=ConfigError)


def _read_within(seconds: float, *args: object) -> object:
    """``read_bounded(*args)``'s bytes or the error it raised, or "hung" if it took longer than
    ``seconds`` (read in a daemon thread, so a hang fails the test instead of holding it)."""
    got: list[object] = []

    def read() -> None:
        try:
            got.append(read_bounded(*args))  # type: ignore[arg-type]
        except Exception as exc:
            got.append(exc)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    thread.join(seconds)
    return got[0] if got else "hung"


@pytest.mark.skipif(IN_BROWSER, reason="no named pipes in Pyodide")
def test_a_named_pipe_never_holds_a_read(tmp_path, monkeypatch) -> None:
    """A FIFO with no writer reads as empty at once; one whose writer goes quiet is refused."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert _read_within(5, fifo, 100) == b""
    monkeypatch.setattr(boundedio, "IDLE_S", 0.2)
    writer = os.open(fifo, os.O_RDWR)  # a writer that holds the pipe open and sends nothing
    try:
        quiet = _read_within(5, fifo, 100)
        assert isinstance(quiet, InputUnreadable), quiet
        assert "(a named pipe) sent nothing for 0.2 s" in quiet.reason
        os.write(writer, b"abc")
        assert isinstance(_read_within(5, fifo, 100), InputUnreadable)  # abc, then quiet
    finally:
        os.close(writer)
    monkeypatch.setattr(boundedio, "IDLE_S", 10.0)
    writer = os.open(fifo, os.O_RDWR)
    os.write(writer, b'{"a": 1}')
    got: list[object] = []
    reader = threading.Thread(target=lambda: got.append(_read_within(5, fifo, 100)), daemon=True)
    reader.start()
    time.sleep(0.5)  # the reader has opened the pipe and read what was sent
    os.close(writer)  # the writer's end: read whole
    reader.join(6)
    assert got == [b'{"a": 1}']


class _Stdin:
    """``sys.stdin`` over a file descriptor (pytest's own stand-in has none)."""

    def __init__(self, fd: int) -> None:
        self.buffer = os.fdopen(fd, "rb", buffering=0, closefd=False)


@pytest.mark.skipif(IN_BROWSER, reason="no pipes in Pyodide")
def test_standard_input_that_goes_quiet_is_refused(monkeypatch) -> None:
    """``eoc verify -`` fed by a pipe that sends part of a receipt, then nothing: refused after
    IDLE_S, as a named pipe is; the pipe is left blocking as it was, and a whole one reads."""
    read_end, write_end = os.pipe()
    try:
        monkeypatch.setattr(sys, "stdin", _Stdin(read_end))
        monkeypatch.setattr(boundedio, "IDLE_S", 0.2)
        os.write(write_end, b'{"version": 2,')
        quiet = _read_within(5, "-", 100)
        assert isinstance(quiet, InputUnreadable), quiet
        assert "standard input (a pipe) sent nothing for 0.2 s" in quiet.reason
        assert os.get_blocking(read_end)
        os.write(write_end, b'{"a": 1}')
        os.close(write_end)
        write_end = -1
        assert _read_within(5, "-", 100) == b'{"a": 1}'
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


@pytest.mark.skipif(IN_BROWSER, reason="no /dev/zero in Pyodide")
def test_an_endless_device_is_refused_once_the_limit_is_read() -> None:
    with pytest.raises(InputTooLarge):
        read_bounded("/dev/zero", 1 << 20)
