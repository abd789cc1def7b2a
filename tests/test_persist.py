"""SQLite-backed stages: restarts, eviction, bad input, and a process killed mid-write."""

from __future__ import annotations

import gc
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from contextlib import closing
from pathlib import Path

import pytest

from eoc import Cascade, Query, Stage
from eoc.assemble import default_stages
from eoc.errors import ConfigError, InputError, StoreUnusable
from eoc.persist import SqliteCache, SqliteKV, SqliteTripleStore
from eoc.stages import GraphStage
from tests.helpers import IN_BROWSER, ModelStandIn


def count(db: Path, sql: str) -> object:
    with closing(sqlite3.connect(db)) as c:
        return c.execute(sql).fetchone()[0]


def test_the_cache_survives_a_restart_and_keeps_its_bounds(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    cache = SqliteCache(db, max_entries=2)
    for q in ("a?", "b?", "c?"):
        cache.remember(Query(q), q.upper())
    assert count(db, "SELECT count(*) FROM cache") == 2  # evicted from the file as it happens
    cache.close()
    again = SqliteCache(db, max_entries=2)
    assert again.lookup(Query("a?")) is None  # evicted before the restart, and from the file
    assert again.lookup(Query("c?")).payload == "C?"  # type: ignore[union-attr]
    assert len(again) == 2
    again.close()
    assert count(db, "SELECT count(*) FROM cache") == 2


def test_kv_survives_a_restart_with_its_vectors(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    kv = SqliteKV(db)
    kv.put("what is the default port for ssh", "22")
    kv.load_pairs([("what is 2+2", "4"), ("what is 3+3", "6")])
    kv.close()
    again = SqliteKV(db)
    assert len(again) == 3
    assert again.lookup(Query("default port for ssh?")).payload == "22"  # type: ignore[union-attr]
    assert again.lookup(Query("what is 3+3")).payload == "6"  # type: ignore[union-attr]
    again.close()


def test_bad_input_reaches_neither_memory_nor_the_file(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    kv = SqliteKV(db)
    for prompt, answer in (("", "x"), ("ok", ""), ("a\x00b", "x"), ("???", "x")):
        with pytest.raises(InputError):
            kv.put(prompt, answer)
    with pytest.raises(InputError):
        kv.load_pairs([("fine", "yes"), ("", "no")])  # checked whole before anything is written
    assert len(kv) == 0
    kv.close()
    assert count(db, "SELECT count(*) FROM kv") == 0


def test_triples_survive_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    store = SqliteTripleStore(db)
    store.add("Japan", "capital", "Tokyo")
    store.add_all([("France", "capital", "Paris"), ("Japan", "capital", "Tokyo")])
    store.close()
    reopened = SqliteTripleStore(db)
    graph = GraphStage(reopened)
    assert graph.lookup(Query("capital of France?")).payload == "Paris"  # type: ignore[union-attr]
    assert len(reopened) == 2
    reopened.close()


def test_an_unopenable_store_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "dir.db").mkdir()
    with pytest.raises(StoreUnusable, match="not a regular file"):
        SqliteCache(tmp_path / "dir.db")
    with pytest.raises(ConfigError, match="path of an SQLite file"):
        SqliteCache(":memory:")
    gc.collect()  # no connection was opened, so none is left for interpreter exit to close


def test_a_persistent_cascade_remembers_across_instances(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    with Cascade(default_stages(ModelStandIn(), store=db)) as first:
        assert first.resolve("why is the sky blue").stage is Stage.NEURAL
        assert first.resolve("what is the capital of Japan").payload == "Tokyo"
    with Cascade(default_stages(ModelStandIn(), store=db)) as second:
        assert second.resolve("why is the sky blue").stage is Stage.CACHE
        assert second.resolve("Why is the sky blue?").stage is Stage.KV


WRITER = textwrap.dedent(
    """
    import sys
    from eoc import Query
    from eoc.persist import SqliteCache, SqliteKV, SqliteTripleStore
    db = sys.argv[1]
    cache, kv, triples = SqliteCache(db), SqliteKV(db), SqliteTripleStore(db)
    i = 0
    while True:
        cache.remember(Query(f"question {i}"), f"answer {i}")
        kv.put(f"what is item number {i}", f"value {i}")
        triples.add(f"Thing {i}", "color", f"color {i}")
        print(i, flush=True)  # acknowledged: every write above has returned
        i += 1
    """
)


@pytest.mark.skipif(IN_BROWSER, reason="needs a subprocess to kill")
def test_a_process_killed_mid_write_loses_nothing_it_acknowledged(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db)], stdout=subprocess.PIPE, text=True, env=env
    )
    acked = -1
    deadline = time.monotonic() + 60
    assert proc.stdout is not None
    while acked < 60 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line:
            acked = int(line)
    proc.send_signal(signal.SIGKILL)  # mid-write: it was writing item acked + 1
    proc.wait()
    proc.stdout.close()
    assert acked >= 60
    assert count(db, "PRAGMA integrity_check") == "ok"
    cache, kv, triples = SqliteCache(db), SqliteKV(db), SqliteTripleStore(db)
    for i in range(acked + 1):
        assert cache.lookup(Query(f"question {i}")).payload == f"answer {i}"  # type: ignore[union-attr]
        assert kv.lookup(Query(f"what is item number {i}")).payload == f"value {i}"  # type: ignore[union-attr]
        assert triples.objects(f"Thing {i}", "color") == [f"color {i}"]
    for store in (cache, kv, triples):
        store.close()


def test_defer_pairs_on_a_persistent_kv_writes_its_rows_at_once(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from eoc.persist import SqliteKV

    path = tmp_path / "kv.db"
    kv = SqliteKV(path)
    assert kv.defer_pairs([("what is the speed of light", "c")]) == 1
    kv.close()
    again = SqliteKV(path)
    hit = again.lookup(Query("what is the speed of light"))
    assert hit is not None and hit.payload == "c"
    again.close()
