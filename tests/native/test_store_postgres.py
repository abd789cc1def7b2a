"""Cache, kv and graph in PostgreSQL: write-through, checksums, schema version, and replicas
kept current through LISTEN/NOTIFY (on a throwaway server the tests start themselves)."""

from __future__ import annotations

import itertools
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("psycopg")
pytest.importorskip("psycopg_pool")

import psycopg

from eoc.errors import StoreUnusable, StoreVersionError
from eoc.query import Query
from eoc.stages.contract import PENDING
from eoc.stages.kv import KVStage
from eoc.store.sqlite_db import store_key
from eoc.store.sqlite_schema import row_sum, summed
from eoc_native.store.postgres import SCHEMA_VERSION, PgCache, PgKV, PgStore, PgTripleStore
from tests.helpers import wait_for

_names = itertools.count()


@pytest.fixture
def url(postgres: Any) -> str:
    return str(postgres.new_database(f"eoc_test_{next(_names)}"))


def test_an_answer_written_on_one_replica_is_a_hit_on_another_within_100_ms(url: str) -> None:
    a, b = PgStore(url), PgStore(url)
    try:
        cache_a, cache_b = PgCache(a), PgCache(b)
        kv_a, kv_b = PgKV(a), PgKV(b)
        a.start()
        b.start()
        q = Query("what is the tallest mountain on earth")
        cache_a.remember(q, "Mount Everest")
        took = wait_for(lambda: cache_b.lookup(q) is not None, 2.0)
        assert took < 0.1, took
        assert cache_b.lookup(q).payload == "Mount Everest"
        kv_a.put("who painted the mona lisa", "Leonardo da Vinci")
        wait_for(lambda: kv_b.lookup(Query("who painted the mona lisa?")) is not None, 0.1)
        assert b.heard >= 2 and a.heard == 0  # a replica does not re-read its own writes
    finally:
        a.close()
        b.close()


def test_what_was_acknowledged_survives_and_a_new_replica_loads_it(url: str) -> None:
    s = PgStore(url)
    cache, kv, graph = PgCache(s), PgKV(s), PgTripleStore(s)
    cache.remember(Query("q one"), "answer one")
    kv.put("what is the capital of peru", "Lima")
    assert graph.add_all([("Peru", "capital", "Lima"), ("Peru", "capital", "Lima")]) == 1
    s.close()
    s2 = PgStore(url)
    try:
        assert PgCache(s2).lookup(Query("q one")).payload == "answer one"
        assert PgKV(s2).lookup(Query("what is the capital of peru")).payload == "Lima"
        assert PgTripleStore(s2).objects("Peru", "capital") == ["Lima"]
    finally:
        s2.close()


def test_the_cache_table_is_trimmed_and_read_back_bounded(url: str) -> None:
    from eoc_native.store.postgres import TRIM_EVERY

    s = PgStore(url)
    cache = PgCache(s, max_entries=5)
    for i in range(TRIM_EVERY):  # the last write trims
        cache.remember(Query(f"question {i}"), f"answer {i}")
    with psycopg.connect(url, autocommit=True) as conn:
        left = conn.execute("SELECT count(*) FROM eoc_cache").fetchone()[0]
        # an old row changed outside eoc: past the bound, so never read again
        conn.execute(
            "INSERT INTO eoc_cache (qid, payload, checksum, seq) VALUES ('old', 'x', 'bad', 1)"
        )
        # more rows, as another replica might have written: a new replica reads the newest 5
        for i in range(8):
            qid = Query(f"another question {i}").id
            conn.execute(
                "INSERT INTO eoc_cache (qid, payload, checksum) VALUES (%s, %s, %s)",
                (qid, f"another {i}", row_sum("cache", (qid, f"another {i}", ""), store_key())),
            )
    s.close()
    assert left == 5
    s2 = PgStore(url)
    try:
        fresh = PgCache(s2, max_entries=5)
        assert len(fresh) == 5 and fresh.damaged == []
        assert fresh.lookup(Query(f"question {TRIM_EVERY - 1}")) is None  # 8 newer rows
        assert fresh.lookup(Query("another 7")) is None
        assert fresh.lookup(Query("another question 7")).payload == "another 7"
    finally:
        s2.close()


