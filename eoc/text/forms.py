"""Text normalization shared by the kv and graph stages.

Two folds, for two jobs:

* :func:`fold` is the kv's: its exact-match key and the words its hit guard compares. It folds
  only what can never change what is asked: runs of whitespace, letter case (a capital as its
  small letter, "Åland" as "åland"; never a case *folding* that spells a letter otherwise, as
  ``casefold`` makes "ß" "ss"), the quote and dash variants (curly quotes are straight ones, en and em dashes and the
  minus sign a hyphen), the canonical composition of accents (NFC: "é" typed as one character or
  as "e" and an accent), a few contractions ("what's" is "what is") and the punctuation that
  opens or closes a question ("¿", "?", ".", quotes). Every other character decides: "7*8!" is
  not "7*8" (a factorial), "2³" is not "23", "Maße" is not "Masse", "sin 30°" is not "sin 30".
* :func:`normalize` is the graph's, for matching a question's words with the labels of things
  and relations ("Côte d'Ivoire", "CÔTE D'IVOIRE"): compatibility forms and every script's case
  folded too (NFKC, casefold). A label is a name, and the graph answers only where a label
  matches whole, so folding a name's spelling cannot turn one question into another.
"""

from __future__ import annotations

import functools
import re
import unicodedata

_CONTRACTIONS = (
    (re.compile(r"\b(what|who|where|which|how|when|that|it)'s\b"), r"\1 is"),
    (re.compile(r"\b(what|who|where|which|how)'re\b"), r"\1 are"),
    (re.compile(r"\bwhats\b"), "what is"),
)
_SPACE = re.compile(r"\s+")
# the kv's fold: ASCII capitals, quote and dash variants (never the prime, ′, which is feet or
# minutes of arc, nor the double prime)
_FOLD = str.maketrans(
    {
        **{chr(c): chr(c + 32) for c in range(ord("A"), ord("Z") + 1)},
        **dict.fromkeys("‘’‚‛", "'"),
        **dict.fromkeys("“”„‟", '"'),
        **dict.fromkeys("‐‑‒–—―−", "-"),
    }
)
# what opens or closes a question without saying anything: never "!" (a factorial: "5!"), a
# bracket ("(2+3)*4") or a symbol
_FOLD_EDGE = re.compile(r"^[\s\"'¿¡]+|[\s?.,;:\"']+$")
_EDGE = re.compile(r"^[\s\"'“”‘’¿¡(\[]+|[\s?!.,;:\"'“”‘’)\]]+$")
_WORD = re.compile(r"\d+(?:[.,]\d+)*|[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)
_NUMBER = re.compile(r"\d")

STOPWORDS = frozenset(
    """a an the is are was were be of in on at to for by with what which who whom whose where
    when how do does did tell me please give show can could would you i my your its it this that
    these those and or as from about into there their 's""".split()
)


def normalize(text: str) -> str:
    """Casefold, unify quotes, expand common contractions, trim edge punctuation, collapse spaces."""
    if len(text) <= _CACHED_CHARS:
        return _normalize_short(text)
    return _normalize(text)


_CACHED_CHARS = 256  # a lookup normalizes the same short labels and questions again and again


@functools.lru_cache(maxsize=8192)
def _normalize_short(text: str) -> str:
    return _normalize(text)


def _normalize(text: str) -> str:
    t = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    for pattern, repl in _CONTRACTIONS:
        t = pattern.sub(repl, t)
    t = _SPACE.sub(" ", t)
    return _EDGE.sub("", t)


def fold(text: str) -> str:
    """The kv's fold of ``text`` (see the module docstring): what its exact-match key is, and
    what its hit guard reads words from. Two texts that fold alike ask the same thing."""
    if len(text) <= _CACHED_CHARS:
        return _fold_short(text)
    return _fold(text)


@functools.lru_cache(maxsize=8192)
def _fold_short(text: str) -> str:
    return _fold(text)


def _fold(text: str) -> str:
    if text.isascii():
        t = text.translate(_FOLD)
    else:  # every script's capitals as its small letters (lower(), never casefold: ß stays ß)
        t = unicodedata.normalize("NFC", text).translate(_FOLD).lower()
    for pattern, repl in _CONTRACTIONS:
        t = pattern.sub(repl, t)
    t = _SPACE.sub(" ", t)
    return _FOLD_EDGE.sub("", t)


def words(text: str) -> list[str]:
    """The words and numbers of already-normalized text, in order."""
    return _WORD.findall(text)


def content_words(normalized: str) -> list[str]:
    """The words of normalized text without stopwords; all the words if only stopwords remain."""
    all_words = words(normalized)
    content = [w for w in all_words if w not in STOPWORDS]
    return content or all_words


def _stem(word: str) -> str:
    if (
        len(word) > 3
        and word.endswith("s")
        and not word.endswith("ss")
        and not _NUMBER.search(word)
    ):
        return word[:-1]
    return word


def signature(normalized: str) -> tuple[str, ...]:
    """The content words and numbers of normalized text, in order, lightly stemmed.

    Two prompts may share an answer only if their signatures agree: this is what
    keeps "convert 10 miles to km" from hitting "convert 10 km to miles" and
    "capital of France" from hitting "capital of Germany".
    """
    return tuple(_stem(w) for w in words(normalized) if w not in STOPWORDS)


__all__ = ["STOPWORDS", "content_words", "fold", "normalize", "signature", "words"]
