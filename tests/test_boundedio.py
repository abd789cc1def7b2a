"""Bounded reads and strict JSON: hostile input gets a typed error, never a traceback."""

from __future__ import annotations

import pytest

from eoc.boundedio import decode_utf8, loads_strict, read_bounded
from eoc.errors import BadJson, InputTooLarge
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
    with pytest.raises(InputTooLarge, match="folder"):
        read_bounded(tmp_path, 10)


@pytest.mark.skipif(IN_BROWSER, reason="no /dev/zero in Pyodide")
def test_an_endless_device_is_refused_once_the_limit_is_read() -> None:
    with pytest.raises(InputTooLarge):
        read_bounded("/dev/zero", 1 << 20)
