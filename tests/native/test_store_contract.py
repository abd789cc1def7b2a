"""The store contracts (eoc.store.CacheStore and KVStore), run against every store eoc has:
memory, SQLite and PostgreSQL (a throwaway server the tests start). A new store is one module
that passes this suite: add a backend below.

What each store must do, seen through the cache stage that uses it: keep what it was given
with its record, serve the newest answers within the stage's bounds after a restart, forget
what a forget picks (everywhere it holds it), never serve an expired answer again, leave
memory as it was when a write fails, hand no damaged row to the stage, and let another
process sharing it see a forget."""

from __future__ import annotations

import itertools
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from eoc.errors import StoreError
from eoc.query import Query
from eoc.stages.cache import CacheStage
from eoc.stages.embed import HashedNgramEmbedder
from eoc.stages.kv import KVStage
from eoc.store import (
    CacheStore,
    KVStore,
    MemoryCacheStore,
    MemoryKVStore,
    MemoryTripleRows,
    TripleRows,
)
from eoc.store.entry import Generation
from eoc.store.triples import TripleStore

ORIGIN = '{"model":"contract"}'
_names = itertools.count()


@dataclass
class Backend:
    """How the suite opens one store: ``open()`` a store at one place (again: the same place,
    as a restart or another process would), ``tamper(qid)`` change a row outside eoc."""

    name: str
    open: Callable[[], CacheStore]
    persistent: bool
    tamper: Callable[[str], None] | None = None
    open_kv: Callable[[], KVStore] = MemoryKVStore
    tamper_kv: Callable[[str], None] | None = None
    open_triples: Callable[[], TripleRows] = MemoryTripleRows
    tamper_triple: Callable[[str], None] | None = None

    def stage(self, max_entries: int = 100, **kw: Any) -> CacheStage:
        return CacheStage(max_entries, store=self.open(), **kw)

    def kv(self, embedder: Any = None, **kw: Any) -> KVStage:
        return KVStage(store=self.open_kv(), embedder=embedder, **kw)


def _sqlite(tmp_path: Path) -> Backend:
    from eoc.store.sqlite import SqliteCacheStore, SqliteKVStore, SqliteTripleRows

    db = tmp_path / "contract.db"

    def tamper(qid: str) -> None:
        with closing(sqlite3.connect(db, isolation_level=None)) as c:
            c.execute("UPDATE cache SET payload = 'changed outside eoc' WHERE qid = ?", (qid,))

    def tamper_kv(key: str) -> None:
        with closing(sqlite3.connect(db, isolation_level=None)) as c:
            c.execute("UPDATE kv SET payload = 'changed outside eoc' WHERE key = ?", (key,))

    def tamper_triple(subject: str) -> None:
        with closing(sqlite3.connect(db, isolation_level=None)) as c:
            c.execute("UPDATE triples SET o = 'changed outside eoc' WHERE s = ?", (subject,))

    return Backend(
        "sqlite",
        lambda: SqliteCacheStore(db),
        True,
        tamper,
        lambda: SqliteKVStore(db),
        tamper_kv,
        lambda: SqliteTripleRows(db),
        tamper_triple,
    )


