"""The kv's word gate: which stored questions could account for every word a query asks, found
before the query is embedded.

A guard that offers ``stored_keys`` and ``asked_keys`` (the entity guard, with rewordings off:
:mod:`eoc.stages.guard.wordkeys`) serves a stored question only if, for each word the query
asks, the stored question's keys meet that word's keys. :class:`WordGate` keeps each stored
question's keys in posting lists and answers :meth:`WordGate.may_pass`: ``False`` when no
stored question meets them all, so the guard would refuse every candidate a search could find
and the kv misses without embedding (with MiniLM, an embedding is most of what a miss costs:
about 1-2 ms of a core and 18 mJ estimated for a 17-token question); and :meth:`WordGate.candidates`:
the stored questions that meet them, the only ones the kv's similar search hands the guard (where
a judge of meaning may serve a rewording, that is all the gate does). The gate never serves
anything: a stored question it lets through is still searched for and checked by the guard.

Bounded: it keys at most :data:`WORD_GATE_MAX` stored questions (keying one reads it once,
about 0.1 ms); past that it drops its lists and lets every query through, as does a query whose
smallest list is longer than :data:`MAX_WORD_READS` (past that many reads it keeps the questions
that meet the rarest words read so far). Standard library only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

WORD_GATE_MAX = 8192
"""Stored questions the gate keys at most; with more, every query that passes the fingerprints is
embedded (the lists take about 1.2 KB a question, and keying one about 0.1 ms)."""
MAX_WORD_READS = 4096
"""Posting entries one query reads at most before it gives up and lets the query through."""


class WordGate:
    """Posting lists from each key to the stored questions (kv keys) that hold it.

    ``keys_of(prompt)`` gives a stored question's keys. Lists are only appended to (a query may
    read them meanwhile); a removed question stays in them until they are rebuilt and is skipped
    because :attr:`held` no longer has it."""

    def __init__(
        self, keys_of: Callable[[Any], frozenset[str]], limit: int = WORD_GATE_MAX
    ) -> None:
        self._keys_of = keys_of
        self.limit = limit
        self.held: dict[str, str] = {}  # kv key -> the prompt it was keyed from
        self._lists: dict[str, list[str]] = {}
        self._dead = 0  # list entries of removed questions
        self.on = True
        self.ready = True
        """False while the questions held before it was made are still being keyed: it then
        lets every query through."""
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.held)

    def keys(self, prompt: Any) -> frozenset[str] | None:
        """``prompt``'s keys (read outside any lock; from its text, or whatever else ``keys_of``
        takes: the guard's analysis of it), or ``None`` when the gate is off."""
        return self._keys_of(prompt) if self.on else None

    def add(self, key: str, prompt: str, keys: frozenset[str] | None = None) -> None:
        """Key ``key``'s question ``prompt`` (``keys``: already read by :meth:`keys`)."""
        if not self.on or self.held.get(key) == prompt:
            return
        if key not in self.held and len(self.held) >= self.limit:
            self.off()
            return
        if keys is None:
            keys = self._keys_of(prompt)
        with self._lock:
            if key in self.held:  # a new wording of a held question: its old keys stay
                self._dead += 1  # (more, never fewer) until the lists are rebuilt
            self.held[key] = prompt
            lists = self._lists
            for k in keys:
                lists.setdefault(k, []).append(key)
            if self._dead > 64 and self._dead > len(self.held):
                self._rebuild()

    def add_all(self, items: Iterable[tuple[str, str]]) -> None:
        for key, prompt in items:
            if not self.on:
                return
            self.add(key, prompt)

    def remove(self, key: str) -> None:
        with self._lock:
            if self.held.pop(key, None) is None:
                return
            self._dead += 1
            if self._dead > 64 and self._dead > len(self.held):
                self._rebuild()

    def _rebuild(self) -> None:
        """Lists of the questions held only (called with the lock held)."""
        lists: dict[str, list[str]] = {}
        for key, prompt in self.held.items():
            for k in self._keys_of(prompt):
                lists.setdefault(k, []).append(key)
        self._lists, self._dead = lists, 0

    def off(self) -> None:
        """Stop keying and let every query through from now on (the lists are dropped)."""
        with self._lock:
            self.on = False
            self.held, self._lists = {}, {}

    def may_pass(self, groups: tuple[frozenset[str], ...]) -> bool:
        """Whether some stored question may meet every group of keys (one group per asked word):
        :meth:`candidates` finds one, or cannot say (``True`` then too)."""
        found = self.candidates(groups)
        return found is None or bool(found)

    def candidates(self, groups: tuple[frozenset[str], ...]) -> set[str] | None:
        """The stored questions (kv keys) that meet every group of keys: the only ones the guard
        may serve for a query that asks those words. Where reading every group's lists would
        take more than :data:`MAX_WORD_READS` entries, those that meet the rarest groups read so
        far (more than meet them all, never fewer). ``None`` where the gate cannot say (off,
        still keying, no asked word, or the rarest group alone over the limit)."""
        if not self.on or not self.ready:
            return None
        lists, held = self._lists, self.held
        if not groups:  # every stored question may pass
            return None if held else set()
        sized = sorted(
            (sum(len(lists.get(k, ())) for k in group), i) for i, group in enumerate(groups)
        )
        if sized[0][0] == 0:
            return set()  # a word no stored question can account for
        reads = 0
        found: set[str] | None = None
        for size, i in sized:  # the shortest lists first: the rarest words decide
            reads += size
            if reads > MAX_WORD_READS:
                return found  # the rest would take too long to read: those meeting the rarest
            these = {key for k in groups[i] for key in lists.get(k, ())}
            found = {key for key in these if key in held} if found is None else found & these
            if not found:
                return found
        return found
