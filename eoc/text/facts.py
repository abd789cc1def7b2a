"""Readers for fact files: kv pairs (TSV), triples (TSV and N-Triples).

Every reader checks the whole text before returning anything, and every error about a line
names the source and the line, so a bad file is rejected whole and stores nothing.

Lines end at ``\\n`` only (a ``\\r`` before it is dropped), so line numbers are the ones an
editor shows. A line longer than :data:`MAX_LINE_CHARS` is refused before any pattern runs, and
so is a line holding a control or separator character (C0 but tab, DEL, C1, U+2028, U+2029) or
a lone surrogate. A leading byte order mark is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote

from eoc.errors import FactFileError, InputError
from eoc.files.bounded import read_bounded

MAX_FIELD_CHARS = 4096
"""Longest field (TSV) or term (N-Triples, after unescaping), in characters."""
_WIDEST = 12
"""The most file characters one term character can take: ``%F0%9F%98%80`` in an IRI."""
MAX_LINE_CHARS = 4 * _WIDEST * MAX_FIELD_CHARS
"""Longest line read (196,608 characters): three terms of :data:`MAX_FIELD_CHARS` in their
widest spelling, and as much again for IRI prefixes, a datatype and a comment. Checked before any
pattern runs, so a huge line costs a length test, not a regex scan."""
MAX_FACT_FILE_BYTES = 256 << 20
"""Largest fact file :func:`read_fact_file` reads (256 MiB)."""

# Refused anywhere in a line: C0 controls but tab (newline ends the line; a CR is dropped only
# before it), DEL, C1 (U+0085 NEL among them), the Unicode line and paragraph separators, and
# lone surrogates (text passed in as str, not decoded from a file).
_BAD_IN_LINE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
# Refused in an unescaped literal: the same, but the \t \n \r an escape may spell are text.
_BAD_IN_TERM = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
# A percent-encoded C0 control or DEL in an IRI: iri_label would decode it into the label.
_PCT_CONTROL = re.compile(r"%(?:[01][0-9A-Fa-f]|7[Ff])")
_SPLITLINES_ENDS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_NAMES = {
    0x00: "NUL",
    0x0D: "carriage return",
    0x85: "NEL",
    0x2028: "LINE SEPARATOR",
    0x2029: "PARAGRAPH SEPARATOR",
}


class Triple(NamedTuple):
    """A fact: subject, predicate, object, as human-readable labels."""

    subject: str
    predicate: str
    object: str


def _describe(ch: str) -> str:
    cp = ord(ch)
    name = _NAMES.get(cp)
    if 0xD800 <= cp <= 0xDFFF:
        return f"a lone surrogate (U+{cp:04X}), which is not Unicode text"
    kind = "separator" if cp in (0x2028, 0x2029) else "control character"
    return f"the {kind} U+{cp:04X}" + (f" ({name})" if name else "")


def read_fact_file(path: str | Path, *, limit: int = MAX_FACT_FILE_BYTES) -> str:
    """The text of a fact file: at most ``limit`` bytes of UTF-8, a leading BOM dropped.

    Raises:
        FactFileError: the file cannot be read, is larger than ``limit`` bytes, or is not UTF-8
            (the error's ``line`` is the line of the first bad byte).
    """
    name = str(path)
    try:
        data = read_bounded(name, limit, what="fact file", stdin_ok=False)
    except InputError as exc:
        raise FactFileError(exc.reason, source=name) from None
    try:
        return data.decode("utf-8-sig")  # -sig: a leading BOM is dropped
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
    raise FactFileError("not UTF-8 text: save it as UTF-8", source=name, line=line)


def _lines(text: str, source: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for each line that is not blank or a comment, checked in order."""
    if not isinstance(text, str):
        raise FactFileError("fact text must be str", source=source)
    if text.startswith("\ufeff"):
        text = text[1:]
    for lineno, raw in enumerate(text.split("\n"), 1):
        # Length first: every later step, and the N-Triples regex most of all, scans the line.
        if len(raw) > MAX_LINE_CHARS:
            raise FactFileError(
                f"line is {len(raw):,} characters; the limit is {MAX_LINE_CHARS:,}",
                source=source,
                line=lineno,
            )
        if raw.endswith("\r"):
            raw = raw[:-1]
        bad = _BAD_IN_LINE.search(raw)
        if bad is not None:
            # Characters str.splitlines() would end a line at: say why they are not line ends.
            why = " (lines end at \\n only)" if bad.group() in _SPLITLINES_ENDS else ""
            raise FactFileError(
                f"line holds {_describe(bad.group())}: remove it{why}",
                source=source,
                line=lineno,
            )
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        yield lineno, raw


def _fields(raw: str, n: int, source: str, lineno: int) -> list[str]:
    parts = [p.strip() for p in raw.split("\t")]
    if len(parts) != n:
        raise FactFileError(
            f"expected {n} tab-separated fields, found {len(parts)}", source=source, line=lineno
        )
    for i, p in enumerate(parts, 1):
        if not p:
            raise FactFileError(f"field {i} is empty", source=source, line=lineno)
        if len(p) > MAX_FIELD_CHARS:
            raise FactFileError(
                f"field {i} is longer than {MAX_FIELD_CHARS} characters", source=source, line=lineno
            )
    return parts


def read_pairs(text: str, source: str = "<text>") -> list[tuple[int, tuple[str, str]]]:
    """``prompt<TAB>answer`` lines -> ``[(line number, (prompt, answer))]``."""
    out = []
    for lineno, raw in _lines(text, source):
        prompt, answer = _fields(raw, 2, source, lineno)
        out.append((lineno, (prompt, answer)))
    return out


def read_tsv_triples(text: str, source: str = "<text>") -> list[Triple]:
    """``subject<TAB>predicate<TAB>object`` lines -> triples."""
    return [Triple(*_fields(raw, 3, source, lineno)) for lineno, raw in _lines(text, source)]


# Possessive (*+, ++): a term's characters never need giving back, so a line that does not
# match fails in one pass instead of backtracking over every character (Python 3.11+).
_IRI = r"<([^<>\"{}|^`\\\x00-\x20]*+)>"
_BNODE = r"_:([A-Za-z0-9_][A-Za-z0-9_.-]*)"
_LITERAL = r"\"((?:[^\"\\\n\r]++|\\.)*+)\"(?:@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^" + _IRI + r")?"
_NT = re.compile(
    rf"^\s*(?:{_IRI}|{_BNODE})\s*{_IRI}\s*(?:{_IRI}|{_BNODE}|{_LITERAL})\s*\.\s*(?:#.*)?$"
)
_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_UESC = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)")


