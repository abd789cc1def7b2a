"""The layout of eoc's SQLite store: schema versions, row checksums, checks and error translation.

Schema versions (``PRAGMA user_version``):

* **0** — the layout before checksums: ``cache(qid, payload, seq)``, ``kv(key, prompt, payload,
  embedder, vector)``, ``triples(s, p, o)``. Opening such a file migrates it in one transaction:
  each table gets a ``checksum`` column and every row its checksum (rows of that release are
  trusted as they are), then it goes on to version 2.
* **1** — the same tables, each with ``checksum``: the first 32 hex digits of the SHA-256 of the
  table name and the row's text fields, each length-prefixed (so no two rows encode alike).
* **2** — the layout before ``meta``: ``cache`` and ``kv`` also record each answer's ``origin``, what made
  it ("" when no model did: the pack, the graph, a computation; else the model and the
  parameters that change its answers), covered by the checksum. A cascade serves an answer only
  where its own model and parameters are the ones recorded. Opening a version-1 file migrates it:
  its rows did not say what made them, so each gets the origin :data:`UNRECORDED`, which no
  cascade serves (kept in the file, counted by ``eoc store check``); a row whose version-1
  checksum failed keeps failing.
* **3** — the layout before partitions: ``cache`` and ``kv`` also keep each entry's ``meta``
  (:class:`eoc.store.entry.EntryMeta` as JSON: when it was stored, when it expires, and how the
  model generated it: finish reason, token counts, seconds). The checksum covers it when it is
  not empty. Opening a version-2 file adds the column, "" for every row: their age and
  generation are unknown (a replay says so), and their checksums hold as they were.
* **4** — the layout before keyed checksums, the same tables and columns: a kv row's ``key``
  may open with the tag of the partition it is kept in (:mod:`eoc.store.partition`: ``"(p:HEX)
  question"``, a model's answer under a system prompt or its own parameters), which no plain
  key does. An eoc that reads version 3 would load such a row as a plain question's and serve
  it to everyone, so the version says it must not open the file. Opening a version-3 file
  changes no row (every row of it is in the shared partition) and sets the version.
* **5** — the current layout: each row's checksum is a keyed MAC, HMAC-SHA256 with the user's
  key (:mod:`eoc.store.keys`, a file outside the store that only its owner can read), not a plain
  SHA-256. A plain digest says a row is whole, but whoever can write the file can recompute it
  (an answer planted with its checksum recomputed was served before); a MAC says the row was
  written by an eoc holding the key. The table ``info`` records which key signs the rows
  (``key``: its :func:`~eoc.store.keys.key_id`, which does not reveal it), so a store opened with
  another key is refused with what to do rather than read as every row changed, and how many
  forgets the store has seen (``forgets``: every process sharing the file drops from memory
  what another one forgot, :mod:`eoc.store.sqlite`). Opening an older file signs, in one
  transaction, every row whose old checksum holds (the rows as they stood are trusted, as they
  were before; a damaged one stays damaged).

This module is shared by :mod:`eoc.store.sqlite` (opening stores) and ``eoc store check|recover``.
"""

from __future__ import annotations

import hashlib
import hmac
import shlex
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from eoc.errors import (
    EocError,
    StoreCorrupt,
    StoreUnusable,
    StoreVersionError,
)
from eoc.query import check_text
from eoc.store.entry import meta_from_text
from eoc.store.keys import derive, key_id
from eoc.store.partition import tag_of
from eoc.store.rules import MAX_ANSWER_BYTES, checked_origin, kv_key

SCHEMA_VERSION = 5
"""The layout this eoc writes."""
READABLE_VERSIONS = (0, 1, 2, 3, 4, 5)
"""The layouts this eoc opens (0 to 4 are migrated to 5 on open)."""
KEYED_VERSION = 5
"""The first layout whose checksums are keyed MACs."""
INFO = "info"
"""The table of what a store says of itself (``name``, ``value``): the key, the forgets."""
MAX_FIELD_BYTES = 1 << 20
"""Largest triple term or embedder name accepted from the file, in UTF-8 bytes."""
UNRECORDED = "unrecorded: stored before eoc recorded what made each answer"
"""The origin a migrated row gets: nothing says which model made it, so it is never served."""

