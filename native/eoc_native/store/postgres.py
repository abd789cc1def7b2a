"""Cache, kv and graph in PostgreSQL, shared by replicas kept current through LISTEN/NOTIFY.

Each replica keeps its working set in memory, exactly like the in-memory stages these extend,
and writes every change through to PostgreSQL (``psycopg`` 3 over a ``psycopg_pool`` pool) in a
transaction committed before the call returns: once ``remember``/``put``/``add_all`` has
returned, the change is *acknowledged* and survives the death of the replica. The same
transaction sends ``NOTIFY eoc_changes`` with the row's sequence number; every other replica's
listener thread hears it, reads the row, checks its checksum and adds it to memory, so an answer
computed on replica A is a hit on replica B within milliseconds. After the listener loses its
connection (PostgreSQL restarted), it reconnects with backoff and reads what it missed.

Where the server has pgvector, the kv's vectors are searched there and no replica holds them
(:mod:`eoc_native.store.pgvector`, whose ``open_store`` opens a PostgreSQL store); where it has none (Debian 12's
PostgreSQL ships none), kv vectors are stored with their rows and searched in each replica's own
index, and the store says so.

The schema is versioned (``eoc_meta.schema_version``), created under an advisory lock so that
replicas starting together do not race, and refused when of another version. Every row carries
the same checksum as the SQLite store's (:func:`eoc.store.sqlite_schema.row_sum`): a row that fails it
is not served and is listed in ``damaged``. A store records the model whose answers it holds;
a server with another model is refused (answers of one model are not answers of another).

Cache eviction is per replica (memory bounds); rows are never deleted by a replica, since others
may still serve them.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

from eoc.errors import EocError, InputError, StoreError, StoreUnusable, StoreVersionError
from eoc.stages.cache import CacheStage
from eoc.stages.kv import KVStage
from eoc.store.entry import meta_from_text
from eoc.store.keys import key_id
from eoc.store.partition import keyed, tag_of
from eoc.store.protocols import (
    PENDING,
    CacheListener,
    CacheRow,
    Embedding,
    KVListener,
    KVRow,
    Match,
)
from eoc.store.rules import checked_answer, checked_origin, kv_key
from eoc.store.sqlite_db import store_key
from eoc.store.sqlite_schema import UNRECORDED, row_sum, summed
from eoc.store.triples import TripleStore
from eoc.store.vectors import decode_vector, encode_vector
from eoc_native import require
from eoc_native.store import pg_forgets

SCHEMA_VERSION = "6"
CHANNEL = "eoc_changes"
FORGOT = "forgot"
"""What a replica's notification carries in place of a row's sequence number after a forget."""
Damage = tuple[str, int, str]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS eoc_meta (key text PRIMARY KEY, value text NOT NULL)",
    "CREATE SEQUENCE IF NOT EXISTS eoc_seq",
    "CREATE TABLE IF NOT EXISTS eoc_cache (qid text PRIMARY KEY, payload text NOT NULL, "
    "seq bigint NOT NULL DEFAULT nextval('eoc_seq'), checksum text NOT NULL, "
    "origin text NOT NULL DEFAULT '', meta text NOT NULL DEFAULT '')",
    "CREATE TABLE IF NOT EXISTS eoc_kv (key text PRIMARY KEY, prompt text NOT NULL, "
    "payload text NOT NULL, embedder text NOT NULL, vector text, "
    "seq bigint NOT NULL DEFAULT nextval('eoc_seq'), checksum text NOT NULL, "
    "origin text NOT NULL DEFAULT '', meta text NOT NULL DEFAULT '')",
    "CREATE TABLE IF NOT EXISTS eoc_triples (s text NOT NULL, p text NOT NULL, o text NOT NULL, "
    "seq bigint NOT NULL DEFAULT nextval('eoc_seq'), checksum text NOT NULL, PRIMARY KEY (s, p, o))",
    "CREATE INDEX IF NOT EXISTS eoc_cache_seq ON eoc_cache (seq)",
    "CREATE INDEX IF NOT EXISTS eoc_kv_seq ON eoc_kv (seq)",
    "CREATE INDEX IF NOT EXISTS eoc_triples_seq ON eoc_triples (seq)",
)
_COLUMNS = {
    "cache": "qid, payload, origin, meta",
    "kv": "key, prompt, payload, origin, meta, embedder, vector",
    "triples": "s, p, o",
}
_CHECKED = {"cache": 3, "kv": 4, "triples": 3}  # leading columns the checksum covers (and a
# non-empty meta, which follows them: eoc.store.sqlite_schema.summed)
_V1_CHECKED = {"cache": "qid, payload", "kv": "key, prompt, payload"}  # before origins


def is_postgres_url(text: object) -> bool:
    return isinstance(text, str) and text.startswith(("postgresql://", "postgres://"))


def _where(url: str) -> str:
    """host:port/db of a URL, without the user or password (for messages)."""
    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}:{parts.port or 5432}{parts.path or ''}"


class PgStore:
    """One PostgreSQL database: the pool, the schema, and the listener that keeps memory current.

    Args:
        url: ``postgresql://user:password@host:port/database``.
        pool_size: most connections held for writes and reads.
        timeout: seconds to wait for a connection (the store is down beyond that).

    Raises:
        StoreUnusable: PostgreSQL cannot be reached, or refuses the login.
        StoreVersionError: the database holds eoc tables of another schema version.
    """

    def __init__(
        self, url: str, *, pool_size: int = 4, timeout: float = 5.0, key: bytes | None = None
    ) -> None:
        if not is_postgres_url(url):
            raise StoreUnusable("a PostgreSQL store is named by a postgresql://... URL")
        self.key = store_key(key)  # signs and checks every row (eoc.store.keys)
        self._pg: Any = require("psycopg", why="the PostgreSQL store")
        pool_mod: Any = require("psycopg_pool", package="psycopg-pool", why="the PostgreSQL store")
        self.url = url
        self.where = _where(url)
        self.timeout = timeout
        self.replica = os.urandom(8).hex()
        self.healthy = False
        self.last_error = ""
        self.heard = 0  # rows applied from other replicas
        self._appliers: dict[str, Callable[[tuple[Any, ...]], None]] = {}
        self._resyncers: list[Callable[[], None]] = []
        self._pruners: dict[str, Callable[[], None]] = {}
        self.forgets = pg_forgets.Forgets(self)  # a forget waits for the other replicas
        self._stop = threading.Event()
        self._listening = threading.Event()
        # writes made while PostgreSQL was down, to make when it is back (write_or_hold)
        self._pending: deque[tuple[str, str, list[tuple[Any, ...]], str]] = deque()
        self._pending_lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self.flushed = 0  # held writes made since
        self._thread: threading.Thread | None = None
        self.pool = pool_mod.ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            timeout=timeout,
            kwargs={"connect_timeout": max(1, round(timeout))},
            check=pool_mod.ConnectionPool.check_connection,
            open=False,
            name=f"eoc-{self.replica[:6]}",
        )
        try:
            self.pool.open(wait=True, timeout=timeout)
        except Exception as exc:
            self.pool.close()
            raise StoreUnusable(
                f"cannot reach PostgreSQL at {self.where}: {self._reason(exc)} "
                "(is the server running, and the URL's user, password and database right?)"
            ) from None
        try:
            self._migrate()
        except BaseException:
            self.pool.close()
            raise
        self.healthy = True

    # -- plumbing ---------------------------------------------------------------------------

    @staticmethod
    def _reason(exc: BaseException) -> str:
        text = " ".join(str(exc).split()) or type(exc).__name__
        return text[:300]

    @contextlib.contextmanager
    def connection(self, doing: str) -> Iterator[Any]:
        """A pooled connection inside a transaction; database errors become StoreError."""
        try:
            with self.pool.connection() as conn, conn.transaction():
                yield conn
        except EocError:
            raise
        except Exception as exc:  # psycopg's errors and the pool's timeout
            self.last_error = self._reason(exc)
            if isinstance(exc, self._pg.OperationalError) or "PoolTimeout" in type(exc).__name__:
                self.healthy = False
            raise StoreUnusable(
                f"PostgreSQL at {self.where} failed while {doing}: {self.last_error} "
                "(nothing was half-written; retry once it is back)"
            ) from None

    def _migrate(self) -> None:
        with self.connection("creating eoc's tables") as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('eoc_schema'))")
            row = self._version(conn)
            if row is not None and row[0] == "1":
                self._from_v1(conn)
                row = ("2",)
            if row is not None and row[0] == "2":
                self._from_v2(conn)
                row = ("3",)
            if row is not None and row[0] == "3":
                self._from_v3(conn)
                row = ("4",)
            if row is not None and row[0] == "4":
                self._from_v4(conn)
                row = ("5",)
            if row is not None and row[0] == "5":
                conn.execute("UPDATE eoc_meta SET value = '6' WHERE key = 'schema_version'")
            for sql in _SCHEMA:
                conn.execute(sql)
            conn.execute(pg_forgets.SCHEMA)  # which replica heard which forget
            conn.execute(
                "INSERT INTO eoc_meta (key, value) VALUES ('schema_version', %s) "
                "ON CONFLICT (key) DO NOTHING",
                (SCHEMA_VERSION,),
            )
            conn.execute(
                "INSERT INTO eoc_meta (key, value) VALUES ('key', %s) ON CONFLICT (key) DO NOTHING",
                (key_id(self.key),),
            )
            row = self._version(conn)
            signed = conn.execute("SELECT value FROM eoc_meta WHERE key = 'key'").fetchone()
        if row is not None and row[0] == SCHEMA_VERSION and signed[0] != key_id(self.key):
            raise StoreUnusable(
                f"PostgreSQL at {self.where} is signed with another key (id {signed[0]!r:.24}), "
                f"not this replica's (id {key_id(self.key)}): every row would read as changed "
                "outside eoc. Give every replica the same key file (EOC_KEY_FILE, mode 600), "
                "or use another database; nothing was changed"
            )
        if row is None or row[0] != SCHEMA_VERSION:
            raise StoreVersionError(
                f"PostgreSQL at {self.where} holds eoc tables of schema version "
                f"{row[0] if row else '?'}; this eoc reads version {SCHEMA_VERSION}: use another database"
            )

    @staticmethod
    def _version(conn: Any) -> Any:
        exists = conn.execute("SELECT to_regclass('eoc_meta')").fetchone()[0]
        if exists is None:
            return None
        return conn.execute("SELECT value FROM eoc_meta WHERE key = 'schema_version'").fetchone()

    @staticmethod
    def _from_v1(conn: Any) -> None:
        """Version 1 to 2, under the schema lock: cache and kv rows get the origin
        :data:`~eoc.store.sqlite_schema.UNRECORDED` (never served) and a new checksum when their old
        one held; a row whose old checksum failed keeps failing."""
        for table, cols in _V1_CHECKED.items():
            n = len(cols.split(", "))
            rows = conn.execute(f"SELECT seq, {cols}, checksum FROM eoc_{table}").fetchall()
            conn.execute(
                f"ALTER TABLE eoc_{table} ADD COLUMN origin text NOT NULL DEFAULT '{UNRECORDED}'"
            )
            for seq, *fields, checksum in rows:
                if row_sum(table, tuple(fields[:n]), None) == checksum:
                    new = row_sum(table, (*fields[:n], UNRECORDED), None)
                    conn.execute(f"UPDATE eoc_{table} SET checksum = %s WHERE seq = %s", (new, seq))
        conn.execute("UPDATE eoc_meta SET value = '2' WHERE key = 'schema_version'")

    @staticmethod
    def _from_v2(conn: Any) -> None:
        """Version 2 to 3, under the schema lock: cache and kv get a ``meta`` column, "" for
        every row (age and generation unknown); an empty meta is not summed, so every checksum
        holds as it was."""
        for table in ("cache", "kv"):
            conn.execute(f"ALTER TABLE eoc_{table} ADD COLUMN meta text NOT NULL DEFAULT ''")
        conn.execute("UPDATE eoc_meta SET value = '3' WHERE key = 'schema_version'")

    def _from_v4(self, conn: Any) -> None:
        """Version 4 to 5, under the schema lock: every row whose plain checksum holds gets the
        keyed MAC with this replica's key, which ``eoc_meta`` names (``key``); a row whose
        checksum failed keeps failing."""
        for table in ("cache", "kv", "triples"):
            if conn.execute("SELECT to_regclass(%s)", (f"eoc_{table}",)).fetchone()[0] is None:
                continue  # made by the schema below
            n = _CHECKED[table]
            rows = conn.execute(
                f"SELECT seq, {_COLUMNS[table]}, checksum FROM eoc_{table}"
            ).fetchall()
            for seq, *values, checksum in rows:
                fields = tuple(values[:n])
                if table != "triples":
                    fields = summed(fields, values[n])
                if row_sum(table, fields, None) == checksum:
                    new = row_sum(table, fields, self.key)
                    conn.execute(f"UPDATE eoc_{table} SET checksum = %s WHERE seq = %s", (new, seq))
        conn.execute(
            "INSERT INTO eoc_meta (key, value) VALUES ('key', %s) ON CONFLICT (key) DO NOTHING",
            (key_id(self.key),),
        )
        conn.execute("UPDATE eoc_meta SET value = '5' WHERE key = 'schema_version'")

    # Version 5 to 6 changes no row: a replica of version 6 searches kv vectors with pgvector
    # where the server has it (eoc_native.store.pgvector), in a table a replica reading version 5
    # would not write, so its answers would never be found there: such a replica is refused.

    @staticmethod
    def _from_v3(conn: Any) -> None:
        """Version 3 to 4, under the schema lock: no row changes (every row of version 3 is in
        the shared partition); a kv key may now open with a partition's tag
        (:mod:`eoc.store.partition`), which a replica reading version 3 would serve to everyone, so
        the version changes and such a replica is refused."""
        conn.execute("UPDATE eoc_meta SET value = '4' WHERE key = 'schema_version'")

    def write_or_hold(
        self, table: str, sql: str, rows: list[tuple[Any, ...]], doing: str
    ) -> str | None:
        """Write now, or, when PostgreSQL cannot be reached, hold the write to make when it is
        back (the listener retries every half second): returns ``None`` once written,
        :data:`~eoc.stages.base.PENDING` when held. Writes already held go first, in order.

        Raises:
            StoreUnusable: PostgreSQL refused the write while up, or :data:`MAX_PENDING` writes
                already wait for it (this one is not kept).
        """
        if self._pending:
            self.flush_pending()
        if not self._pending:
            try:
                self.write(table, sql, rows, doing)
                return None
            except StoreUnusable:
                if self.healthy:
                    raise  # up, and it refused: no retry will do better
        with self._pending_lock:
            if len(self._pending) >= MAX_PENDING:
                raise StoreUnusable(
                    f"PostgreSQL at {self.where} is unreachable and {MAX_PENDING:,} writes already "
                    f"wait for it: this one was not kept ({self.last_error})"
                )
            self._pending.append((table, sql, rows, doing))
        return PENDING

    def flush_pending(self) -> None:
        """Make the writes held while PostgreSQL was down, oldest first; stop at the first that
        fails (it is tried again later)."""
        with self._flush_lock:
            while True:
                with self._pending_lock:
                    if not self._pending:
                        return
                    table, sql, rows, doing = self._pending[0]
                try:
                    self.write(table, sql, rows, doing)
                except StoreError:
                    return
                with self._pending_lock:
                    self._pending.popleft()
                    self.flushed += 1

    @property
    def pending_writes(self) -> int:
        """Writes held until PostgreSQL is back."""
        return len(self._pending)

    def write(self, table: str, sql: str, rows: list[tuple[Any, ...]], doing: str) -> None:
        """Write rows and tell the other replicas, in one transaction."""
        with self.connection(doing) as conn:
            seqs = []
            with conn.cursor() as cur:
                for args in rows:
                    cur.execute(sql, args)
                    got = cur.fetchone()
                    if got is not None:
                        seqs.append(int(got[0]))
            message = f"{table}\t{self.replica}\t" + (str(seqs[0]) if len(seqs) == 1 else "*")
            if seqs:
                conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, message))

    def rows(
        self,
        table: str,
        damaged: list[Damage],
        where: str = "",
        args: tuple[Any, ...] = (),
        *,
        newest: int | None = None,
    ) -> list[tuple[Any, ...]]:
        """Rows of ``table`` (oldest first) whose checksum holds; the others go to ``damaged``.
        With ``newest``, only that many of the newest rows are read."""
        select = f"SELECT seq, {_COLUMNS[table]}, checksum FROM eoc_{table} {where}"
        with self.connection(f"reading {table}") as conn:
            if newest is None:
                got = conn.execute(select + " ORDER BY seq", args).fetchall()
            else:
                got = conn.execute(select + " ORDER BY seq DESC LIMIT %s", (*args, newest))
                got = got.fetchall()[::-1]
        good = []
        n = _CHECKED[table]
        for seq, *values, checksum in got:
            fields = tuple(values[:n])
            if table != "triples":
                fields = summed(fields, values[n])
            try:
                ok = row_sum(table, fields, self.key) == checksum
            except (TypeError, ValueError, UnicodeError):
                ok = False
            if ok:
                good.append(tuple(values))
            else:
                damaged.append(
                    (table, int(seq), "checksum mismatch: the row was changed outside eoc")
                )
        return good

    # -- the listener -----------------------------------------------------------------------

    def subscribe(
        self,
        table: str,
        apply: Callable[[tuple[Any, ...]], None],
        resync: Callable[[], None],
        prune: Callable[[], None] | None = None,
    ) -> None:
        """Hear other replicas' changes to ``table``: ``apply`` a row written, ``resync`` after
        a gap, ``prune`` after a forget (drop from memory what the table no longer holds)."""
        self._appliers[table] = apply
        self._resyncers.append(resync)
        if prune is not None:
            self._pruners[table] = prune
            if self._listening.is_set():  # listening already: forgets wait for this table now
                self.forgets.pruned([table], self._prune)

    def announce_forget(self, table: str, drop: Callable[[], None] | None = None) -> None:
        """Tell the other replicas that rows of ``table`` were forgotten, and wait until each
        live one has dropped from memory what the table no longer holds (a thumbs-down on one
        replica reaches every one before the forget returns: :mod:`.pg_forgets`). ``drop``:
        this replica's own memory lets go first, so it serves none of them while it waits."""
        if drop is not None:
            drop()
        with self.connection(f"announcing a forget in {table}") as conn:
            fid = self.forgets.announce(conn, table)
            conn.execute(
                "SELECT pg_notify(%s, %s)", (CHANNEL, f"{table}\t{self.replica}\t{FORGOT}")
            )
        self.forgets.wait(table, fid)

    def held_keys(self, table: str) -> set[str]:
        """The keys of rows of ``table`` held in memory until PostgreSQL is back (not in the
        table yet: a prune keeps them)."""
        with self._pending_lock:
            return {str(row[0]) for t, _, rows, _ in self._pending if t == table for row in rows}

    def start(self, wait: float = 5.0) -> None:
        """Start listening for other replicas' changes (returns once listening, or after ``wait``)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._listen, name="eoc-pg-listener", daemon=True
            )
            self._thread.start()
        self._listening.wait(wait)

    def _listen(self) -> None:
        backoff = 0.1
        first = True
        while not self._stop.is_set():
            try:
                with self._pg.connect(
                    self.url,
                    autocommit=True,
                    connect_timeout=max(1, round(self.timeout)),
                    # how the others know this replica listens (pg_forgets): its session
                    application_name=pg_forgets.listener_name(self.replica),
                ) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    if not first:
                        self._resync()  # what other replicas wrote while this one was deaf
                    # and what they forgot (since memory was read, the first time): then this
                    # replica says it listens, and forgets wait for it
                    self.forgets.pruned(list(self._pruners), self._prune)
                    first = False
                    self.healthy = True
                    backoff = 0.1
                    self._listening.set()
                    while not self._stop.is_set():
                        if self._pending:
                            self.flush_pending()  # what was held while it was down
                        for note in conn.notifies(timeout=0.5):
                            self._heard(note.payload)
                        conn.execute("SELECT 1")  # notices a dead server between notifications
                        self.forgets.beat(conn)
            except Exception as exc:  # the connection or a read failed: reconnect
                self.healthy = False
                self.last_error = self._reason(exc)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 2.0)

    def _heard(self, payload: str) -> None:
        table, _, rest = payload.partition("\t")
        replica, _, seq = rest.partition("\t")
        if replica == self.replica or table not in self._appliers:
            return
        damaged: list[Damage] = []
        if seq == "*":
            self._resync()
            return
        if seq == FORGOT:
            if table in self._pruners:
                self.forgets.pruned([table], self._prune)
            return
        try:
            rows = self.rows(table, damaged, "WHERE seq = %s", (int(seq),))
        except (StoreError, ValueError):
            return  # the resync after reconnecting catches it
        for row in rows:
            self._appliers[table](row)
            self.heard += 1

    def _prune(self, table: str) -> None:
        self._pruners[table]()

    def _resync(self) -> None:
        for resync in self._resyncers:
            try:
                resync()
            except StoreError:
                return

    @property
    def closing(self) -> bool:
        """Whether :meth:`close` was called (background work stops)."""
        return self._stop.is_set()

    def close(self) -> None:
        """Stop listening and close the pool (again: nothing)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(3)
            self._thread = None
            self.forgets.leave()
        self.pool.close()


