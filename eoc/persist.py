"""Stages that live in SQLite (stdlib ``sqlite3``, WAL mode), surviving restarts and crashes.

Each store keeps its working set in memory, exactly like the in-memory stage it extends, and
writes every change through to the database inside a transaction that is committed before the
call returns: once ``remember``/``put``/``add`` has returned, the change is *acknowledged* and a
process killed the next instant loses nothing of it. ``synchronous=FULL`` makes that hold
across power loss too.

* :class:`SqliteCache` — the cache stage; LRU order is the order of last write (a hit does not
  write: a database write per hit would cost far more than the hit).
* :class:`SqliteKV` — the kv stage; the vectors are stored too, so a restart embeds nothing.
* :class:`SqliteTripleStore` — the graph stage's triple store.

They can share one database file. In the browser the in-memory stages stay the default.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from eoc.errors import ConfigError
from eoc.query import Query
from eoc.stages.base import Answer
from eoc.stages.cache import _ENTRY_OVERHEAD_BYTES, CacheStage
from eoc.stages.graph import TripleStore
from eoc.stages.kv import KVStage, _Entry


class _Db:
    """One WAL-mode connection and the lock that serializes its writes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(
                str(self.path), check_same_thread=False, isolation_level=None
            )
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
            self.conn.execute("PRAGMA busy_timeout=5000")
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"cannot open the store {self.path}: {exc}") from None
        self.lock = threading.Lock()

    def write(self, sql: str, args: tuple[Any, ...] = ()) -> None:
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self.conn.execute(sql, args)
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def close(self) -> None:
        with self.lock:
            self.conn.close()


class SqliteCache(CacheStage):
    """The cache stage, written through to SQLite."""

    def __init__(
        self, path: str | Path, max_entries: int = 100_000, max_bytes: int = 64 << 20, **kw: Any
    ) -> None:
        super().__init__(max_entries, max_bytes, **kw)
        self.db = _Db(path)
        self.db.conn.execute(
            "CREATE TABLE IF NOT EXISTS cache (qid TEXT PRIMARY KEY, payload TEXT NOT NULL, seq INTEGER NOT NULL)"
        )
        rows = self.db.conn.execute("SELECT qid, payload FROM cache ORDER BY seq").fetchall()
        self._seq = 0
        for qid, payload in rows:
            self._load(qid, payload)
        self._trim_db()

    def _load(self, qid: str, payload: str) -> None:
        size = len(payload.encode("utf-8")) + _ENTRY_OVERHEAD_BYTES
        self._entries[qid] = Answer(payload)
        self._sizes[qid] = size
        self._bytes += size
        self._seq += 1

    def _trim_db(self) -> None:
        evicted = []
        while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
            qid, _ = self._entries.popitem(last=False)
            self._bytes -= self._sizes.pop(qid)
            evicted.append(qid)
        for qid in evicted:
            self.db.write("DELETE FROM cache WHERE qid = ?", (qid,))

    def remember(self, query: Query, payload: str) -> None:
        evicted = self._insert(query.id, payload)
        if evicted is None:
            return
        with self.db.lock:
            self._seq += 1
            c = self.db.conn
            c.execute("BEGIN IMMEDIATE")
            try:
                c.execute(
                    "INSERT INTO cache (qid, payload, seq) VALUES (?, ?, ?) ON CONFLICT(qid) "
                    "DO UPDATE SET payload = excluded.payload, seq = excluded.seq",
                    (query.id, payload, self._seq),
                )
                c.executemany("DELETE FROM cache WHERE qid = ?", [(q,) for q in evicted])
            except BaseException:
                c.execute("ROLLBACK")
                raise
            c.execute("COMMIT")

    def forget(self, query: Query) -> bool:
        self.db.write("DELETE FROM cache WHERE qid = ?", (query.id,))
        return super().forget(query)

    def clear(self) -> None:
        self.db.write("DELETE FROM cache")
        super().clear()

    def close(self) -> None:
        self.db.close()