Columns = tuple[tuple[str, str], ...]
_V1: dict[str, Columns] = {
    "cache": (("qid", "text"), ("payload", "text"), ("seq", "integer")),
    "kv": (
        ("key", "text"),
        ("prompt", "text"),
        ("payload", "text"),
        ("embedder", "text"),
        ("vector", "text?"),
    ),
    "triples": (("s", "text"), ("p", "text"), ("o", "text")),
}
_ORIGIN: Columns = (("origin", "origin"),)
_META: Columns = (("meta", "meta"),)
_V2 = {"cache": _V1["cache"] + _ORIGIN, "kv": _V1["kv"] + _ORIGIN, "triples": _V1["triples"]}
COLUMNS: dict[int, dict[str, Columns]] = {
    0: _V1,
    1: _V1,
    2: _V2,
    3: {"cache": _V2["cache"] + _META, "kv": _V2["kv"] + _META, "triples": _V1["triples"]},
}
COLUMNS[4] = COLUMNS[3]  # version 4 changed what a kv key may hold, not the columns
COLUMNS[5] = COLUMNS[3]  # version 5 keyed the checksums and added the table info
"""Column name -> kind per schema version: "text", "text?" (text or NULL), "integer",
"origin" (text, "" allowed) or "meta" (text, "" allowed and then not summed). The checksum
covers the text, origin and non-empty meta columns in this order; ``seq`` (cache order) is not
covered: a damaged one reorders only."""
TABLES = COLUMNS[SCHEMA_VERSION]
ORIGIN_AT = {"cache": 3, "kv": 5}
"""Where a current row's ``origin`` is (``meta`` follows it)."""
META_AT = {"cache": 4, "kv": 6}
_CREATE = {
    "cache": "CREATE TABLE cache (qid TEXT PRIMARY KEY, payload TEXT NOT NULL, "
    "seq INTEGER NOT NULL, checksum TEXT, origin TEXT NOT NULL DEFAULT '', "
    "meta TEXT NOT NULL DEFAULT '')",
    "kv": "CREATE TABLE kv (key TEXT PRIMARY KEY, prompt TEXT NOT NULL, payload TEXT NOT NULL, "
    "embedder TEXT NOT NULL, vector TEXT, checksum TEXT, origin TEXT NOT NULL DEFAULT '', "
    "meta TEXT NOT NULL DEFAULT '')",
    "triples": "CREATE TABLE triples (s TEXT NOT NULL, p TEXT NOT NULL, o TEXT NOT NULL, "
    "checksum TEXT, PRIMARY KEY (s, p, o))",
}
_CREATE_INFO = "CREATE TABLE IF NOT EXISTS info (name TEXT PRIMARY KEY, value TEXT NOT NULL)"


def physical(version: int, table: str) -> tuple[str, ...]:
    """The columns of ``table`` as a file of ``version`` holds them, in order (a migrated file
    and a fresh one alike: ``origin`` was added after ``checksum``)."""
    if table == INFO:
        return ("name", "value")
    cols = tuple(c for c, _ in _V1[table])
    if version >= 1:
        cols += ("checksum",)
    if version >= 2 and table != "triples":
        cols += ("origin",)
    if version >= 3 and table != "triples":
        cols += ("meta",)
    return cols


def recover_hint(path: str | Path) -> str:
    """The command that copies what is readable out of a damaged store."""
    return f"run `eoc store recover {shlex.quote(str(path))} NEW.db` to copy what is readable"


# -- checksums -------------------------------------------------------------------------------


def _digest(table: str, fields: Sequence[bytes | None], key: bytes | None = None) -> str:
    """A row's checksum: with ``key``, HMAC-SHA256 with the key derived for store rows (version
    5); without, the plain SHA-256 of versions 1 to 4. The first 32 hex digits either way."""
    h = hashlib.sha256() if key is None else hmac.new(derive(key, "store rows"), digestmod="sha256")
    for field in (table.encode(), *fields):
        if field is None:
            h.update(b"\x00")
        else:
            h.update(b"\x01" + len(field).to_bytes(8, "big") + field)
    return h.hexdigest()[:32]


