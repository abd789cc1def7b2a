"""``eoc store check FILE`` and ``eoc store recover OLD NEW``: look into a store, save what is good.

``check`` opens the file read-only and changes nothing in it (a file of the layout before
checksums is reported, not migrated; reading a WAL-mode file, SQLite may leave its ``-wal`` and
``-shm`` files beside it, which the next store to open it uses): schema version, SQLite's ``quick_check``, rows per table, and each
damaged row (table, rowid, reason). Exit 0 when clean, 1 when anything is damaged. A row of
the current layout is checked against its MAC with the user's key (:mod:`eoc.store.keys`): a row
edited outside eoc, its checksum recomputed as a plain digest or not, is damaged. A store signed
with another key is refused, with what to do.

``recover`` opens OLD read-only and copies, row by row, every row it can read whose types,
checksum and text are good into NEW, a fresh store of the current layout. It steps over
damaged pages, so it works when ``quick_check`` fails; rows of the layout before checksums are
copied as they are (there is no checksum to check them against). Then use NEW as the store.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from eoc.cli.common import Add, emit
from eoc.cli.forget import add_forget
from eoc.errors import StoreUnusable
from eoc.store.sqlite_db import StoreDb, check_path, store_key, translate
from eoc.store.sqlite_schema import (
    KEYED_VERSION,
    ORIGIN_AT,
    SCHEMA_VERSION,
    TABLES,
    UNRECORDED,
    Layout,
    Unreadable,
    check_key,
    decode,
    integrity_problems,
    invalid,
    read_layout,
    recover_hint,
    row_sum,
    scan_tolerant,
    text_fields,
    type_problem,
    upgraded,
)

MAX_LISTED = 1000  # damaged rows listed in a report (all are counted)

_INSERT = {
    "cache": "INSERT OR IGNORE INTO cache (qid, payload, seq, origin, meta, checksum) "
    "VALUES (?, ?, ?, ?, ?, ?)",
    "kv": "INSERT OR IGNORE INTO kv (key, prompt, payload, embedder, vector, origin, meta, "
    "checksum) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    "triples": "INSERT OR IGNORE INTO triples (s, p, o, checksum) VALUES (?, ?, ?, ?)",
}


def _open_read_only(path: str) -> tuple[Path, sqlite3.Connection, Layout, list[str]]:
    """The store opened read-only, its layout and what ``quick_check`` finds wrong.

    A store of version 5 must name this user's key (:func:`eoc.store.sqlite_schema.check_key`)."""
    given, real = check_path(path, write=False)
    try:
        conn = sqlite3.connect(f"file:{quote(str(real))}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise translate(exc, given, "opening it read-only") from None
    try:
        layout = read_layout(conn, given)
        if layout.version >= KEYED_VERSION:
            check_key(conn, given, store_key())
    except sqlite3.Error as exc:
        conn.close()
        raise translate(exc, given, "reading its schema") from None
    except BaseException:
        conn.close()
        raise
    return given, conn, layout, integrity_problems(conn)


def _good_rows(
    conn: sqlite3.Connection, table: str, version: int, counts: dict[str, int], bad: list[Any]
) -> Iterator[tuple[Any, ...]]:
    """The rows of ``table`` fit to keep, as the current layout holds them; counts
    ``unreadable`` and lists damaged ones in ``bad``. A row of version 5 must carry its MAC
    with this user's key."""
    key = store_key() if version >= KEYED_VERSION else None
    for row in scan_tolerant(conn, table, version):
        if isinstance(row, Unreadable):
            counts["unreadable"] += 1
            continue
        reason = type_problem(table, row, version)
        values: Any = None
        if reason is None:
            values = decode(table, row, version, key=key)
            if not isinstance(values, str):
                values = upgraded(table, values, version)
            reason = values if isinstance(values, str) else invalid(table, values)
        if reason is not None:
            counts["damaged"] += 1
            bad.append({"table": table, "rowid": row.rowid, "reason": reason})
            continue
        yield values


def _describe(layout: Layout) -> str:
    if not layout.tables:
        return "empty (no tables yet: the first store to open it creates them)"
    if layout.legacy:
        return "version 0 (before checksums: rows unverified; migrated when a store opens it)"
    if layout.version == 1:
        return (
            "version 1 (answers do not say what made them: migrated when a store opens it, "
            "and never served)"
        )
    if layout.version == 2:
        return (
            "version 2 (entries do not say their age nor how a model made them: migrated "
            "when a store opens it; replays say finish reason and usage are unknown)"
        )
    if layout.version < KEYED_VERSION:
        return (
            f"version {layout.version} (checksums a writer can recompute: each row whose "
            "checksum holds is signed with your key when a store opens it)"
        )
    return f"version {layout.version} (current: rows signed with your key)"


def _damage_lines(bad: list[dict[str, Any]]) -> list[str]:
    lines = [f"damaged : {b['table']} row {b['rowid']}: {b['reason']}" for b in bad[:50]]
    if len(bad) > 50:
        lines.append(f"damaged : ... and {len(bad) - 50} more (--json lists {MAX_LISTED})")
    return lines


def cmd_store_check(args: argparse.Namespace, out: TextIO) -> int:
    """Report on a store without changing it; 0 when clean, 1 when anything is damaged."""
    given, conn, layout, problems = _open_read_only(args.file)
    tables: dict[str, dict[str, int]] = {}
    bad: list[dict[str, Any]] = []
    try:
        for table in TABLES:
            counts = {"rows": 0, "damaged": 0, "unreadable": 0}
            if table in layout.tables:
                for values in _good_rows(conn, table, layout.version, counts, bad):
                    counts["rows"] += 1
                    if table != "triples" and values[ORIGIN_AT[table]] == UNRECORDED:
                        counts["unrecorded"] = counts.get("unrecorded", 0) + 1
            tables[table] = counts
    finally:
        conn.close()
    clean = not problems and not bad and not any(t["unreadable"] for t in tables.values())
    doc = {
        "file": str(given),
        "schema_version": layout.version,
        "quick_check": problems or ["ok"],
        "tables": tables,
        "damaged": bad[:MAX_LISTED],
        "clean": clean,
    }
    lines = [
        f"file : {given}",
        f"schema : {_describe(layout)}",
        f"quick_check : {'ok' if not problems else 'FAILED: ' + '; '.join(problems[:3])}",
    ]
    lines += [
        f"{t} : {c['rows']} good rows, {c['damaged']} damaged, {c['unreadable']} unreadable"
        + (
            f" ({c['unrecorded']} do not say what made them: never served)"
            if c.get("unrecorded")
            else ""
        )
        for t, c in tables.items()
    ]
    lines += _damage_lines(bad)
    lines.append("verdict : clean" if clean else f"verdict : damaged: {recover_hint(given)}")
    emit(out, args.json, doc, lines)
    return 0 if clean else 1


def _remove(path: Path) -> None:
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def cmd_store_recover(args: argparse.Namespace, out: TextIO) -> int:
    """Copy every good row of ``args.src`` into a fresh store ``args.dst``; 0 when done."""
    dst = Path(args.dst).expanduser()
    if os.path.lexists(dst):
        raise StoreUnusable(
            f"{dst} already exists: recover writes a fresh store; give a new file name"
        )
    given, conn, layout, problems = _open_read_only(args.src)
    tables: dict[str, dict[str, int]] = {}
    bad: list[dict[str, Any]] = []
    try:
        db = StoreDb(dst)
        try:
            with db.transaction("writing the recovered rows") as c:
                for table in TABLES:
                    counts = {"copied": 0, "damaged": 0, "unreadable": 0, "duplicate": 0}
                    tables[table] = counts
                    if table not in layout.tables:
                        continue  # a file of the old layout may lack a table
                    for values in _good_rows(conn, table, layout.version, counts, bad):
                        summed = row_sum(table, text_fields(table, values), db.key)
                        cur = c.execute(_INSERT[table], (*values, summed))
                        counts["copied" if cur.rowcount == 1 else "duplicate"] += 1
        except BaseException:
            db.close()
            _remove(dst)  # ours, half-written: nothing of it is kept
            raise
        db.close()
    finally:
        conn.close()
    doc = {
        "source": str(given),
        "destination": str(dst),
        "schema_version": layout.version,
        "quick_check": problems or ["ok"],
        "tables": {
            t: {"copied": c["copied"], "dropped": c["damaged"] + c["duplicate"], **c}
            for t, c in tables.items()
        },
        "dropped": bad[:MAX_LISTED],
    }
    lines = [
        f"source : {given} ({_describe(layout)}; quick_check {'ok' if not problems else 'FAILED'})",
        f"destination : {dst} (version {SCHEMA_VERSION})",
    ]
    lines += [
        f"{t} : {c['copied']} copied, {c['damaged']} damaged and {c['duplicate']} duplicate "
        f"rows dropped, {c['unreadable']} rowids unreadable"
        for t, c in tables.items()
    ]
    lines += _damage_lines(bad)
    lines.append(f"next : use {dst} as the store (--store {dst})")
    emit(out, args.json, doc, lines)
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add ``eoc store check|recover`` to the ``eoc`` command's subparsers."""
    help_ = (
        "check a SQLite store, recover what is readable from a damaged one, or forget "
        "remembered answers"
    )
    store = sub.add_parser("store", help=help_, description=help_)
    store_sub = store.add_subparsers(dest="store_command", required=True, metavar="STORE")
    check = store_sub.add_parser(
        "check",
        help="report schema version, integrity, rows and damaged rows (changes nothing); "
        "exit 1 when damaged",
    )
    check.add_argument("file", help="the store file")
    check.add_argument("--json", action="store_true", help="print JSON instead of text")
    check.set_defaults(fn=cmd_store_check)
    recover = store_sub.add_parser(
        "recover", help="copy every readable, intact row of OLD into a new store NEW"
    )
    recover.add_argument("src", metavar="OLD", help="the damaged store (opened read-only)")
    recover.add_argument("dst", metavar="NEW", help="the new store (must not exist)")
    recover.add_argument("--json", action="store_true", help="print JSON instead of text")
    recover.set_defaults(fn=cmd_store_recover)
    add_forget(store_sub)
    return store


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], add: Add) -> None:
    """``eoc store check|recover``."""
    add_parser(sub)


__all__ = ["add_parser", "cmd_store_check", "cmd_store_recover", "register"]
