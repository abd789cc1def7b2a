"""A forget on one replica returns once every live replica has dropped what it forgot (no
replica serves it from memory after the forget returns), in bounded time when one does not
answer, and a replica that was deaf when it was announced drops it when it reconnects (on a
throwaway PostgreSQL server the tests start)."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest

pytest.importorskip("psycopg")
pytest.importorskip("psycopg_pool")

import psycopg

from eoc.errors import StoreUnusable
from eoc.query import Query
from eoc.stages.cache import CacheStage
from eoc.store.entry import Generation
from eoc_native.store.postgres import PgCache, PgKV, PgStore
from tests.helpers import wait_for

_names = itertools.count()
Q = "who wrote the waste land"
MADE = '{"model":"stand-in"}'


@pytest.fixture
def url(postgres: Any) -> str:
    return str(postgres.new_database(f"eoc_forgets_{next(_names)}"))


def broken() -> None:
    """A replica's prune that cannot read the table: it never confirms a forget."""
    raise StoreUnusable("B cannot read the table now")


def two(url: str) -> tuple[PgStore, CacheStage, PgStore, CacheStage]:
    """Two replicas' caches over one database, both listening, B holding A's answer."""
    a, b = PgStore(url), PgStore(url)
    cache_a, cache_b = PgCache(a), PgCache(b)
    a.start()
    b.start()
    cache_a.remember(Query(Q), "T. S. Eliot", MADE, generation=Generation(finish_reason="stop"))
    wait_for(lambda: cache_b.lookup(Query(Q)) is not None, 5.0)
    return a, cache_a, b, cache_b


def slowed(store: PgStore, table: str, seconds: float) -> None:
    """``store`` takes ``seconds`` more to drop what another replica forgot."""
    prune = store._pruners[table]

    def slow() -> None:
        time.sleep(seconds)
        prune()

    store._pruners[table] = slow


def test_a_forget_returns_once_every_listening_replica_has_dropped_it(url: str) -> None:
    a, cache_a, b, cache_b = two(url)
    try:
        slowed(b, "cache", 0.3)
        t0 = time.monotonic()
        assert cache_a.forget(Query(Q))
        took = time.monotonic() - t0
        assert cache_b.lookup(Query(Q)) is None  # at once: no window on B
        assert took >= 0.3 and a.forgets.unconfirmed == []
    finally:
        a.close()
        b.close()


def test_the_forgetting_replica_serves_nothing_while_it_waits_and_a_kv_forget_waits_too(
    url: str,
) -> None:
    a, cache_a, b, cache_b = two(url)
    kv_a, kv_b = PgKV(a), PgKV(b)
    try:
        seen_on_a: list[object] = []
        prune = b._pruners["cache"]

        def slow() -> None:  # while A waits for B, A's own memory has let go already
            seen_on_a.append(cache_a.lookup(Query(Q)))
            time.sleep(0.2)
            prune()

        b._pruners["cache"] = slow
        assert cache_a.forget(Query(Q))
        assert seen_on_a == [None] and cache_b.lookup(Query(Q)) is None
        kv_a.put("what is the capital of peru", "Lima", origin=MADE)
        wait_for(lambda: kv_b.lookup(Query("what is the capital of peru")) is not None, 5.0)
        slowed(b, "kv", 0.2)
        kv_a.forget_where(lambda key, prompt, origin, meta: "peru" in prompt)
        assert not any("peru" in e.prompt for e in list(kv_b._entries.values()))
    finally:
        a.close()
        b.close()


def test_a_replica_that_does_not_answer_is_named_and_the_forget_returns_in_bounded_time(
    url: str,
) -> None:
    a, cache_a, b, _ = two(url)
    try:
        b._pruners["cache"] = broken
        a.forgets.wait_s = 0.3
        t0 = time.monotonic()
        assert cache_a.forget(Query(Q))
        assert time.monotonic() - t0 < 2.0
        assert a.forgets.unconfirmed == [b.replica] and a.forgets.timeouts == 1
    finally:
        a.close()
        b.close()


def forgets_without_waiting(a: PgStore, cache_a: CacheStage) -> None:
    """A's forget returns well before its 1.5 s wait, every replica it waits for confirmed."""
    a.forgets.wait_s = 1.5
    t0 = time.monotonic()
    assert cache_a.forget(Query(Q))
    assert time.monotonic() - t0 < 1.0 and a.forgets.unconfirmed == []


