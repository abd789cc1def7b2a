"""A forget that returns once every live replica has dropped what it forgot.

Replicas hold answers in memory and hear each other through LISTEN/NOTIFY, so a forget on
replica A reaches replica B a few milliseconds after A's ``DELETE`` commits; in that window B
would still serve the answer from memory. So a forget waits for the others:

* each listening replica has a row per table it prunes in ``eoc_replicas`` (``replica``, ``tbl``,
  ``heard``: the last forget of that table it has applied, ``seen``: its listener's heartbeat,
  every :data:`HEARTBEAT` seconds);
* a forget deletes the rows, then, in one transaction, takes a number from ``eoc_seq``, records it
  as the table's latest forget (``eoc_meta``, ``forgot:<table>``) and notifies;
* a replica that hears it reads the latest forget's number, drops from memory what the table no
  longer holds, then records that number as heard (read before the table, so what it dropped is
  at least that forget's);
* the forgetting replica waits until every live replica has heard its number: one whose
  listener's session is open (its ``application_name`` names it, so a killed process counts as
  gone at once) and whose heartbeat is younger than :data:`LIVE` seconds (a session left open by
  a machine that vanished ends with TCP's keepalive, later); for at most :attr:`Forgets.wait_s`
  (:data:`FORGET_WAIT`); the replicas that did not
  answer in time are named (:attr:`Forgets.unconfirmed`, logged), and drop it when they hear it
  or, after losing their connection, when they reconnect (a reconnecting replica prunes before it
  says it listens).

A replica that does not listen (never started) is not waited for, and hears no forget: ``eoc
serve`` always listens.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterable
from typing import Any

from eoc.errors import StoreError

log = logging.getLogger("eoc.store")

FORGET_WAIT = 2.0
"""Seconds a forget waits for the other replicas to drop what it forgot, at most."""
LIVE = 10.0
"""A replica whose heartbeat is older than this many seconds is not waited for."""
HEARTBEAT = 2.0
"""Seconds between a listening replica's heartbeats."""
POLL = 0.005
"""Seconds between a waiting forget's looks at the others' answers."""


LISTENER = "eoc-listener-"
"""What a replica's listening session's ``application_name`` opens with (its id follows)."""


def listener_name(replica: str) -> str:
    """The ``application_name`` of ``replica``'s listening session."""
    return LISTENER + replica


SCHEMA = (
    "CREATE TABLE IF NOT EXISTS eoc_replicas (replica text NOT NULL, tbl text NOT NULL, "
    "heard bigint NOT NULL DEFAULT 0, seen timestamptz NOT NULL DEFAULT now(), "
    "PRIMARY KEY (replica, tbl))"
)


class Forgets:
    """One replica's part: its rows in ``eoc_replicas``, the numbers of its forgets, its waits."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.wait_s = FORGET_WAIT
        self.unconfirmed: list[str] = []
        """The replicas the last forget did not hear from in time ([] when all did)."""
        self.timeouts = 0
        """Forgets that returned before every live replica had dropped what they forgot."""
        self._beat = 0.0

    @property
    def replica(self) -> str:
        return str(self.store.replica)

    def announce(self, conn: Any, table: str) -> int:
        """In ``conn``'s transaction: this forget's number, recorded as ``table``'s latest
        (never lowering it)."""
        fid = int(conn.execute("SELECT nextval('eoc_seq')").fetchone()[0])
        conn.execute(
            "INSERT INTO eoc_meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET "
            "value = GREATEST(eoc_meta.value::bigint, excluded.value::bigint)::text",
            (f"forgot:{table}", str(fid)),
        )
        return fid

    def latest(self, table: str) -> int:
        """The number of ``table``'s latest forget (0: none yet)."""
        with self.store.connection("reading the latest forget") as conn:
            row = conn.execute(
                "SELECT value FROM eoc_meta WHERE key = %s", (f"forgot:{table}",)
            ).fetchone()
        return 0 if row is None else int(row[0])

    def heard(self, table: str, fid: int) -> None:
        """Say that this replica dropped what ``table``'s forgets up to ``fid`` forgot."""
        with self.store.connection("saying a forget was heard") as conn:
            conn.execute(
                "INSERT INTO eoc_replicas (replica, tbl, heard) VALUES (%s, %s, %s) "
                "ON CONFLICT (replica, tbl) DO UPDATE SET "
                "heard = GREATEST(eoc_replicas.heard, excluded.heard), seen = now()",
                (self.replica, table, fid),
            )
            # the rows of replicas gone without a word (killed): kept a day, then removed
            conn.execute("DELETE FROM eoc_replicas WHERE seen < now() - interval '1 day'")

    def beat(self, conn: Any) -> None:
        """The heartbeat, every :data:`HEARTBEAT` seconds (on the listener's connection)."""
        now = time.monotonic()
        if now - self._beat >= HEARTBEAT:
            conn.execute("UPDATE eoc_replicas SET seen = now() WHERE replica = %s", (self.replica,))
            self._beat = now

    def leave(self) -> None:
        """Remove this replica's rows (it stops listening): no forget waits for it."""
        with contextlib.suppress(StoreError):
            with self.store.connection("leaving the replicas' table") as conn:
                conn.execute("DELETE FROM eoc_replicas WHERE replica = %s", (self.replica,))

    def wait(self, table: str, fid: int) -> list[str]:
        """Wait until every other live replica (its listening session open, its heartbeat
        younger than :data:`LIVE` seconds) has heard ``table``'s forget ``fid`` (at most
        :attr:`wait_s`); the replicas that had not, logged and kept in :attr:`unconfirmed`."""
        deadline = time.monotonic() + self.wait_s
        behind: list[str] = []
        while True:
            try:
                with self.store.connection("waiting for the replicas to forget") as conn:
                    behind = [
                        str(r)
                        for (r,) in conn.execute(
                            "SELECT replica FROM eoc_replicas r WHERE tbl = %s AND replica <> %s "
                            "AND heard < %s AND seen > now() - make_interval(secs => %s) "
                            "AND EXISTS (SELECT 1 FROM pg_stat_activity a "
                            "WHERE a.application_name = %s || r.replica)",
                            (table, self.replica, fid, LIVE, LISTENER),
                        ).fetchall()
                    ]
            except StoreError:
                break  # the database went: the others prune when they reconnect
            if not behind or time.monotonic() >= deadline:
                break
            time.sleep(POLL)
        self.unconfirmed = behind
        if behind:
            self.timeouts += 1
            log.warning(
                "a forget in %s was not confirmed within %.1f s by replica(s) %s: each drops it "
                "when it hears the forget or reconnects",
                table,
                self.wait_s,
                ", ".join(behind),
            )
        return behind

    def pruned(self, tables: Iterable[str], prune: Any) -> None:
        """Run ``prune(table)`` for each of ``tables`` and say each forget heard: the latest
        forget's number is read first, so what the prune reads is at least as new."""
        for table in tables:
            try:
                fid = self.latest(table)
                prune(table)
                self.heard(table, fid)
            except StoreError:
                continue  # the resync after reconnecting reads the table again
