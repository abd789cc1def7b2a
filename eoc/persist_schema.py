"""The layout of eoc's SQLite store: schema versions, row checksums, checks and error translation.

Schema versions (``PRAGMA user_version``):

* **0** — the layout before checksums: ``cache(qid, payload, seq)``, ``kv(key, prompt, payload,
  embedder, vector)``, ``triples(s, p, o)``. Opening such a file migrates it to version 1 in one
  transaction: each table gets a ``checksum`` column and every row its checksum. Rows of that
  release are trusted as they are; from then on a change made outside eoc is detected.
* **1** — the current layout: the same tables, each with ``checksum``, the first 32 hex digits
  of the SHA-256 of the table name and the row's text fields, each length-prefixed (so no two
  rows encode alike).

Any other version, or tables that are not eoc's, is refused with :class:`StoreVersionError`.
This module is shared by :mod:`eoc.persist` (opening stores) and ``eoc store check|recover``.
"""

from __future__ import annotations

import hashlib
import shlex
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from eoc.errors import (
    EocError,
    StoreCorrupt,
    StoreVersionError,
)
from eoc.query import check_text
from eoc.stages.cache import MAX_ANSWER_BYTES
from eoc.stages.kv import KVStage

SCHEMA_VERSION = 1
"""The layout this eoc writes."""
READABLE_VERSIONS = (0, 1)
"""The layouts this eoc opens (0 is migrated to 1 on open)."""
MAX_FIELD_BYTES = 1 << 20
"""Largest triple term or embedder name accepted from the file, in UTF-8 bytes."""

