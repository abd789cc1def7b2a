"""The word forms the guard compares: a text's words (possessive endings dropped, "no." read as
number), their light stems ("countries" is country, "kept" keep) and the rows of the word lists
in ``eoc/stages/data/``."""

from __future__ import annotations

import functools
import re
from importlib import resources

from eoc.text.forms import fold, words

DATA = "eoc.stages"
"""The package whose ``data/`` folder holds the guard's word lists."""

# "atomic no. of", "room no. 12": the abbreviation of number, not the word no
_NUMBER_SIGN = re.compile(r"\b(?:[Nn]o|[Nn]r|[Nn]um)\.(?=\s?(?:of\b|\d))")


def _data_rows(name: str) -> list[tuple[str, str]]:
    """The (first field, rest) rows of a tab-separated file in ``data/``, comments skipped."""
    text = (resources.files(DATA) / "data" / name).read_text(encoding="utf-8")
    return [
        (first, rest)
        for first, rest in (
            line.split("\t", 1)
            for line in text.splitlines()
            if line.strip() and not line.startswith("#")
        )
    ]


def _own(w: str) -> str:
    """``w`` without a possessive ending: "Algeria's" is Algeria."""
    return w[:-2] if len(w) > 2 and w[-2:] in ("'s", "’s") else w


def _words(text: str) -> list[str]:
    """The normalized words of ``text``, possessive endings dropped, "no." read as number."""
    return [_own(w) for w in words(fold(_NUMBER_SIGN.sub("number", text)))]


@functools.cache
def _irregular() -> dict[str, str]:
    """Each irregular past form of ``data/irregular.tsv`` and its verb ("kept": keep)."""
    out: dict[str, str] = {}
    for verb, forms in _data_rows("irregular.tsv"):
        out.update(dict.fromkeys(forms.split(), verb))
    return out


STEMS_KEPT = 1 << 14
"""Words whose stem is remembered, at most (each at most :data:`STEM_KEPT_LEN` letters, so the
memory stays within a few MB whatever words the queries bring)."""

STEM_KEPT_LEN = 32
"""Longest word whose stem is remembered; a longer one is stemmed each time."""


def _stem(w: str) -> str:
    """The stem the guard compares ``w`` by (:func:`_stem_of`), remembered for short words: a
    lookup stems the same few words of the query and its candidates many times."""
    return _stem_kept(w) if len(w) <= STEM_KEPT_LEN else _stem_of(w)


def _stem_of(w: str) -> str:
    """The stem of ``w``: its verb where it is an irregular past, else ``w`` less a plural or
    verb ending (never remembered: :func:`_stem` remembers)."""
    verb = _irregular().get(w)
    if verb is not None:
        return verb  # "kept" is keep, "paid" pay
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"  # "countries" is country
    for suffix in ("ing", "ed", "es", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            if suffix == "es" and not w.endswith(("ses", "xes", "zes", "ches", "shes")):
                continue  # "hectares" is hectare, "charges" charge; "taxes" is tax
            return w[: -len(suffix)]
    return w


_stem_kept = functools.lru_cache(maxsize=STEMS_KEPT)(_stem_of)