def _postgres(request: pytest.FixtureRequest) -> Backend:
    pytest.importorskip("psycopg")
    pytest.importorskip("psycopg_pool")
    import psycopg

    from eoc_native.store.postgres import PgCacheStore, PgKVStore, PgStore, PgTripleRows

    server = request.getfixturevalue("postgres")
    url = str(server.new_database(f"eoc_contract_{next(_names)}"))

    def tamper(qid: str) -> None:
        with psycopg.connect(url, autocommit=True) as c:
            c.execute("UPDATE eoc_cache SET payload = 'changed outside eoc' WHERE qid = %s", (qid,))

    def tamper_kv(key: str) -> None:
        with psycopg.connect(url, autocommit=True) as c:
            c.execute("UPDATE eoc_kv SET payload = 'changed outside eoc' WHERE key = %s", (key,))

    def shared() -> PgStore:
        store = PgStore(url)
        store.start()  # listening: another replica's writes and forgets reach this one
        return store

    def tamper_triple(subject: str) -> None:
        with psycopg.connect(url, autocommit=True) as c:
            c.execute("UPDATE eoc_triples SET o = 'changed outside eoc' WHERE s = %s", (subject,))

    return Backend(
        "postgresql",
        lambda: PgCacheStore(shared()),
        True,
        tamper,
        lambda: PgKVStore(shared()),
        tamper_kv,
        lambda: PgTripleRows(shared()),
        tamper_triple,
    )


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "memory":
        yield Backend("memory", MemoryCacheStore, False)
    elif request.param == "sqlite":
        yield _sqlite(tmp_path)
    else:
        yield _postgres(request)


def _answer(stage: CacheStage | KVStage, question: str) -> str | None:
    found = stage.lookup(Query(question))
    return None if found is None else found.payload


def test_it_is_a_cache_store(backend: Backend) -> None:
    store = backend.open()
    try:
        assert isinstance(store, CacheStore)
        assert store.damaged == []
    finally:
        store.close()


def test_an_answer_is_kept_with_its_record_and_survives_a_restart(backend: Backend) -> None:
    made = Generation("stop", (12, 3), 0.25)
    with_ttl = Query("the capital of Japan")
    first = backend.stage()
    assert first.remember(Query("the tallest mountain"), "Everest") is None
    assert first.remember(Query("a story"), "once upon a time", ORIGIN, generation=made) is None
    first.remember(with_ttl, "Tokyo", ttl=3600)
    hit = first.lookup(Query("a story"))
    assert hit is not None and hit.origin == ORIGIN and hit.generation == made
    first.close()
    if not backend.persistent:
        return
    again = backend.stage()
    try:
        assert _answer(again, "the tallest mountain") == "Everest"
        hit = again.lookup(Query("a story"))
        assert hit is not None and hit.payload == "once upon a time"
        assert hit.origin == ORIGIN and hit.generation == made  # what made it, and how
        kept = again.lookup(with_ttl)
        assert kept is not None and kept.meta is not None and kept.meta.expires_at is not None
    finally:
        again.close()


def test_a_restart_serves_the_newest_answers_within_the_bounds(backend: Backend) -> None:
    first = backend.stage(max_entries=3)
    for i in range(5):
        first.remember(Query(f"question {i}"), f"answer {i}")
    assert len(first) == 3 and _answer(first, "question 0") is None
    first.close()
    if not backend.persistent:
        return
    again = backend.stage(max_entries=3)
    try:
        assert [_answer(again, f"question {i}") for i in range(5)] == [
            None,
            None,
            "answer 2",
            "answer 3",
            "answer 4",
        ]
    finally:
        again.close()


def test_a_forget_is_kept_through_a_restart(backend: Backend) -> None:
    first = backend.stage()
    for q, a, origin in [
        ("keep me", "kept", ""),
        ("forget me", "forgotten", ""),
        ("a model wrote this", "a model's answer", ORIGIN),
        ("a model wrote that", "another of its answers", ORIGIN),
    ]:
        first.remember(Query(q), a, origin)
    assert first.forget(Query("forget me")) is True

    def match(_key: str, _prompt: str | None, origin: str, _meta: Any) -> bool:
        return origin == ORIGIN  # every answer the model made

    assert first.forget_where(match) == 2
    assert _answer(first, "keep me") == "kept" and _answer(first, "a model wrote this") is None
    first.close()
    if not backend.persistent:
        return
    again = backend.stage()
    try:
        assert _answer(again, "keep me") == "kept"
        for gone in ("forget me", "a model wrote this", "a model wrote that"):
            assert _answer(again, gone) is None, gone
        again.clear()
        assert _answer(again, "keep me") is None
    finally:
        again.close()
    cleared = backend.stage()
    try:
        assert len(cleared) == 0
    finally:
        cleared.close()