def test_a_row_changed_outside_eoc_is_not_served_and_is_listed(url: str) -> None:
    s = PgStore(url)
    PgCache(s).remember(Query("q"), "the true answer")
    s.close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE eoc_cache SET payload = 'a forged answer'")
    s2 = PgStore(url)
    try:
        cache = PgCache(s2)
        assert cache.lookup(Query("q")) is None
        assert cache.damaged and "checksum" in cache.damaged[0][2]
    finally:
        s2.close()


def test_a_partitions_answer_reaches_other_replicas_and_a_restart_in_its_partition_only(
    url: str,
) -> None:
    """A model's answer kept in a partition (eoc/partition.py: a system prompt's) is read by
    another replica and by a new one in that partition, never by a plain question."""
    from eoc.chat.request import ChatDefaults, parse_chat
    from eoc.store.entry import Generation

    def query(question: str, system: str | None) -> Query:
        messages = [{"role": "system", "content": system}] if system else []
        body = {"model": "m", "messages": [*messages, {"role": "user", "content": question}]}
        return parse_chat({**body, "max_tokens": 32}, ChatDefaults("m")).query()

    asked = query("how do I reset my router", "Be brief.")
    paraphrase = query("how can I reset my router please", "Be brief.")
    a, b = PgStore(url), PgStore(url)
    try:
        kv_a, kv_b = PgKV(a), PgKV(b)
        a.start()
        b.start()
        kv_a.remember(asked, "Hold the button.", "model-x", generation=Generation("stop", (5, 4)))
        wait_for(lambda: kv_b.lookup(paraphrase) is not None, 2)
        assert kv_b.lookup(Query("how can I reset my router please")) is None
        assert kv_b.lookup(query("how can I reset my router please", "Be long.")) is None
    finally:
        a.close()
        b.close()
    c = PgStore(url)
    try:
        kv = PgKV(c)
        found = kv.lookup(paraphrase)
        assert found is not None and found.payload == "Hold the button."
        assert kv.lookup(Query("how do I reset my router")) is None
    finally:
        c.close()


def test_a_version_3_database_is_the_current_version_after_opening(url: str) -> None:
    PgStore(url).close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE eoc_meta SET value = '3' WHERE key = 'schema_version'")
        conn.execute("DELETE FROM eoc_meta WHERE key = 'key'")  # version 3 named no key
    PgStore(url).close()
    with psycopg.connect(url, autocommit=True) as conn:
        version = conn.execute("SELECT value FROM eoc_meta WHERE key = 'schema_version'")
        assert version.fetchone()[0] == SCHEMA_VERSION


def test_another_schema_version_is_refused(url: str) -> None:
    """(A database once also refused a second model; each answer now records the model and
    parameters that made it and is served only where they match, as in SQLite, so two models
    share one database: tests/native/test_serve.py.)"""
    PgStore(url).close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE eoc_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreVersionError, match="version 99"):
        PgStore(url)


def test_an_unreachable_server_is_a_typed_error_naming_it_without_the_password(
    postgres: Any,
) -> None:
    with pytest.raises(StoreUnusable) as info:
        PgStore("postgresql://eoc:secret@127.0.0.1:9/none", timeout=1)
    assert "127.0.0.1:9" in str(info.value) and "secret" not in str(info.value)


def test_a_replica_catches_up_after_postgres_restarts(url: str, postgres: Any) -> None:
    a, b = PgStore(url, timeout=2), PgStore(url, timeout=2)
    try:
        cache_a, cache_b = PgCache(a), PgCache(b)
        a.start()
        b.start()
        postgres.stop("fast")
        try:
            # not acknowledged as stored: held, in memory, and said to be pending
            assert cache_a.remember(Query("asked in the gap"), "held") == PENDING
            assert cache_a.lookup(Query("asked in the gap")) is not None
        finally:
            postgres.start()
        wait_for(lambda: a.healthy and b.healthy, 10)
        cache_a.remember(Query("asked after"), "stored")
        wait_for(lambda: cache_b.lookup(Query("asked after")) is not None, 2)
        wait_for(lambda: cache_b.lookup(Query("asked in the gap")) is not None, 5)
    finally:
        a.close()
        b.close()


def test_plain_kv_options_apply(url: str) -> None:
    s = PgStore(url)
    try:
        kv = PgKV(s, threshold=0.99)
        assert isinstance(kv, KVStage) and kv.threshold == 0.99
    finally:
        s.close()


