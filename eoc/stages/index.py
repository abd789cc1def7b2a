"""A vector index for the kv stage: inverted postings with an exact threshold search.

:class:`SparseIndex` answers "which stored vectors have cosine >= threshold with
this one?" exactly, without visiting most of the store. Query features are
ordered from the most to the least common; the most common ones are set aside
while their combined norm stays below the threshold. Any stored vector that
shares none of the remaining (rarer) features has cosine at most that norm
(Cauchy-Schwarz), so it cannot reach the threshold and is never visited.
Candidates found through the rare features get their exact cosine.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Hashable, Mapping
from operator import itemgetter
from typing import Any, Protocol, runtime_checkable

from eoc.errors import ConfigError

FAST_TIER = 0.85
_first = itemgetter(0)
_second = itemgetter(1)


@runtime_checkable
class VectorIndex(Protocol):
    """Stores unit vectors by key and finds those at or above a cosine threshold.

    The vector type is the embedder's: a sparse dict for the core's, an array for dense ones.
    """

    def add(self, key: Hashable, vec: Any) -> None: ...

    def remove(self, key: Hashable) -> bool: ...

    def search(
        self,
        vec: Any,
        threshold: float,
        limit: int = 8,
        accept: Callable[[Hashable], bool] | None = None,
    ) -> list[tuple[float, Hashable]]: ...

    def __len__(self) -> int: ...


class SparseIndex:
    """Exact threshold search over unit sparse vectors (pure Python)."""

    def __init__(self) -> None:
        self._vectors: dict[Hashable, Mapping[int, float]] = {}
        self._postings: dict[int, dict[Hashable, float]] = {}
        self._lock = threading.Lock()

    def add(self, key: Hashable, vec: Mapping[int, float]) -> None:
        with self._lock:
            self._remove(key)
            self._vectors[key] = vec
            postings = self._postings
            for i, w in vec.items():
                p = postings.get(i)
                if p is None:
                    postings[i] = {key: w}
                else:
                    p[key] = w

    def remove(self, key: Hashable) -> bool:
        with self._lock:
            return self._remove(key)

    def _remove(self, key: Hashable) -> bool:
        old = self._vectors.pop(key, None)
        if old is None:
            return False
        for i in old:
            p = self._postings[i]
            del p[key]
            if not p:
                del self._postings[i]
        return True

    def search(
        self,
        vec: Mapping[int, float],
        threshold: float,
        limit: int = 8,
        accept: Callable[[Hashable], bool] | None = None,
    ) -> list[tuple[float, Hashable]]:
        """Up to ``limit`` ``(cosine, key)`` pairs with cosine >= ``threshold``, best first.

        ``accept``, when given, filters keys: only accepted keys are returned and count toward
        ``limit``. Candidates are verified in order of their score on the rare features, and
        verification stops once no remaining candidate can beat the ``limit``-th accepted score.

        A threshold under ``FAST_TIER`` is searched in two tiers: first at ``FAST_TIER``, where
        more common features can be set aside, and only if that finds fewer than ``limit``
        accepted hits, again at ``threshold``. The result is the same either way: every
        candidate at or above the fast tier outranks every candidate below it.
        """
        if not (isinstance(threshold, (int, float)) and 0.0 < threshold <= 1.0):
            raise ConfigError(f"threshold must be a cosine in (0, 1], got {threshold!r}")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ConfigError(f"limit must be a whole number of at least 1, got {limit!r}")
        if threshold < FAST_TIER:
            hits = self._search(vec, FAST_TIER, limit, accept)
            if len(hits) >= limit:
                return hits
        return self._search(vec, threshold, limit, accept)

    def _search(
        self,
        vec: Mapping[int, float],
        threshold: float,
        limit: int,
        accept: Callable[[Hashable], bool] | None,
    ) -> list[tuple[float, Hashable]]:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ConfigError(f"limit must be a whole number of at least 1, got {limit!r}")
        with self._lock:
            postings = self._postings
            empty: dict[Hashable, float] = {}
            feats = sorted(
                vec.items(), key=lambda iw: len(postings.get(iw[0], empty)), reverse=True
            )
            budget = threshold * threshold * (1.0 - 1e-9)
            common_n2 = 0.0
            split = 0
            for _, w in feats:
                if common_n2 + w * w >= budget:
                    break
                common_n2 += w * w
                split += 1
            common = feats[:split]
            common_norm = math.sqrt(common_n2)
            partial: dict[Hashable, float] = {}
            get = partial.get
            for i, w in feats[split:]:
                p = postings.get(i)
                if p is not None:
                    for key, dw in p.items():
                        partial[key] = get(key, 0.0) + w * dw
            floor = threshold - 1e-12
            hits: list[tuple[float, Hashable]] = []
            vectors = self._vectors
            for key, score in sorted(partial.items(), key=_second, reverse=True):
                cutoff = hits[-1][0] if len(hits) >= limit else floor
                if score + common_norm < cutoff:
                    break  # sorted by rare score: no later candidate can reach the cutoff
                if common:
                    dget = vectors[key].get
                    for i, w in common:
                        score += w * dget(i, 0.0)
                if score >= cutoff and (accept is None or accept(key)):
                    hits.append((min(score, 1.0), key))
                    hits.sort(key=_first, reverse=True)
                    del hits[limit:]
        return hits

    def __len__(self) -> int:
        return len(self._vectors)


__all__ = ["SparseIndex", "VectorIndex"]
