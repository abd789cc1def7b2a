"""Embedders for the kv stage, and the pure-Python one the core ships.

An embedder turns text into a unit-length vector. The core's
:class:`HashedNgramEmbedder` is sparse (a dict of index -> weight) so it is fast
without numpy, in the browser too. Native installs can plug in a sentence-embedding
model through the same :class:`Embedder` protocol.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any, Protocol, runtime_checkable

from eoc.errors import BadEmbedding, ConfigError
from eoc.stages.guard import lexical_words

SparseVector = dict[int, float]
"""index -> weight; an absent index is 0. Unit L2 norm."""


@runtime_checkable
class Embedder(Protocol):
    """Turns text into a unit-length vector of dimension ``dim``: a sparse dict (the core's
    embedder) or, for an embedder with ``dense = True``, a dense array. It may also offer
    ``embed_batch(texts)`` and a suggested cosine ``threshold``."""

    name: str
    dim: int

    def embed(self, text: str) -> Any: ...


class HashedNgramEmbedder:
    """Hashed character 3-grams and word 1- and 2-grams of the words the hit guard compares,
    L2-normalized.

    The text is read as the guard reads it (:func:`eoc.stages.guard.lexical_words`): stopwords
    and words that only reword ("what", "is", "please", "I'd like to") are dropped (unless
    nothing else is left), words are lightly stemmed, and synonyms and opposites are read as one
    word ("dialing code" as calling code, "wipe" as delete). So "speed of light" and "what is
    the speed of light?" embed alike, a rewording with other words for the same thing lands near
    it, and two questions that share only their phrasing do not.

    Hashing uses CRC-32, so a text embeds the same in every process and in Pyodide.

    Args:
        dim: number of hash buckets, a power of two (default 2**20).
        char_weight: the weight of one occurrence of a character n-gram.
        word_weight: the weight of one occurrence of a word.
        bigram_weight: the weight of one occurrence of a word pair.
    """

    name = "hashed-ngrams-2"  # 2: the guard's reading (stored vectors of 1 are embedded again)
    threshold = 0.4
    """The kv stage's default cosine threshold with this embedder: low, as the guard decides
    (chosen on the tuning part of ``bench/kvquality.py``)."""

    def __init__(
        self,
        dim: int = 1 << 20,
        *,
        char_weight: float = 0.5,
        word_weight: float = 1.5,
        bigram_weight: float = 1.0,
    ) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 2 or dim & (dim - 1):
            raise ConfigError(f"dim must be a power of two of at least 2, got {dim!r}")
        self.dim = dim
        self._mask = dim - 1
        self._weights = (char_weight, word_weight, bigram_weight)

    def features(self, text: str) -> dict[str, float]:
        """The weighted n-gram features of ``text`` before hashing (for inspection and tests)."""
        cw, ww, bw = self._weights
        toks = lexical_words(text)
        feats: dict[str, float] = {}
        padded = f" {' '.join(toks)} "
        for i in range(len(padded) - 2):
            g = "c" + padded[i : i + 3]
            feats[g] = feats.get(g, 0.0) + cw
        for t in toks:
            g = "w" + t
            feats[g] = feats.get(g, 0.0) + ww
        for a, b in pairwise(toks):
            g = f"b{a} {b}"
            feats[g] = feats.get(g, 0.0) + bw
        return feats

    def embed(self, text: str) -> SparseVector:
        """The unit vector of ``text``; empty (matching nothing) when it has no features, e.g. "???"."""
        mask = self._mask
        vec: SparseVector = {}
        for g, w in self.features(text).items():
            i = zlib.crc32(g.encode("utf-8")) & mask
            vec[i] = vec.get(i, 0.0) + w
        return unit(vec) if vec else vec


def unit(vec: Mapping[int, float]) -> SparseVector:
    """``vec`` scaled to unit L2 norm; refuses a zero or non-finite vector."""
    n2 = 0.0
    for w in vec.values():
        n2 += w * w
    if not math.isfinite(n2):
        raise BadEmbedding("embedding holds NaN or infinity: recompute it")
    if n2 <= 0:
        raise BadEmbedding("embedding is all zeros, so it has no direction")
    inv = 1.0 / math.sqrt(n2)
    return {i: w * inv for i, w in vec.items() if w}


def from_dense(values: Sequence[float], dim: int) -> SparseVector:
    """A dense vector (already checked finite) as a unit sparse vector of dimension ``dim``."""
    if len(values) != dim:
        raise BadEmbedding(
            f"embedding has {len(values)} dimensions; this kv stage's embedder has {dim}"
        )
    return unit({i: v for i, v in enumerate(values) if v})


def cosine(a: Mapping[int, float], b: Mapping[int, float]) -> float:
    """Dot product of two unit sparse vectors (their cosine similarity)."""
    if len(a) > len(b):
        a, b = b, a
    get = b.get
    return sum(w * get(i, 0.0) for i, w in a.items())


__all__ = ["Embedder", "HashedNgramEmbedder", "SparseVector", "cosine", "from_dense", "unit"]
