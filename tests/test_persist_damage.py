"""Damaged, foreign, read-only and failing SQLite stores: typed errors, nothing damaged served.

Files are damaged the way they are in the field: bytes changed in the file itself, rows
written by another program through sqlite3, pages overwritten, writes that fail.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from eoc import Cascade, Query, Stage
from eoc.assemble import default_stages
from eoc.cli.store import add_parser, cmd_store_check, cmd_store_recover
from eoc.errors import (
    InputError,
    InvalidText,
    StoreCorrupt,
    StoreError,
    StoreUnusable,
    StoreVersionError,
)
from eoc.persist import SqliteCache, SqliteKV, SqliteTripleStore
from eoc.stages import CacheStage, KVStage
from eoc.store.sqlite_schema import SCHEMA_VERSION
from tests.helpers import IN_BROWSER, ModelStandIn


def sql(db: Path, *statements: str) -> list[tuple[object, ...]]:
    """Run statements on the file as another program would; the last one's rows."""
    with closing(sqlite3.connect(db, isolation_level=None)) as c:
        rows: list[tuple[object, ...]] = []
        for s in statements:
            rows = c.execute(s).fetchall()
        return rows


def filled(db: Path, n: int = 5, pad: int = 0) -> None:
    """A store holding ``n`` cache answers, a kv pair and a triple (closed, WAL folded in)."""
    cache, kv, triples = SqliteCache(db), SqliteKV(db), SqliteTripleStore(db)
    for i in range(n):
        cache.remember(Query(f"question {i}"), f"answer-{i:04d}" + "x" * pad)
    kv.put("what is the default port for ssh", "22")
    triples.add("Japan", "capital", "Tokyo")
    for s in (cache, kv, triples):
        s.close()


def flip(db: Path, marker: bytes, offset: int = 0, new: bytes = b"9") -> None:
    """Change one byte of the file where ``marker`` is stored (every occurrence)."""
    data = bytearray(db.read_bytes())
    at = data.find(marker)
    assert at >= 0, marker
    while at >= 0:
        data[at + offset : at + offset + 1] = new
        at = data.find(marker, at + 1)
    db.write_bytes(bytes(data))


# -- damaged rows: dropped, recorded, kept in the file ----------------------------------------


