"""The cache store contract (eoc.store.CacheStore), run against every store eoc has: memory,
SQLite and PostgreSQL (a throwaway server the tests start). A new store is one module that
passes this suite: add a backend below.

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

from eoc.entry import Generation
from eoc.errors import StoreError
from eoc.query import Query
from eoc.stages.cache import CacheStage
from eoc.store import CacheRow, CacheStore, MemoryCacheStore

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

    def stage(self, max_entries: int = 100, **kw: Any) -> CacheStage:
        return CacheStage(max_entries, store=self.open(), **kw)


def _sqlite(tmp_path: Path) -> Backend:
    from eoc.persist import SqliteCacheStore

    db = tmp_path / "contract.db"

    def tamper(qid: str) -> None:
        with closing(sqlite3.connect(db, isolation_level=None)) as c:
            c.execute("UPDATE cache SET payload = 'changed outside eoc' WHERE qid = ?", (qid,))

    return Backend("sqlite", lambda: SqliteCacheStore(db), True, tamper)


def _postgres(request: pytest.FixtureRequest) -> Backend:
    pytest.importorskip("psycopg")
    pytest.importorskip("psycopg_pool")
    import psycopg

    from eoc_native.store.postgres import PgCacheStore, PgStore

    server = request.getfixturevalue("postgres")
    url = str(server.new_database(f"eoc_contract_{next(_names)}"))

    def tamper(qid: str) -> None:
        with psycopg.connect(url, autocommit=True) as c:
            c.execute("UPDATE eoc_cache SET payload = 'changed outside eoc' WHERE qid = %s", (qid,))

    def opened() -> PgCacheStore:
        shared = PgStore(url)
        shared.start()  # listening: another replica's writes and forgets reach this one
        return PgCacheStore(shared)

    return Backend("postgresql", opened, True, tamper)


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "memory":
        yield Backend("memory", MemoryCacheStore, False)
    elif request.param == "sqlite":
        yield _sqlite(tmp_path)
    else:
        yield _postgres(request)


def _answer(stage: CacheStage, question: str) -> str | None:
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
    """A store whose writes fail (a disk full, a database gone)."""

    def __init__(self, inner: CacheStore) -> None:
        self.inner = inner
        self.damaged = inner.damaged
        self.polls = inner.polls

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def put(self, row: CacheRow, evicted: Any) -> str | None:
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