def test_a_version_1_database_is_migrated_and_its_answers_are_kept_but_never_served(
    url: str,
) -> None:
    """Version 1 rows did not say which model made them: they get the origin UNRECORDED (no
    cascade serves it) and a new checksum when their old one held."""
    from eoc import Cascade
    from eoc.stages.neural import EchoBackend, NeuralStage
    from eoc.store.sqlite_schema import UNRECORDED

    q = Query("tell me a story")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE eoc_meta (key text PRIMARY KEY, value text NOT NULL)")
        conn.execute("INSERT INTO eoc_meta VALUES ('schema_version', '1')")
        conn.execute("CREATE SEQUENCE eoc_seq")
        conn.execute(
            "CREATE TABLE eoc_cache (qid text PRIMARY KEY, payload text NOT NULL, "
            "seq bigint NOT NULL DEFAULT nextval('eoc_seq'), checksum text NOT NULL)"
        )
        conn.execute(
            "CREATE TABLE eoc_kv (key text PRIMARY KEY, prompt text NOT NULL, payload text "
            "NOT NULL, embedder text NOT NULL, vector text, seq bigint NOT NULL DEFAULT "
            "nextval('eoc_seq'), checksum text NOT NULL)"
        )
        conn.execute(
            "INSERT INTO eoc_cache (qid, payload, checksum) VALUES (%s, %s, %s), ('x', 'y', 'bad')",
            (q.id, "a story", row_sum("cache", (q.id, "a story"), None)),
        )
    store = PgStore(url)
    try:
        cache = PgCache(store)
        kept = cache.lookup(q)
        assert kept is not None and kept.origin == UNRECORDED
        assert [why for _, _, why in cache.damaged] == [
            "checksum mismatch: the row was changed outside eoc"
        ]
        cascade = Cascade([cache, NeuralStage(EchoBackend())])
        assert cascade.resolve(q).stage == "neural"  # never served
        with psycopg.connect(url, autocommit=True) as conn:
            version = conn.execute("SELECT value FROM eoc_meta WHERE key = 'schema_version'")
            assert version.fetchone()[0] == SCHEMA_VERSION
    finally:
        store.close()


def test_an_answer_whose_write_meets_a_stopped_database_is_held_and_written_when_it_is_back(
    postgres: Any,
) -> None:
    """An answer in flight when PostgreSQL stopped was served (200) but never stored, and nothing
    said so. Now the write is held, the answer says it is pending, and it is written (and
    announced) once the database is back: nothing is lost that was not said to be at risk."""
    from eoc import Cascade
    from eoc.stages.contract import PENDING
    from eoc.stages.neural import NeuralStage, Reply

    url = postgres.new_database(f"eoc_test_{next(_names)}")
    stopped = threading.Event()

    class StopsTheDatabase:
        """A model whose answer takes as long as it takes PostgreSQL to stop."""

        name, runs_model = "slow", True

        def generate(self, prompt: str) -> Reply:
            postgres.stop()
            stopped.set()
            return Reply(f"an answer to {prompt}")

    store = PgStore(url, timeout=1.0)  # a stopped database is found out within a second
    other = None
    try:
        cache, kv = PgCache(store), PgKV(store)
        store.start()
        cascade = Cascade([cache, kv, NeuralStage(StopsTheDatabase())])
        answer = cascade.resolve("tell me about herons")
        assert answer.stage == "neural" and answer.stored == PENDING
        assert store.pending_writes == 2 and cascade.store_errors == 0  # cache row and kv row
        again = cascade.resolve("tell me about herons")  # held in memory meanwhile
        assert again.stage == "cache"
        postgres.start()
        stopped.clear()
        wait_for(lambda: store.pending_writes == 0, 10)  # reconnects within 2 s of backoff
        other = PgStore(url)
        assert [p for _q, p, *_ in other.rows("cache", [])] == [answer.payload]
        assert [r[2] for r in other.rows("kv", [])] == [answer.payload]
    finally:
        if stopped.is_set():  # the test failed between the stop and the restart
            postgres.start()
        store.close()
        if other is not None:
            other.close()


