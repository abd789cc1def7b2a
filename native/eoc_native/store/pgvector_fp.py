"""The kv guard's fingerprints kept beside the vectors PostgreSQL searches, so that a question no
stored prompt could pass is known without embedding it.

The entity guard refuses a stored question whose numbers or operators differ from the query's,
whatever their cosine (``EntityGuard.fingerprint``). A kv that searches its own memory keeps each
stored prompt's fingerprint and skips the embedding when no stored prompt has the query's ("flight
9876" where only "flight 2231" is stored): such a miss costs no embedding model. With pgvector the
prompts live in the database, so their fingerprints do too: two columns of ``eoc_kv_vec_<dim>``,
``fp_by`` (the guard's ``fingerprint_id``: what the fingerprint reads, and its version) and ``fp``
(a SHA-256 of the fingerprint, so the index stays small whatever the prompt holds; ``NULL`` where
the guard gives none, a text that corrects itself).

:meth:`StoredFingerprints.may_hold` asks one indexed query: is there a row with the query's
fingerprint, or any row whose fingerprint is unknown (written before the columns, by another
guard, or without one)? Only a clear no skips the embedding; a database that cannot answer, a
fingerprint that cannot be written, and every unknown row mean "maybe", so nothing a search would
find is ever left out. Rows written without a fingerprint (by an older replica, or loaded by SQL)
are fingerprinted by one replica in the background, a batch at a time, after it starts: the start
reads no row, and until the last is done every lookup embeds as before.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from eoc.errors import StoreError

REMEMBERED = 4_096
"""Fingerprints a replica remembers as present (a row with one stays until it is forgotten, and
a forgotten one remembered only costs an embedding)."""
BATCH = 1_000
"""Rows fingerprinted per transaction in the background."""


def fingerprint_text(ident: str, fp: Hashable | None) -> str | None:
    """``fp`` as the column holds it: a SHA-256 (hex, 32 digits) of the guard's name for its
    fingerprints and the fingerprint as JSON; ``None`` when the guard gives none or it is not
    JSON (either way: unknown)."""
    if fp is None:
        return None
    try:
        body = json.dumps(fp, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return None
    return hashlib.sha256(f"{ident}\n{body}".encode()).hexdigest()[:32]


class StoredFingerprints:
    """The fingerprint columns of one vector table, the query that reads them and the background
    fill of rows written without them."""

    def __init__(self, store: Any, table: str) -> None:
        self.store = store
        self.table = table
        self.ident: str | None = None
        self._fingerprint: Callable[[str], Hashable | None] | None = None
        self._present: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()
        self._filler: threading.Thread | None = None
        t = table
        self._ask = (
            f"SELECT EXISTS (SELECT 1 FROM {t} WHERE fp_by = %(g)s AND fp = %(f)s), "
            f"EXISTS (SELECT 1 FROM {t} WHERE fp_by IS NULL OR fp IS NULL) "
            f"OR EXISTS (SELECT 1 FROM {t} WHERE fp_by < %(g)s) "
            f"OR EXISTS (SELECT 1 FROM {t} WHERE fp_by > %(g)s)"
        )

    @staticmethod
    def prepare(conn: Any, table: str) -> None:
        """Add the columns and their indexes (the caller holds the schema's lock)."""
        t = table
        conn.execute(
            f"ALTER TABLE {t} ADD COLUMN IF NOT EXISTS fp_by text, ADD COLUMN IF NOT EXISTS fp text"
        )
        conn.execute(f"CREATE INDEX IF NOT EXISTS {t}_fp ON {t} (fp_by, fp)")
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS {t}_unknown_fp ON {t} (key) "
            "WHERE fp_by IS NULL OR fp IS NULL"
        )

    def use(
        self, ident: str, fingerprint: Callable[[str], Hashable | None]
    ) -> Callable[[str], bool]:
        """Keep ``fingerprint`` (named ``ident``) for every prompt written from now on, start
        filling the rows that lack it, and return :meth:`may_hold`."""
        self.ident, self._fingerprint = ident, fingerprint
        self._start_filling()
        return self.may_hold

    def columns(self, prompt: str) -> tuple[str | None, str | None]:
        """What a row written for ``prompt`` holds in ``fp_by`` and ``fp``."""
        fingerprint, ident = self._fingerprint, self.ident
        if fingerprint is None or ident is None:
            return None, None
        return ident, fingerprint_text(ident, fingerprint(prompt))

    def may_hold(self, text: str) -> bool:
        """Whether a stored prompt may have ``text``'s fingerprint (True unless the database
        says none has it and none is unknown)."""
        fingerprint, ident = self._fingerprint, self.ident
        if fingerprint is None or ident is None:
            return True
        fp = fingerprint_text(ident, fingerprint(text))
        if fp is None:
            return True
        with self._lock:
            if fp in self._present:
                self._present.move_to_end(fp)
                return True
        try:
            with self.store.connection("looking for a stored prompt's fingerprint") as conn:
                row = conn.execute(self._ask, {"g": ident, "f": fp}).fetchone()
        except StoreError:
            return True  # it cannot say: the search that follows says what it can
        exact, unknown = bool(row[0]), bool(row[1])
        if exact:
            with self._lock:
                self._present[fp] = None
                if len(self._present) > REMEMBERED:
                    self._present.popitem(last=False)
        return exact or unknown

    # -- rows written without a fingerprint ------------------------------------------------

    def _start_filling(self) -> None:
        try:
            with self.store.connection("looking for rows without a fingerprint") as conn:
                t = self.table
                row = conn.execute(
                    f"SELECT EXISTS (SELECT 1 FROM {t} WHERE fp_by IS NULL) "
                    f"OR EXISTS (SELECT 1 FROM {t} WHERE fp_by < %(g)s) "
                    f"OR EXISTS (SELECT 1 FROM {t} WHERE fp_by > %(g)s)",
                    {"g": self.ident},
                ).fetchone()
        except StoreError:
            return  # a later start fills them; until then they read as unknown
        if not row[0]:
            return
        self._filler = threading.Thread(target=self._fill, name="eoc-pg-fingerprints", daemon=True)
        self._filler.start()

    def _fill(self) -> None:
        """Fingerprint the rows written without this guard's, a batch per transaction, while no
        other replica does (a session's advisory lock, held on a connection of its own), until
        none is left, the store closes or the database fails (a later start goes on)."""
        lock = f"SELECT %s(hashtext('eoc_fingerprints_' || '{self.table}'))"
        try:
            with self.store.pool.connection() as held:
                held.autocommit = True  # the lock is the session's, not a transaction's
                try:
                    if held.execute(lock % "pg_try_advisory_lock").fetchone()[0]:
                        try:
                            while not self.store.closing and self._fill_batch():
                                pass
                        finally:
                            held.execute(lock % "pg_advisory_unlock")
                finally:
                    held.autocommit = False  # as the pool lends its connections
        except Exception:  # the database failed, or the pool closed under it: a later start goes on
            return

    def _fill_batch(self) -> bool:
        """Fingerprint up to :data:`BATCH` rows that lack this guard's; False once none is left."""
        t = self.table
        with self.store.connection("fingerprinting stored prompts") as conn:
            batch = conn.execute(
                f"SELECT v.key, k.prompt FROM {t} v JOIN eoc_kv k ON k.key = v.key "
                "WHERE v.fp_by IS NULL OR v.fp_by <> %s LIMIT %s FOR UPDATE OF v SKIP LOCKED",
                (self.ident, BATCH),
            ).fetchall()
            if not batch:
                return False
            rows = [(*self.columns(str(prompt)), key) for key, prompt in batch]
            with conn.cursor() as cur:
                cur.executemany(f"UPDATE {t} SET fp_by = %s, fp = %s WHERE key = %s", rows)
        return True

    def join(self, seconds: float) -> None:
        """Wait up to ``seconds`` for the background fill (tests, a closing store)."""
        if self._filler is not None:
            self._filler.join(seconds)