def test_a_forget_reaches_rows_memory_no_longer_holds(backend: Backend) -> None:
    """A store may hold more than one process's memory (PostgreSQL keeps what a replica evicts
    for the others): a forget removes every row it picks, so a restart with room for more
    serves none of them."""
    small = backend.stage(max_entries=1)
    small.remember(Query("an evicted answer"), "evicted", ORIGIN)
    small.remember(Query("a held answer"), "held", ORIGIN)
    assert _answer(small, "an evicted answer") is None

    def match(_key: str, _prompt: str | None, origin: str, _meta: Any) -> bool:
        return origin == ORIGIN

    small.forget_where(match)
    small.close()
    if not backend.persistent:
        return
    roomy = backend.stage(max_entries=100)
    try:
        assert _answer(roomy, "an evicted answer") is None
        assert _answer(roomy, "a held answer") is None
    finally:
        roomy.close()


def test_an_answer_seen_expired_is_never_served_again(backend: Backend) -> None:
    now = [1_000_000.0]
    first = backend.stage()
    first.now = lambda: now[0]
    first.remember(Query("a short-lived answer"), "soon stale", ttl=60)
    now[0] += 120
    assert first.lookup(Query("a short-lived answer")) is None  # seen expired: deleted
    first.close()
    if not backend.persistent:
        return
    time.sleep(0.05)
    again = CacheStage(100, store=backend.open())  # its clock reads the real time: far earlier
    try:
        assert _answer(again, "a short-lived answer") is None
    finally:
        again.close()


def test_an_answer_expired_while_nothing_ran_is_not_served_at_start(backend: Backend) -> None:
    first = backend.stage()
    first.now = lambda: time.time() - 3600  # written an hour ago, to live a minute
    first.remember(Query("an answer that expired overnight"), "stale", ttl=60)
    first.remember(Query("an answer that lives on"), "fresh")
    first.close()
    if not backend.persistent:
        return
    again = backend.stage()
    try:
        assert len(again) == 1  # not even loaded: it takes no memory
        assert _answer(again, "an answer that expired overnight") is None
        assert _answer(again, "an answer that lives on") == "fresh"
    finally:
        again.close()


class _Refusing:
    """A store whose writes fail (a disk full, a database gone); all else is the store's own."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def put(self, *rows: Any) -> None:
        raise StoreError("the store refused the write (as a full disk would)")


def test_a_write_the_store_refuses_leaves_memory_as_it_was(backend: Backend) -> None:
    store = backend.open()
    stage = CacheStage(2, store=_Refusing(store))  # type: ignore[arg-type]
    try:
        with pytest.raises(StoreError):
            stage.remember(Query("never kept"), "refused")
        assert len(stage) == 0 and _answer(stage, "never kept") is None
    finally:
        store.close()


def test_a_row_changed_outside_eoc_is_never_served(backend: Backend) -> None:
    if backend.tamper is None:
        pytest.skip("memory holds no row another program could change")
    first = backend.stage()
    first.remember(Query("the true answer"), "true")
    first.remember(Query("an untouched answer"), "untouched")
    first.close()
    backend.tamper(Query("the true answer").id)
    again = backend.stage()
    try:
        assert _answer(again, "the true answer") is None
        assert _answer(again, "an untouched answer") == "untouched"
        assert len(again.damaged) == 1
    finally:
        again.close()


def test_another_process_sharing_the_store_drops_what_one_forgot(backend: Backend) -> None:
    if not backend.persistent:
        pytest.skip("memory is one process's")
    one, two = backend.stage(), backend.stage()
    try:
        one.remember(Query("a shared answer"), "shared", ORIGIN)
        if _answer(two, "a shared answer") is None:  # SQLite: the other reads it at its start
            two.close()
            two = backend.stage()
        assert _answer(two, "a shared answer") == "shared"
        one.forget(Query("a shared answer"))
        deadline = time.monotonic() + 3
        while _answer(two, "a shared answer") is not None:
            assert time.monotonic() < deadline, "the other process still serves it"
            time.sleep(0.05)
    finally:
        one.close()
        two.close()


# -- the kv store -------------------------------------------------------------------------


class _Counting(HashedNgramEmbedder):
    """The core's embedder, counting what it embeds (a restart must embed nothing stored)."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []

    def embed(self, text: str) -> Any:
        self.embedded.append(text)
        return super().embed(text)


