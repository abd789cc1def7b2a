"""A remembered model answer replays how it was generated: finish reason, token usage, seconds
(store schema 3); an answer kept before eoc recorded that says it is unknown, never made up."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from eoc import Cascade
from eoc.errors import InvalidText
from eoc.persist import SqliteCache, SqliteKV
from eoc.query import Query
from eoc.stages import CacheStage, KVStage, NeuralStage, Reply
from eoc.stages.base import Answer
from eoc.store.entry import UNKNOWN, EntryMeta, Generation, meta_from_text
from eoc.store.sqlite_schema import SCHEMA_VERSION, row_sum


class Cut:
    """A model that always fills its max_tokens (so it stopped for length)."""

    name = "cut"
    runs_model = True
    max_tokens = 8

    def generate(self, prompt: str) -> Reply:
        return Reply("a long answer cut short", tokens_in=5, tokens_out=8)


def _cascade(cache: object, kv: object) -> Cascade:
    return Cascade([cache, kv, NeuralStage(Cut())])  # type: ignore[list-item]


def test_a_cached_model_answer_replays_its_finish_reason_and_usage() -> None:
    with _cascade(CacheStage(), KVStage()) as c:
        first = c.resolve("tell me about rivers")
        again = c.resolve("tell me about rivers")
    assert first.stage == "neural" and first.generation is not None
    assert first.generation.finish_reason == "length" and first.generation.tokens == (5, 8)
    assert again.stage == "cache" and again.replayed
    assert again.generation is not None
    assert (again.generation.finish_reason, again.generation.tokens) == ("length", (5, 8))
    doc = again.to_dict()["generation"]
    assert doc["finish_reason"] == "length" and doc["tokens"] == {"in": 5, "out": 8}
    assert doc["replayed"] is True and "note" not in doc
    assert again.tokens is None  # no model ran now: the cost per token is not this answer's


def test_a_kv_replay_carries_it_too() -> None:
    kv = KVStage()
    with _cascade(CacheStage(), kv) as c:
        c.resolve("tell me about rivers")
    with _cascade(CacheStage(), kv) as c:  # a fresh cache: kv answers
        r = c.resolve("tell me about rivers")
    assert r.stage == "kv" and r.generation is not None and r.generation.finish_reason == "length"


def test_an_answer_no_model_made_has_no_generation() -> None:
    kv = KVStage()
    kv.put("what is 2+2", "4")
    with _cascade(CacheStage(), kv) as c:
        r = c.resolve("what is 2+2")
        assert c.resolve("what is 2+2").generation is None
    assert r.stage == "kv" and r.generation is None and "generation" not in r.to_dict()


def test_the_sqlite_store_keeps_it_across_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with _cascade(SqliteCache(db), SqliteKV(db)) as c:
        c.resolve("tell me about rivers")
    with _cascade(SqliteCache(db), SqliteKV(db)) as c:
        r = c.resolve("tell me about rivers")
    assert r.stage == "cache" and r.generation is not None
    assert (r.generation.finish_reason, r.generation.tokens) == ("length", (5, 8))
    assert r.generation.seconds is not None and r.generation.seconds >= 0


def _v2_file(path: Path, q: Query, origin: str) -> None:
    """A store of schema version 2 holding one model answer in cache and kv."""
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE cache (qid TEXT PRIMARY KEY, payload TEXT NOT NULL, seq INTEGER NOT NULL, "
        "checksum TEXT, origin TEXT NOT NULL DEFAULT '');"
        "CREATE TABLE kv (key TEXT PRIMARY KEY, prompt TEXT NOT NULL, payload TEXT NOT NULL, "
        "embedder TEXT NOT NULL, vector TEXT, checksum TEXT, origin TEXT NOT NULL DEFAULT '');"
        "CREATE TABLE triples (s TEXT NOT NULL, p TEXT NOT NULL, o TEXT NOT NULL, checksum TEXT, "
        "PRIMARY KEY (s, p, o));"
    )
    key = Cascade._made_by(q, origin).id
    conn.execute(
        "INSERT INTO cache VALUES (?, ?, 1, ?, ?)",
        (key, "an old answer", row_sum("cache", (key, "an old answer", origin), None), origin),
    )
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()


def test_a_version_2_store_is_migrated_and_its_replays_say_unknown(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    q = Query("tell me about rivers")
    c0 = _cascade(CacheStage(), KVStage())
    origin = c0.origin()
    c0.close()
    _v2_file(db, q, origin)
    cache = SqliteCache(db)
    assert cache.damaged == []  # the checksum held through the migration
    with _cascade(cache, KVStage()) as c:
        r = c.resolve(q)
    assert r.stage == "cache" and r.payload == "an old answer"
    assert r.generation is UNKNOWN and not r.generation.known
    doc = r.to_dict()["generation"]
    assert doc["finish_reason"] is None and doc["tokens"] is None and doc["replayed"] is True
    assert "unknown" in doc["note"]
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5
    conn.close()


def test_a_changed_or_hostile_meta_is_damage_not_served(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with _cascade(SqliteCache(db), SqliteKV(db)) as c:
        c.resolve("tell me about rivers")
    conn = sqlite3.connect(db)
    conn.execute("""UPDATE cache SET meta = replace(meta, '"length"', '"stop"')""")
    conn.execute("UPDATE kv SET meta = ''")  # dropping it breaks the checksum too
    conn.commit()
    conn.close()
    cache, kv = SqliteCache(db), SqliteKV(db)
    assert [t for t, _, _ in cache.damaged] == ["cache"]
    assert [t for t, _, _ in kv.damaged] == ["kv"]
    assert len(cache) == 0 and len(kv) == 0
    cache.close()
    kv.close()


@pytest.mark.parametrize(
    "text",
    [
        "{",
        "[]",
        '{"at":1}',
        '{"at":1,"exp":null,"evil":1}',
        '{"at":"now","exp":null}',
        '{"at":-5,"exp":null}',
        '{"at":1,"exp":null,"finish":"STOP!","tokens":null,"seconds":null}',
        '{"at":1,"exp":null,"finish":"stop","tokens":[1,-2],"seconds":null}',
        '{"at":1,"exp":null,"finish":"stop","tokens":[1,2,3],"seconds":null}',
        '{"at":1,"exp":null,"finish":"stop","tokens":null,"seconds":1e300}',
        '{"at":1,"exp":null,"finish":"stop","tokens":[true,2],"seconds":null}',
        "x" * 2000,
    ],
)
def test_a_meta_eoc_would_not_write_is_refused(text: str) -> None:
    with pytest.raises(InvalidText):
        meta_from_text(text)


def test_meta_round_trips() -> None:
    meta = EntryMeta(1700000000.5, 1700003600.5, Generation("length", (3, 4), 0.25))
    assert meta_from_text(meta.to_text()) == meta
    assert meta_from_text(EntryMeta(1.0).to_text()) == EntryMeta(1.0)


def test_a_backend_reason_is_kept_and_a_bad_one_is_a_backend_error() -> None:
    from eoc.errors import BackendError

    class Says:
        name = "says"
        runs_model = True

        def __init__(self, reason: str) -> None:
            self.reason = reason

        def generate(self, prompt: str) -> Reply:
            return Reply("ok then", tokens_in=1, tokens_out=2, finish_reason=self.reason)

    stage = NeuralStage(Says("content_filter"))
    answer = stage.lookup(Query("hi there"))
    assert isinstance(answer, Answer) and answer.generation is not None
    assert answer.generation.finish_reason == "content_filter"
    with pytest.raises(BackendError, match="finish reason"):
        NeuralStage(Says("<script>")).lookup(Query("hi there"))


def test_eoc_query_says_what_it_replays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from eoc.cli.query import format_response

    with _cascade(CacheStage(), KVStage()) as c:
        c.resolve("tell me about rivers")
        lines = format_response(c.resolve("tell me about rivers"))
    assert any(line.startswith("replay : finish length, 5 tokens in, 8 out") for line in lines)
    assert json.dumps(UNKNOWN.to_dict(True))  # JSON-ready
