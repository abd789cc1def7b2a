"""The time a question asks about: the words of ``data/when.tsv`` (a clipped day or month read
whole) and the times of day on the 12-hour clock."""

from __future__ import annotations

import functools
import re
from importlib import resources

from eoc.stages.guard.stems import DATA, _stem


@functools.cache
def _when_rows() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The lines of ``data/when.tsv``: each kind and its words as written."""
    text = (resources.files(DATA) / "data" / "when.tsv").read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            kind, listed = line.split("\t", 1)
            rows.append((kind, tuple(listed.split())))
    return tuple(rows)


@functools.cache
def when_words() -> tuple[frozenset[str], frozenset[str]]:
    """The stems of ``data/when.tsv`` (words that say when a question is about), and those of
    its ``days`` and ``months`` lines, which are also written clipped ("sat", "sept")."""
    out: set[str] = set()
    clippable: set[str] = set()
    for kind, listed in _when_rows():
        stems = {_stem(w) for w in listed}
        out.update(stems)
        if kind in ("days", "months"):
            clippable.update(stems)
    return frozenset(out), frozenset(clippable)


@functools.cache
def _when_listed() -> frozenset[str]:
    """The words of ``data/when.tsv`` as written: a word that is its own stem counts only
    when listed ("weekend"), not as a listed word's stem ("even" of "evening")."""
    return frozenset(w for _, listed in _when_rows() for w in listed)


# a time of day on the 12-hour clock: "2am", "9 a.m.", "11:45 p.m.", "12 PM"
_CLOCK = re.compile(r"\b(\d{1,2})(?::([0-5]\d))?\s*([AaPp])\.?\s?[Mm]\b\.?")
_HALVES = {"a": "antemeridiem", "p": "postmeridiem"}


def clock_times(text: str) -> frozenset[str]:
    """The times of day ``text`` names on the 12-hour clock ("2am" -> "2:00 am"): "2am" and
    "2pm" are the same number and another time, so they are compared as times (with the words
    of ``data/when.tsv``)."""
    return frozenset(
        f"{int(m.group(1))}:{m.group(2) or '00'} {m.group(3).lower()}m"
        for m in _CLOCK.finditer(text)
    )


def _clock_words(m: re.Match[str]) -> str:
    """A time of day with its half of the day as one word ("2 postmeridiem"): "am" is no
    verb there, nor "a.m." two letters."""
    minutes = f":{m.group(2)}" if m.group(2) else ""
    return f"{m.group(1)}{minutes} {_HALVES[m.group(3).lower()]}"


def _when(ws: list[str]) -> frozenset[str]:
    """The words of ``ws`` that say when (``data/when.tsv``), a clipped one read whole ("sat"
    is saturday; "may" the month only when capitalised, which the caller decides)."""
    known = when_words()[0]
    out = set()
    for i, w in enumerate(ws):
        st = _stem(w)
        if i and ws[i - 1] == "good":  # "good morning": a greeting
            continue
        if st in known and (st != w or w in _when_listed()):  # "even" is no "evening"
            out.add(st)
        elif 3 <= len(w) <= 4 and w.isalpha():
            whole = _unclipped(w)
            if whole is not None:
                out.add(whole)
    return frozenset(out)


@functools.lru_cache(maxsize=4096)
def _unclipped(w: str) -> str | None:
    """The one day or month stem ``w`` clips ("sat": saturday), else ``None`` (none, or
    several)."""
    whole = [k for k in when_words()[1] if k.startswith(w)]
    return whole[0] if len(whole) == 1 else None
