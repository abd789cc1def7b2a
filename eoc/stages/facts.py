"""Readers for fact files: kv pairs (TSV), triples (TSV and N-Triples).

Every reader checks the whole text before returning anything, and every error
names the source and the line, so a bad file is rejected whole and stores nothing.
"""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import unquote

from eoc.errors import FactFileError

MAX_FIELD_CHARS = 4096


class Triple(NamedTuple):
    """A fact: subject, predicate, object, as human-readable labels."""

    subject: str
    predicate: str
    object: str


def _lines(text: str, source: str) -> list[tuple[int, str]]:
    if not isinstance(text, str):
        raise FactFileError("fact text must be str", source=source)
    out = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "\x00" in line:
            raise FactFileError("line holds a NUL character", source=source, line=lineno)
        out.append((lineno, raw.rstrip("\r\n")))
    return out


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


_IRI = r"<([^<>\"{}|^`\\\x00-\x20]*)>"
_BNODE = r"_:([A-Za-z0-9_][A-Za-z0-9_.-]*)"
_LITERAL = r"\"((?:[^\"\\\n\r]|\\.)*)\"(?:@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^" + _IRI + r")?"
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
        s_iri, s_b, p_iri, o_iri, o_b, o_lit, _dt = m.groups()
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
        out.append(Triple(subject, predicate, obj.strip()))
    return out


__all__ = ["Triple", "iri_label", "read_ntriples", "read_pairs", "read_tsv_triples"]
