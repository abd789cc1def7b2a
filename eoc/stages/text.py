"""Text normalization shared by the kv and graph stages."""

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


__all__ = ["STOPWORDS", "content_words", "normalize", "signature", "words"]
