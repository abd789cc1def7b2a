"""The hit guard's protocol, and the two guards that need no rules: the strict
:class:`ExactWordsGuard` and :class:`NoGuard` (for comparison only)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol, runtime_checkable

from eoc.compute import is_computation
from eoc.stages.guard.reading import symbols
from eoc.text.forms import fold, signature


@runtime_checkable
class HitGuard(Protocol):
    """Says whether a stored prompt may answer a query it is similar to."""

    name: str

    def allows(self, query: str, stored: str) -> bool: ...


class ExactWordsGuard:
    """Same content words and numbers, same order (lightly stemmed)."""

    name = "exact-words"
    fingerprint_id = "exact-words/1"  # as EntityGuard.fingerprint_id

    def allows(self, query: str, stored: str) -> bool:
        return (
            signature(fold(query)) == signature(fold(stored))
            and symbols(query) == symbols(stored)
            and not is_computation(query)
        )

    def fingerprint(self, text: str) -> Hashable | None:
        """The whole signature and the operators: equal whenever ``allows`` holds."""
        return signature(fold(text)), symbols(text)

    def terms(self, text: str) -> frozenset[Hashable]:
        """The signature's words: equal signatures have equal sets."""
        return frozenset(signature(fold(text)))


class NoGuard:
    """Serves any hit above the threshold (what GPTCache and RedisVL do) — for comparison only."""

    name = "none"

    def allows(self, query: str, stored: str) -> bool:
        return True
