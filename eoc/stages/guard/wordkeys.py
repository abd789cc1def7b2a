"""Keys that tell, before a query is embedded, that no stored question can pass the entity guard.

With ``rewordings`` off and no judge of meaning, the guard (:class:`~eoc.stages.guard.entity.EntityGuard`)
serves a stored question only when every content word the query asks (``Analysis.asked``) is
accounted for by the stored question (:class:`~eoc.stages.guard.frame.Frame` leaves no
``extra``): held among its content words, or paired with one of its words as the same word
written another way (:func:`eoc.stages.spelling.same_word`: a hyphen, an inflection, a clipping,
one slip of the keys), as an acronym of its words or spelt out by one of its acronyms, or a price
word where it asks "how much". A word is paired only with a word that shares one of the keys
below, so a stored question that shares none of a query's word's keys cannot account for it:

* ``=w``: the word without hyphens (the same word, "check-in" / "checkin");
* ``i:base``: the word and each base an English ending may have been added to ("running":
  run, runn, running; :func:`~eoc.stages.spelling.inflected`);
* ``p:abc``: the first three letters (a clipping is a prefix of 3 letters or more);
* ``d:…``: a word of 4 to 8 letters and each of its spellings with one letter left out (two
  words one slip apart share one: the symmetric-delete idea of SymSpell);
* ``<k:…`` and ``>k:…``: the first and the last ``k`` letters of a word of 8 letters or more
  (one slip leaves one end whole; :func:`_slip_keys` says which ``k``);
* ``a:xy``: an acronym the query writes, and the initials of each run of 2-5 of the stored
  question's words (:func:`~eoc.stages.spelling.acronym_of`); ``A:xy`` the other way round;
* ``$much``: a price word ("cost", "price") and a question that says "much".

The keys over-approximate the pairing (a shared key does not mean the words pair), never
under-approximate it: ``tests/test_wordkeys.py`` checks every pair the guard serves in the
project's suites and a set of written slips, clippings, inflections and acronyms. A new way for
the guard to pair two words needs its key here (that test fails on the pairs it serves until
then). The kv stage's index of them is :mod:`eoc.stages.kv_words`.
"""

from __future__ import annotations

import functools

from eoc.stages.guard.analysis import Analysis, Said
from eoc.stages.guard.frame import _PRICE
from eoc.stages.guard.stems import _stem
from eoc.stages.spelling import _ENDINGS, _JOINING  # the endings and joining words it reads
from eoc.text.forms import STOPWORDS

ACRONYM_LETTERS = (2, 5)
"""The lengths an acronym may have (:func:`eoc.stages.spelling.acronym_of`)."""


def _inflection_keys(word: str, out: set[str]) -> None:
    out.add("i:" + word)
    for ending in _ENDINGS:
        if word.endswith(ending):
            base = word[: -len(ending)]
            out.add("i:" + base)
            out.add("i:" + base + "e")
            if len(base) >= 2 and base[-1] == base[-2]:
                out.add("i:" + base[:-1])
    if word.endswith("ally"):
        out.add("i:" + word[:-4])
    if word.endswith("ly") and word[:-2].endswith("al"):
        out.add("i:" + word[:-2])


def _slip_keys(word: str, out: set[str]) -> None:
    """Keys two spellings one slip apart share (:func:`eoc.stages.spelling.misspelled`: letters
    only, 4 letters or more). Up to 8 letters, the word and each of it with one letter left out;
    from 8, its first and last ``k`` letters for ``k`` of (n - 2) // 2 and (n - 1) // 2: one
    slip touches at most two neighbouring letters, which leaves one end of ``k`` whole where the
    shorter word has 2k + 1 letters or more, and two words one letter apart in length share one
    such ``k``."""
    n = len(word)
    if n < 4 or not word.isalpha():
        return
    if n <= 8:
        out.add("d:" + word)
        out.update("d:" + word[:i] + word[i + 1 :] for i in range(n))
    if n >= 8:
        for k in {(n - 2) // 2, (n - 1) // 2}:
            out.add(f"<{k}:" + word[:k])
            out.add(f">{k}:" + word[-k:])


@functools.lru_cache(maxsize=8192)
def word_keys(word: str, written: str) -> frozenset[str]:
    """The keys of ``word`` (a stem or a word) written ``written``. A pure function of its words,
    remembered for the last 8,192: queries and stored questions share most of theirs."""
    out: set[str] = set()
    flat = word.replace("-", "")
    out.add("=" + flat)
    _inflection_keys(written, out)
    for form in {flat, written}:
        if len(form) >= 3:
            out.add("p:" + form[:3])
    _slip_keys(flat, out)
    return frozenset(out)


def _spans(seq: tuple[str, ...]) -> list[tuple[int, int, str]]:
    """Each run of 2-5 of ``seq``'s words, joining words skipped, all of letters: (its first
    and past-the-last index among the words kept, its initials)."""
    kept = [w for w in seq if w not in _JOINING]
    firsts = "".join(w[:1] for w in kept)
    lo, hi = ACRONYM_LETTERS
    out = []
    for i in range(len(kept)):
        for j in range(i, min(i + hi, len(kept))):
            if not kept[j].isalpha():
                break
            if j + 1 - i >= lo:
                out.append((i, j + 1, firsts[i : j + 1]))
    return out


def _acronym(word: str) -> bool:
    lo, hi = ACRONYM_LETTERS
    return lo <= len(word) <= hi and word.isalpha()


def stored_keys(s: Said | Analysis) -> frozenset[str]:
    """Every key of the stored question ``s``'s words: its content words and its other words
    (stopwords aside), the initials of its runs of words, its acronyms, and "much"."""
    out: set[str] = set()
    for v in s.content:
        out |= word_keys(v, s.spelled.get(v, v))
        if _acronym(v):
            out.add("A:" + v)
    for w in s.words - STOPWORDS:
        out |= word_keys(w, w)
    out.update("a:" + initials for _, _, initials in _spans(s.seq))
    if "much" in s.words:
        out.add("$much")
    return frozenset(out)


def asked_keys(q: Said | Analysis) -> tuple[frozenset[str], ...] | None:
    """For each content word the query ``q`` asks, the keys a stored question must share one
    of to account for it; ``None`` when the guard reads no asked word as one it must account
    for (a query that corrects itself: what it took back may be anywhere)."""
    if q.corrected:
        return None
    stems = [_stem(w) for w in q.seq if w not in _JOINING]
    spelt: dict[str, set[str]] = {}  # a stem -> the initials of the runs of words holding it
    for i, j, initials in _spans(q.seq):
        for stem in stems[i:j]:
            spelt.setdefault(stem, set()).add("A:" + initials)
    groups = []
    for u in sorted(q.asked):
        out = set(word_keys(u, q.spelled.get(u, u)))
        if _acronym(u):
            out.add("a:" + u)
        if u in _PRICE:
            out.add("$much")
        out.update(spelt.get(u, ()))  # spelt out: a stored acronym of a run holding the word
        groups.append(frozenset(out))
    return tuple(groups)