def test_a_version_2_database_is_migrated_replays_say_unknown_and_forget_deletes(
    url: str,
) -> None:
    """Schema 3 adds meta, empty for old rows (their checksums hold); a new answer keeps how
    the model generated it; forget removes rows from the table, not only from memory."""
    from eoc.store.entry import UNKNOWN, Generation
    from eoc.store.forget import forget_in, forget_of

    q = Query("tell me about herons")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE eoc_meta (key text PRIMARY KEY, value text NOT NULL)")
        conn.execute("INSERT INTO eoc_meta VALUES ('schema_version', '2')")
        conn.execute("CREATE SEQUENCE eoc_seq")
        conn.execute(
            "CREATE TABLE eoc_cache (qid text PRIMARY KEY, payload text NOT NULL, seq bigint NOT "
            "NULL DEFAULT nextval('eoc_seq'), checksum text NOT NULL, origin text NOT NULL "
            "DEFAULT '')"
        )
        conn.execute(
            "CREATE TABLE eoc_kv (key text PRIMARY KEY, prompt text NOT NULL, payload text NOT "
            "NULL, embedder text NOT NULL, vector text, seq bigint NOT NULL DEFAULT "
            "nextval('eoc_seq'), checksum text NOT NULL, origin text NOT NULL DEFAULT '')"
        )
        conn.execute(
            "INSERT INTO eoc_cache (qid, payload, origin, checksum) VALUES (%s, %s, %s, %s)",
            (q.id, "herons wade", "m", row_sum("cache", (q.id, "herons wade", "m"), None)),
        )
    store = PgStore(url)
    try:
        cache = PgCache(store)
        old = cache.lookup(q)
        assert old is not None and cache.damaged == [] and old.generation is UNKNOWN
        cache.remember(Query("a new one"), "yes", "m", generation=Generation("length", (1, 2)))
        again = PgCache(PgStore(url))
        got = again.lookup(Query("a new one"))
        assert got is not None and got.generation == Generation("length", (1, 2))
        again.close()
        assert forget_in(cache, None, forget_of(q.prompt, "cache")) == {"cache": 1}
        with psycopg.connect(url, autocommit=True) as conn:
            left = conn.execute("SELECT payload FROM eoc_cache").fetchall()
            assert left == [("yes",)]
            version = conn.execute("SELECT value FROM eoc_meta WHERE key = 'schema_version'")
            assert version.fetchone()[0] == SCHEMA_VERSION
    finally:
        store.close()


def test_a_thumbs_down_on_one_replica_forgets_the_answer_on_every_replica(url: str) -> None:
    """Issue 34: forgetting one model answer by its name on replica A drops it from B's memory
    too (A announces the forget; B drops what the table no longer holds), while B's facts and
    its other answers stay."""
    from eoc import Cascade
    from eoc.stages import NeuralStage, Reply
    from eoc.stages.graph import GraphStage

    class Model:
        name, runs_model, max_tokens = "stand-in", True, 64
        origin = '{"model":"stand-in"}'

        def generate(self, prompt: str) -> Reply:
            return Reply(f"Marlowe wrote it ({prompt})", tokens_in=3, tokens_out=5)

    a, b = PgStore(url), PgStore(url)
    try:
        stages_a = [PgCache(a), PgKV(a), GraphStage(PgTripleStore(a)), NeuralStage(Model())]
        stages_b = [PgCache(b), PgKV(b), GraphStage(PgTripleStore(b)), NeuralStage(Model())]
        a.start()
        b.start()
        ca, cb = Cascade(stages_a), Cascade(stages_b)
        made = ca.resolve("who wrote hamlet")
        other = ca.resolve("who wrote macbeth")
        stages_b[1].put("what is 2+2", "4")  # a fact B holds
        # wait on lookups that change nothing: a resolve that misses while A's kv row is on its
        # way would ask B's model and remember that answer on B
        wait_for(lambda: cb.cached("who wrote hamlet") is not None, 2.0)
        wait_for(lambda: stages_b[1].lookup(Query("Who wrote Hamlet?")) is not None, 2.0)
        assert cb.resolve("who wrote hamlet").stage.value == "cache"
        assert cb.resolve("Who wrote Hamlet?").stage.value == "kv"
        assert ca.forget_answer(made) == {"cache": 2, "kv": 1}
        assert cb.cached("who wrote macbeth") is not None
        wait_for(lambda: cb.cached("who wrote hamlet") is None, 2.0)
        # B's memory lets go of it when A's forget is announced, before any lookup on B (a
        # lookup would not serve it anyway: B confirms a pair in the table before serving it)
        held = stages_b[1]._entries  # type: ignore[attr-defined]
        wait_for(lambda: not any("hamlet" in e.prompt for e in list(held.values())), 2.0)
        wait_for(lambda: stages_b[1].lookup(Query("Who wrote Hamlet?")) is None, 2.0)
        assert cb.resolve("who wrote macbeth").payload == other.payload  # the other answer stays
        assert stages_b[1].lookup(Query("what is 2+2")) is not None
    finally:
        a.close()
        b.close()


