"""A vector index for the kv stage: inverted postings with a bounded threshold search.

:class:`SparseIndex` answers "which stored vectors have cosine >= threshold with
this one?" without visiting most of the store. Query features are ordered from
the most to the least common; the most common ones are set aside while their
combined norm stays below the threshold. Any stored vector that shares none of
the remaining (rarer) features has cosine at most that norm (Cauchy-Schwarz), so
it cannot reach the threshold and is never visited. Candidates found through the
rare features get their exact cosine.

Two caps bound what one search costs, whatever the store holds:

* :data:`MAX_POSTING`: a feature held by more than this many stored vectors is
  set aside too (it still adds to the exact score of every candidate found through
  a rarer feature), so a search walks at most ``MAX_POSTING`` postings per query
  feature;
* :data:`MAX_SCORED`: at most this many candidates per hit asked for, best first by
  their score on the walked features, are exact-scored and handed to ``accept``.

While neither cap binds, the search is exact. When one does, what can be missed is
precisely: a stored vector all of whose features shared with the query are held by
more than ``MAX_POSTING`` stored vectors (possible only when those features carry
enough of the query's norm to reach the threshold), and a candidate ranked past the
first ``MAX_SCORED`` × ``limit`` by its score on the walked features.
"""

from __future__ import annotations

import heapq
import math
import threading
from collections.abc import Callable, Hashable, Iterable, Mapping
from operator import itemgetter
from typing import Any, Protocol, runtime_checkable

from eoc.errors import ConfigError

FAST_TIER = 0.85

MAX_POSTING = 256
"""Postings walked per query feature, at most. A feature held by more stored prompts than this
cannot identify one of them (in a store of templated prompts "price", "item" and most digit
3-grams are held by thousands), and walking it makes a miss cost O(store); such a feature is
treated as common: it counts in exact scores but finds no candidates."""

MAX_SCORED = 32
"""Candidates exact-scored and handed to ``accept`` per hit asked for, at most, best first by
their score on the walked features. Near-duplicates of a query (the same template with another
number) can all clear the threshold and then all be refused by the kv stage's guard; without a
cap every one of them would be scored and checked. A paraphrase's own stored prompt shares the
query's rarest features, so it ranks among the first few."""

_first = itemgetter(0)
_second = itemgetter(1)