class SqliteKV(KVStage):
    """The kv stage, written through to SQLite with each entry's vector."""

    def __init__(self, path: str | Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.db = _Db(path)
        self.db.conn.execute(
            "CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, prompt TEXT NOT NULL, "
            "payload TEXT NOT NULL, embedder TEXT NOT NULL, vector TEXT)"
        )
        rows = self.db.conn.execute(
            "SELECT key, prompt, payload, embedder, vector FROM kv"
        ).fetchall()
        for key, prompt, payload, embedder, vector in rows:
            vec = None
            if embedder == self.embedder.name and vector is not None:
                vec = self._decode(vector)
            if vec is None:
                vec = self.embedder.embed(prompt)
            self.index.add(key, vec)
            self._entries[key] = _Entry(key, prompt, payload)

    def _encode(self, vec: Any) -> str:
        import json

        if isinstance(vec, dict):
            return json.dumps({"sparse": {str(k): v for k, v in vec.items()}})
        return json.dumps({"dense": [float(x) for x in vec]})

    def _decode(self, text: str) -> Any:
        import json

        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            return None
        if "sparse" in doc:
            return {int(k): float(v) for k, v in doc["sparse"].items()}
        return doc.get("dense")

    def put(self, prompt: str, payload: str, *, embedding: object | None = None) -> None:
        key = self.checked_key(prompt, payload)  # nothing reaches the file unless it is valid
        vec = embedding if embedding is not None else self.embedder.embed(prompt)
        self.db.write(
            "INSERT INTO kv (key, prompt, payload, embedder, vector) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(key) DO UPDATE SET prompt = excluded.prompt, payload = excluded.payload, "
            "embedder = excluded.embedder, vector = excluded.vector",
            (key, prompt, payload, self.embedder.name, self._encode(vec)),
        )
        super().put(prompt, payload, embedding=vec)

    def load_pairs(self, pairs: Any) -> int:
        """Store many pairs in one transaction; pairs already stored with the same answer are skipped."""
        items = [(p, a) for p, a in pairs]
        keys = [self.checked_key(p, a) for p, a in items]
        fresh = [
            (k, p, a)
            for k, (p, a) in zip(keys, items, strict=True)
            if (e := self._entries.get(k)) is None or e.payload != a
        ]
        if not fresh:
            return len(items)
        batch = getattr(self.embedder, "embed_batch", None)
        vecs = (
            list(batch([p for _, p, _ in fresh]))
            if batch
            else [self.embedder.embed(p) for _, p, _ in fresh]
        )
        with self.db.lock:
            c = self.db.conn
            c.execute("BEGIN IMMEDIATE")
            try:
                c.executemany(
                    "INSERT INTO kv (key, prompt, payload, embedder, vector) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT(key) DO UPDATE SET prompt = excluded.prompt, payload = excluded.payload, "
                    "embedder = excluded.embedder, vector = excluded.vector",
                    [
                        (k, p, a, self.embedder.name, self._encode(v))
                        for (k, p, a), v in zip(fresh, vecs, strict=True)
                    ],
                )
            except BaseException:
                c.execute("ROLLBACK")
                raise
            c.execute("COMMIT")
        for (_, p, a), v in zip(fresh, vecs, strict=True):
            KVStage.put(self, p, a, embedding=v)
        flush = getattr(self.embedder, "flush", None)
        if callable(flush):
            flush()
        return len(items)

    def close(self) -> None:
        self.db.close()


class SqliteTripleStore(TripleStore):
    """The triple store, written through to SQLite."""

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self.db = _Db(path)
        self.db.conn.execute(
            "CREATE TABLE IF NOT EXISTS triples (s TEXT NOT NULL, p TEXT NOT NULL, o TEXT NOT NULL, "
            "PRIMARY KEY (s, p, o))"
        )
        self._loading = True
        for s, p, o in self.db.conn.execute("SELECT s, p, o FROM triples").fetchall():
            super().add(s, p, o)
        self._loading = False

    def add_all(self, triples: Any) -> int:
        """Add many triples in one transaction."""
        fresh = [(s, p, o) for s, p, o in triples if TripleStore.add(self, s, p, o)]
        if fresh:
            with self.db.lock:
                c = self.db.conn
                c.execute("BEGIN IMMEDIATE")
                c.executemany(
                    "INSERT OR IGNORE INTO triples (s, p, o) VALUES (?, ?, ?)",
                    [(s.strip(), p.strip(), o.strip()) for s, p, o in fresh],
                )
                c.execute("COMMIT")
        return len(fresh)

    def add(self, subject: str, predicate: str, obj: str) -> bool:
        added = super().add(subject, predicate, obj)
        if added and not getattr(self, "_loading", False):
            self.db.write(
                "INSERT OR IGNORE INTO triples (s, p, o) VALUES (?, ?, ?)",
                (subject.strip(), predicate.strip(), obj.strip()),
            )
        return added

    def close(self) -> None:
        self.db.close()


__all__ = ["SqliteCache", "SqliteKV", "SqliteTripleStore"]
