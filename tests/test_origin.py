"""What made a remembered answer: each entry records the model and the parameters that made it,
and is served only where they are the same; an answer no model made (the pack, the graph, a
computation) is served everywhere (docs/design.md §4)."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import pytest

from eoc import Cascade, Query
from eoc.cli.main import main
from eoc.persist import SqliteCache, SqliteKV, SqliteTripleStore
from eoc.stages import CacheStage, KVStage
from eoc.stages.graph import GraphStage, TripleStore
from eoc.stages.neural import NO_MODEL_NOTICE, NeuralStage, NoModelBackend, Reply, origin_of
from eoc.store.sqlite_schema import SCHEMA_VERSION, UNRECORDED
from tests.helpers import IN_BROWSER


class Sized:
    """A stand-in model whose answer depends on its ``max_tokens``, as a real one's does."""

    name = "sized"
    runs_model = True

    def __init__(self, max_tokens: int) -> None:
        self.max_tokens = max_tokens
        self.asked = 0

    @property
    def origin(self) -> str:
        return origin_of("sized-model", max_tokens=self.max_tokens)

    def generate(self, prompt: str) -> Reply:
        self.asked += 1
        return Reply(f"an answer in {self.max_tokens} tokens to {prompt}")


def stored(path: Path, backend: object) -> Cascade:
    graph = GraphStage(TripleStore([("France", "capital", "Paris")]))
    return Cascade([SqliteCache(path), SqliteKV(path), graph, NeuralStage(backend)])  # type: ignore[arg-type]


needs_files = pytest.mark.skipif(IN_BROWSER, reason="the SQLite store is native")


@needs_files
def test_cascades_sharing_a_store_serve_only_what_their_own_model_and_settings_made(
    tmp_path: Path,
) -> None:
    db = tmp_path / "shared.db"
    short, long = Sized(8), Sized(256)
    with stored(db, short) as a:
        first = a.resolve("tell me a story")
        assert first.stage == "neural" and "8 tokens" in first.payload
        assert a.resolve("what is the capital of France").stage == "graph"
    with stored(db, long) as b:
        assert b.resolve("please tell me a story").stage == "neural"  # not kv's short answer
        other = b.resolve("tell me a story")
        # nor the cache's or kv's exact one: its own answer to the rewording, from the kv
        assert other.stage == "kv" and "256 tokens" in other.payload
        assert b.resolve("what is the capital of France").stage == "cache"  # no model made it
    with stored(db, Sized(8)) as again:  # both answers are kept, side by side
        hit = again.resolve("tell me a story")
        assert (hit.stage, hit.payload) == ("cache", first.payload)
    with stored(db, NoModelBackend()) as none:
        notice = none.resolve("tell me a story")
        assert notice.stage == "neural" and notice.payload.startswith(NO_MODEL_NOTICE)


def test_changed_parameters_are_another_origin() -> None:
    backend = Sized(8)
    cascade = Cascade([CacheStage(), KVStage(), NeuralStage(backend)])
    assert cascade.resolve("tell me a story").stage == "neural"
    assert cascade.resolve("tell me a story").stage == "cache"
    backend.max_tokens = 16  # read afresh: the 8-token answer is not this setting's
    again = cascade.resolve("tell me a story")
    assert again.stage == "neural" and "16 tokens" in again.payload
    assert backend.asked == 2


def test_a_memo_stage_that_cannot_record_origins_gets_no_model_answers() -> None:
    """A third party's cache written before origins were recorded: it could not tell later which
    model made an answer, so it is handed only answers no model made."""

    class OldCache(CacheStage):
        def remember(self, query: Query, payload: str) -> None:  # type: ignore[override]
            super().remember(query, payload)

    old = OldCache()
    graph = GraphStage(TripleStore([("France", "capital", "Paris")]))
    cascade = Cascade([old, KVStage(), graph, NeuralStage(Sized(8))])
    cascade.resolve("tell me a story")
    cascade.resolve("what is the capital of France")
    assert len(old) == 1 and Query("what is the capital of France") in old