MAX_PENDING = 10_000
"""Writes held while PostgreSQL is down, at most; past it an answer is served but not kept."""
TRIM_EVERY = 100
"""A replica trims the shared cache table after this many of its own writes."""


class PgCacheStore:
    """A cache's answers in PostgreSQL (:class:`eoc.store.CacheStore`), shared by replicas: the
    table ``eoc_cache``, bounded as memory is (the newest ``max_entries`` answers are read at
    start-up; a replica trims older rows every :data:`TRIM_EVERY` writes of its own). A row
    another replica writes is heard through LISTEN/NOTIFY and served here within milliseconds;
    a forget on one replica reaches every one."""

    polls = False  # the listener thread hears the other replicas

    def __init__(self, store: PgStore) -> None:
        self.store = store
        self.damaged: list[Damage] = []
        self._writes = 0
        self._newest = 100_000
        self._stage: CacheListener | None = None

    def _checked(self, qid: str, payload: str, origin: str, meta_text: str) -> CacheRow | None:
        try:
            return CacheRow(
                qid, checked_answer(payload), checked_origin(origin), meta_from_text(meta_text)
            )
        except InputError as exc:
            self.damaged.append(("cache", 0, exc.reason))
            return None

    def rows(self, newest: int) -> list[CacheRow]:
        self._newest = newest
        found = (self._checked(*r) for r in self.store.rows("cache", self.damaged, newest=newest))
        return [r for r in found if r is not None]

    def kept_only(self, kept: set[str]) -> None:
        return None  # the rows are every replica's: another may still serve them

    def put(self, row: CacheRow, evicted: Sequence[str]) -> str | None:
        """Commit ``row`` and announce it (or hold it while PostgreSQL is down: :data:`PENDING`).
        What this replica's memory evicts stays in the table for the others."""
        meta = row.meta.to_text()
        fields = (row.qid, row.payload, row.origin)
        held = self.store.write_or_hold(
            "cache",
            "INSERT INTO eoc_cache (qid, payload, origin, meta, checksum) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (qid) DO UPDATE SET "
            "payload = excluded.payload, origin = excluded.origin, meta = excluded.meta, "
            "checksum = excluded.checksum, seq = nextval('eoc_seq') RETURNING seq",
            [(*fields, meta, row_sum("cache", summed(fields, meta), self.store.key))],
            "caching an answer",
        )
        self._writes += 1
        if held is None and self._writes % TRIM_EVERY == 0:
            with contextlib.suppress(StoreError):  # the answer is stored; a later trim catches up
                self.trim()
        return held

    def delete(self, qids: Sequence[str]) -> None:
        """Delete the rows of answers seen expired, so no replica whose clock is behind serves
        them (where PostgreSQL is down, the row stays until a replica reads it expired again)."""
        with contextlib.suppress(StoreError):
            with self.store.connection("removing expired cached answers") as conn:
                conn.execute("DELETE FROM eoc_cache WHERE qid = ANY(%s)", (list(qids),))

    def forget(self, qids: Sequence[str], match: Match | None = None) -> list[str]:
        """Delete ``qids`` and every row of the table ``match`` picks (not only those this
        replica holds); the other replicas are told, and drop theirs."""
        gone = list(dict.fromkeys(qids))
        if match is not None:
            for qid, _, origin, text in self.store.rows("cache", []):
                try:
                    meta = meta_from_text(text)
                except InputError:
                    continue  # a damaged row is never served; eoc store check lists it
                if qid not in gone and match(qid, None, origin, meta):
                    gone.append(qid)
        if gone:
            with self.store.connection("forgetting cached answers") as conn:
                conn.execute("DELETE FROM eoc_cache WHERE qid = ANY(%s)", (gone,))
            self.store.announce_forget("cache", _dropping(self._stage, set(gone)))
        return gone

    def clear(self) -> None:
        with self.store.connection("clearing the cache") as conn:
            conn.execute("DELETE FROM eoc_cache")
        self.store.announce_forget("cache", _dropping(self._stage, None))

    def poll(self) -> None:
        return None

    def listen(self, stage: CacheListener) -> None:
        self._stage = stage
        self.store.subscribe("cache", self._heard, self._resync, self._prune)

    def _heard(self, values: tuple[Any, ...]) -> None:
        row = self._checked(*values)
        if row is not None and self._stage is not None:
            self._stage.take(row)

    def _resync(self) -> None:
        stage = self._stage
        if stage is None:
            return
        for row in self.rows(self._newest):
            if not stage.holds(row.qid):
                stage.take(row)

    def _prune(self) -> None:
        """Another replica forgot cached answers: drop from memory every model's answer the table
        no longer holds (but those held for a write while PostgreSQL was down; a fact, which a
        store seeds again, is left)."""
        with self.store.connection("reading the cache's keys") as conn:
            kept = {str(qid) for (qid,) in conn.execute("SELECT qid FROM eoc_cache")}
        kept |= self.store.held_keys("cache")
        if self._stage is not None:
            self._stage.keep_only(lambda qid, origin: not origin or qid in kept)

    def trim(self) -> None:
        """Delete the rows older than the newest ``max_entries`` (every replica trims to the
        same bound; a row gone from the table may still be served from a replica's memory)."""
        with self.store.connection("trimming the cache") as conn:
            conn.execute(
                "DELETE FROM eoc_cache WHERE seq < "
                "(SELECT seq FROM eoc_cache ORDER BY seq DESC OFFSET %s LIMIT 1)",
                (self._newest - 1,),
            )

    def close(self) -> None:
        self.store.close()