def test_a_pair_forgotten_or_replaced_elsewhere_is_not_served_before_the_news_arrives(
    url: str,
) -> None:
    """Issue 40's soak: each replica holds every pair in memory (no pgvector), and a forget on
    A reached B only through NOTIFY, milliseconds later; a lookup in between served the pair.
    B here never hears (its listener is not started): it confirms a pair in the table before
    serving it, so what A forgot or answered anew is a miss on B, never the old answer."""
    a, b = PgStore(url), PgStore(url)
    try:
        kv_a = PgKV(a)
        kv_a.put("who painted the mona lisa", "Leonardo da Vinci")
        kv_a.put("what is the capital of peru", "Lima")
        kv_a.put("who wrote hamlet", "Shakespeare")
        kv_b = PgKV(b)  # reads them at start, then hears nothing
        kv_b.defer_pairs([("what is the answer to everything", "42")], memory_only=True)
        assert kv_b.lookup(Query("what is the answer to everything")).payload == "42"  # no row
        assert kv_b.lookup(Query("who painted the mona lisa")).payload == "Leonardo da Vinci"
        assert kv_b.lookup(Query("Who painted the Mona Lisa?")).payload == "Leonardo da Vinci"
        kv_a.forget_where(lambda key, prompt, origin, meta: "mona" in prompt)
        assert kv_b.lookup(Query("who painted the mona lisa")) is None  # exact
        assert kv_b.lookup(Query("Who painted the Mona Lisa?")) is None  # similar
        kv_a.put("what is the capital of peru", "Lima (since 1535)")
        assert kv_b.lookup(Query("what is the capital of peru")) is None  # not the old answer
        kv_a.forget_where(lambda key, prompt, origin, meta: "hamlet" in prompt)
        b.healthy = False  # a database B cannot read now: memory is the newest B can know
        assert kv_b.lookup(Query("who wrote hamlet")).payload == "Shakespeare"
    finally:
        a.close()
        b.close()


def test_a_row_planted_with_its_checksum_recomputed_is_not_served_by_any_replica(
    url: str,
) -> None:
    """A database user edits an answer and recomputes its checksum as versions 1 to 4 did (a
    plain digest): the row's MAC does not hold, so no replica serves it."""
    store = PgStore(url)
    try:
        cache = PgCache(store)
        q = Query("how do I reset my bank password")
        cache.remember(q, "Use the reset link in your account settings.", "m")
    finally:
        store.close()
    planted = "Confirm your password at http://example.invalid/login"
    with psycopg.connect(url, autocommit=True) as conn:
        meta = conn.execute("SELECT meta FROM eoc_cache WHERE qid = %s", (q.id,)).fetchone()[0]
        conn.execute(
            "UPDATE eoc_cache SET payload = %s, checksum = %s WHERE qid = %s",
            (planted, row_sum("cache", summed((q.id, planted, "m"), meta), None), q.id),
        )
    store = PgStore(url)
    try:
        cache = PgCache(store)
        assert cache.lookup(q) is None
        assert [why for _, _, why in cache.damaged] == [
            "checksum mismatch: the row was changed outside eoc"
        ]
    finally:
        store.close()


def test_a_replica_with_another_key_is_refused(url: str) -> None:
    PgStore(url).close()
    with pytest.raises(StoreUnusable, match="same key file"):
        PgStore(url, key=b"another replica's key, 32 bytes")


def test_the_test_servers_template_is_used_only_from_a_folder_of_this_user_s(
    tmp_path: Path,
) -> None:
    """tests/native/pg.py copies a cluster initdb'd once, never one from a folder someone else
    owns or can write (their settings would run in the test server), nor through a link."""
    from tests.native.pg import _own_folder

    mine = tmp_path / "mine"
    mine.mkdir(mode=0o711)
    assert _own_folder(mine)
    writable = tmp_path / "writable"
    writable.mkdir()
    writable.chmod(0o777)
    assert not _own_folder(writable)
    link = tmp_path / "link"
    link.symlink_to(mine)
    assert not _own_folder(link)
    assert not _own_folder(tmp_path / "missing")
    if os.geteuid() == 0:
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o711)
        shutil.chown(theirs, "nobody")
        assert not _own_folder(theirs)