def test_a_flipped_byte_in_a_stored_answer_is_not_served(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    filled(db)
    flip(db, b"answer-0003", offset=7)  # "answer-0003" now reads "answer-9003" on disk
    cache = SqliteCache(db)
    assert cache.lookup(Query("question 3")) is None  # not served, so never given a receipt
    assert cache.lookup(Query("question 2")).payload == "answer-0002"  # type: ignore[union-attr]
    assert len(cache) == 4
    [(table, rowid, reason)] = cache.damaged
    assert (table, "checksum" in reason) == ("cache", True)
    cache.close()
    assert sql(db, f"SELECT payload FROM cache WHERE rowid = {rowid}") == [("answer-9003",)]


def test_a_damaged_answer_is_recomputed_not_served_with_a_fresh_receipt(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    with Cascade(default_stages(ModelStandIn(), store=db)) as first:
        assert first.resolve("why is the sky blue").stage is Stage.NEURAL
    flip(Path(db), b"echo: why is the sky blue", offset=6, new=b"W")  # cache and kv rows
    with Cascade(default_stages(ModelStandIn(), store=db)) as second:
        r = second.resolve("why is the sky blue")
        assert (r.stage, r.payload) == (Stage.NEURAL, "echo: why is the sky blue")
        damaged = {d[0] for s in second.stages for d in getattr(s, "damaged", [])}
        assert damaged == {"cache", "kv"}


@pytest.mark.parametrize(
    ("table", "column", "where"),
    [("cache", "payload", "rowid = 2"), ("kv", "prompt", "1"), ("triples", "o", "1")],
)
def test_text_that_is_not_utf8_is_damaged_not_a_crash(
    tmp_path: Path, table: str, column: str, where: str
) -> None:
    db = tmp_path / "s.db"
    filled(db)
    sql(db, f"UPDATE {table} SET {column} = CAST(X'C328FF' AS TEXT) WHERE {where}")
    opener = {"cache": SqliteCache, "kv": SqliteKV, "triples": SqliteTripleStore}[table]
    store = opener(db)
    assert [d[0] for d in store.damaged] == [table]
    assert len(store) == {"cache": 4, "kv": 0, "triples": 0}[table]
    store.close()


# -- refused at open, with a typed error that says what to do ---------------------------------


@pytest.mark.parametrize(
    ("table", "change"),
    [
        # TEXT columns turn numbers into text, so a wrong type there is a BLOB
        ("cache", "payload = X'3432'"),
        ("cache", "seq = 'soon'"),
        ("cache", "seq = 2.5"),
        ("kv", "payload = X'0001'"),
        ("kv", "vector = X'5B5D'"),
        ("triples", "o = X'4142'"),
        ("triples", "checksum = X'00'"),
    ],
)
def test_a_row_of_the_wrong_type_is_store_corrupt(tmp_path: Path, table: str, change: str) -> None:
    db = tmp_path / "s.db"
    filled(db)
    rowid = sql(db, f"SELECT min(rowid) FROM {table}")[0][0]
    sql(db, f"UPDATE {table} SET {change} WHERE rowid = {rowid}")
    opener = {"cache": SqliteCache, "kv": SqliteKV, "triples": SqliteTripleStore}[table]
    with pytest.raises(StoreCorrupt, match=rf"table {table} row {rowid}: .*eoc store recover"):
        opener(db)


def test_an_unknown_schema_version_is_refused_by_number(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    filled(db)
    sql(db, "PRAGMA user_version = 7")
    for opener in (SqliteCache, SqliteKV, SqliteTripleStore):
        with pytest.raises(
            StoreVersionError, match=r"schema version 7; this eoc reads versions 0, 1"
        ):
            opener(db)
    assert sql(db, "PRAGMA user_version") == [(7,)]


@pytest.mark.parametrize(
    "schema",
    [
        "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)",
        "CREATE TABLE cache (qid TEXT PRIMARY KEY, answer TEXT)",  # eoc's name, other columns
        "CREATE VIEW kv AS SELECT 1 AS key",
    ],
)
def test_another_programs_database_is_refused_untouched(tmp_path: Path, schema: str) -> None:
    db = tmp_path / "other.db"
    sql(db, schema)
    before = db.read_bytes()
    with pytest.raises(StoreVersionError, match="another program's"):
        SqliteKV(db)
    assert db.read_bytes() == before


@pytest.mark.parametrize(
    "data", [os.urandom(4096), b"hello", b"SQLite format 3\x00" + b"\x07" * 90]
)
def test_a_file_that_is_not_sqlite_is_refused_untouched(tmp_path: Path, data: bytes) -> None:
    db = tmp_path / "notes.db"
    db.write_bytes(data)
    with pytest.raises(StoreVersionError, match="not an SQLite database"):
        SqliteCache(db)
    assert db.read_bytes() == data


def test_a_damaged_page_fails_the_check_and_recover_copies_the_rest(tmp_path: Path) -> None:
    db, new = tmp_path / "s.db", tmp_path / "new.db"
    filled(db, n=300, pad=200)  # about 15 answers a page
    data = bytearray(db.read_bytes())
    page = data.find(b"answer-0150") // 4096 * 4096
    data[page : page + 8] = b"\xff" * 8  # the page header: the b-tree page is unreadable
    db.write_bytes(bytes(data))
    with pytest.raises(StoreCorrupt, match=r"integrity check .*eoc store recover"):
        SqliteCache(db)
    out = io.StringIO()
    assert cmd_store_recover(argparse.Namespace(src=str(db), dst=str(new), json=True), out) == 0
    report = json.loads(out.getvalue())
    cache_report = report["tables"]["cache"]
    assert report["quick_check"] != ["ok"] and cache_report["unreadable"] > 0
    assert 250 < cache_report["copied"] < 300
    assert report["tables"]["kv"]["copied"] == report["tables"]["triples"]["copied"] == 1
    cache = SqliteCache(new)
    assert len(cache) == cache_report["copied"] and cache.damaged == []
    assert cache.lookup(Query("question 150")) is None
    assert cache.lookup(Query("question 0")).payload == "answer-0000" + "x" * 200  # type: ignore[union-attr]
    assert cache.lookup(Query("question 299")).payload == "answer-0299" + "x" * 200  # type: ignore[union-attr]
    cache.close()


def _refused(path: Path) -> None:
    for opener in (SqliteCache, SqliteKV, SqliteTripleStore):
        with pytest.raises(StoreUnusable, match="not a regular file"):
            opener(path)


def test_a_folder_or_a_link_to_one_is_not_a_store(tmp_path: Path) -> None:
    (tmp_path / "dir.db").mkdir()
    _refused(tmp_path / "dir.db")
    if not IN_BROWSER:
        (tmp_path / "link.db").symlink_to(tmp_path / "dir.db")
        _refused(tmp_path / "link.db")


@pytest.mark.skipif(IN_BROWSER, reason="FIFOs and /dev/zero are OS files")
def test_a_fifo_or_a_device_is_not_a_store(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.db")
    _refused(tmp_path / "pipe.db")  # refused before opening: opening a FIFO could block
    if Path("/dev/zero").exists():
        _refused(Path("/dev/zero"))


def _read_only(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """Make ``os.access`` report ``path`` not writable.

    The tests run as root, for whom chmod takes nothing away (and read-only mounts are out
    of reach), so the permission the store asks for is simulated; the refusal it leads to is
    the real code path.
    """
    real_access = os.access

    def access(p: object, mode: int, **kw: object) -> bool:
        if Path(str(p)) == path and mode & os.W_OK:
            return False
        return real_access(p, mode, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "access", access)


def test_a_read_only_store_is_refused_before_anything_is_computed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "s.db"
    filled(db)
    before = db.read_bytes()
    _read_only(monkeypatch, db.resolve())
    with pytest.raises(StoreUnusable, match="is read-only"):
        default_stages(store=str(db))  # no cascade exists yet, so no answer could be lost
    assert db.read_bytes() == before


def test_a_read_only_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _read_only(monkeypatch, tmp_path.resolve())
    with pytest.raises(StoreUnusable, match=r"read-only: SQLite's WAL mode creates s\.db-wal"):
        SqliteCache(tmp_path / "s.db")
    assert not (tmp_path / "s.db").exists()


def test_a_missing_folder_is_an_error_and_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "deeper" / "s.db"
    for open_it in (lambda: default_stages(store=str(path)), lambda: SqliteKV(path)):
        with pytest.raises(StoreUnusable, match="does not exist: create it"):
            open_it()
    assert not (tmp_path / "missing").exists()


def test_default_stages_checks_every_store_before_writing_the_pack(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    filled(db)
    sql(db, "UPDATE triples SET s = X'35'")  # the graph's rows are damaged: the last store opened
    with pytest.raises(StoreCorrupt, match="table triples"):
        default_stages(store=str(db))
    assert sql(db, "SELECT count(*) FROM kv") == [(1,)]  # the pack was not written first


# -- writes: memory changes only after the commit ---------------------------------------------


def _fail_writes(db: Path, table: str, when: str = "1") -> None:
    # a trigger makes the database itself refuse the write, as a full disk would
    sql(
        db,
        f"CREATE TRIGGER refuse BEFORE INSERT ON {table} WHEN {when} "
        "BEGIN SELECT RAISE(ABORT, 'disk full'); END",
    )


def test_a_failed_cache_write_changes_nothing_in_memory(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    cache = SqliteCache(db, max_entries=2)
    cache.remember(Query("a?"), "A")
    cache.remember(Query("b?"), "B")
    _fail_writes(db, "cache")
    with pytest.raises(StoreError, match="disk full"):
        cache.remember(Query("c?"), "C")  # would evict a? from memory and file
    assert Query("a?") in cache and Query("c?") not in cache and len(cache) == 2
    sql(db, "DROP TRIGGER refuse")
    cache.remember(Query("c?"), "C")  # the store still works: no transaction was left open
    assert Query("a?") not in cache
    cache.close()
    assert sql(db, "SELECT payload FROM cache ORDER BY seq") == [("B",), ("C",)]


def test_a_failed_kv_write_changes_nothing_in_memory(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    kv = SqliteKV(db)
    _fail_writes(db, "kv")
    with pytest.raises(StoreError, match="disk full"):
        kv.put("what is the default port for ssh", "22")
    with pytest.raises(StoreError, match="disk full"):
        kv.load_pairs([("what is 2+2", "4"), ("what is 3+3", "6")])
    assert len(kv) == 0 and kv.lookup(Query("what is 2+2")) is None
    sql(db, "DROP TRIGGER refuse")
    assert kv.load_pairs([("what is 2+2", "4")]) == 1
    kv.close()
    again = SqliteKV(db)
    assert len(again) == 1
    again.close()


def test_a_failed_batch_of_triples_is_rolled_back_whole(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    store = SqliteTripleStore(db)
    _fail_writes(db, "triples", when="NEW.s = 'Peru'")
    with pytest.raises(StoreError, match="disk full"):
        store.add_all([("France", "capital", "Paris"), ("Peru", "capital", "Lima")])
    with pytest.raises(StoreError, match="disk full"):
        store.add("Peru", "capital", "Lima")
    assert len(store) == 0 and store.objects("France", "capital") == []
    assert store.add("Japan", "capital", "Tokyo")  # the failed batch left no transaction open
    store.close()
    assert sql(db, "SELECT s FROM triples") == [("Japan",)]


def test_a_store_closed_underneath_raises_a_typed_error(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    cache, triples = SqliteCache(db), SqliteTripleStore(db)
    cache.close()
    triples.close()
    with pytest.raises(StoreUnusable, match="closed"):
        cache.remember(Query("a?"), "A")
    with pytest.raises(StoreUnusable, match="closed"):
        triples.add("Japan", "capital", "Tokyo")
    assert len(cache) == 0 and len(triples) == 0


@pytest.mark.parametrize("persistent", [False, True])
def test_a_cached_answer_must_be_valid_text(tmp_path: Path, persistent: bool) -> None:
    cache = SqliteCache(tmp_path / "s.db") if persistent else CacheStage()
    for bad in ("a\x00b", "lone \ud800", "   ", 42):
        with pytest.raises(InvalidText, match="a cached answer"):
            cache.remember(Query("q?"), bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidText):
        cache.lookup("q?")  # type: ignore[arg-type]
    assert len(cache) == 0
    if persistent:
        cache.close()
        assert sql(tmp_path / "s.db", "SELECT count(*) FROM cache") == [(0,)]


def test_bad_triples_and_pairs_are_input_errors(tmp_path: Path) -> None:
    triples, kv = SqliteTripleStore(tmp_path / "s.db"), SqliteKV(tmp_path / "s.db")
    for bad in ([("a", "b")], [("a", "b", None)], 5, [("a", "b", "c\x00")]):
        with pytest.raises(InputError):
            triples.add_all(bad)  # type: ignore[arg-type]
    for pairs in (5, [("only one",)], [("q", 4)]):
        with pytest.raises(InputError):
            kv.load_pairs(pairs)  # type: ignore[arg-type]
    assert len(triples) == len(kv) == 0
    triples.close()
    kv.close()


# -- the layout before checksums --------------------------------------------------------------

LEGACY = (
    "CREATE TABLE cache (qid TEXT PRIMARY KEY, payload TEXT NOT NULL, seq INTEGER NOT NULL)",
    "CREATE TABLE kv (key TEXT PRIMARY KEY, prompt TEXT NOT NULL, payload TEXT NOT NULL, "
    "embedder TEXT NOT NULL, vector TEXT)",
    "CREATE TABLE triples (s TEXT NOT NULL, p TEXT NOT NULL, o TEXT NOT NULL, "
    "PRIMARY KEY (s, p, o))",
)


def legacy_store(db: Path, vector: str | None = None) -> None:
    q = Query("why is the sky blue")
    name = KVStage().embedder.name
    sql(
        db,
        *LEGACY,
        f"INSERT INTO cache VALUES ('{q.id}', 'Rayleigh scattering', 1)",
        "INSERT INTO cache VALUES ('x', CAST(X'C328' AS TEXT), 2)",
        f"INSERT INTO kv VALUES ('default port ssh', 'default port for ssh', '22', '{name}', "
        f"{'NULL' if vector is None else repr(vector)})",
        "INSERT INTO triples VALUES ('Japan', 'capital', 'Tokyo')",
    )


def test_a_store_of_the_layout_before_checksums_is_migrated_and_served(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    legacy_store(db)
    cache, kv, triples = SqliteCache(db), SqliteKV(db), SqliteTripleStore(db)
    assert cache.lookup(Query("why is the sky blue")).payload == "Rayleigh scattering"  # type: ignore[union-attr]
    assert [(t, reason) for t, _, reason in cache.damaged] == [
        ("cache", "payload is not valid UTF-8")
    ]
    assert kv.lookup(Query("default port for ssh?")).payload == "22"  # type: ignore[union-attr]
    assert triples.objects("Japan", "capital") == ["Tokyo"]
    for s in (cache, kv, triples):
        s.close()
    assert sql(db, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    assert sql(db, "SELECT count(*) FROM kv WHERE checksum IS NULL") == [(0,)]
    again = SqliteCache(db)  # a second open finds the current layout
    assert len(again) == 1
    again.close()


@pytest.mark.parametrize(
    "vector",
    [
        "[]",
        '{"dense": "x"}',
        '{"sparse": {"a": 1}}',
        '{"sparse": {"1": 1e999}}',
        "[[[[",
        "7" * 5000,
    ],
)
def test_a_malformed_stored_vector_is_re_embedded_not_a_crash(tmp_path: Path, vector: str) -> None:
    db = tmp_path / "old.db"
    legacy_store(db, vector)  # the old layout had no checksum to catch a bad vector
    kv = SqliteKV(db)
    assert kv.lookup(Query("default port for ssh?")).payload == "22"  # type: ignore[union-attr]
    assert kv.damaged == []
    kv.close()


def test_a_wrong_typed_row_refuses_the_migration_and_leaves_the_file(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    legacy_store(db)
    sql(db, "UPDATE triples SET o = X'33'")
    with pytest.raises(StoreCorrupt, match="table triples row 1: o is blob"):
        SqliteCache(db)
    assert sql(db, "PRAGMA user_version") == [(0,)]
    assert [r[1] for r in sql(db, "PRAGMA table_info(cache)")] == ["qid", "payload", "seq"]


def test_lru_order_survives_restarts(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    first = SqliteCache(db, max_entries=2)
    for q in "abcde":
        first.remember(Query(q), q.upper())  # the file keeps d and e, written last
    first.close()
    second = SqliteCache(db, max_entries=2)
    second.remember(Query("f"), "F")  # evicts d; f is now the newest
    second.close()
    third = SqliteCache(db, max_entries=2)
    third.remember(Query("g"), "G")  # must evict e, the oldest, not f
    assert third.lookup(Query("f")) is not None and third.lookup(Query("e")) is None
    third.close()


# -- eoc store check | recover ----------------------------------------------------------------


def run(*argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="eoc")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    out = io.StringIO()
    return args.fn(args, out), out.getvalue()


def test_store_check_reports_clean_and_damaged_files(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    filled(db)
    code, text = run("store", "check", str(db))
    assert code == 0 and "verdict : clean" in text and "cache : 5 good rows" in text
    flip(db, b"answer-0001", offset=7)
    rowid = sql(db, "SELECT rowid FROM cache WHERE payload = 'answer-9001'")[0][0]
    code, text = run("store", "check", str(db), "--json")
    doc = json.loads(text)
    assert code == 1 and doc["clean"] is False and doc["schema_version"] == SCHEMA_VERSION
    assert [(d["table"], d["rowid"]) for d in doc["damaged"]] == [("cache", rowid)]
    assert doc["tables"]["cache"] == {"rows": 4, "damaged": 1, "unreadable": 0}


def test_store_check_does_not_migrate_an_old_file(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    legacy_store(db)
    code, text = run("store", "check", str(db))
    assert code == 1 and "version 0" in text and "payload is not valid UTF-8" in text
    assert sql(db, "PRAGMA user_version") == [(0,)]


def test_store_recover_drops_damaged_rows_and_refuses_to_overwrite(tmp_path: Path) -> None:
    db, new = tmp_path / "s.db", tmp_path / "new.db"
    filled(db)
    flip(db, b"answer-0001", offset=7)
    code, text = run("store", "recover", str(db), str(new))
    assert code == 0 and "cache : 4 copied, 1 damaged" in text
    cache = SqliteCache(new)
    assert len(cache) == 4 and cache.damaged == []
    cache.close()
    with pytest.raises(StoreUnusable, match="already exists"):
        run("store", "recover", str(db), str(new))


def test_store_recover_refuses_a_foreign_source_and_writes_nothing(tmp_path: Path) -> None:
    src, new = tmp_path / "other.db", tmp_path / "new.db"
    sql(src, "CREATE TABLE users (id INTEGER)")
    with pytest.raises(StoreVersionError):
        cmd_store_recover(argparse.Namespace(src=str(src), dst=str(new), json=False), io.StringIO())
    with pytest.raises(StoreUnusable, match="does not exist"):
        cmd_store_check(
            argparse.Namespace(file=str(tmp_path / "nope.db"), json=False), io.StringIO()
        )
    assert not new.exists()