# Column name -> kind: "text", "text?" (text or NULL) or "integer". The checksum covers the
# text columns in this order; ``seq`` (cache order) is not covered: a damaged one reorders only.
TABLES: dict[str, tuple[tuple[str, str], ...]] = {
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
_CREATE = {
    "cache": "CREATE TABLE cache (qid TEXT PRIMARY KEY, payload TEXT NOT NULL, "
    "seq INTEGER NOT NULL, checksum TEXT)",
    "kv": "CREATE TABLE kv (key TEXT PRIMARY KEY, prompt TEXT NOT NULL, payload TEXT NOT NULL, "
    "embedder TEXT NOT NULL, vector TEXT, checksum TEXT)",
    "triples": "CREATE TABLE triples (s TEXT NOT NULL, p TEXT NOT NULL, o TEXT NOT NULL, "
    "checksum TEXT, PRIMARY KEY (s, p, o))",
}


def recover_hint(path: str | Path) -> str:
    """The command that copies what is readable out of a damaged store."""
    return f"run `eoc store recover {shlex.quote(str(path))} NEW.db` to copy what is readable"


# -- checksums -------------------------------------------------------------------------------


def _digest(table: str, fields: Sequence[bytes | None]) -> str:
    h = hashlib.sha256()
    for field in (table.encode(), *fields):
        if field is None:
            h.update(b"\x00")
        else:
            h.update(b"\x01" + len(field).to_bytes(8, "big") + field)
    return h.hexdigest()[:32]


def text_fields(table: str, values: Sequence[object]) -> list[Any]:
    """The checksummed fields of a row: its text columns, in order (``seq`` is not one)."""
    return [v for (_, kind), v in zip(TABLES[table], values, strict=True) if kind != "integer"]


def row_sum(table: str, values: Sequence[str | None]) -> str:
    """The checksum of a row about to be written (its text fields, validated, in order)."""
    return _digest(table, [None if v is None else v.encode("utf-8") for v in values])


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


def _select(table: str, legacy: bool) -> str:
    # CAST(... AS BLOB) hands back the stored bytes, so invalid UTF-8 is found here, not
    # raised by the driver; typeof() shows what another writer may have put there.
    cols = ", ".join(
        f"typeof({c}), " + (c if kind == "integer" else f"CAST({c} AS BLOB)")
        for c, kind in TABLES[table]
    )
    summed = "'null', NULL" if legacy else "typeof(checksum), CAST(checksum AS BLOB)"
    return f"SELECT rowid, {cols}, {summed} FROM {table}"  # table names are constants


def _raw(rec: Sequence[object]) -> RawRow:
    n = (len(rec) - 3) // 2
    types = tuple(str(rec[1 + 2 * i]) for i in range(n))
    values = tuple(rec[2 + 2 * i] for i in range(n))
    rowid = rec[0]
    assert isinstance(rowid, int)
    return RawRow(rowid, types, values, str(rec[-2]), rec[-1])


def scan(
    conn: sqlite3.Connection, table: str, legacy: bool, *, order: str = "rowid"
) -> Iterator[RawRow]:
    """Every row of ``table``; a damaged page raises (the caller translates it)."""
    for rec in conn.execute(f"{_select(table, legacy)} ORDER BY {order}"):
        yield _raw(rec)


_MAX_PROBES = 1_000_000  # rowids probed one by one past a damaged page before giving up


def scan_tolerant(
    conn: sqlite3.Connection, table: str, legacy: bool
) -> Iterator[RawRow | Unreadable]:
    """Every row that can be read, in rowid order, stepping over damaged pages.

    A plain scan stops at the first damaged page; from there rowids are looked up one at a
    time (each lookup walks from the root, so it avoids the damaged page unless its row is
    on it) until one reads, and the scan resumes after it.
    """
    sql = _select(table, legacy)
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


def type_problem(table: str, row: RawRow) -> str | None:
    """Why a row's columns have the wrong SQLite types, or ``None``."""
    for (col, kind), found in zip(TABLES[table], row.types, strict=True):
        allowed = ("text", "null") if kind == "text?" else (kind.rstrip("?"),)
        if found not in allowed:
            return f"{col} is {found}, not {kind.rstrip('?')}"
    if row.sum_type not in ("text", "null"):
        return f"checksum is {row.sum_type}, not text"
    return None


def decode(table: str, row: RawRow, legacy: bool) -> tuple[object, ...] | str:
    """The row's values (text decoded), or why it is damaged: checksum or UTF-8.

    The row's types must have passed :func:`type_problem`.
    """
    if not legacy:
        if row.sum_value is None:
            return "no checksum (written without one, by an older eoc?)"
        if row.sum_value != _digest(table, text_fields(table, row.values)).encode():
            return "checksum mismatch (changed since eoc wrote it)"
    out: list[object] = []
    for (col, kind), value in zip(TABLES[table], row.values, strict=True):
        if kind == "integer" or value is None:
            out.append(value)
            continue
        assert isinstance(value, bytes)
        try:
            out.append(value.decode("utf-8"))
        except UnicodeDecodeError:
            return f"{col} is not valid UTF-8"
    return tuple(out)


def invalid(table: str, values: tuple[object, ...]) -> str | None:
    """Why decoded values are not a row eoc would have written, or ``None``."""
    try:
        if table == "cache":
            check_text(values[1], "the cached answer", max_bytes=MAX_ANSWER_BYTES)
        elif table == "kv":
            KVStage.checked_key(values[1], values[2])  # type: ignore[arg-type]
            check_text(values[3], "the embedder name", max_bytes=MAX_FIELD_BYTES)
        else:
            for value, what in zip(values, ("subject", "predicate", "object"), strict=True):
                check_text(value, f"the triple's {what}", max_bytes=MAX_FIELD_BYTES)
    except EocError as exc:
        return exc.reason
    return None


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
    foreign = sorted(str(n) for n, t in objects if n not in TABLES or t != "table")
    if foreign or (objects and encoding != "UTF-8"):
        what = f"tables {', '.join(foreign)}" if foreign else f"{encoding} text"
        raise StoreVersionError(
            f"{path} is another program's SQLite database (it holds {what}, not eoc's "
            "cache, kv and triples): choose another path for eoc's store"
        )
    for name, _ in objects:
        cols = tuple(r[1] for r in conn.execute(f"PRAGMA table_info({name})"))
        want = tuple(c for c, _ in TABLES[name]) + (() if version == 0 else ("checksum",))
        if cols != want:
            raise StoreVersionError(
                f"{path} has a table {name}({', '.join(cols)}), but eoc's schema version "
                f"{version} has {name}({', '.join(want)}): it is another program's database; "
                "choose another path for eoc's store"
            )
    return Layout(version, frozenset(str(n) for n, _ in objects))


def integrity_problems(conn: sqlite3.Connection) -> list[str]:
    """What ``PRAGMA quick_check`` finds wrong (empty when the file is sound)."""
    try:
        found = [str(r[0]) for r in conn.execute("PRAGMA quick_check(20)")]
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    return [] if found == ["ok"] else found


def upgrade(conn: sqlite3.Connection, layout: Layout, path: str | Path) -> None:
    """Bring the file to :data:`SCHEMA_VERSION`; the caller holds a write transaction.

    A fresh file gets all three tables; a version-0 file gets a ``checksum`` column and a
    checksum for every row (wrong-typed rows refuse the migration, leaving the file as it was).
    """
    if layout.legacy:
        for table in sorted(layout.tables):
            sums = []
            for row in scan(conn, table, legacy=True):
                problem = type_problem(table, row)
                if problem is not None:
                    raise wrong_type(path, table, row.rowid, problem)
                sums.append((_digest(table, text_fields(table, row.values)), row.rowid))
            conn.execute(f"ALTER TABLE {table} ADD COLUMN checksum TEXT")
            conn.executemany(f"UPDATE {table} SET checksum = ? WHERE rowid = ?", sums)
    for table in TABLES:
        if table not in layout.tables:
            conn.execute(_CREATE[table])
    if layout.version != SCHEMA_VERSION:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def wrong_type(path: str | Path, table: str, rowid: int, problem: str) -> StoreCorrupt:
    """The error for a row another writer stored with the wrong type."""
    return StoreCorrupt(
        f"the store {path}: table {table} row {rowid}: {problem} (not written by eoc): "
        f"{recover_hint(path)}, then use the new file"
    )


__all__ = [
    "READABLE_VERSIONS",
    "SCHEMA_VERSION",
    "TABLES",
    "Layout",
    "RawRow",
    "Unreadable",
    "decode",
    "integrity_problems",
    "invalid",
    "read_layout",
    "recover_hint",
    "row_sum",
    "scan",
    "scan_tolerant",
    "text_fields",
    "type_problem",
    "upgrade",
    "wrong_type",
]