_Plan = tuple[list[tuple[int, float]], list[tuple[dict[Hashable, float], float]]]
"""(set-aside features as (feature, weight), walked postings as (posting list, weight))."""


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
    """Threshold search over unit sparse vectors (pure Python), exact unless a cap binds.

    Args:
        max_posting: see :data:`MAX_POSTING`.
        max_scored: see :data:`MAX_SCORED`.
    """

    accepts_prefilter = True  # search() takes prefilter= (see there)

    def __init__(self, *, max_posting: int = MAX_POSTING, max_scored: int = MAX_SCORED) -> None:
        for name, value in (("max_posting", max_posting), ("max_scored", max_scored)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name} must be a whole number of at least 1, got {value!r}")
        self.max_posting = max_posting
        self.max_scored = max_scored
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
        *,
        prefilter: Callable[[Hashable], bool] | None = None,
    ) -> list[tuple[float, Hashable]]:
        """Up to ``limit`` ``(cosine, key)`` pairs with cosine >= ``threshold``, best first.

        ``accept``, when given, filters keys: only accepted keys are returned and count toward
        ``limit``. Candidates are verified in order of their score on the rare features, and
        verification stops once no remaining candidate can beat the ``limit``-th accepted score,
        or after ``max_scored`` × ``limit`` candidates (see the module's note on the caps).
        ``prefilter``, when given, is a cheaper test that every candidate must pass before it is
        ranked, scored or handed to ``accept``: a key it refuses costs one call, nothing more.

        A threshold under ``FAST_TIER`` is searched in two tiers: first at ``FAST_TIER``, where
        more common features can be set aside, and only if that finds fewer than ``limit``
        accepted hits, again at ``threshold``. The result is the same either way: every
        candidate at or above the fast tier outranks every candidate below it.
        """
        if not (isinstance(threshold, (int, float)) and 0.0 < threshold <= 1.0):
            raise ConfigError(f"threshold must be a cosine in (0, 1], got {threshold!r}")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ConfigError(f"limit must be a whole number of at least 1, got {limit!r}")
        with self._lock:
            feats = self._features(vec)
            plan = self._split(feats, threshold)
            if threshold < FAST_TIER:
                fast = self._split(feats, FAST_TIER)
                # the lower threshold walks the fast tier's features and maybe more; when it
                # walks no more (the common ones are capped) the fast tier would repeat its work
                if len(fast[1]) < len(plan[1]):
                    hits = self._verify(fast, FAST_TIER, limit, accept, prefilter)
                    if len(hits) >= limit:
                        return hits
            return self._verify(plan, threshold, limit, accept, prefilter)

    def _features(self, vec: Mapping[int, float]) -> list[tuple[dict[Hashable, float], int, float]]:
        """(posting list, feature, weight) of the query's stored features, the most common first."""
        postings = self._postings
        # a feature no stored vector has adds nothing to any score: dropped
        feats = [(p, i, w) for i, w in vec.items() if (p := postings.get(i)) is not None]
        feats.sort(key=lambda f: len(f[0]), reverse=True)
        return feats

    def _split(
        self, feats: list[tuple[dict[Hashable, float], int, float]], threshold: float
    ) -> _Plan:
        """Set aside the most common features while their norm stays under ``threshold``, and
        any feature held by more than ``max_posting`` stored vectors; walk the rest."""
        budget = threshold * threshold * (1.0 - 1e-9)
        cap = self.max_posting
        common_n2 = 0.0
        common: list[tuple[int, float]] = []
        walked: list[tuple[dict[Hashable, float], float]] = []
        for p, i, w in feats:
            if len(p) > cap or (not walked and common_n2 + w * w < budget):
                common.append((i, w))
                common_n2 += w * w
            else:
                walked.append((p, w))
        return common, walked

    def _verify(
        self,
        plan: _Plan,
        threshold: float,
        limit: int,
        accept: Callable[[Hashable], bool] | None,
        prefilter: Callable[[Hashable], bool] | None,
    ) -> list[tuple[float, Hashable]]:
        common, walked = plan
        common_norm = math.sqrt(sum(w * w for _, w in common))
        partial: dict[Hashable, float] = {}
        get = partial.get
        for p, w in walked:
            for key, dw in p.items():
                partial[key] = get(key, 0.0) + w * dw
        items = partial.items()
        if prefilter is not None:
            items = {k: s for k, s in items if prefilter(k)}.items()
        most = self.max_scored * limit
        if len(items) > most:
            ranked = heapq.nlargest(most, items, key=_second)
        else:
            ranked = sorted(items, key=_second, reverse=True)
        floor = threshold - 1e-12
        hits: list[tuple[float, Hashable]] = []
        vectors = self._vectors
        for key, score in ranked:
            cutoff = hits[-1][0] if len(hits) >= limit else floor
            if score + common_norm < cutoff:
                break  # ranked by rare score: no later candidate can reach the cutoff
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


class Offers:
    """Candidates ranked best first, offered to ``prefilter`` and ``accept`` over one or more
    rounds of a widening search (an index that asks again for more when every candidate was
    refused): each key once, at most :data:`MAX_SCORED` × ``limit`` handed to ``accept``, and
    none below ``threshold``. ``hits`` holds what ``accept`` took, best first."""

    def __init__(
        self,
        threshold: float,
        limit: int,
        accept: Callable[[Hashable], bool] | None,
        prefilter: Callable[[Hashable], bool] | None,
    ) -> None:
        self.threshold = threshold
        self.limit = limit
        self.accept = accept
        self.prefilter = prefilter
        self.hits: list[tuple[float, Hashable]] = []
        self.budget = MAX_SCORED * limit
        self._offered: set[Hashable] = set()  # a wider search may rank them otherwise

    def take(self, ranked: Iterable[tuple[float, Hashable | None]]) -> bool:
        """Offer one round's ``(cosine, key)`` candidates, best first (a ``None`` key: a row no
        key names, skipped); True once the search is over (a candidate below the threshold,
        the budget spent, or ``limit`` hits), False when a wider round may find more."""
        for score, key in ranked:
            if score < self.threshold:
                return True
            if key is None or key in self._offered:
                continue
            self._offered.add(key)
            if self.prefilter is not None and not self.prefilter(key):
                continue
            if self.budget == 0:
                return True
            self.budget -= 1
            if self.accept is None or self.accept(key):
                self.hits.append((min(score, 1.0), key))
                if len(self.hits) >= self.limit:
                    return True
        return False


__all__ = ["MAX_POSTING", "MAX_SCORED", "Offers", "SparseIndex", "VectorIndex"]