def _dropping(
    stage: CacheListener | KVListener | None, gone: set[str] | None
) -> Callable[[], None]:
    """``stage``'s memory letting go of the keys ``gone`` (``None``: all), run by a forget
    before it waits for the other replicas, so this one serves none of them meanwhile."""

    def drop() -> None:
        if stage is not None:
            stage.keep_only(lambda key, origin: gone is not None and key not in gone)

    return drop


def PgCache(
    store: PgStore, max_entries: int = 100_000, max_bytes: int = 64 << 20, **kw: Any
) -> CacheStage:
    """The cache stage over a :class:`PgStore`: ``CacheStage(store=PgCacheStore(store))``."""
    return CacheStage(max_entries, max_bytes, store=PgCacheStore(store), **kw)


_KV_UPSERT = (
    "INSERT INTO eoc_kv (key, prompt, payload, origin, meta, embedder, vector, checksum) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (key) DO UPDATE SET "
    "prompt = excluded.prompt, payload = excluded.payload, origin = excluded.origin, "
    "meta = excluded.meta, embedder = excluded.embedder, vector = excluded.vector, "
    "checksum = excluded.checksum, seq = nextval('eoc_seq') RETURNING seq"
)


class PgKVStore:
    """A kv's pairs in PostgreSQL with their vectors (:class:`eoc.store.KVStore`), shared by
    replicas: the table ``eoc_kv``. A pair another replica writes is heard through
    LISTEN/NOTIFY; a forget on one replica reaches every one."""

    polls = False  # the listener thread hears the other replicas
    defers = False  # a bulk load is written, with its vectors, at once

    def __init__(self, store: PgStore) -> None:
        self.store = store
        self.damaged: list[Damage] = []
        self._stored: dict[str, tuple[str, str]] = {}  # key -> (answer, origin) stored
        self._stage: KVListener | None = None
        self._embedder: Embedding | None = None
        self._dense = False

    def _fresh(self, raw: Iterable[tuple[Any, ...]]) -> list[KVRow]:
        """The rows not already held with the same answer, checked and decoded."""
        out = []
        for key, prompt, payload, origin, text, made_by, vector in raw:
            if self._stored.get(key) == (payload, origin):
                continue
            try:
                meta = meta_from_text(text)
            except InputError as exc:
                self.damaged.append(("kv", 0, exc.reason))
                continue
            vec = None
            embedder = self._embedder
            if embedder is not None and made_by == embedder.name and isinstance(vector, str):
                vec = decode_vector(vector, embedder, self._dense)
            self._stored[key] = (payload, origin)
            out.append(KVRow(key, prompt, payload, origin, meta, vec))
        return out

    def rows(self, embedder: Embedding, dense: bool) -> list[KVRow]:
        self._embedder, self._dense = embedder, dense
        return self._fresh(self.store.rows("kv", self.damaged))

    def holds(self, key: str, payload: str, origin: str) -> bool:
        return self._stored.get(key) == (payload, origin)

    def current(self, keys: Sequence[str]) -> dict[str, tuple[str, str]] | None:
        """The answer and origin the database holds for each of ``keys`` now (a key it no
        longer holds is absent), read before a pair in memory is served: a forget or a new
        answer another replica committed counts before its NOTIFY arrives. ``None`` when the
        database cannot be read now: memory is then the newest this replica can know."""
        if not self.store.healthy:
            return None
        try:
            with self.store.connection("confirming a kv pair") as conn:
                got = conn.execute(
                    "SELECT key, payload, origin FROM eoc_kv WHERE key = ANY(%s)", (list(keys),)
                ).fetchall()
        except StoreError:
            return None
        return {str(k): (str(p), str(o)) for k, p, o in got}

    def searcher(self, embedder: Embedding, dense: bool) -> Any:
        """None: every replica searches the pairs in its own memory (the pgvector store,
        :class:`eoc_native.store.pgvector.PgVectorKVStore`, searches them in PostgreSQL)."""
        return None

    def _row(self, row: KVRow) -> tuple[str, ...]:
        text = row.meta.to_text()
        fields = (row.key, row.prompt, row.payload, row.origin)
        summed_ = row_sum("kv", summed(fields, text), self.store.key)
        name = "" if self._embedder is None else self._embedder.name
        return (*fields, text, name, encode_vector(row.vector), summed_)

    def put(self, rows: Sequence[KVRow]) -> str | None:
        """Commit ``rows`` and announce them; while PostgreSQL is down, hold a single pair and
        write it once it is back (:data:`PENDING`). A bulk load is written at once or fails."""
        encoded = [self._row(r) for r in rows]
        if len(encoded) == 1:
            held = self.store.write_or_hold("kv", _KV_UPSERT, encoded, "storing a kv pair")
        else:
            self.store.write("kv", _KV_UPSERT, encoded, "storing kv pairs")
            held = None
        for r in rows:
            self._stored[r.key] = (r.payload, r.origin)
        return held

    def delete(self, keys: Sequence[str]) -> None:
        """Delete the rows of pairs seen expired, so no replica whose clock is behind serves
        them (where PostgreSQL is down, the row stays until a replica reads it expired again)."""
        for key in keys:
            self._stored.pop(key, None)
        with contextlib.suppress(StoreError):
            with self.store.connection("removing expired kv pairs") as conn:
                conn.execute("DELETE FROM eoc_kv WHERE key = ANY(%s)", (list(keys),))

    def forget(self, keys: Sequence[str], match: Match | None = None) -> list[str]:
        """Delete ``keys`` and every row of the table ``match`` picks (not only those this
        replica holds); the other replicas are told, and drop theirs. Returns the keys memory
        serves them under (an older eoc's keys differ)."""
        gone: list[str] = list(keys)
        served: list[str] = list(keys)
        if match is not None:
            for key, prompt, payload, origin, text, _, _ in self.store.rows("kv", []):
                try:
                    meta = meta_from_text(text)
                except InputError:
                    continue
                if key not in gone and match(key, prompt, origin, meta):
                    gone.append(key)
                    try:
                        served.append(keyed(tag_of(key), kv_key(prompt, payload)))
                    except EocError:
                        served.append(key)  # a row memory could not serve
        if gone:
            with self.store.connection("forgetting kv pairs") as conn:
                conn.execute("DELETE FROM eoc_kv WHERE key = ANY(%s)", (gone,))
            self.store.announce_forget("kv", _dropping(self._stage, {*gone, *served}))
        for key in [*gone, *served]:
            self._stored.pop(key, None)
        return list(dict.fromkeys(served))

    def poll(self) -> None:
        return None

    def listen(self, stage: KVListener) -> None:
        self._stage = stage
        self.store.subscribe("kv", lambda row: self._heard([row]), self._resync, self._prune)

    def _heard(self, raw: list[tuple[Any, ...]]) -> None:
        rows = self._fresh(raw)
        if rows and self._stage is not None:
            self._stage.take(rows)

    def _resync(self) -> None:
        self._heard(self.store.rows("kv", self.damaged))

    def _prune(self) -> None:
        """Another replica forgot kv pairs: drop from memory every model's answer the table no
        longer holds (but those held for a write while PostgreSQL was down; the pack's pairs,
        seeded again by every replica, are left)."""
        with self.store.connection("reading the kv's keys") as conn:
            rows = conn.execute("SELECT key, prompt, payload FROM eoc_kv").fetchall()
        kept: set[str] = set()
        for key, prompt, payload in rows:
            kept.add(str(key))
            try:
                kept.add(keyed(tag_of(key), kv_key(prompt, payload)))
            except EocError:
                pass  # a row memory cannot serve
        kept |= self.store.held_keys("kv")
        if self._stage is not None:
            self._stage.keep_only(lambda key, origin: not origin or key in kept)
        for key in [k for k in self._stored if k not in kept]:
            del self._stored[key]

    def close(self) -> None:
        self.store.close()


