"""Stores in SQLite (stdlib ``sqlite3``, WAL mode), surviving restarts and crashes.

A stage keeps its working set in memory and writes every change through its store inside a
transaction that is committed before the call returns: once ``remember``/``put``/``add`` has
returned, the change is *acknowledged* and a process killed the next instant loses nothing of
it. ``synchronous=FULL`` makes that hold across power loss too. Memory changes only after the
commit: a write that fails (disk full, file made read-only) raises a
:class:`~eoc.errors.StoreError` and leaves the store as it was.

* :class:`SqliteCacheStore` — a cache's answers (:class:`eoc.store.CacheStore`); LRU order is
  the order of last write (a hit does not write: a database write per hit would cost far more
  than the hit).
* :class:`SqliteKVStore` — a kv's pairs (:class:`eoc.store.KVStore`); the vectors are stored
  too, so a restart embeds nothing.
* :class:`SqliteTripleRows` — the graph's triples (:class:`eoc.store.TripleRows`).

:mod:`eoc.persist` builds the stages over them in one call each (``SqliteCache(path)``).

They can share one database file. Opening checks the file before anything else happens: a
regular, writable file (or a new one in an existing, writable folder), an SQLite database of
eoc's (schema version, see :mod:`eoc.store.sqlite_schema`; the layout before checksums is migrated),
``PRAGMA quick_check``, and every row's types. Each row carries a checksum: a row that fails it
(or is not valid UTF-8, or not valid text) is not loaded, so never served; it stays in the file
and is listed in the store's ``damaged`` as ``(table, rowid, reason)``. ``eoc store check FILE``
reports the same, and ``eoc store recover OLD NEW`` copies every good row into a fresh file.

In the browser the memory stores stay the default.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from eoc.errors import EocError, StoreError
from eoc.store.entry import meta_from_text
from eoc.store.partition import keyed, tag_of
from eoc.store.parts import StoreParts
from eoc.store.protocols import CacheListener, CacheRow, Embedding, KVListener, KVRow, Match
from eoc.store.rules import kv_key
from eoc.store.sqlite_db import Damage, StoreDb, opened
from eoc.store.sqlite_schema import count_forget, forgets, row_sum, summed
from eoc.store.vectors import decode_vector, encode_vector


def _rekey(db: StoreDb, groups: dict[str, list[tuple[int, str, tuple[Any, ...]]]]) -> None:
    """Key each kv row as this eoc folds its question (:func:`eoc.text.forms.fold`), where an
    older eoc folded more ("what is 7*8!" was keyed as "what is 7*8"), so that the file's keys
    are the ones memory serves and a forget deletes by.

    ``groups``: for each key as folded now, the rows (rowid, key in the file, other fields) read
    under it, in the order read. Memory serves the last of a group; the others, which it
    replaced, are deleted, as a put replacing them would have. One transaction; nothing is
    written where every key is current. A damaged row (not served, kept for ``eoc store
    recover``) that holds a key a row would move to keeps it, and that row its old key."""
    moving: list[tuple[str, int, str, tuple[Any, ...]]] = []
    shadowed: list[tuple[int]] = []
    for new, rows in groups.items():
        *replaced, (rowid, old, fields) = rows
        shadowed.extend((r,) for r, _, _ in replaced)
        if old != new:
            moving.append((new, rowid, old, fields))
    if not moving and not shadowed:
        return
    with db.transaction("keying kv pairs as this eoc folds questions") as c:
        c.executemany("DELETE FROM kv WHERE rowid = ?", shadowed)
        # out of each other's way first: NUL is in no key eoc writes
        c.executemany(
            "UPDATE kv SET key = ? WHERE rowid = ?", [(f"\x00{r}", r) for _, r, _, _ in moving]
        )
        for new, rowid, old, (prompt, payload, embedder, vector, origin, text) in moving:
            taken = c.execute("SELECT 1 FROM kv WHERE key = ?", (new,)).fetchone()
            key = old if taken else new
            fields = (key, prompt, payload, embedder, vector, origin)
            checked = row_sum("kv", summed(fields, text), db.key)
            c.execute("UPDATE kv SET key = ?, checksum = ? WHERE rowid = ?", (key, checked, rowid))


LISTEN_EVERY_S = 0.5
"""How often, at most, a store looks whether another process sharing its file forgot
something (a lookup looks; reading one number costs a few microseconds): a forget reaches
every process within this long of its next lookup."""


def _count(db: StoreDb, c: Any) -> None:
    """Count a forget in the file (inside its transaction), as this process has seen it."""
    count_forget(c)
    db.forgets = forgets(c)


def heard_forgets(part: Any, db: StoreDb, drop: Callable[[], None]) -> None:
    """Where another process sharing ``db``'s file forgot something since ``part`` last looked
    (at most every :data:`LISTEN_EVERY_S`), ``drop`` from memory what the file no longer holds.
    A store that cannot be read now is looked at again later: a lookup never fails for it."""
    now = time.monotonic()
    if now < part._listen_at:
        return
    part._listen_at = now + LISTEN_EVERY_S
    try:
        with db.lock, db.guard("reading what the store holds after another process forgot"):
            seen = forgets(db.conn)
            if seen != db.forgets:
                drop()
                db.forgets = seen
    except StoreError:
        return


class SqliteCacheStore:
    """A cache's answers in SQLite (:class:`eoc.store.CacheStore`): the table ``cache``, one row
    per answer, ordered by write (LRU order is the order of last write: a hit does not write,
    as a database write per hit would cost far more than the hit).

    Raises (when opened): :class:`~eoc.errors.StoreUnusable`,
    :class:`~eoc.errors.StoreVersionError` or :class:`~eoc.errors.StoreCorrupt`, before anything
    is read or written.
    """

    polls = True  # another process sharing the file may forget: a lookup looks (heard_forgets)

    def __init__(self, path: str | Path, *, key: bytes | None = None) -> None:
        self.damaged: list[Damage] = []
        self._seq = 0
        self._listen_at = 0.0
        self._rows: list[CacheRow] = []
        self._stage: CacheListener | None = None
        self.db = opened(path, self._read, key)

    def _read(self, db: StoreDb) -> None:
        rows = list(db.rows("cache", self.damaged, order="seq, rowid"))  # oldest first
        with db.guard("reading cache"):
            # new rows must sort after every stored one, damaged ones included
            top = db.conn.execute("SELECT max(seq) FROM cache").fetchone()[0]
        self._seq = top if isinstance(top, int) else 0
        self._rows = [
            CacheRow(qid, payload, origin, meta_from_text(text))  # checked by db.rows
            for _, qid, payload, _, origin, text in rows
        ]

    def rows(self, newest: int) -> list[CacheRow]:
        return self._rows

    def kept_only(self, kept: set[str]) -> None:
        """Delete the rows read that memory did not keep (expired, or past bounds smaller than
        when the file was written); a damaged row stays for ``eoc store recover``."""
        gone = [(row.qid,) for row in self._rows if row.qid not in kept]
        self._rows = []
        if gone:
            with self.db.lock, self.db.transaction("trimming cache") as c:
                c.executemany("DELETE FROM cache WHERE qid = ?", gone)

    def put(self, row: CacheRow, evicted: Sequence[str]) -> None:
        """Write ``row`` (replacing an answer under its id) and delete what memory evicts for it,
        in one transaction."""
        text = row.meta.to_text()
        fields = (row.qid, row.payload, row.origin)
        with self.db.lock:
            seq = self._seq + 1
            with self.db.transaction("caching an answer") as c:
                c.execute(
                    "INSERT INTO cache (qid, payload, seq, origin, meta, checksum) "
                    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(qid) DO UPDATE SET "
                    "payload = excluded.payload, seq = excluded.seq, origin = excluded.origin, "
                    "meta = excluded.meta, checksum = excluded.checksum",
                    (
                        *fields[:2],
                        seq,
                        row.origin,
                        text,
                        row_sum("cache", summed(fields, text), self.db.key),
                    ),
                )
                c.executemany("DELETE FROM cache WHERE qid = ?", [(q,) for q in evicted])
            self._seq = seq

    def delete(self, qids: Sequence[str]) -> None:
        with self.db.lock, self.db.transaction("removing expired cached answers") as c:
            c.executemany("DELETE FROM cache WHERE qid = ?", [(q,) for q in qids])

    def forget(self, qids: Sequence[str], match: Match | None = None) -> list[str]:
        """Delete ``qids`` (memory holds every row of the file it could serve) and count the
        forget, so other processes sharing the file drop them too."""
        with self.db.lock, self.db.transaction("forgetting cached answers") as c:
            c.executemany("DELETE FROM cache WHERE qid = ?", [(q,) for q in qids])
            _count(self.db, c)
        return list(qids)

    def clear(self) -> None:
        with self.db.lock, self.db.transaction("clearing the cache") as c:
            c.execute("DELETE FROM cache")
            _count(self.db, c)

    def poll(self) -> None:
        """Where another process forgot something, drop from memory what the file no longer
        holds (:func:`heard_forgets`)."""
        if self._stage is not None:
            heard_forgets(self, self.db, self._drop_gone)

    def _drop_gone(self) -> None:
        kept = {str(qid) for (qid,) in self.db.conn.execute("SELECT qid FROM cache").fetchall()}
        assert self._stage is not None
        self._stage.keep_only(lambda qid, _origin: qid in kept)

    def listen(self, stage: CacheListener) -> None:
        self._stage = stage

    def close(self) -> None:
        self.db.close()

    def __repr__(self) -> str:
        return f"SqliteCacheStore({self.db.path!s})"


_KV_UPSERT = (
    "INSERT INTO kv (key, prompt, payload, embedder, vector, origin, meta, checksum) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET prompt = excluded.prompt, "
    "payload = excluded.payload, embedder = excluded.embedder, vector = excluded.vector, "
    "origin = excluded.origin, meta = excluded.meta, checksum = excluded.checksum"
)


class SqliteKVStore:
    """A kv's pairs in SQLite with each pair's vector (:class:`eoc.store.KVStore`), so a restart
    embeds nothing: the table ``kv``, one row per pair, keyed by its folded question (opened by
    its partition's tag). Rows an older eoc keyed as it folded questions then are keyed again as
    this one folds them, once, when read.

    Raises (when opened): as :class:`SqliteCacheStore`.
    """

    polls = True  # another process sharing the file may forget: a lookup looks (heard_forgets)
    defers = False  # a bulk load is written, with its vectors, at once

    def __init__(self, path: str | Path, *, key: bytes | None = None) -> None:
        self.damaged: list[Damage] = []
        # key -> (answer, origin) in the file (a bulk load skips a pair stored with its answer)
        self._stored: dict[str, tuple[str, str]] = {}
        self._listen_at = 0.0
        self._stage: KVListener | None = None
        self._embedder = ""
        self._raw: list[tuple[Any, ...]] = []
        self.db = opened(path, self._read, key)

    def _read(self, db: StoreDb) -> None:
        self._raw = list(db.rows("kv", self.damaged))

    def rows(self, embedder: Embedding, dense: bool) -> list[KVRow]:
        """The pairs read at opening, each with its vector where it was stored for
        ``embedder`` (which this store then writes beside each vector)."""
        self._embedder = embedder.name
        out: list[KVRow] = []
        # the rows served under each key as this eoc folds questions, in the order read
        groups: dict[str, list[tuple[int, str, tuple[Any, ...]]]] = {}
        for rowid, key, prompt, payload, made_by, vector, origin, text in self._raw:
            try:
                now_key = keyed(tag_of(key), kv_key(prompt, payload))  # checked by db.rows
            except EocError as exc:
                self.damaged.append(("kv", rowid, exc.reason))
                continue
            vec = None
            if made_by == embedder.name and vector is not None:
                vec = decode_vector(vector, embedder, dense)
            out.append(KVRow(now_key, prompt, payload, origin, meta_from_text(text), vec, rowid))
            self._stored[now_key] = (payload, origin)
            fields = (prompt, payload, made_by, vector, origin, text)
            groups.setdefault(now_key, []).append((rowid, key, fields))
        self._raw = []
        _rekey(self.db, groups)
        return out

    def searcher(self, embedder: Embedding, dense: bool) -> None:
        """No search of its own: the stage reads the pairs and searches them in memory."""
        return None

    def holds(self, key: str, payload: str, origin: str) -> bool:
        return self._stored.get(key) == (payload, origin)

    def _row(self, row: KVRow) -> tuple[str, ...]:
        text = row.meta.to_text()
        fields = (
            row.key,
            row.prompt,
            row.payload,
            self._embedder,
            encode_vector(row.vector),
            row.origin,
        )
        return (*fields, text, row_sum("kv", summed(fields, text), self.db.key))

    def put(self, rows: Sequence[KVRow]) -> None:
        """Write ``rows`` (replacing pairs under their keys) in one transaction."""
        with self.db.lock:
            encoded = [self._row(r) for r in rows]
            if len(encoded) == 1:
                self.db.write(_KV_UPSERT, encoded[0], "storing a kv pair")
            else:
                with self.db.transaction("storing kv pairs") as c:
                    c.executemany(_KV_UPSERT, encoded)
            for r in rows:
                self._stored[r.key] = (r.payload, r.origin)

    def delete(self, keys: Sequence[str]) -> None:
        with self.db.lock:
            with self.db.transaction("removing expired kv pairs") as c:
                c.executemany("DELETE FROM kv WHERE key = ?", [(k,) for k in keys])
            for key in keys:
                self._stored.pop(key, None)

    def forget(self, keys: Sequence[str], match: Match | None = None) -> list[str]:
        """Delete ``keys`` (memory holds every pair of the file it could serve) and count the
        forget, so other processes sharing the file drop them too."""
        with self.db.lock:
            if keys:
                with self.db.transaction("forgetting kv pairs") as c:
                    c.executemany("DELETE FROM kv WHERE key = ?", [(k,) for k in keys])
                    _count(self.db, c)
            for key in keys:
                self._stored.pop(key, None)
        return list(keys)

    def poll(self) -> None:
        """Where another process forgot something, drop from memory every pair read from the
        file, or model's answer, that the file no longer holds (:func:`heard_forgets`)."""
        if self._stage is not None:
            heard_forgets(self, self.db, self._drop_gone)

    def _drop_gone(self) -> None:
        kept = {str(k) for (k,) in self.db.conn.execute("SELECT key FROM kv").fetchall()}
        stored = dict(self._stored)
        assert self._stage is not None
        self._stage.keep_only(lambda key, origin: key in kept or not (origin or key in stored))
        for key in [k for k in self._stored if k not in kept]:
            del self._stored[key]

    def listen(self, stage: KVListener) -> None:
        self._stage = stage

    def close(self) -> None:
        self.db.close()

    def __repr__(self) -> str:
        return f"SqliteKVStore({self.db.path!s})"


class SqliteTripleRows:
    """A triple store's triples in SQLite (:class:`eoc.store.TripleRows`): the table
    ``triples``.

    Raises (when opened): as :class:`SqliteCacheStore`.
    """

    def __init__(self, path: str | Path, *, key: bytes | None = None) -> None:
        self.damaged: list[Damage] = []
        self._read: list[tuple[str, str, str, int]] = []

        def read(db: StoreDb) -> None:
            self._read = [(s, p, o, rowid) for rowid, s, p, o in db.rows("triples", self.damaged)]

        self.db = opened(path, read, key)

    def rows(self) -> list[tuple[str, str, str, int]]:
        found, self._read = self._read, []
        return found

    def put(self, triples: Sequence[tuple[str, str, str]]) -> None:
        with self.db.lock, self.db.transaction("storing triples") as c:
            c.executemany(
                "INSERT OR IGNORE INTO triples (s, p, o, checksum) VALUES (?, ?, ?, ?)",
                [(*t, row_sum("triples", t, self.db.key)) for t in triples],
            )

    def listen(self, take: Callable[[Sequence[tuple[str, str, str, int]]], None]) -> None:
        return None  # triples are only added: another process's appear at this one's next start

    def close(self) -> None:
        self.db.close()

    def __repr__(self) -> str:
        return f"SqliteTripleRows({self.db.path!s})"


def open_store(location: str) -> StoreParts:
    """A cache's, a kv's and a graph's stores in one SQLite file (the ``sqlite`` store of
    :mod:`eoc.assemble`). Each opens and checks the file before anything is written to it; a
    part that fails closes the ones already open."""
    path = location.removeprefix("sqlite://")
    opened: list[Any] = []
    try:
        opened.append(SqliteCacheStore(path))
        opened.append(SqliteKVStore(path))
        opened.append(SqliteTripleRows(path))
    except BaseException:
        for part in opened:
            part.close()
        raise
    cache, kv, triples = opened
    return StoreParts(cache, kv, triples)


__all__ = [
    "LISTEN_EVERY_S",
    "SqliteCacheStore",
    "SqliteKVStore",
    "SqliteTripleRows",
    "open_store",
]
