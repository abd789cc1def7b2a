"""Opening eoc's SQLite store: the checks made before anything is read, and typed errors.

:class:`StoreDb` is one checked connection. Opening it, in order: the path is a regular,
readable and writable file (or a new one) in an existing, writable folder (WAL mode creates
``-wal`` and ``-shm`` files beside it), and nothing is created, not even a folder; the file
is an SQLite database of eoc's, in a schema version this eoc reads; ``PRAGMA quick_check``
passes; then, in one write transaction (which also proves the file writable), the layout is
brought to the current version (:mod:`eoc.store.sqlite_schema`). Every ``sqlite3`` error met on
the way, or later, is translated into a :class:`~eoc.errors.StoreError` that says what to do.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from eoc.errors import ConfigError, StoreCorrupt, StoreError, StoreUnusable, StoreVersionError
from eoc.store.keys import KEY_ENV, key_path, load_key
from eoc.store.sqlite_schema import (
    KEYED_VERSION,
    SCHEMA_VERSION,
    check_key,
    decode,
    forgets,
    integrity_problems,
    invalid,
    read_layout,
    recover_hint,
    scan,
    type_problem,
    upgrade,
    wrong_type,
)


def _stat(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def check_path(path: object, *, write: bool) -> tuple[Path, Path]:
    """The path as given and the real file it names, checked before SQLite touches it.

    Raises:
        ConfigError: ``path`` is not a path.
        StoreUnusable: its folder is missing; it is not a regular file; it (or, to write,
            its folder, where WAL mode keeps ``-wal`` and ``-shm`` files) is read-only.
    """
    if not isinstance(path, (str, os.PathLike)) or str(path) in ("", ":memory:"):
        raise ConfigError(
            f"a store is the path of an SQLite file, not {path!r}: for a store in memory use "
            "the in-memory stages (CacheStage, KVStage, TripleStore)"
        )
    try:
        given = Path(path).expanduser()
        real = Path(os.path.realpath(given))  # a symlink is judged by the file it points at
        folder_ok = real.parent.is_dir()
        st = _stat(real) if folder_ok else None
    except (OSError, ValueError, TypeError) as exc:  # NUL in the name, too long, bytes path
        raise StoreUnusable(f"cannot use {path!r} as the store: {exc}") from None
    folder = real.parent
    if not folder_ok:
        raise StoreUnusable(
            f"the folder {folder} of the store {given} does not exist: create it "
            f"(mkdir -p {shlex.quote(str(folder))}) or choose another path; eoc creates no folders"
        )
    if st is not None and not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a device, pipe or socket"
        raise StoreUnusable(
            f"the store {given} is not a regular file ({kind}): give the path of an SQLite "
            "file, or of a file to create"
        )
    if st is None and not write:
        raise StoreUnusable(f"the store {given} does not exist: check the path")
    if st is not None and not os.access(real, os.R_OK):
        raise StoreUnusable(f"the store {given} cannot be read: check its permissions")
    if st is not None and write and not os.access(real, os.W_OK):
        raise StoreUnusable(
            f"the store {given} is read-only: eoc writes every answer through to it; make it "
            "writable (chmod u+w) or copy it to a writable place"
        )
    if write and not os.access(folder, os.W_OK | os.X_OK):
        raise StoreUnusable(
            f"the folder {folder} of the store {given} is read-only: SQLite's WAL mode creates "
            f"{real.name}-wal and {real.name}-shm beside the store; make the folder writable "
            "or move the store"
        )
    return given, real


def translate(exc: sqlite3.Error, path: str | Path, doing: str) -> StoreError:
    """A typed error, with what to do, for an ``sqlite3`` error met while ``doing``."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    msg = str(exc)
    where = f"the store {path}"
    if isinstance(exc, sqlite3.ProgrammingError) and "closed" in msg:
        return StoreUnusable(f"{where} is closed: open it again")
    if name == "SQLITE_NOTADB" or "not a database" in msg:
        return StoreVersionError(
            f"{where} is not an SQLite database: choose another path (eoc does not overwrite "
            "a file it did not write)"
        )
    if name.startswith("SQLITE_CORRUPT") or "malformed" in msg:
        return StoreCorrupt(f"{where} is damaged ({msg}) while {doing}: {recover_hint(path)}")
    if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM")):
        return StoreUnusable(
            f"{where} cannot be written ({msg}) while {doing}: make the file and its folder "
            "writable; nothing was changed"
        )
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return StoreUnusable(
            f"{where} is locked by another process ({msg}) while {doing}: retry, or stop the "
            "other writer; nothing was changed"
        )
    if name.startswith("SQLITE_FULL"):
        return StoreError(
            f"{where} is full ({msg}) while {doing}: free disk space; nothing was changed"
        )
    return StoreError(f"{where} failed ({msg}) while {doing}; nothing was changed")