def test_a_replica_closed_or_killed_is_not_waited_for(url: str) -> None:
    a, cache_a, b, _ = two(url)
    c = PgStore(url)
    try:
        PgCache(c)
        c.start()
        b.close()  # closed: its rows go
        with psycopg.connect(url) as conn:
            left = conn.execute(
                "SELECT count(*) FROM eoc_replicas WHERE replica = %s", (b.replica,)
            ).fetchone()
        assert left == (0,)
        c._stop.set()  # c's listener ends without a word, its heartbeat fresh (a kill -9)
        c._thread.join(3)
        forgets_without_waiting(a, cache_a)
    finally:
        a.close()
        c.pool.close()


def test_a_replica_whose_heartbeat_stopped_is_not_waited_for(url: str) -> None:
    a, cache_a, b, _ = two(url)
    try:
        b._pruners["cache"] = broken  # B never confirms, its session stays open
        b.forgets.beat = lambda conn: None  # type: ignore[method-assign]
        with psycopg.connect(url) as conn:  # and its last heartbeat is a minute old
            conn.execute(
                "UPDATE eoc_replicas SET seen = now() - interval '1 minute' WHERE replica = %s",
                (b.replica,),
            )
        forgets_without_waiting(a, cache_a)
    finally:
        a.close()
        b.close()


def test_a_replica_deaf_when_a_forget_was_announced_drops_it_when_it_reconnects(
    url: str,
) -> None:
    a, cache_a, b, cache_b = two(url)
    try:
        heard = b._heard
        b._heard = lambda payload: None if payload.endswith("forgot") else heard(payload)
        a.forgets.wait_s = 0.2
        assert cache_a.forget(Query(Q))
        assert a.forgets.unconfirmed == [b.replica]
        assert cache_b.lookup(Query(Q)) is not None  # B missed it: the window this closes
        b._heard = heard
        with psycopg.connect(url, autocommit=True) as conn:  # every other connection drops
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        wait_for(lambda: cache_b.lookup(Query(Q)) is None, 5.0)
    finally:
        a.close()
        b.close()


def test_a_forget_between_a_replica_s_start_and_its_listening_is_not_served(url: str) -> None:
    a, b = PgStore(url), PgStore(url)
    try:
        cache_a = PgCache(a)
        cache_a.remember(Query(Q), "T. S. Eliot", MADE, generation=Generation(finish_reason="stop"))
        cache_b = PgCache(b)  # reads the answer at construction
        assert cache_b.lookup(Query(Q)) is not None
        a.start()
        assert cache_a.forget(Query(Q))  # B does not listen yet
        b.start()
        assert cache_b.lookup(Query(Q)) is None
    finally:
        a.close()
        b.close()


def test_a_listening_replica_s_heartbeat_keeps_it_waited_for(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eoc_native.store import pg_forgets

    monkeypatch.setattr(pg_forgets, "LIVE", 1.0)
    monkeypatch.setattr(pg_forgets, "HEARTBEAT", 0.1)
    a, cache_a, b, cache_b = two(url)
    try:
        time.sleep(1.5)  # longer than LIVE: only B's heartbeats keep it among the live
        slowed(b, "cache", 0.3)
        t0 = time.monotonic()
        assert cache_a.forget(Query(Q))
        assert time.monotonic() - t0 >= 0.3 and cache_b.lookup(Query(Q)) is None
    finally:
        a.close()
        b.close()


def test_the_store_counts_the_forgets_a_replica_did_not_confirm(url: str) -> None:
    """What ``eoc serve``'s /healthz shows as ``forgets_unconfirmed``: the opened store's count."""
    from eoc_native.store.pgvector import open_store

    parts = open_store(url)
    b = PgStore(url)
    try:
        cache_a, cache_b = CacheStage(store=parts.cache), PgCache(b)
        assert parts.start is not None and parts.unconfirmed is not None
        parts.start()
        b.start()
        cache_a.remember(Query(Q), "T. S. Eliot", MADE, generation=Generation(finish_reason="stop"))
        wait_for(lambda: cache_b.lookup(Query(Q)) is not None, 5.0)

        b._pruners["cache"] = broken  # B cannot let go: no confirmation
        parts.cache.store.forgets.wait_s = 0.2  # type: ignore[attr-defined]
        assert parts.unconfirmed() == 0
        cache_a.forget(Query(Q))
        assert parts.unconfirmed() == 1
    finally:
        parts.close()
        b.close()