def text_fields(table: str, values: Sequence[object], version: int = SCHEMA_VERSION) -> list[Any]:
    """The checksummed fields of a row: its text columns, in order (``seq`` is not one, nor
    an empty ``meta``)."""
    cols = COLUMNS[version][table]
    return [
        v
        for (_, kind), v in zip(cols, values, strict=True)
        if kind != "integer" and not (kind == "meta" and v in ("", b""))
    ]


def summed(fields: Sequence[str], meta: str) -> tuple[str, ...]:
    """A cache or kv row's checksummed fields: ``fields`` then ``meta`` unless it is empty."""
    return (*fields, meta) if meta else tuple(fields)


def row_sum(table: str, values: Sequence[str | None], key: bytes | None) -> str:
    """The checksum of a row about to be written (its text fields, validated, in order): the
    keyed MAC with the store's ``key`` (``None``: the plain digest of versions 1 to 4, which
    only a migration writes)."""
    return _digest(table, [None if v is None else v.encode("utf-8") for v in values], key)


# -- reading rows ----------------------------------------------------------------------------


class RawRow(NamedTuple):
    """One row as stored: SQLite's type of each column and its value (text as raw bytes)."""

    rowid: int
    types: tuple[str, ...]
    values: tuple[object, ...]
    sum_type: str
    sum_value: object


class Unreadable(NamedTuple):
    """A rowid that could not be read (the page holding it is damaged)."""

    rowid: int


def _select(table: str, version: int) -> str:
    # CAST(... AS BLOB) hands back the stored bytes, so invalid UTF-8 is found here, not
    # raised by the driver; typeof() shows what another writer may have put there.
    cols = ", ".join(
        f"typeof({c}), " + (c if kind == "integer" else f"CAST({c} AS BLOB)")
        for c, kind in COLUMNS[version][table]
    )
    summed = "'null', NULL" if version == 0 else "typeof(checksum), CAST(checksum AS BLOB)"
    return f"SELECT rowid, {cols}, {summed} FROM {table}"  # table names are constants


def _raw(rec: Sequence[object]) -> RawRow:
    n = (len(rec) - 3) // 2
    types = tuple(str(rec[1 + 2 * i]) for i in range(n))
    values = tuple(rec[2 + 2 * i] for i in range(n))
    rowid = rec[0]
    assert isinstance(rowid, int)
    return RawRow(rowid, types, values, str(rec[-2]), rec[-1])


def scan(
    conn: sqlite3.Connection, table: str, version: int, *, order: str = "rowid"
) -> Iterator[RawRow]:
    """Every row of ``table`` in a file of schema ``version``; a damaged page raises (the caller
    translates it)."""
    for rec in conn.execute(f"{_select(table, version)} ORDER BY {order}"):
        yield _raw(rec)


_MAX_PROBES = 1_000_000  # rowids probed one by one past a damaged page before giving up


def scan_tolerant(
    conn: sqlite3.Connection, table: str, version: int
) -> Iterator[RawRow | Unreadable]:
    """Every row that can be read, in rowid order, stepping over damaged pages.

    A plain scan stops at the first damaged page; from there rowids are looked up one at a
    time (each lookup walks from the root, so it avoids the damaged page unless its row is
    on it) until one reads, and the scan resumes after it.
    """
    sql = _select(table, version)
    try:
        top: int | None = conn.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0]
    except sqlite3.DatabaseError:
        top = None
    last: int | None = None
    while True:
        where, args = ("", ()) if last is None else (" WHERE rowid > ?", (last,))
        try:
            for rec in conn.execute(f"{sql}{where} ORDER BY rowid", args):
                row = _raw(rec)
                last = row.rowid
                yield row
            return
        except sqlite3.DatabaseError:
            pass
        probe = 1 if last is None else last + 1
        limit = probe + _MAX_PROBES if top is None else min(top, probe + _MAX_PROBES)
        found: RawRow | None = None
        while probe <= limit and found is None:
            try:
                rec = conn.execute(f"{sql} WHERE rowid = ?", (probe,)).fetchone()
            except sqlite3.DatabaseError:
                yield Unreadable(probe)
            else:
                found = None if rec is None else _raw(rec)
            probe += 1
        if found is None:
            return
        last = found.rowid
        yield found


