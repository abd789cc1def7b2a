"""Store rows signed with the user's key (schema 5, eoc/persist_schema.py and eoc/userkey.py):
a row edited outside eoc is not served even with its checksum recomputed, ``eoc store check``
says so, a store signed with another key is refused with what to do, and an older store's rows
are signed when it opens."""

from __future__ import annotations

import hashlib
import io
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from eoc import Cascade
from eoc.cli.main import main
from eoc.errors import StoreUnusable
from eoc.persist import SqliteCache, SqliteKV
from eoc.query import Query
from eoc.stages import NeuralStage
from eoc.store.keys import key_id
from eoc.store.sqlite_db import store_key
from eoc.store.sqlite_schema import SCHEMA_VERSION, row_sum, summed
from tests.helpers import IN_BROWSER, ModelStandIn

PHISH = "Your bank asks you to confirm your password at http://example.invalid/login"


def _made(db: Path) -> None:
    cache, kv = SqliteCache(db), SqliteKV(db)
    with Cascade([cache, kv, NeuralStage(ModelStandIn())]) as c:
        c.resolve("how do I reset my bank password")


def _plant(db: Path, key: bytes | None) -> None:
    """Replace every cached and kv answer with a phishing text and recompute each row's
    checksum: as a plain digest (``key`` None: what versions 1 to 4 checked) or a MAC with
    ``key`` (another user's)."""
    conn = sqlite3.connect(db)
    for qid, origin, meta in conn.execute("SELECT qid, origin, meta FROM cache").fetchall():
        fields = summed((qid, PHISH, origin), meta)
        conn.execute(
            "UPDATE cache SET payload = ?, checksum = ? WHERE qid = ?",
            (PHISH, row_sum("cache", fields, key), qid),
        )
    rows = conn.execute("SELECT key, prompt, embedder, vector, origin, meta FROM kv").fetchall()
    for k, prompt, embedder, vector, origin, meta in rows:
        fields = summed((k, prompt, PHISH, embedder, vector, origin), meta)
        conn.execute(
            "UPDATE kv SET payload = ?, checksum = ? WHERE key = ?",
            (PHISH, row_sum("kv", fields, key), k),
        )
    conn.commit()
    conn.close()


@pytest.mark.parametrize("key", [None, b"another user's key, 32 bytes..."], ids=["sha", "mac"])
def test_a_row_edited_outside_eoc_is_not_served_whatever_checksum_it_carries(
    tmp_path: Path, key: bytes | None
) -> None:
    db = tmp_path / "s.db"
    _made(db)
    _plant(db, key)
    cache, kv = SqliteCache(db), SqliteKV(db)
    assert len(cache) == 0 and len(kv) == 0
    assert {t for t, _, _ in cache.damaged} == {"cache"}
    assert all("MAC does not hold" in why for _, _, why in [*cache.damaged, *kv.damaged])
    with Cascade([cache, kv, NeuralStage(ModelStandIn())]) as c:
        for q in ("how do I reset my bank password", "How do I reset my bank password?"):
            assert c.resolve(q).payload != PHISH


@pytest.mark.skipif(IN_BROWSER, reason="the CLI's store check is native")
def test_eoc_store_check_finds_the_planted_rows(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _made(db)
    out = io.StringIO()
    assert main(["store", "check", str(db)], out=out) == 0
    assert "rows signed with your key" in out.getvalue()
    _plant(db, None)
    out = io.StringIO()
    assert main(["store", "check", str(db)], out=out) == 1
    assert "MAC does not hold" in out.getvalue() and "verdict : damaged" in out.getvalue()


def test_a_store_signed_with_another_key_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _made(db)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    other = b"k" * 32
    with pytest.raises(StoreUnusable, match="EOC_KEY_FILE") as err:
        SqliteCache(db, key=other)
    assert key_id(other) in err.value.reason and "signed with another key" in err.value.reason
    with pytest.raises(StoreUnusable):
        SqliteKV(db, key=other)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    cache = SqliteCache(db)  # the user's own key reads every row
    assert len(cache) == 1 and not cache.damaged
    cache.close()


def test_an_older_store_is_signed_when_it_opens_and_its_damaged_rows_stay_damaged(
    tmp_path: Path,
) -> None:
    db = tmp_path / "v4.db"
    _made(db)
    conn = sqlite3.connect(db)  # back to version 4: plain digests, no table info
    for table, fields_sql, n in (
        ("cache", "qid, payload, origin, meta", 3),
        ("kv", "key, prompt, payload, embedder, vector, origin, meta", 6),
    ):
        for rowid, *values in conn.execute(f"SELECT rowid, {fields_sql} FROM {table}").fetchall():
            summed_ = row_sum(table, summed(tuple(values[:n]), values[n]), None)
            conn.execute(f"UPDATE {table} SET checksum = ? WHERE rowid = ?", (summed_, rowid))
    conn.execute("DROP TABLE info")
    conn.execute("UPDATE cache SET payload = 'tampered in version 4'")  # its digest fails
    conn.execute("PRAGMA user_version = 4")
    conn.commit()
    conn.close()
    cache, kv = SqliteCache(db), SqliteKV(db)
    assert len(kv) == 1 and not kv.damaged  # signed with the user's key
    assert len(cache) == 0 and len(cache.damaged) == 1  # damaged before: still damaged
    q = Query("how do I reset my bank password")
    assert kv.lookup(q) is not None
    cache.close()
    kv.close()
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5
        found = conn.execute("SELECT value FROM info WHERE name = 'key'").fetchone()
    assert found == (key_id(store_key()),)


def test_a_store_whose_table_info_was_dropped_still_opens_and_serves_only_what_it_signed(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    _made(db)
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("DROP TABLE info")
        conn.commit()
    cache = SqliteCache(db)  # named again with this user's key; its rows still hold
    assert len(cache) == 1 and not cache.damaged
    cache.close()
    other = b"o" * 32
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("DROP TABLE info")
        conn.commit()
    cache = SqliteCache(db, key=other)  # another key finds every row changed: none served
    assert len(cache) == 0 and len(cache.damaged) == 1
    cache.close()
