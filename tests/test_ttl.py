"""TTLs: an entry's own (``remember``/``put(..., ttl=)``) and the store's (``--ttl``,
``assemble(ttl=)``). An expired entry is never served, by cache or kv, and is removed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from eoc import Cascade
from eoc.assemble import assemble
from eoc.errors import ConfigError
from eoc.persist import SqliteCache, SqliteKV
from eoc.query import Query
from eoc.stages import CacheStage, KVStage, NeuralStage
from eoc.store.entry import parse_duration
from tests.helpers import ModelStandIn


class Clock:
    def __init__(self) -> None:
        self.t = 1_700_000_000.0

    def __call__(self) -> float:
        return self.t


def _timed(*stages: object) -> Clock:
    clock = Clock()
    for s in stages:
        s.now = clock  # type: ignore[attr-defined]
    return clock


def test_an_entry_ttl_expires_it_in_the_cache() -> None:
    cache = CacheStage()
    clock = _timed(cache)
    q = Query("what time is it in Lima")
    cache.remember(q, "noon", ttl=60)
    clock.t += 59
    assert cache.lookup(q) is not None
    clock.t += 1
    assert cache.lookup(q) is None
    assert len(cache) == 0  # removed, not only hidden


def test_an_entry_ttl_expires_it_in_kv_exact_and_similar() -> None:
    kv = KVStage()
    clock = _timed(kv)
    kv.put("what is the weather in Lima today", "sunny", ttl="1h")
    assert kv.lookup(Query("what is the weather in Lima today")) is not None
    assert kv.lookup(Query("what's the weather in Lima today?")) is not None
    clock.t += 3600
    assert kv.lookup(Query("what is the weather in Lima today")) is None
    assert kv.lookup(Query("what's the weather in Lima today?")) is None


def test_a_store_ttl_ages_model_answers_only() -> None:
    cache, kv = CacheStage(ttl="1d"), KVStage(ttl=86_400)
    clock = _timed(cache, kv)
    kv.put("what is 2+2", "4")  # no model made it: not aged by the store's TTL
    with Cascade([cache, kv, NeuralStage(ModelStandIn())]) as c:
        assert c.resolve("tell me a joke").stage == "neural"
        assert c.resolve("tell me a joke").stage == "cache"
        clock.t += 86_400
        kv_stage = c.resolve("tell me a joke")
        assert kv_stage.stage == "neural"  # neither cache nor kv serve the day-old answer
        assert c.resolve("what is 2+2").stage == "kv"


def test_set_ttl_on_a_store_with_old_entries_of_unknown_age() -> None:
    from eoc.store.entry import NO_META

    kv = KVStage()
    kv.put("tell me a joke", "knock knock", origin="model-x", meta=NO_META)
    assert kv.lookup(Query("tell me a joke")) is not None
    kv.set_ttl("30d")
    assert kv.lookup(Query("tell me a joke")) is None  # of unknown age: not served


def test_the_sqlite_store_removes_expired_rows_when_it_opens(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    cache, kv = SqliteCache(db), SqliteKV(db)
    clock = _timed(cache, kv)
    cache.remember(Query("a"), "b", ttl=10)
    kv.put("what is the weather in Lima", "sunny", ttl=10)
    kv.put("what is the weather in Quito", "rain")
    cache.close()
    kv.close()
    later = Clock()
    later.t = clock.t + 10
    SqliteCache.now = later  # type: ignore[assignment,method-assign]
    SqliteKV.now = later  # type: ignore[assignment,method-assign]
    try:
        cache, kv = SqliteCache(db), SqliteKV(db)
    finally:
        del SqliteCache.now, SqliteKV.now  # type: ignore[attr-defined]
    assert len(cache) == 0 and len(kv) == 1
    cache.close()
    kv.close()
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM cache").fetchone() == (0,)
    assert conn.execute("SELECT prompt FROM kv").fetchall() == [("what is the weather in Quito",)]
    conn.close()


@pytest.mark.parametrize(
    "bad", [-1, 0, float("nan"), float("inf"), 1e12, "soon", "-5d", "0h", "10y", True, "9" * 50]
)
def test_bad_ttls_are_config_errors(bad: object) -> None:
    with pytest.raises(ConfigError):
        CacheStage(ttl=bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        KVStage().put("what is love", "a song", ttl=bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        assemble(store=None, ttl=bad)  # type: ignore[arg-type]


def test_durations() -> None:
    assert parse_duration("30d") == 30 * 86_400
    assert parse_duration("12h") == 43_200
    assert parse_duration("90m") == 5_400
    assert parse_duration("45") == 45
    assert parse_duration("1.5h") == 5_400


def test_eoc_query_refuses_a_bad_ttl(capsys: pytest.CaptureFixture[str]) -> None:
    from eoc.cli.main import main

    assert main(["query", "what is 2+2", "--ttl=-3d"]) == 2
    assert "TTL" in capsys.readouterr().err


def test_expiry_once_seen_is_final_when_the_clock_goes_back() -> None:
    cache, kv = CacheStage(), KVStage()
    clock = _timed(cache, kv)
    q = Query("what is the exchange rate of the yen today")
    cache.remember(q, "150", ttl=60)
    kv.put("what is the exchange rate of the yen today", "150", ttl=60)
    kv.put("is the museum open on mondays right now", "yes", ttl=60)
    clock.t += 61
    assert cache.lookup(q) is None
    assert kv.lookup(q) is None
    assert kv.lookup(Query("is the museum open on mondays at the moment")) is None
    clock.t -= 3600  # an hour back: what was seen expired stays so
    assert cache.lookup(q) is None
    assert kv.lookup(q) is None
    assert kv.lookup(Query("is the museum open on mondays right now")) is None
    assert len(cache) == 0 and len(kv) == 0


def test_a_clock_set_back_serves_nothing_that_expired_unseen() -> None:
    cache, kv = CacheStage(), KVStage()
    clock = _timed(cache, kv)
    oslo, bergen = Query("what is the weather in Oslo today"), Query("and in Bergen")
    cache.remember(oslo, "snow", ttl=60)
    cache.remember(bergen, "rain", ttl=3600)
    kv.put("what is the weather in Oslo today", "snow", ttl=60)
    kv.put("what is the weather in Bergen today", "rain", ttl=3600)
    clock.t += 120
    assert cache.lookup(bergen) is not None  # each reads the time
    assert kv.lookup(Query("what is the weather in Bergen today")) is not None
    clock.t -= 3600
    assert cache.lookup(oslo) is None  # expired meanwhile, though never seen so
    assert kv.lookup(Query("what is the weather in Oslo today")) is None


def test_an_expired_row_is_deleted_so_a_later_start_with_an_earlier_clock_never_serves_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    cache, kv = SqliteCache(db), SqliteKV(db)
    clock = _timed(cache, kv)
    q = Query("what is the price of gold today")
    cache.remember(q, "2000 dollars", ttl=60)
    kv.put("what is the price of gold today", "2000 dollars", ttl=60)
    clock.t += 61
    assert cache.lookup(q) is None and kv.lookup(q) is None
    cache.close()
    kv.close()
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM cache").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM kv").fetchone() == (0,)
    conn.close()
    cache, kv = SqliteCache(db), SqliteKV(db)
    _timed(cache, kv).t -= 3600  # the next start's clock is an hour behind
    assert cache.lookup(q) is None and kv.lookup(q) is None
    cache.close()
    kv.close()