def type_problem(table: str, row: RawRow, version: int = SCHEMA_VERSION) -> str | None:
    """Why a row's columns have the wrong SQLite types, or ``None``."""
    for (col, kind), found in zip(COLUMNS[version][table], row.types, strict=True):
        allowed = (
            ("text", "null")
            if kind == "text?"
            else ("text",)
            if kind in ("origin", "meta")
            else (kind,)
        )
        if found not in allowed:
            return f"{col} is {found}, not {allowed[0]}"
    if row.sum_type not in ("text", "null"):
        return f"checksum is {row.sum_type}, not text"
    return None


def decode(
    table: str, row: RawRow, version: int = SCHEMA_VERSION, *, key: bytes | None = None
) -> tuple[object, ...] | str:
    """The row's values (text decoded), or why it is damaged: checksum or UTF-8.

    The row's types must have passed :func:`type_problem`. A row of version 5 is checked
    against the MAC with ``key`` (the store's: :func:`check_key` has matched it), one of
    versions 1 to 4 against the plain digest.
    """
    if version != 0:
        if row.sum_value is None:
            return "no checksum (written without one, by an older eoc?)"
        keyed = key if version >= KEYED_VERSION else None
        if version >= KEYED_VERSION and key is None:
            raise ValueError("a keyed store's rows are checked with its key")
        fields = text_fields(table, row.values, version)
        stored = row.sum_value if isinstance(row.sum_value, bytes) else b""
        if not hmac.compare_digest(stored, _digest(table, fields, keyed).encode()):
            return (
                "checksum mismatch (changed since eoc wrote it: the MAC does not hold)"
                if keyed is not None
                else "checksum mismatch (changed since eoc wrote it)"
            )
    out: list[object] = []
    for (col, kind), value in zip(COLUMNS[version][table], row.values, strict=True):
        if kind == "integer" or value is None:
            out.append(value)
            continue
        assert isinstance(value, bytes)
        try:
            out.append(value.decode("utf-8"))
        except UnicodeDecodeError:
            return f"{col} is not valid UTF-8"
    return tuple(out)


def invalid(table: str, values: tuple[object, ...], version: int = SCHEMA_VERSION) -> str | None:
    """Why decoded values are not a row eoc would have written, or ``None``."""
    try:
        if table == "cache":
            check_text(values[1], "the cached answer", max_bytes=MAX_ANSWER_BYTES)
        elif table == "kv":
            kv_key(values[1], values[2])  # type: ignore[arg-type]
            if version >= 4:
                tag_of(values[0])  # type: ignore[arg-type]
            check_text(values[3], "the embedder name", max_bytes=MAX_FIELD_BYTES)
        else:
            for value, what in zip(values, ("subject", "predicate", "object"), strict=True):
                check_text(value, f"the triple's {what}", max_bytes=MAX_FIELD_BYTES)
        if version >= 2 and table != "triples":
            checked_origin(values[ORIGIN_AT[table]])
        if version >= 3 and table != "triples":
            meta_from_text(values[META_AT[table]])  # type: ignore[arg-type]
    except EocError as exc:
        return exc.reason
    return None


def upgraded(table: str, values: tuple[object, ...], version: int) -> tuple[object, ...]:
    """A row read from a file of ``version`` as the current layout holds it (a row from before
    version 2 gets the origin :data:`UNRECORDED`, one from before version 3 the meta "")."""
    if version < 2 and table != "triples":
        values = (*values, UNRECORDED)
    if version < 3 and table != "triples":
        values = (*values, "")
    return values


# -- layout ----------------------------------------------------------------------------------


class Layout(NamedTuple):
    """What an opened file holds: its schema version and which of eoc's tables exist."""

    version: int
    tables: frozenset[str]

    @property
    def legacy(self) -> bool:
        """Tables of the layout before checksums (version 0 with no tables is just empty)."""
        return self.version == 0 and bool(self.tables)