Damage = tuple[str, int, str]
"""A row not loaded: ``(table, rowid, reason)``; the row stays in the file."""


def store_key(key: bytes | None = None) -> bytes:
    """The key a store's rows are signed with: ``key``, else the user's (:mod:`eoc.store.keys`).

    Raises:
        UntrustedFile: the key file, or its folder, is not the user's alone.
        StoreUnusable: the key file cannot be made or read.
    """
    if key is not None:
        if not isinstance(key, bytes) or len(key) < 16:
            raise ConfigError("a store's key is bytes, at least 16 of them (eoc.store.keys)")
        return key
    try:
        return load_key()
    except OSError as exc:
        raise StoreUnusable(
            f"cannot make or read eoc's key file {key_path()} ({exc}), which signs every store "
            f"row: make its folder writable, or set {KEY_ENV} to a file only you can read"
        ) from None


class StoreDb:
    """One checked, WAL-mode connection and the lock that serializes its writers.

    ``key`` signs and checks the rows (:func:`store_key`: the user's key by default)."""

    def __init__(self, path: object, key: bytes | None = None) -> None:
        given, real = check_path(path, write=True)
        self.key = store_key(key)
        self.path = given
        self.lock = threading.RLock()  # re-entrant: a store holds it across write and apply
        try:
            self.conn = sqlite3.connect(str(real), check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:
            raise translate(exc, given, "opening it") from None
        except UnicodeError:  # a file name of undecodable bytes, which SQLite cannot be given
            raise StoreUnusable(
                f"the store {given} has a name SQLite cannot open: rename it"
            ) from None
        try:
            self._prepare()
        except BaseException:
            self.conn.close()
            raise

    def _prepare(self) -> None:
        with self.guard("opening it"):
            self.conn.execute("PRAGMA busy_timeout=5000")
            # checked before WAL mode is set: switching it rewrites the header of any file
            layout = read_layout(self.conn, self.path)
            if layout.version >= KEYED_VERSION:
                check_key(self.conn, self.path, self.key)  # before anything is written
            problems = integrity_problems(self.conn)
            if problems:
                raise StoreCorrupt(
                    f"the store {self.path} failed SQLite's integrity check "
                    f"({'; '.join(problems[:3])}): {recover_hint(self.path)}, then use the new file"
                )
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
        # BEGIN IMMEDIATE proves the file writable now, and serializes two processes' setup
        with self.transaction("opening it") as c:
            layout = read_layout(c, self.path)
            if layout.version >= KEYED_VERSION:
                check_key(c, self.path, self.key)
            upgrade(c, layout, self.path, self.key)
            self.forgets = forgets(c)

    @contextmanager
    def guard(self, doing: str) -> Iterator[None]:
        """Translate ``sqlite3`` errors into typed :class:`~eoc.errors.StoreError`."""
        try:
            yield
        except sqlite3.Error as exc:
            raise translate(exc, self.path, doing) from None

    @contextmanager
    def transaction(self, doing: str) -> Iterator[sqlite3.Connection]:
        """A write transaction, committed on exit, rolled back on any error."""
        with self.lock, self.guard(doing):
            c = self.conn
            c.execute("BEGIN IMMEDIATE")
            try:
                yield c
                c.execute("COMMIT")
            except BaseException:
                if c.in_transaction:
                    c.execute("ROLLBACK")
                raise

    def write(self, sql: str, args: tuple[Any, ...] = (), doing: str = "writing") -> None:
        """Run one statement in its own transaction (committed before this returns)."""
        with self.transaction(doing) as c:
            c.execute(sql, args)

    def rows(
        self, table: str, damaged: list[Damage], *, order: str = "rowid"
    ) -> Iterator[tuple[Any, ...]]:
        """The good rows of ``table``; damaged ones are listed, wrong types raise StoreCorrupt."""
        with self.guard(f"reading {table}"):
            for row in scan(self.conn, table, SCHEMA_VERSION, order=order):
                problem = type_problem(table, row)
                if problem is not None:
                    raise wrong_type(self.path, table, row.rowid, problem)
                values = decode(table, row, key=self.key)
                reason = values if isinstance(values, str) else invalid(table, values)
                if reason is not None:
                    damaged.append((table, row.rowid, reason))
                    continue
                assert not isinstance(values, str)
                yield (row.rowid, *values)

    def close(self) -> None:
        """Close the connection (WAL is folded into the file when the last one closes)."""
        with self.lock:
            self.conn.close()


def opened(path: object, load: Callable[[StoreDb], None], key: bytes | None = None) -> StoreDb:
    """Open ``path`` and run ``load``; closes the connection if loading refused the file."""
    db = StoreDb(path, key)
    try:
        load(db)
    except BaseException:
        db.close()
        raise
    return db


__all__ = ["Damage", "StoreDb", "check_path", "opened", "store_key", "translate"]