def PgKV(store: PgStore, **kwargs: Any) -> KVStage:
    """The kv stage over a :class:`PgStore`: ``KVStage(store=PgKVStore(store), ...)``."""
    return KVStage(store=PgKVStore(store), **kwargs)


class PgTripleRows:
    """A triple store's triples in PostgreSQL (:class:`eoc.store.TripleRows`), shared by
    replicas: the table ``eoc_triples``; triples another replica adds are heard through
    LISTEN/NOTIFY."""

    def __init__(self, store: PgStore) -> None:
        self.store = store
        self.damaged: list[Damage] = []

    def rows(self) -> list[tuple[str, str, str, int]]:
        return [(s, p, o, 0) for s, p, o in self.store.rows("triples", self.damaged)]

    def put(self, triples: Sequence[tuple[str, str, str]]) -> None:
        self.store.write(
            "triples",
            "INSERT INTO eoc_triples (s, p, o, checksum) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (s, p, o) DO UPDATE SET seq = nextval('eoc_seq') RETURNING seq",
            [(*t, row_sum("triples", t, self.store.key)) for t in triples],
            "storing triples",
        )

    def listen(self, take: Callable[[Sequence[tuple[str, str, str, int]]], None]) -> None:
        self.store.subscribe("triples", lambda row: take([(*row, 0)]), lambda: take(self.rows()))

    def close(self) -> None:
        self.store.close()


def PgTripleStore(store: PgStore) -> TripleStore:
    """The graph's triples over a :class:`PgStore`: ``TripleStore(rows=PgTripleRows(store))``."""
    return TripleStore(rows=PgTripleRows(store))


__all__ = [
    "PgCache",
    "PgKV",
    "PgStore",
    "PgTripleStore",
    "is_postgres_url",
]