def read_layout(conn: sqlite3.Connection, path: str | Path) -> Layout:
    """Check the file is eoc's, in a version this eoc reads.

    Raises:
        StoreVersionError: an unknown version, another program's tables, eoc's table names
            with other columns, or not an SQLite database at all.
    """
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version not in READABLE_VERSIONS:
        newer = "a newer eoc (upgrade eoc)" if version > SCHEMA_VERSION else "another program"
        raise StoreVersionError(
            f"the store {path} has schema version {version}; this eoc reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}: it was written by {newer}; "
            "choose another path for this eoc's store"
        )
    encoding = conn.execute("PRAGMA encoding").fetchone()[0]
    objects = conn.execute(
        "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') "
        "AND name NOT LIKE 'sqlite!_%' ESCAPE '!'"
    ).fetchall()
    known = set(TABLES) | ({INFO} if version >= KEYED_VERSION else set())
    foreign = sorted(str(n) for n, t in objects if n not in known or t != "table")
    if foreign or (objects and encoding != "UTF-8"):
        what = f"tables {', '.join(foreign)}" if foreign else f"{encoding} text"
        raise StoreVersionError(
            f"{path} is another program's SQLite database (it holds {what}, not eoc's "
            "cache, kv and triples): choose another path for eoc's store"
        )
    for name, _ in objects:
        cols = tuple(r[1] for r in conn.execute(f"PRAGMA table_info({name})"))
        want = physical(version, name)
        if cols != want:
            raise StoreVersionError(
                f"{path} has a table {name}({', '.join(cols)}), but eoc's schema version "
                f"{version} has {name}({', '.join(want)}): it is another program's database; "
                "choose another path for eoc's store"
            )
    return Layout(version, frozenset(str(n) for n, _ in objects if n != INFO))


def integrity_problems(conn: sqlite3.Connection) -> list[str]:
    """What ``PRAGMA quick_check`` finds wrong (empty when the file is sound)."""
    try:
        found = [str(r[0]) for r in conn.execute("PRAGMA quick_check(20)")]
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    return [] if found == ["ok"] else found


def check_key(conn: sqlite3.Connection, path: str | Path, key: bytes) -> None:
    """Refuse a store of version 5 whose rows another key signed (each would read as changed).

    Raises:
        StoreUnusable: the store names another key.
    """
    if not _has_info(conn):
        return  # dropped by another program: the next writer names the key again
    found = conn.execute(f"SELECT value FROM {INFO} WHERE name = 'key'").fetchone()
    if found is not None and found[0] != key_id(key):
        raise StoreUnusable(
            f"the store {path} is signed with another key (id {str(found[0])[:16]!r}), not "
            f"this user's (id {key_id(key)}): every row would read as changed outside eoc. "
            "Set EOC_KEY_FILE to the key file of the user or machine that made the store "
            "(copy it, mode 600), or choose another path; nothing was changed"
        )


def _has_info(conn: sqlite3.Connection) -> bool:
    return (
        conn.execute(
            f"SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '{INFO}'"
        ).fetchone()
        is not None
    )


def forgets(conn: sqlite3.Connection) -> int:
    """How many forgets the store has seen (each process sharing it compares)."""
    if not _has_info(conn):
        return -1  # dropped by another program: differs from any count, so memory is pruned
    found = conn.execute(f"SELECT value FROM {INFO} WHERE name = 'forgets'").fetchone()
    try:
        return int(found[0]) if found is not None else 0
    except (TypeError, ValueError):
        return -1  # written by another program: differs from any count, so memory is pruned


def count_forget(conn: sqlite3.Connection) -> None:
    """Count one forget (inside the transaction that deleted the rows)."""
    conn.execute(
        f"INSERT INTO {INFO} (name, value) VALUES ('forgets', '1') ON CONFLICT (name) DO "
        "UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)"
    )


def _sign(conn: sqlite3.Connection, tables: frozenset[str], key: bytes) -> None:
    """Version 4 to 5: every row whose plain checksum holds gets the keyed one."""
    for table in sorted(tables):
        sums = []
        for row in scan(conn, table, 4):
            if row.sum_type != "text" or type_problem(table, row, 4) is not None:
                continue  # damaged: it stays damaged
            fields = text_fields(table, row.values, 4)
            if row.sum_value == _digest(table, fields).encode():
                sums.append((_digest(table, fields, key), row.rowid))
        conn.executemany(f"UPDATE {table} SET checksum = ? WHERE rowid = ?", sums)