def test_it_is_a_kv_store(backend: Backend) -> None:
    store = backend.open_kv()
    try:
        assert isinstance(store, KVStore)
        assert store.damaged == []
    finally:
        store.close()


def test_a_pair_and_its_vector_survive_a_restart(backend: Backend) -> None:
    made = Generation("stop", (9, 2), 0.5)
    first = backend.kv()
    assert first.put("what is the boiling point of water", "100 °C") is None
    first.put("tell me a joke about cats", "a cat walks in", origin=ORIGIN, generation=made)
    first.close()
    if not backend.persistent:
        return
    counting = _Counting()
    again = backend.kv(counting)
    try:
        assert counting.embedded == []  # the vectors were stored: nothing embedded again
        assert _answer(again, "what is the boiling point of water") == "100 °C"
        assert _answer(again, "What is the boiling point of water?") == "100 °C"
        hit = again.lookup(Query("tell me a joke about cats"))
        assert hit is not None and hit.origin == ORIGIN and hit.generation == made
    finally:
        again.close()


def test_a_bulk_load_skips_what_the_store_holds(backend: Backend) -> None:
    pairs = [("what is the capital of peru", "Lima"), ("what is the capital of chile", "Santiago")]
    first = backend.kv()
    assert first.load_pairs(pairs) == 2
    first.close()
    if not backend.persistent:
        return
    counting = _Counting()
    again = backend.kv(counting)
    try:
        assert again.load_pairs([*pairs, ("what is the capital of bolivia", "Sucre")]) == 3
        assert counting.embedded == ["what is the capital of bolivia"]  # only the new pair
        assert _answer(again, "what is the capital of chile") == "Santiago"
    finally:
        again.close()


def test_a_kv_forget_is_kept_through_a_restart(backend: Backend) -> None:
    first = backend.kv()
    first.put("how do I reset my router", "hold the button for ten seconds", origin=ORIGIN)
    first.put("what port does ssh use", "22")

    def match(_key: str, _prompt: str | None, origin: str, _meta: Any) -> bool:
        return origin == ORIGIN

    assert first.forget_where(match) == 1
    assert _answer(first, "how do I reset my router") is None
    first.close()
    if not backend.persistent:
        return
    again = backend.kv()
    try:
        assert _answer(again, "how do I reset my router") is None
        assert _answer(again, "what port does ssh use") == "22"
    finally:
        again.close()


def test_a_kv_pair_expired_is_never_served_again(backend: Backend) -> None:
    first = backend.kv()
    first.now = lambda: time.time() - 3600  # written an hour ago, to live a minute
    first.put("what is the weather today", "sunny", ttl=60)
    first.put("what is the speed of light", "299,792,458 m/s")
    first.close()
    if not backend.persistent:
        return
    again = backend.kv()
    try:
        assert len(again) == 1  # not even loaded
        assert _answer(again, "what is the weather today") is None
        assert _answer(again, "what is the speed of light") == "299,792,458 m/s"
    finally:
        again.close()


def test_a_kv_write_the_store_refuses_leaves_memory_as_it_was(backend: Backend) -> None:
    store = backend.open_kv()
    kv = KVStage(store=_Refusing(store))  # type: ignore[arg-type]
    try:
        with pytest.raises(StoreError):
            kv.put("a question never kept", "refused")
        with pytest.raises(StoreError):
            kv.load_pairs([("another question never kept", "refused too")])
        assert len(kv) == 0 and _answer(kv, "a question never kept") is None
    finally:
        store.close()


