"""The kv stage: exact key match, then similarity over embeddings.

Similarity is cosine between unit vectors; ``threshold`` is the least cosine a
stored prompt needs to be served, so **higher is stricter** (1.0 serves only
prompts that embed identically). A similarity hit is also guarded (see
:mod:`eoc.stages.guard`, :class:`~eoc.stages.guard.EntityGuard` by default, with
either embedder): what decides the answer must agree (numbers, names, negation, opposites
such as "turn on" / "turn off", ranks, the sides of a transfer, the words that narrow a noun),
so "convert 10 miles to km" never gets the answer stored for "convert 10 km to miles", while
politeness, framing and synonyms may differ.

The default thresholds (0.4 for the core's hashed n-grams, 0.7 for MiniLM) were chosen on the
tuning part of eoc's own evaluation sets (``bench/kvquality.py``) and checked on real paraphrases
and hard negatives (``bench/semantic.py``). The guard, not the cosine, is what keeps a wrong
answer out: hashed n-grams only measure shared spelling, so their threshold is low enough to let
a rewording with few shared letters ("freeze my card" / "lock my card") reach the guard.

A miss costs a bounded amount of work however large the store: the index walks and
scores a capped number of candidates (:mod:`eoc.stages.index`), a candidate whose guard
fingerprint differs from the query's (another number) is dropped by a set lookup, and
at most :data:`MAX_GUARD_CHECKS` candidates reach the guard itself.

With a guard that names its ``terms`` (the strict :class:`~eoc.stages.guard.ExactWordsGuard`
does; the default :class:`~eoc.stages.guard.EntityGuard` does not, as it serves a rewording in
other words, "how do i trak my oder", whose stored words are not in the query), each stored
prompt is indexed by its rarest term, and a query none of whose stored prompts has all its terms
in the query is a miss before it is embedded — the guard would refuse every candidate. The check reads at most :data:`MAX_TERM_CHECKS` stored prompts; past that, or
when a stored prompt has no terms, the query is embedded as before. When the cascade then asks
the model, it tells the kv stage (:meth:`KVStage.will_remember`), so an embedder that can
(``eoc_native.semantic.CachedEmbedder``) embeds the question while the model works, for the answer
to be remembered; not where the answer is remembered after its reply
(``Cascade(kv_after_reply=True)``: the embedding is then off the reply's way already).

Entries are kept in *partitions* (:mod:`eoc.store.partition`): the shared one (key: the folded
question, :func:`eoc.text.forms.fold`: case, spaces, quote and dash variants, nothing that can
change what is asked) holds the pack and the model's answers to plain questions; a request with a system
prompt or its own parameters has its model answers kept under its partition's tag (key:
``"(p:HEX) question"``). A lookup's candidates, exact and similar, are only those its query's
partition admits (:meth:`eoc.store.partition.Partition.admits`; a plain question: the shared
partition's), so another partition's answer is never served, nor even handed to the guard.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from eoc.cost import JouleCost
from eoc.errors import ConfigError, EocError, FactFileError, InputError
from eoc.query import KvPartition, Query, Stage
from eoc.stages import kv_hot
from eoc.stages.base import WORK_RATES, Answer, stage_figure, work_estimate
from eoc.stages.embed import Embedder, HashedNgramEmbedder, from_dense
from eoc.stages.guard import EntityGuard, HitGuard, decisive_difference, judgeable
from eoc.stages.index import SparseIndex, VectorIndex
from eoc.stages.judging import Judging, Verdict
from eoc.stages.kv_hot import HotEntries, StoreIndex
from eoc.stages.kv_words import WordGate
from eoc.stages.repair import StoredWords
from eoc.stages.wrappers import unwrap
from eoc.store.entry import EntryMeta, Generation, checked_ttl
from eoc.store.memory import MemoryKVStore
from eoc.store.partition import SHARED, checked_tag, keyed, tag_of
from eoc.store.protocols import Damage, KVRow, KVStore, Match, VectorSearch
from eoc.store.rules import checked_origin, kv_key, new_meta, replayed, stale
from eoc.text.facts import read_fact_file, read_pairs
from eoc.text.forms import fold

DEFAULT_THRESHOLD = 0.6
"""The threshold for an embedder that suggests none (the core's suggests 0.4)."""
EXPLAIN_FLOOR = 0.3
"""The least cosine of a stored question :meth:`KVStage.explain` lists by default."""
SEARCH_RATES = replace(
    WORK_RATES[Stage.KV],
    per_byte_nj=0.0,
    why="10 µs + 2 µs per candidate checked, at 10 W; the embedding as its embedder estimates it",
)
"""A hit's rates besides the embedding (the kv's own, less the per-byte share), where the
embedder estimates that itself."""
MAX_TERM_CHECKS = 256
"""Stored prompts whose terms a lookup compares with the query's before embedding it, at most."""
MAX_GUARD_CHECKS = 16
"""Guard checks per lookup, at most (candidates above the threshold whose fingerprint matches,
best first). A check of a prompt not analysed before costs tens of µs, so this bounds the guard's
share of a miss near 1 ms; a 17th similar stored prompt is not checked, even if it would pass."""

GUARD_FIRST = 4
"""Where no judge may serve a rewording (none, or none that any stored answer could pay for:
:meth:`KVStage._judge_moot`) and the word gate leaves at most this many stored
questions (the only ones the guard may serve: :mod:`eoc.stages.kv_words`), the guard checks them
before the question is embedded; when it refuses every one, nothing could be served, and the
embedding (about 1 to 2 ms of MiniLM) is skipped. A check (tens of µs) is not made twice: the
search reuses its verdicts."""

_UNKNOWN: Any = object()  # "not computed yet"


def finished(meta: EntryMeta | None) -> bool:
    """Whether a model's remembered answer ended by itself (``finish_reason`` "stop"): only
    such an answer is served to a paraphrase. One cut at ``max_tokens`` ("length"), or whose
    finish is unknown (a server that did not say, a store from before eoc kept it), answers
    only its own question, on the exact path: a reworded question with more room would have
    got more."""
    gen = None if meta is None else meta.generation
    return gen is not None and gen.finish_reason == "stop"


def _both(
    first: Callable[[Hashable], bool], then: Callable[[Hashable], bool] | None
) -> Callable[[Hashable], bool]:
    if then is None:
        return first
    return lambda k: first(k) and then(k)


_NOTHING: frozenset[str] = frozenset()


class _Entry:
    __slots__ = ("analysis", "key", "local", "meta", "origin", "partition", "payload", "prompt")

    def __init__(
        self,
        key: str,
        prompt: str,
        payload: str,
        origin: str = "",
        meta: EntryMeta | None = None,
        partition: str = SHARED,
    ) -> None:
        self.key = key
        self.prompt = prompt
        self.payload = payload
        self.origin = origin  # what made the answer: "" for none (the pack), else a model
        self.meta = meta  # when it was stored, when it expires, how a model generated it
        self.partition = (
            partition  # its partition's tag (eoc.store.partition): "" for the shared one
        )
        self.analysis: object = None  # the guard's prepare(prompt), made at its first check
        self.local = False  # kept in this process's memory only (defer_pairs): no store row


class _Fingerprints:
    """Stored keys grouped by their guard fingerprint, so that a lookup keeps the candidates
    that can pass the guard with one set membership test each (run in C)."""

    __slots__ = ("by_key", "groups", "open")

    def __init__(self) -> None:
        self.by_key: dict[str, Hashable | None] = {}
        self.groups: dict[Hashable, set[str]] = {}
        self.open: set[str] = set()  # fingerprint None: no constraint, always a candidate

    def add(self, key: str, fp: Hashable | None) -> None:
        old = self.by_key.get(key, _UNKNOWN)
        if old is not _UNKNOWN:
            group = self.open if old is None else self.groups.get(old, set())
            group.discard(key)
            if old is not None and not group:
                self.groups.pop(old, None)
        self.by_key[key] = fp
        if fp is None:
            self.open.add(key)
        else:
            self.groups.setdefault(fp, set()).add(key)

    def remove(self, key: str) -> None:
        old = self.by_key.pop(key, _UNKNOWN)
        if old is _UNKNOWN:
            return
        group = self.open if old is None else self.groups.get(old, set())
        group.discard(key)
        if old is not None and not group:
            self.groups.pop(old, None)

    def matcher(self, fp: Hashable | None) -> Callable[[Hashable], bool] | None:
        """Says whether a stored key's fingerprint allows a query with ``fp``; None: all do."""
        if fp is None:
            return None
        same, anyone = self.groups.get(fp, _NOTHING), self.open
        if not anyone:
            return same.__contains__
        return lambda k: k in same or k in anyone


class KVStage:
    """Exact and similarity lookup of stored prompt -> answer pairs.

    Args:
        embedder: turns text into unit vectors; defaults to :class:`HashedNgramEmbedder`.
        index: the vector index; defaults to :class:`SparseIndex` (a dense embedder needs
            a dense index, e.g. ``eoc_native.semantic.AutoIndex``).
        threshold: least cosine for a similarity hit, in (0, 1]; higher is stricter. Defaults
            to the embedder's ``threshold`` attribute (0.4 for the core's
            :class:`HashedNgramEmbedder`), else :data:`DEFAULT_THRESHOLD` (0.6).
        guard: checks a similarity hit before it is served; defaults to :class:`EntityGuard`
            (:class:`ExactWordsGuard` is stricter, :class:`NoGuard` is a plain cosine cache).
        figure_uj: this stage's own per-hit figure (ESTIMATED); defaults to the documented one.
        ttl: the store-wide TTL (seconds, or "7d"): a model's answer older than it, or of
            unknown age, is never served. An entry's own TTL (``put(..., ttl=)``) applies either
            way; the pack's answers are aged by their own TTL only.
        judging: a judge of meaning for rewordings (:mod:`eoc.stages.judging`); none by default.
        store: where the pairs and their vectors live beyond memory (:class:`eoc.store.KVStore`);
            by default :class:`~eoc.store.memory.MemoryKVStore`, which keeps nothing beyond
            memory. The pairs it holds are read once, at construction.

    Raises (with a store): what the store raises opening or reading, before anything is served.
    """

    stage = Stage.KV
    keeps_partitions = True
    """It keeps and reads each request's partition (:mod:`eoc.store.partition`)."""

    def __init__(
        self,
        *,
        embedder: Embedder | None = None,
        index: VectorIndex | None = None,
        threshold: float | None = None,
        guard: HitGuard | None = None,
        figure_uj: int | None = None,
        ttl: float | str | None = None,
        judging: Judging | None = None,
        store: KVStore | None = None,
    ) -> None:
        self.ttl = checked_ttl(ttl, "the store's TTL")
        self.now: Callable[[], float] = time.time  # Unix seconds (tests set a fake clock)
        self._latest = 0.0  # the latest time read (a clock set back never revives an entry)
        self._expired: list[str] = []  # seen expired: removed from the store after the lookup
        self._aging = self.ttl is not None  # True once any entry may expire
        self.embedder: Embedder = embedder or HashedNgramEmbedder()
        self.dense = bool(getattr(self.embedder, "dense", False))
        if threshold is None:
            suggested = getattr(self.embedder, "threshold", None)
            threshold = DEFAULT_THRESHOLD if suggested is None else float(suggested)
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, (int, float))
            or not (0.0 < threshold <= 1.0)
        ):
            raise ConfigError(
                f"threshold is a cosine in (0, 1] (higher = stricter), got {threshold!r}"
            )
        if index is None and self.dense:
            raise ConfigError(
                f"{self.embedder.name} makes dense vectors: pass a dense index "
                "(eoc_native.semantic.AutoIndex), not the core's sparse one"
            )
        self.index: VectorIndex = index if index is not None else SparseIndex()
        # an embedder whose cosine reads meaning may judge a rewording in other words; one that
        # reads spelling (the core's n-grams) serves only a few words changed
        self._guard: HitGuard = guard or EntityGuard(
            rewordings=bool(getattr(self.embedder, "rewordings", False))
        )
        # the guard's optional cheap parts (see eoc.stages.guard), looked up once
        self._fingerprint: Callable[[str], Hashable | None] | None = getattr(
            self._guard, "fingerprint", None
        )
        self._prepare: Callable[[str], object] | None = getattr(self._guard, "prepare", None)
        self._terms: Callable[[str], frozenset[Hashable]] | None = getattr(
            self._guard, "terms", None
        )
        self._refuses_every: Callable[[str], bool] | None = getattr(
            self._guard, "refuses_every", None
        )
        # the words a stored question must account for (eoc.stages.kv_words): a query none
        # could account for is a miss before it is embedded; the gate is built at the first
        # lookup that may use it (on a thread where a judge of meaning may serve a rewording:
        # then it only spares the guard checks of stored questions that cannot pass)
        self._stored_keys: Callable[[Any], frozenset[str]] | None = getattr(
            self._guard, "stored_keys", None
        )
        self._asked_keys: Callable[[Any], tuple[frozenset[str], ...] | None] | None = getattr(
            self._guard, "asked_keys", None
        )
        if not (callable(self._stored_keys) and callable(self._asked_keys)) or getattr(
            self._guard, "rewordings", False
        ):  # (a guard that leaves rewordings to similarity gates nothing: no keys to keep)
            self._stored_keys = self._asked_keys = None
        self._words: WordGate | None = None
        # what the embedder says embedding a text costs (MiniLM), for a hit it embedded
        self._embed_estimate: Callable[[str], object] | None = getattr(
            self.embedder, "embed_estimate", None
        )
        self._fps = _Fingerprints()
        self._store_fp: Callable[[str], bool] | None = None  # the store's may_hold, with a searcher
        self._needs: dict[str, frozenset[Hashable]] = {}  # key -> the guard's terms of its prompt
        self._by_term: dict[Hashable, list[str]] = {}  # a term -> keys indexed under it
        self._bare: set[str] = set()  # keys whose prompt has no terms: always candidates
        self.threshold = float(threshold)
        self.figure = stage_figure(Stage.KV, figure_uj)
        self._flat = figure_uj is not None  # a caller's flat figure: answers carry no cost
        self._entries: dict[str, _Entry] | HotEntries[_Entry] = {}
        self._parted: dict[str, set[str]] = {}  # a partition's tag -> its keys (not the shared)
        self._lock = threading.Lock()
        self._deferred: dict[str, str] = {}  # key -> prompt stored by defer_pairs, not embedded
        # the stored questions' words, for repairing a query's slips before it is embedded
        # (eoc.stages.repair); a stored prompt's words are counted at the first lookup after
        self._vocab = StoredWords()
        self._unworded: list[str] = []
        self._defer_lock = threading.Lock()
        self._gate_lock = threading.Lock()
        self._gate_started = False  # the word gate's build begun (on a thread, where judged)
        self.judging = judging
        # what the answering model would spend on a question with this stored answer (the
        # cascade sets it from the neural stage): the energy rule's saving
        self.saving: Callable[[Query, Answer], JouleCost | None] | None = None
        # the most ``saving`` can say beside any stored answer (the cascade sets it too), given
        # the longest stored answer (characters) and the largest recorded making cost (µJ),
        # both kept as entries are stored (never lowered: still a bound once one is forgotten)
        self.saving_bound: Callable[[Query, int, int], int | None] | None = None
        self._longest = 0
        self._most_made = 0
        self._write_lock = threading.RLock()  # one writer: memory changes in the store's order
        self.store: KVStore = MemoryKVStore() if store is None else store
        self._polls = bool(self.store.polls)
        # a store that searches its own vectors (PostgreSQL with pgvector): memory keeps no
        # vector, and a bounded set of the entries (eoc.stages.kv_hot)
        self._searcher: VectorSearch | None = self.store.searcher(self.embedder, self.dense)
        if self._searcher is not None:
            self.index = StoreIndex(self._searcher, self._hold)
            self._entries = HotEntries(kv_hot.HOT_ENTRIES)
            # the guard checks every candidate itself; a store that keeps the guard's
            # fingerprints says whether any stored prompt has the query's (no embedding if none)
            self._store_fp = self._stored_fingerprints(self._searcher)
            self._fingerprint = self._terms = None
            self._stored_keys = None  # memory holds only some of the questions: no word gate
        # a store shared with other processes, without its own search: a pair in memory is
        # confirmed there before it is served (a forget elsewhere counts before it is heard)
        self._current: Callable[[Sequence[str]], dict[str, tuple[str, str]] | None] | None = (
            None if self._searcher is not None else getattr(self.store, "current", None)
        )
        self._load()
        self.store.listen(self)

    @property
    def damaged(self) -> list[Damage]:
        """The rows the store did not serve: (table, rowid, why)."""
        return self.store.damaged

    def _load(self) -> None:
        """Read the store's pairs, embedding those whose vector it does not hold for this
        embedder; an expired one is not kept, and is deleted from the store."""
        if self._searcher is not None:
            return  # the store searches its pairs: none is read at start
        rows = self.store.rows(self.embedder, self.dense)
        if not rows:
            return
        now, expired = self.now(), []
        for row in rows:
            if stale(row.origin, row.meta, now, self.ttl):
                expired.append(row.key)  # never served: removed from the store below
            else:
                self._take_row(row)
        if expired:
            self.store.delete(expired)

    def _take_row(self, row: KVRow) -> None:
        """Serve ``row`` from memory; a row memory cannot hold (a vector the index refuses) is
        reported damaged, never served."""
        try:
            tag = tag_of(row.key)
            key = keyed(tag, kv_key(row.prompt, row.payload))
            checked_origin(row.origin)
            vec = row.vector if row.vector is not None else self.embedder.embed(row.prompt)
            self._keep(key, row.prompt, row.payload, vec, row.origin, row.meta, tag)
        except EocError as exc:
            self.store.damaged.append(("kv", row.rowid, exc.reason))

    def _hold(self, rows: Sequence[KVRow]) -> list[str | None]:
        """Keep among the hot entries the rows a searching store found (a held one whose answer
        is unchanged is left as it is, with its guard analysis); the key each is held under, or
        ``None`` for a row memory cannot serve (reported damaged)."""
        keys: list[str | None] = []
        for row in rows:
            try:
                tag = tag_of(row.key)
                key = keyed(tag, kv_key(row.prompt, row.payload))
                checked_origin(row.origin)
            except EocError as exc:
                self.store.damaged.append(("kv", row.rowid, exc.reason))
                keys.append(None)
                continue
            held = self._entries.get(key)
            if (
                held is None
                or held.prompt != row.prompt
                or held.payload != row.payload
                or held.origin != row.origin
                or held.meta != row.meta  # a new expiry: never read as expired, and deleted
            ):
                self._keep(key, row.prompt, row.payload, None, row.origin, row.meta, tag)
            keys.append(key)
        return keys

    def _parts(self, part: KvPartition | None) -> list[str]:
        """The partitions' tags whose entries may answer a query of partition ``part``."""
        if part is None:
            return [SHARED]
        return [*part.tags, SHARED] if part.facts else list(part.tags)

    def _nearest(
        self,
        vec: Any,
        threshold: float,
        limit: int,
        accept: Callable[[Hashable], bool] | None,
        prefilter: Callable[[Hashable], bool] | None,
        part: KvPartition | None,
    ) -> list[tuple[float, Hashable]]:
        """The index's search, with ``prefilter`` where it takes one and, over a searching
        store, only among ``part``'s partitions."""
        index: Any = self.index
        found: list[tuple[float, Hashable]]
        if self._searcher is not None:
            parts = self._parts(part)
            found = index.search(vec, threshold, limit, accept, prefilter=prefilter, parts=parts)
            return found
        if prefilter is not None and getattr(index, "accepts_prefilter", False):
            # mismatches are dropped before they are ranked or scored, not only before the guard
            found = index.search(vec, threshold, limit, accept, prefilter=prefilter)
        else:
            found = index.search(vec, threshold, limit, accept)
        return found

    # -- what a store calls (eoc.store.KVListener) ----------------------------------

    def take(self, rows: Sequence[KVRow]) -> None:
        """Another process wrote ``rows`` to the store: serve them here too (not when expired).
        Over a searching store, the entries they replace are dropped from memory instead: the
        store serves the new ones."""
        if self._searcher is not None:
            for row in rows:
                try:
                    self._drop(keyed(tag_of(row.key), kv_key(row.prompt, row.payload)))
                except EocError:
                    continue
            return
        now = self.now()
        for row in rows:
            if not stale(row.origin, row.meta, now, self.ttl):
                self._take_row(row)

    def keep_only(self, kept: Callable[[str, str], bool]) -> None:
        """Another process forgot something: drop every entry ``kept(key, origin)`` refuses."""
        with self._lock:
            gone = [k for k, e in self._entries.items() if not kept(k, e.origin)]
        for key in gone:
            self._drop(key)

    def set_ttl(self, ttl: float | str | None) -> None:
        """Set the store-wide TTL (as :meth:`eoc.stages.cache.CacheStage.set_ttl`)."""
        self.ttl = checked_ttl(ttl, "the store's TTL")
        self._aging = self._aging or self.ttl is not None

    @property
    def guard(self) -> HitGuard:
        """The hit guard; fixed at construction, as stored fingerprints are the guard's."""
        return self._guard

    @staticmethod
    def checked_key(prompt: str, payload: str) -> str:
        """Validate a prompt and its answer; returns the exact-match key
        (:func:`eoc.store.rules.kv_key`)."""
        return kv_key(prompt, payload)

    def put(
        self,
        prompt: str,
        payload: str,
        *,
        embedding: object | None = None,
        origin: str = "",
        generation: Generation | None = None,
        ttl: float | str | None = None,
        meta: EntryMeta | None = None,
        partition: str = SHARED,
    ) -> str | None:
        """Store ``payload`` as the answer to ``prompt`` (replacing an earlier answer), made by
        ``origin`` ("" when no model made it) as ``generation`` says; never served ``ttl``
        seconds (or "12h") from now. ``meta``: the record as a store read it (it replaces
        ``generation`` and ``ttl``). ``partition``: the tag of the partition it is kept in
        (:mod:`eoc.store.partition`; "" for the shared one, which plain questions read).

        Raises:
            InputError: a bad prompt, answer, origin, generation or partition; ConfigError: a
                bad ``ttl``.
        """
        key = keyed(checked_tag(partition), self.checked_key(prompt, payload))
        origin = checked_origin(origin)
        if meta is None:
            meta = new_meta(self.now(), generation, ttl)
        vec = embedding if embedding is not None else self.embedder.embed(prompt)
        with self._write_lock:  # memory changes in the order the store did
            said = self.store.put([KVRow(key, prompt, payload, origin, meta, vec)])
            self._keep(key, prompt, payload, vec, origin, meta, partition)
        return said

    def _keep(
        self,
        key: str,
        prompt: str,
        payload: str,
        vec: object,
        origin: str,
        meta: EntryMeta | None,
        partition: str,
    ) -> None:
        """Put a checked pair and its vector in memory under ``key`` (its folded question in
        ``partition``: :func:`eoc.store.partition.keyed`): its entry, vector, fingerprint and
        terms."""
        fingerprint = self._fingerprint
        fp = None if fingerprint is None else fingerprint(prompt)
        needs = None if self._terms is None else self._terms(prompt)
        gate = self._words
        entry = _Entry(key, prompt, payload, origin, meta, partition)
        keys = None
        if gate is not None:
            if self._prepare is not None and not self._unjudged():
                # judged: every miss is checked beside its nearest stored questions, so the
                # analysis the guard reads is made here, behind the reply, and keyed from
                entry.analysis = self._prepare(prompt)
                keys = gate.keys(entry.analysis)
            else:
                keys = gate.keys(prompt)
        with self._lock:
            self._bound_saving(entry)  # before the entry is seen
            if meta is not None and meta.expires_at is not None:
                self._aging = True
            if partition and self._searcher is None:
                self._parted.setdefault(partition, set()).add(key)
            if needs is not None and key not in self._needs:
                self._index_terms(key, needs)  # before the vector: never a vector without terms
            if self._words is not None:  # before the vector, as the terms (a gate built
                # since the keys were read reads them now)
                self._words.add(key, prompt, keys if self._words is gate else None)
            self._deferred.pop(key, None)  # this vector, not a deferred one, is the key's
            self.index.add(key, vec)
            if key not in self._entries:
                self._unworded.append(prompt)
            self._entries[key] = entry
            if fingerprint is not None:
                self._fps.add(key, fp)

    def _index_terms(self, key: str, needs: frozenset[Hashable]) -> None:
        """Index ``key`` under its rarest term so far (any one of them finds it; the rarest
        keeps the lists short). Called with the lock held; lists are only appended to, so a
        lookup may read them meanwhile."""
        self._needs[key] = needs
        if not needs:
            self._bare.add(key)
            return
        by_term = self._by_term
        term = min(needs, key=lambda t: len(by_term.get(t, ())))
        by_term.setdefault(term, []).append(key)

    def _stored_fingerprints(self, searcher: VectorSearch) -> Callable[[str], bool] | None:
        """Where the guard's fingerprints may be kept by the store that searches (the guard names
        them, ``fingerprint_id``, and the store can keep them, ``use_fingerprint``): the store
        keeps each stored prompt's, and a lookup asks it whether any has the query's before
        embedding; else ``None``."""
        fingerprint, ident = self._fingerprint, getattr(self._guard, "fingerprint_id", None)
        use = getattr(searcher, "use_fingerprint", None)
        if fingerprint is None or not isinstance(ident, str) or not callable(use):
            return None
        may_hold: Callable[[str], bool] | None = use(ident, fingerprint)
        return may_hold

    def _may_pass(self, text: str) -> bool:
        """False when the guard is sure to refuse every stored prompt for ``text`` (no stored
        prompt has all its terms in ``text``'s); True when one might pass, or when finding out
        would read more than :data:`MAX_TERM_CHECKS` stored prompts."""
        terms = self._terms
        assert terms is not None
        if len(self._needs) != len(self._entries):  # entries stored without put (a subclass's)
            self._sync_unput()
        if self._bare:
            return True
        held = terms(text)
        needs, by_term = self._needs, self._by_term
        checked = 0
        for term in held:
            for key in by_term.get(term, ()):
                need = needs.get(key)
                if need is None or need <= held:
                    return True
                checked += 1
                if checked >= MAX_TERM_CHECKS:
                    return True
        return False

    def _bound_saving(self, entry: _Entry) -> None:
        """Count ``entry`` in the bounds :meth:`_judge_moot` reads: its answer's length, and
        what making it cost as recorded with it (under ``self._lock``)."""
        self._longest = max(self._longest, len(entry.payload))
        gen = None if entry.meta is None else entry.meta.generation
        made = None if gen is None else gen.made
        if made is not None:
            self._most_made = max(self._most_made, made.uj)

    def _judge_moot(self, query: Query) -> bool:
        """Whether the judge could serve none of the stored answers to ``query`` whatever it is
        shown (:meth:`eoc.stages.judging.Judging.cannot_serve`): its energy rule weighs a
        judgement against the saving, and no stored answer (at most the longest stored, or the
        dearest recorded) saves enough. Then this lookup is as a judgeless one: the word gate may
        rule the question out before it is embedded, and no judged search follows a miss. Only
        where memory holds every stored answer (no store that searches its own vectors)."""
        judging = self.judging
        if judging is None or self._searcher is not None:
            return False
        saving_uj: int | None = None  # no saving figure: the judge is never run (energy_rule)
        if self.saving is not None:
            bound = self.saving_bound
            if bound is None:
                return False  # a saving this stage cannot bound
            saving_uj = bound(query, self._longest, self._most_made)
        return judging.cannot_serve(fold(query.prompt), saving_uj)

    def _unjudged(self) -> bool:
        """Whether no judge of meaning may serve what the guard refused for its wording (the
        word gate's keys hold only then: a judge may serve a rewording that shares no word)."""
        judging = self.judging
        return judging is None or judging.mode == "off"

    def _word_candidates(self, text: Any) -> set[str] | None:
        """The stored questions (kv keys) that account for every word ``text`` (a query, or the
        guard's analysis of it) asks: the only ones the guard may serve it
        (:mod:`eoc.stages.kv_words`); ``None`` where the gate cannot say (no keys, off, still
        keying, too long to find out).

        Without a judge the gate is built in the first lookup that may use it (a miss it rules
        out is then never embedded); where a judge may serve a rewording (which shares no word,
        so every miss is embedded all the same) it only spares the guard its checks of stored
        questions that cannot pass, and is built on a thread of its own, so no lookup waits for
        it (about 0.1 ms a stored question)."""
        if self._asked_keys is None or self._stored_keys is None:
            return None
        gate = self._words
        if gate is None:
            if self._unjudged():
                gate = self._word_gate()
            else:
                self._word_gate_behind()
                return None
        if gate is None or not gate.on or not gate.ready:
            return None
        if len(gate) < len(self._entries):  # entries stored without put (a subclass's)
            self._sync_unput()
        groups = self._asked_keys(text)
        return None if groups is None else gate.candidates(groups)

    def _word_gate_behind(self) -> None:
        """Start building the word gate on a thread (once); where no thread can start, build it
        here."""
        with self._lock:  # (not the gate's lock: its builder holds that while it keys)
            if self._gate_started:
                return
            self._gate_started = True
        try:
            threading.Thread(target=self._word_gate, name="eoc-kv-words", daemon=True).start()
        except RuntimeError:  # no threads (a browser build of Python)
            self._word_gate()

    def _word_gate(self) -> WordGate | None:
        """Build the word gate over what memory holds (once; the first lookup that may use it):
        from here on each entry stored or dropped is keyed or removed as it happens. It says
        nothing (lets every query through) until it has keyed every entry held when built."""
        keys_of = self._stored_keys
        if keys_of is None:
            return None
        with self._gate_lock:  # one builder
            if self._words is not None:
                return self._words
            gate = WordGate(keys_of)
            gate.ready = False
            with self._lock:
                held = [(key, entry.prompt) for key, entry in self._entries.items()]
                if len(held) > gate.limit:
                    gate.off()
                self._words = gate
            gate.add_all(held)
            gate.ready = True
        return gate

    def will_remember(self, query: Query) -> None:
        """The cascade is asking the model ``query``, whose answer this stage will be asked to
        remember: an embedder that can (``prefetch``) starts embedding the prompt now."""
        prefetch = getattr(self.embedder, "prefetch", None)
        if callable(prefetch) and query.embedding is None:
            prefetch(query.prompt)

    def _sync_unput(self) -> None:
        """Fingerprint and index by terms the entries stored without ``put`` (a subclass loading
        its own rows); an entry a ``put`` halfway through already has both is left alone."""
        fingerprint, terms, fps = self._fingerprint, self._terms, self._fps
        with self._lock:
            for key, entry in list(self._entries.items()):
                self._bound_saving(entry)
                if fingerprint is not None and key not in fps.by_key:
                    fps.add(key, fingerprint(entry.prompt))
                    self._unworded.append(entry.prompt)
                if terms is not None and key not in self._needs:
                    self._index_terms(key, terms(entry.prompt))
                if self._words is not None and key not in self._words.held:
                    self._words.add(key, entry.prompt)

    def _query_vector(self, query: Query) -> object | None:
        if query.embedding is None:
            return None
        if self.dense:
            if len(query.embedding) != self.embedder.dim:
                from eoc.errors import BadEmbedding

                raise BadEmbedding(
                    f"embedding has {len(query.embedding)} dimensions; {self.embedder.name} has {self.embedder.dim}"
                )
            return query.embedding
        return from_dense(query.embedding, self.embedder.dim)

    def remember(
        self,
        query: Query,
        payload: str,
        origin: str = "",
        *,
        generation: Generation | None = None,
        ttl: float | str | None = None,
    ) -> str | None:
        """Store ``payload`` as the answer to ``query``'s prompt (what a store's ``put`` says:
        ``None`` once written, :data:`~eoc.stages.contract.PENDING` when a write waits), in the
        query's partition (:mod:`eoc.store.partition`: where the answer's finish reason puts it) or,
        for a plain question, the shared one."""
        part = query.partition
        tag = SHARED
        if part is not None:
            tag = part.tag_for(None if generation is None else generation.finish_reason)
        return self.put(
            query.prompt,
            payload,
            embedding=self._query_vector(query),
            origin=origin,
            generation=generation,
            ttl=ttl,
            partition=tag,
        )

    def embedded_text(self, prompt: str) -> str:
        """What a lookup embeds for ``prompt``: the question without a greeting or sign-off
        around it (:func:`eoc.stages.wrappers.unwrap`), with its slips of the stored questions'
        words repaired (:class:`eoc.stages.repair.StoredWords`). Only the search reads the
        repairs; the guard reads the words as written."""
        if self._unworded:
            with self._lock:
                pending, self._unworded = self._unworded, []
            for text in pending:
                self._vocab.add(text)
        return self._vocab.repair(unwrap(prompt))

    def _stale(self, entry: _Entry) -> bool:
        """Whether ``entry`` has expired; one that has is noted, and removed from the store
        once the lookup is done (:meth:`_remove_expired`): expiry, once seen, is final."""
        if self._aging and stale(entry.origin, entry.meta, self._clock(), self.ttl):
            self._expired.append(entry.key)  # one operation: atomic under the GIL
            return True
        return False

    def _clock(self) -> float:
        """Now, for expiry: the clock, but never earlier than a time this stage has read, so an
        entry once seen expired is not served again when the clock is set back."""
        t = self.now()
        if t < self._latest:
            return self._latest
        self._latest = t
        return t

    def _remove_expired(self) -> None:
        """Forget the entries lookups saw expired (a store that keeps a file deletes their rows
        too, so no later start with an earlier clock serves them)."""
        with self._lock:
            keys, self._expired = self._expired, []
        gone = [key for key in dict.fromkeys(keys) if self._drop(key)]
        if gone:
            self._delete_expired(gone)

    def _delete_expired(self, keys: list[str]) -> None:
        """Delete from the store what lookups saw expired, unless put again meanwhile: expiry,
        once seen, is final, whatever a later start's clock says."""
        with self._write_lock:
            gone = [k for k in keys if k not in self._entries]
            if gone:
                self.store.delete(gone)

    def forget_where(self, match: Match) -> int:
        """Forget every entry ``match(key, prompt, origin, meta)`` picks (:mod:`eoc.store.forget`),
        in the store (every row it picks, in a store that holds more than memory) and then in
        memory; how many."""
        with self._write_lock:
            gone = self.store.forget(self._matching(match), match)
            for key in gone:
                self._drop(key)
        return len(gone)

    def _matching(self, match: Match) -> list[str]:
        with self._lock:
            entries = list(self._entries.values())
        return [e.key for e in entries if match(e.key, e.prompt, e.origin, e.meta)]

    def _drop(self, key: str, only: _Entry | None = None) -> bool:
        """Forget one entry: its vector, fingerprint and terms too. True if it was there
        (``only``: if it is still that entry, not one the store sent since)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or (only is not None and entry is not only):
                return False
            self._entries.pop(key, None)
            if entry.partition:
                members = self._parted.get(entry.partition)
                if members is not None:
                    members.discard(key)
                    if not members:
                        del self._parted[entry.partition]
            self.index.remove(key)
            self._deferred.pop(key, None)
            self._fps.remove(key)
            if self._words is not None:
                self._words.remove(key)
            needs = self._needs.pop(key, None)
            self._bare.discard(key)
            for term in needs or ():
                keys = self._by_term.get(term)
                if keys is not None and key in keys:
                    self._by_term[term] = [k for k in keys if k != key]
            return True

    def load_pairs(self, pairs: Iterable[tuple[str, str]]) -> int:
        """Store many ``(prompt, answer)`` pairs no model made (the pack's, a fact file's): each
        checked before any is stored, those the store already holds with the same answer
        skipped, the rest embedded in a batch (where the embedder can) and written in one go
        before memory changes. Returns how many pairs were given.

        Raises:
            InputError: a bad pair (nothing is stored); StoreError: the write failed (memory
                and store are as they were).
        """
        try:
            items = [(p, a) for p, a in pairs]
        except (TypeError, ValueError):
            raise InputError("load_pairs takes an iterable of (prompt, answer) pairs") from None
        keys = [self.checked_key(p, a) for p, a in items]
        with self._write_lock:
            fresh = [
                (k, p, a)
                for k, (p, a) in zip(keys, items, strict=True)
                if not self.store.holds(k, a, "")
            ]
            if not fresh:
                return len(items)
            vecs = self._embed_all([p for _, p, _ in fresh])
            meta = new_meta(self.now(), None, None)
            rows = [KVRow(k, p, a, "", meta, v) for (k, p, a), v in zip(fresh, vecs, strict=True)]
            self.store.put(rows)
            for row in rows:
                self._keep(
                    keyed(SHARED, row.key), row.prompt, row.payload, row.vector, "", meta, SHARED
                )
        self._flush()
        return len(items)

    def _embed_all(self, prompts: list[str]) -> list[object]:
        """The vectors of ``prompts``, in one batch where the embedder can."""
        batch = getattr(self.embedder, "embed_batch", None)
        if batch is not None:
            return list(batch(prompts))
        return [self.embedder.embed(p) for p in prompts]

    def _flush(self) -> None:
        """Let an embedding cache write what it learned, once, after a bulk embedding."""
        flush = getattr(self.embedder, "flush", None)
        if callable(flush):
            flush()

    def defer_pairs(self, pairs: Iterable[tuple[str, str]], *, memory_only: bool = False) -> int:
        """Store many ``(prompt, answer)`` pairs now and embed them on the first lookup that
        needs a vector: an exact hit, or a question no stored one could match, never does. The
        knowledge pack is loaded this way, so a process whose first question is an exact hit
        does not load the embedding model. Each pair is checked as :meth:`put` checks it, all
        before the first is stored. A store that keeps pairs beyond memory writes them, with their
        vectors, at once (:meth:`load_pairs`), unless ``memory_only``: then they are kept in
        memory only, as with no store (a per-user store keeps answers, not the pack).
        """
        if not (memory_only or self.store.defers) or self._searcher is not None:
            return self.load_pairs(pairs)  # a searching store searches only what it holds
        items = list(pairs)
        fingerprint, terms, gate = self._fingerprint, self._terms, self._words
        staged = []
        for prompt, payload in items:
            key = self.checked_key(prompt, payload)
            fp = None if fingerprint is None else fingerprint(prompt)
            needs = None if terms is None else terms(prompt)
            keys = None if gate is None else gate.keys(prompt)
            staged.append((key, prompt, payload, fp, needs, keys))
        with self._lock:
            for key, prompt, payload, fp, needs, keys in staged:
                if needs is not None and key not in self._needs:
                    self._index_terms(key, needs)
                if self._words is not None:
                    self._words.add(key, prompt, keys if self._words is gate else None)
                if key not in self._entries:
                    self._unworded.append(prompt)
                entry = self._entries[key] = _Entry(key, prompt, payload)
                entry.local = True
                self._bound_saving(entry)
                if fingerprint is not None:
                    self._fps.add(key, fp)
                self._deferred[key] = prompt
        return len(items)

    def _index_deferred(self) -> None:
        """Embed and index what :meth:`defer_pairs` stored (once; a ``put`` since wins)."""
        if not self._deferred:
            return
        with self._defer_lock:
            pending = dict(self._deferred)
            if not pending:
                return
            keys = list(pending)
            vecs = self._embed_all([pending[k] for k in keys])
            with self._lock:
                for key, vec in zip(keys, vecs, strict=True):
                    if self._deferred.pop(key, None) is not None and key in self._entries:
                        self.index.add(key, vec)
            self._flush()

    def load_tsv(self, path: str | Path) -> int:
        """Load ``prompt<TAB>answer`` lines from a file; errors name the line.

        The file is read and checked whole before anything is stored, so a bad
        file changes nothing.
        """
        p = Path(path)
        text = read_fact_file(p)  # bounded; bad UTF-8 names its line
        pairs = read_pairs(text, source=str(p))
        for lineno, (prompt, answer) in pairs:
            try:
                self.checked_key(prompt, answer)
            except InputError as exc:
                raise FactFileError(exc.reason, source=str(p), line=lineno) from None
        return self.load_pairs(pair for _, pair in pairs)

    def close(self) -> None:
        """Close the store (a file, a pool); the memory store holds nothing open."""
        self.store.close()

    def lookup(self, query: Query) -> Answer | None:
        """The stored answer to ``query``'s prompt or to a similar one the guard allows.

        The answer's cost is the work-scaled kv estimate for the prompt's bytes and the stored
        candidates checked (scored at or above the threshold, then fingerprint and guard), unless
        the stage was built with a flat ``figure_uj``. An exact-key hit checks none.

        Only entries of the query's partition are candidates (:mod:`eoc.store.partition`): a plain
        question reads the shared partition; a query in a partition reads its own entries that
        fit its ``max_tokens``, and the shared partition's facts where it allows them.
        """
        return self._looked_up(query, self._exact, self._similar)

    def lookup_exact(self, query: Query) -> Answer | None:
        """The first half of :meth:`lookup`: the answer stored for ``query``'s own question
        (folded), with no embedding. The cascade asks this before the graph and
        :meth:`lookup_similar` after it (a question the graph answers is never embedded)."""
        return self._looked_up(query, self._exact)

    def lookup_similar(self, query: Query) -> Answer | None:
        """The second half of :meth:`lookup`: a similar stored question the guard allows (the
        exact one is not tried again)."""
        return self._looked_up(query, self._similar)

    def _looked_up(
        self, query: Query, *parts: Callable[[Query, Any], Answer | None]
    ) -> Answer | None:
        if self._polls:
            self.store.poll()
        try:
            vec: Any = self._query_vector(query)  # first: a bad embedding is an error, hit or not
            for part in parts:
                found = part(query, vec)
                if found is not None:
                    return found
            return None
        finally:
            if self._expired:
                self._remove_expired()

    def _exact(self, query: Query, vec: Any) -> Answer | None:
        part = query.partition
        admitted = self._admission(part)
        exact = self._exact_keys(part, fold(query.prompt))
        if self._searcher is not None:  # what the store holds now (a forget elsewhere counts)
            present = set(self._hold(self._searcher.fetch(exact)))
            exact = tuple(k for k in exact if k in present)  # in the order they are tried
        for key in exact:
            entry = self._entries.get(key)
            if entry is not None and not self._stale(entry):
                if (admitted is None or admitted(key)) and self._same_question(query, entry):
                    if self._confirmed(entry):
                        return self._answer(entry, query, 0)
        return None

    def _similar(self, query: Query, vec: Any) -> Answer | None:
        part = query.partition
        admitted = self._admission(part)
        if (
            part is not None
            and not part.facts
            and self._searcher is None
            and not any(t in self._parted for t in part.tags)
        ):
            return None  # nothing kept in its partition, and no fact may answer it
        entries, text, prepare = self._entries, query.prompt, self._prepare
        matches = None
        words: set[str] | None = None  # the word gate's candidates (None: it cannot say)
        embedded: str | None = None  # the text this lookup embedded (None: a vector given)
        if self._store_fp is not None and not self._store_fp(text):
            return None  # no stored prompt has its numbers and operators: nothing to embed
        fingerprint = self._fingerprint
        if fingerprint is not None:
            if len(self._fps.by_key) != len(entries):
                self._sync_unput()
            fp = fingerprint(text)
            if fp is not None and not self._fps.open and fp not in self._fps.groups:
                return None  # no stored prompt has its numbers and operators: nothing to embed
            matches = self._fps.matcher(fp)
        q_side: object = None if prepare is None else _UNKNOWN
        # a judge may serve a rewording the guard refused for its wording, where it could pay
        judged = not self._unjudged() and not self._judge_moot(query)
        if vec is None:
            if self._refuses_every is not None and self._refuses_every(text):
                return None  # the guard refuses it beside every stored prompt (a computation)
            if self._terms is not None and not self._may_pass(text):
                return None  # the guard would refuse every stored prompt: no need to embed
            if prepare is not None and self._words is not None and not self._unjudged():
                q_side = prepare(text)  # judged: the guard and the judge read it anyway
            words = self._word_candidates(text if q_side is None or q_side is _UNKNOWN else q_side)
        allows: Callable[[Any, Any], bool] = self._guard.allows  # texts, or prepare()'s analyses
        if admitted is not None:  # the partition first, then the fingerprints
            matches = _both(admitted, matches)
        similar = matches  # and the word gate's candidates: the guard may serve no other
        if words is not None:
            similar = _both(lambda k: str(k) in words, matches)
        checked = guarded = 0
        verdicts: dict[str, bool] = {}  # the guard's, by key: asked once per lookup

        def allowed(candidate: _Entry) -> bool:
            nonlocal q_side
            verdict = verdicts.get(candidate.key)
            if verdict is None:
                if prepare is None:
                    verdict = allows(text, candidate.prompt)
                else:
                    if q_side is _UNKNOWN:
                        q_side = prepare(text)
                    s_side = candidate.analysis
                    if s_side is None:
                        s_side = candidate.analysis = prepare(candidate.prompt)
                    verdict = allows(q_side, s_side)
                verdicts[candidate.key] = verdict
            return verdict

        def servable(k: Hashable) -> _Entry | None:
            """The entry of ``k`` if it may be served for its own sake (this partition, the
            fingerprints and word keys, unexpired, finished), before the guard."""
            candidate = entries.get(str(k))
            if candidate is None or (similar is not None and not similar(k)):
                return None  # another partition, or the fingerprints or word keys rule it out
            if self._stale(candidate):
                return None  # expired: never served
            if candidate.origin and not finished(candidate.meta):
                return None  # cut at max_tokens, or of unknown finish: its own question only
            return candidate

        if vec is None:
            if words is not None and not judged:
                if not words:
                    return None  # no stored question accounts for every word it asks
                if len(words) <= GUARD_FIRST and not any(
                    (c := servable(k)) is not None and allowed(c) for k in words
                ):
                    return None  # the guard refuses every one that does: nothing to embed
            embedded = self.embedded_text(text)
            vec = self.embedder.embed(embedded)

        def accept(k: Hashable) -> bool:
            nonlocal checked, guarded
            checked += 1
            if guarded >= MAX_GUARD_CHECKS:
                return False
            candidate = servable(k)
            if candidate is None:
                return False
            guarded += 1
            return allowed(candidate)

        self._index_deferred()
        found = self._nearest(vec, self.threshold, 1, accept, similar, part)
        if not found:
            if not judged:
                return None
            return self._judged(query, vec, admitted, matches, q_side, checked, embedded)
        entry = entries.get(str(found[0][1]))
        if entry is None or not self._confirmed(entry):
            return None
        return self._answer(entry, query, checked, embedded=embedded)

    def _confirmed(self, entry: _Entry) -> bool:
        """Whether the store still holds ``entry`` as memory does (always, for a store that
        cannot say: memory, SQLite, which looks for other processes' forgets when polled, or
        PostgreSQL while it is down). One it no longer holds, or holds with another answer, is dropped from memory
        and not served: a miss (the new answer arrives as the store announces it)."""
        current = self._current
        if current is None or entry.local:
            return True  # (a pair kept in memory only has no row to confirm)
        now = current([entry.key])
        if now is None or now.get(entry.key) == (entry.payload, entry.origin):
            return True
        self._drop(entry.key, only=entry)
        return False

    def _judged(
        self,
        query: Query,
        vec: Any,
        admitted: Callable[[Hashable], bool] | None,
        matches: Callable[[Hashable], bool] | None,
        q_side: object,
        checked: int,
        embedded: str | None = None,
    ) -> Answer | None:
        """After a miss: the judge's answer (:mod:`eoc.stages.judging`) from the best stored
        questions at or above its floor that the guard refused only for want of evidence (a
        changed word, another wording: :func:`~eoc.stages.guard.judgeable`) or that only the
        cosine kept out; never one refused for a decisive difference, another partition's, an
        expired one or a cut answer."""
        judging = self.judging
        assert judging is not None
        if judging.mode == "off":
            return None
        entries, prepare = self._entries, self._prepare
        refusal: Callable[[Any, Any], str] | None = getattr(self._guard, "refusal", None)
        if refusal is None:
            return None  # a guard that cannot say why it refused: nothing to judge

        def candidate(k: Hashable) -> bool:
            e = entries.get(str(k))
            return (
                e is not None
                and (admitted is None or admitted(k))  # its partition (matches holds it too)
                and (matches is None or matches(k))
                and not self._stale(e)
                and not (e.origin and not finished(e.meta))
            )

        found = self._nearest(
            vec, judging.floor, judging.candidates, candidate, None, query.partition
        )
        if not found:
            return None
        if prepare is not None and q_side is _UNKNOWN:
            q_side = prepare(query.prompt)
        folded = fold(query.prompt)
        for cosine, k in found:
            entry = entries.get(str(k))
            if entry is None:
                continue
            if prepare is None:
                reason = refusal(query.prompt, entry.prompt)
            else:
                if entry.analysis is None:
                    entry.analysis = prepare(entry.prompt)
                reason = refusal(q_side if q_side is not None else query.prompt, entry.analysis)
            if reason and not judgeable(reason):
                continue  # a decisive difference: never the judge's to decide
            if not self._confirmed(entry):
                continue
            saving = None
            if self.saving is not None:
                found_saving = self.saving(query, self._answer(entry, query, 0))
                saving = None if found_saving is None else found_saving.uj
            verdict = judging.decide(
                (folded, str(k), entry.prompt),
                query.prompt,
                entry.prompt,
                reason=str(reason),
                cosine=float(cosine),
                saving_uj=saving,
            )
            if verdict is not None and verdict.same:
                return self._answer(entry, query, checked, verdict, embedded)
        return None

    def explain(
        self, query: Query, limit: int = 5, floor: float = EXPLAIN_FLOOR
    ) -> list[dict[str, object]]:
        """Why the nearest stored questions were served or refused for ``query``: up to ``limit``
        of them with cosine >= ``floor``, best first, each with its cosine and ``reason`` (""
        for the one served). The query is embedded even when the term check would have spared it.
        """
        admitted = self._admission(query.partition)
        for key in self._exact_keys(query.partition, fold(query.prompt)):
            entry = self._entries.get(key)
            if (
                entry is not None
                and (admitted is None or admitted(key))
                and self._same_question(query, entry)
            ):
                return [{"stored": entry.prompt, "cosine": 1.0, "served": True, "reason": ""}]
        vec: Any = self._query_vector(query)
        if vec is None:
            vec = self.embedder.embed(self.embedded_text(query.prompt))
        refusal = getattr(self._guard, "refusal", None)
        out: list[dict[str, object]] = []
        served = False
        self._index_deferred()
        for score, k in self._nearest(
            vec, min(floor, self.threshold), limit, None, None, query.partition
        ):
            candidate = self._entries.get(str(k))
            if candidate is None or (admitted is not None and not admitted(k)):
                continue  # another partition's: never a candidate for this query
            if score < self.threshold:
                reason = f"cosine {score:.2f} is below the threshold {self.threshold:g}"
            elif refusal is not None:
                reason = refusal(query.prompt, candidate.prompt)
            else:
                reason = (
                    ""
                    if self._guard.allows(query.prompt, candidate.prompt)
                    else "the guard refused it"
                )
            if not reason and served:
                reason = "a better candidate was served"
            served = served or not reason
            out.append(
                {
                    "stored": candidate.prompt,
                    "cosine": round(score, 4),
                    "served": not reason,
                    "reason": reason,
                }
            )
        return out

    def _admission(self, part: KvPartition | None) -> Callable[[Hashable], bool] | None:
        """Which stored keys may answer a query of partition ``part`` (:mod:`eoc.store.partition`);
        ``None``: every one (a plain question, and no partition holds anything)."""
        entries = self._entries
        if part is None:
            if not self._parted and self._searcher is None:
                return None

            def shared(k: Hashable) -> bool:
                e = entries.get(str(k))
                return e is not None and not e.partition

            return shared

        def mine(k: Hashable) -> bool:
            e = entries.get(str(k))
            return e is not None and part.admits(e.partition, e.origin, e.meta, e.payload)

        return mine

    @staticmethod
    def _same_question(query: Query, entry: _Entry) -> bool:
        """Whether an entry found under the query's key asks what the query asks: the key folds
        only what never changes a question (:func:`eoc.text.forms.fold`), and the numbers and
        symbols, which always decide, are compared as the guard compares them
        (:func:`eoc.stages.guard.decisive_difference`), so no key, however it was made, serves
        "7*8!" the answer to "7*8"."""
        return query.prompt == entry.prompt or not decisive_difference(query.prompt, entry.prompt)

    @staticmethod
    def _exact_keys(part: KvPartition | None, folded: str) -> tuple[str, ...]:
        """The keys an exact hit for a question folded as ``folded`` may be stored under."""
        plain = keyed(SHARED, folded)
        if part is None:
            return (plain,)
        keys = tuple(keyed(tag, folded) for tag in part.tags)
        return (*keys, plain) if part.facts else keys

    def _answer(
        self,
        entry: _Entry,
        query: Query,
        candidates: int,
        verdict: Verdict | None = None,
        embedded: str | None = None,
    ) -> Answer:
        generation = replayed(entry.origin, entry.meta)
        if self._flat and verdict is None:
            return Answer(entry.payload, None, entry.origin, meta=entry.meta, generation=generation)
        cost = self.figure if self._flat else self._work(query, candidates, embedded)
        if verdict is not None:  # the basis says a judge decided, and its joules are in it
            spent = 0 if verdict.cost is None else verdict.cost.uj
            cost = JouleCost.estimated(cost.uj + spent, f"{cost.basis}; {verdict.note()}")
        return Answer(entry.payload, cost, entry.origin, meta=entry.meta, generation=generation)

    def _work(self, query: Query, candidates: int, embedded: str | None) -> JouleCost:
        """The ESTIMATED figure of a hit: :data:`~eoc.stages.base.WORK_RATES`' per-byte rate
        (the core's hashed embedder's), unless this lookup embedded the question with an
        embedder that says what that cost (``embed_estimate``: MiniLM's multiply-adds at its
        runtime's constant), which then replaces the per-byte share."""
        said = None
        if embedded is not None and self._embed_estimate is not None:
            said = self._embed_estimate(embedded)
        if not isinstance(said, JouleCost):
            return work_estimate(Stage.KV, nbytes=query.size, candidates=candidates)
        search = work_estimate(Stage.KV, candidates=candidates, rates=SEARCH_RATES)
        return JouleCost.estimated(search.uj + said.uj, f"{search.basis}; {said.basis}")

    def __bool__(self) -> bool:
        """A stage is a stage, empty or not (its length may be a store's count)."""
        return True

    def __len__(self) -> int:
        """Entries stored: in memory, or in a searching store (a count it makes)."""
        if self._searcher is not None:
            return self._searcher.count()
        return len(self._entries)


__all__ = ["DEFAULT_THRESHOLD", "MAX_GUARD_CHECKS", "KVStage", "finished"]