def upgrade(conn: sqlite3.Connection, layout: Layout, path: str | Path, key: bytes) -> None:
    """Bring the file to :data:`SCHEMA_VERSION`; the caller holds a write transaction.

    A fresh file gets all three tables; a version-0 file gets a ``checksum`` column and a
    checksum for every row (wrong-typed rows refuse the migration, leaving the file as it was);
    a version-1 file (or a version-0 one after that) gets an ``origin`` column in cache and kv,
    :data:`UNRECORDED` for every row, and a fresh checksum for each row whose old one held;
    then a ``meta`` column, "" for every row (unknown age and generation); a version-3 file
    changes no row (partitions are new in version 4: every row is in the shared one); a
    version-4 file (and each older one after its steps) gets the table ``info`` naming ``key``,
    and each row whose checksum holds its keyed MAC.
    """
    version = layout.version
    if layout.legacy:
        for table in sorted(layout.tables):
            sums = []
            for row in scan(conn, table, 0):
                problem = type_problem(table, row, 0)
                if problem is not None:
                    raise wrong_type(path, table, row.rowid, problem)
                sums.append((_digest(table, text_fields(table, row.values, 0)), row.rowid))
            conn.execute(f"ALTER TABLE {table} ADD COLUMN checksum TEXT")
            conn.executemany(f"UPDATE {table} SET checksum = ? WHERE rowid = ?", sums)
        version = 1
    if version == 1:
        for table in sorted(layout.tables - {"triples"}):
            sums = []
            for row in scan(conn, table, 1):
                problem = type_problem(table, row, 1)
                if problem is not None:
                    raise wrong_type(path, table, row.rowid, problem)
                old = text_fields(table, row.values, 1)  # the stored bytes, as summed before
                if row.sum_value != _digest(table, old).encode():
                    continue  # damaged before: it stays damaged (its old checksum is kept)
                sums.append((_digest(table, [*old, UNRECORDED.encode()]), row.rowid))
            conn.execute(
                f"ALTER TABLE {table} ADD COLUMN origin TEXT NOT NULL DEFAULT "
                f"'{UNRECORDED}'"  # a constant of eoc's own, without quotes
            )
            conn.executemany(f"UPDATE {table} SET checksum = ? WHERE rowid = ?", sums)
    if layout.version < 3:
        # an empty meta is not summed: every row's checksum holds as it was
        for table in sorted(layout.tables - {"triples"}):
            conn.execute(f"ALTER TABLE {table} ADD COLUMN meta TEXT NOT NULL DEFAULT ''")
    if layout.version < KEYED_VERSION:
        _sign(conn, layout.tables, key)
    conn.execute(_CREATE_INFO)  # also where another program dropped it: the key is named again
    for table in TABLES:
        if table not in layout.tables:
            conn.execute(_CREATE[table])
    conn.execute(f"INSERT OR IGNORE INTO {INFO} (name, value) VALUES ('key', ?)", (key_id(key),))
    if layout.version != SCHEMA_VERSION:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def wrong_type(path: str | Path, table: str, rowid: int, problem: str) -> StoreCorrupt:
    """The error for a row another writer stored with the wrong type."""
    return StoreCorrupt(
        f"the store {path}: table {table} row {rowid}: {problem} (not written by eoc): "
        f"{recover_hint(path)}, then use the new file"
    )


__all__ = [
    "COLUMNS",
    "INFO",
    "KEYED_VERSION",
    "META_AT",
    "ORIGIN_AT",
    "READABLE_VERSIONS",
    "SCHEMA_VERSION",
    "TABLES",
    "UNRECORDED",
    "Layout",
    "RawRow",
    "Unreadable",
    "check_key",
    "count_forget",
    "decode",
    "forgets",
    "integrity_problems",
    "invalid",
    "physical",
    "read_layout",
    "recover_hint",
    "row_sum",
    "scan",
    "scan_tolerant",
    "summed",
    "text_fields",
    "type_problem",
    "upgrade",
    "upgraded",
    "wrong_type",
]