def iri_label(iri: str) -> str:
    """A readable label for an IRI: its last path segment or fragment, ``_`` as spaces."""
    tail = re.split(r"[#/:]", iri.rstrip("/#"))[-1] or iri
    return unquote(tail).replace("_", " ").strip()


def _unescape(s: str, source: str, lineno: int) -> str:
    def sub(m: re.Match[str]) -> str:
        e = m.group(1)
        if e[0] in "uU" and len(e) > 1:
            cp = int(e[1:], 16)
            if cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
                raise FactFileError(f"bad escape \\{e}", source=source, line=lineno)
            return chr(cp)
        if e in _ESCAPES:
            return _ESCAPES[e]
        raise FactFileError(f"unknown escape \\{e}", source=source, line=lineno)

    return _UESC.sub(sub, s)


def read_ntriples(text: str, source: str = "<text>") -> list[Triple]:
    """N-Triples -> triples with IRIs reduced to labels (see :func:`iri_label`)."""
    out = []
    for lineno, raw in _lines(text, source):
        m = _NT.match(raw)
        if m is None:
            raise FactFileError(
                'not an N-Triples statement (<subject> <predicate> <object> or "literal" .)',
                source=source,
                line=lineno,
            )
        s_iri, s_b, p_iri, o_iri, o_b, o_lit, dt = m.groups()
        for iri in (s_iri, p_iri, o_iri, dt):
            if iri is not None and _PCT_CONTROL.search(iri):
                raise FactFileError(
                    "an IRI holds a percent-encoded control character (%00-%1F, %7F)",
                    source=source,
                    line=lineno,
                )
        subject = iri_label(s_iri) if s_iri is not None else s_b
        obj = (
            iri_label(o_iri)
            if o_iri is not None
            else o_b
            if o_b is not None
            else _unescape(o_lit, source, lineno)
        )
        predicate = iri_label(p_iri)
        for i, value in enumerate((subject, predicate, obj), 1):
            if not value or not value.strip():
                raise FactFileError(f"term {i} is empty", source=source, line=lineno)
            if len(value) > MAX_FIELD_CHARS:
                raise FactFileError(f"term {i} is too long", source=source, line=lineno)
            # An escape or a percent-encoding can spell what the line check refused raw.
            bad = _BAD_IN_TERM.search(value)
            if bad is not None:
                raise FactFileError(
                    f"term {i} holds {_describe(bad.group())} (spelled as an escape or %-encoding)",
                    source=source,
                    line=lineno,
                )
        out.append(Triple(subject, predicate, obj.strip()))
    return out


__all__ = [
    "MAX_FACT_FILE_BYTES",
    "MAX_FIELD_CHARS",
    "MAX_LINE_CHARS",
    "Triple",
    "iri_label",
    "read_fact_file",
    "read_ntriples",
    "read_pairs",
    "read_tsv_triples",
]