@needs_files
def test_a_version_1_store_is_migrated_and_its_unrecorded_answers_are_kept_but_never_served(
    tmp_path: Path,
) -> None:
    db = tmp_path / "v1.db"
    q = Query("tell me a story")
    from eoc.store.sqlite_schema import row_sum

    with sqlite3.connect(db) as conn:
        conn.executescript(
            "CREATE TABLE cache (qid TEXT PRIMARY KEY, payload TEXT NOT NULL, "
            "seq INTEGER NOT NULL, checksum TEXT);"
            "CREATE TABLE kv (key TEXT PRIMARY KEY, prompt TEXT NOT NULL, payload TEXT NOT NULL,"
            " embedder TEXT NOT NULL, vector TEXT, checksum TEXT);"
            "CREATE TABLE triples (s TEXT NOT NULL, p TEXT NOT NULL, o TEXT NOT NULL, "
            "checksum TEXT, PRIMARY KEY (s, p, o));"
            "PRAGMA user_version = 1;"
        )
        conn.execute(
            "INSERT INTO cache VALUES (?, ?, 1, ?)",
            (
                q.id,
                "another model's story",
                row_sum("cache", (q.id, "another model's story"), None),
            ),
        )
        conn.execute(
            "INSERT INTO cache VALUES ('x', 'tampered', 2, ?)",
            (row_sum("cache", ("x", "t"), None),),
        )
    out = io.StringIO()
    assert main(["store", "check", str(db)], out=out) == 1  # read as it is: version 1
    assert "version 1 (answers do not say what made them" in out.getvalue()
    assert "1 do not say what made them: never served" in out.getvalue()
    with stored(db, Sized(8)) as cascade:
        answer = cascade.resolve("tell me a story")
        assert answer.stage == "neural" and "8 tokens" in answer.payload
        assert [r for _, r, _ in cascade.stages[0].damaged] == [2]  # type: ignore[attr-defined]
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5
        kept = conn.execute("SELECT payload, origin FROM cache WHERE qid = ?", (q.id,)).fetchone()
    assert kept == ("another model's story", UNRECORDED)
    out = io.StringIO()
    assert main(["store", "check", str(db)], out=out) == 1  # the tampered row
    assert "1 do not say what made them: never served" in out.getvalue()


def test_the_origin_is_recorded_in_every_store_row_and_covered_by_its_checksum(
    tmp_path: Path,
) -> None:
    if IN_BROWSER:
        pytest.skip("the SQLite store is native")
    db = tmp_path / "s.db"
    with stored(db, Sized(8)) as cascade:
        cascade.resolve("tell me a story")
    with sqlite3.connect(db) as conn:
        origins = {
            o for (o,) in conn.execute("SELECT origin FROM cache UNION SELECT origin FROM kv")
        }
        conn.execute("UPDATE cache SET origin = ? WHERE origin != ''", (Sized(256).origin,))
    assert Sized(8).origin in origins
    cache = SqliteCache(db)  # an origin changed outside eoc fails the row's checksum
    assert [reason for _, _, reason in cache.damaged] == [
        "checksum mismatch (changed since eoc wrote it: the MAC does not hold)"
    ]
    cache.close()
    SqliteTripleStore(db).close()


def test_an_answer_says_it_was_remembered_only_when_something_remembered_it() -> None:
    from eoc.stages.graph import GraphStage, TripleStore

    graph = GraphStage(TripleStore([("France", "capital", "Paris")]))
    bare = Cascade([graph, NeuralStage(Sized(8))])  # no cache, no kv: nothing remembers
    assert bare.resolve("tell me a story").stored == ""
    assert bare.resolve("what is the capital of France").stored == ""
    full = Cascade([CacheStage(), KVStage(), graph, NeuralStage(Sized(8))])
    assert full.resolve("tell me a story").stored == "yes"
    assert full.resolve("tell me a story").stored == ""  # a hit: nothing new to remember