def test_a_kv_row_changed_outside_eoc_is_never_served(backend: Backend) -> None:
    if backend.tamper_kv is None:
        pytest.skip("memory holds no row another program could change")
    first = backend.kv()
    first.put("what is the true answer", "true")
    first.put("what is the untouched answer", "untouched")
    first.close()
    backend.tamper_kv("what is the true answer")
    again = backend.kv()
    try:
        assert _answer(again, "what is the true answer") is None
        assert _answer(again, "what is the untouched answer") == "untouched"
        assert len(again.damaged) == 1
    finally:
        again.close()


def test_another_process_sharing_the_kv_drops_what_one_forgot(backend: Backend) -> None:
    if not backend.persistent:
        pytest.skip("memory is one process's")
    one = backend.kv()
    one.put("what is our refund policy", "thirty days", origin=ORIGIN)
    two = backend.kv()
    try:
        assert _answer(two, "what is our refund policy") == "thirty days"
        one.forget_where(lambda _k, _p, origin, _m: origin == ORIGIN)
        deadline = time.monotonic() + 3
        while _answer(two, "what is our refund policy") is not None:
            assert time.monotonic() < deadline, "the other process still serves it"
            time.sleep(0.05)
    finally:
        one.close()
        two.close()


# -- the graph's triples -------------------------------------------------------------------


def test_triples_survive_a_restart_and_a_repeat_is_not_new(backend: Backend) -> None:
    first = TripleStore(rows=backend.open_triples())
    assert first.add_all([("Peru", "capital", "Lima"), ("Chile", "capital", "Santiago")]) == 2
    assert first.add("peru", "Capital", "lima") is False  # matched on normalized labels
    first.close()
    if not backend.persistent:
        return
    again = TripleStore(rows=backend.open_triples())
    try:
        assert again.objects("Peru", "capital") == ["Lima"] and len(again) == 2
        assert (
            again.add_all([("Chile", "capital", "Santiago"), ("Bolivia", "capital", "Sucre")]) == 1
        )
    finally:
        again.close()


def test_triples_the_store_refuses_are_not_added(backend: Backend) -> None:
    rows = backend.open_triples()
    store = TripleStore(rows=_Refusing(rows))  # type: ignore[arg-type]
    try:
        with pytest.raises(StoreError):
            store.add("Peru", "capital", "Lima")
        assert len(store) == 0 and store.objects("Peru", "capital") == []
    finally:
        rows.close()


def test_a_triple_changed_outside_eoc_is_never_served(backend: Backend) -> None:
    if backend.tamper_triple is None:
        pytest.skip("memory holds no row another program could change")
    first = TripleStore(
        [("Peru", "capital", "Lima"), ("Chile", "capital", "Santiago")], rows=backend.open_triples()
    )
    first.close()
    backend.tamper_triple("Peru")
    again = TripleStore(rows=backend.open_triples())
    try:
        assert again.objects("Peru", "capital") == []
        assert again.objects("Chile", "capital") == ["Santiago"]
        assert len(again.damaged) == 1
    finally:
        again.close()


def test_a_triple_a_rows_store_hands_over_is_checked_as_any_other() -> None:
    """Whatever a rows store reads (a store of another program's making), the graph checks each
    triple as it checks one added: a bad term is listed damaged, never served."""
    rows = MemoryTripleRows()
    rows.rows = lambda: [("Pe\x00ru", "capital", "Lima", 7), ("Chile", "capital", "Santiago", 8)]  # type: ignore[method-assign]
    store = TripleStore(rows=rows)
    assert len(store) == 1 and store.objects("Chile", "capital") == ["Santiago"]
    [(table, rowid, reason)] = store.damaged
    assert (table, rowid) == ("triples", 7) and "subject" in reason
