"""The kv's vectors searched by PostgreSQL itself, with pgvector: no replica holds them.

Where the server has the ``vector`` extension (pgvector 0.8 or later: ``CREATE EXTENSION vector``
once, by a role allowed to), a kv over a dense embedder keeps each pair's vector in the table
``eoc_kv_vec_<dim>`` beside its row of ``eoc_kv`` (the same transaction writes both; a deleted or
forgotten pair's vector goes with it, ``ON DELETE CASCADE``), indexed by an HNSW graph over the
vectors in half precision (``halfvec``, cosine). A lookup asks the database for the nearest rows of
its partitions (``hnsw.ef_search`` :data:`EF_SEARCH`, iterative scans so a partition's filter
never empties the result); the cosine each row is served at is computed on the stored float32
vector, so only the ranking is half precision. A replica keeps no vector and only a bounded set of
recent entries (:class:`eoc.stages.kv_hot.HotEntries`), so its memory and its start do not grow
with the store; another replica's write is heard through LISTEN/NOTIFY as before, and drops the
entry it replaces from memory.

Where the server has no pgvector (Debian 12's PostgreSQL ships none), or the kv's embedder makes
sparse vectors (the core's hashed n-grams), the store works as before: every replica reads every
pair at start and searches them in its own memory; :attr:`PgVectorKVStore.note` says which, and
what that costs, and ``eoc serve`` prints it at start.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

from eoc.errors import EocError, InputError, StoreError
from eoc.store.entry import meta_from_text
from eoc.store.partition import tag_of
from eoc.store.parts import StoreParts
from eoc.store.protocols import Embedding, KVRow
from eoc.store.sqlite_schema import row_sum, summed
from eoc.store.vectors import decode_vector
from eoc_native.store.pgvector_fp import StoredFingerprints
from eoc_native.store.postgres import (
    _KV_UPSERT,
    PgCacheStore,
    PgKVStore,
    PgStore,
    PgTripleRows,
)

MIN_VERSION = (0, 8, 0)
"""The least pgvector eoc searches with: 0.7 brought ``halfvec``, 0.8 iterative index scans
(a filtered search that still finds ``k`` rows)."""
EF_SEARCH = 64
"""Candidates pgvector's HNSW search keeps (``hnsw.ef_search``)."""
HNSW_M = 16
"""Links per node of the HNSW index (pgvector's ``m``, its default)."""
EF_CONSTRUCTION = 64
"""Candidates kept while inserting (pgvector's ``ef_construction``, its default)."""
MAX_DAMAGED = 1_000
"""Damaged rows a searching store lists, at most (each is listed once)."""
MEMORY_BYTES_PER_ENTRY = 3_500
"""About what a replica's memory holds per kv pair when it searches in memory (MiniLM's 384
float32 dimensions twice over, the index's links and the entry): the fallback's cost, stated."""


def _version(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(p) for p in text.split(".")[:3])
    except ValueError:
        return (0,)


def _literal(vec: Any, dim: int) -> str:
    """A vector as pgvector reads it: ``[x,y,...]``, float32 exact."""
    values = [float(x) for x in vec]
    if len(values) != dim or not all(math.isfinite(x) for x in values):
        raise InputError(f"a kv vector must hold {dim} finite numbers")
    return "[" + ",".join(format(x, ".9g") for x in values) + "]"


def hnsw_index(dim: int) -> str:
    """The statement that makes the vector table's HNSW index (if it is not there)."""
    t = f"eoc_kv_vec_{dim}"
    return (
        f"CREATE INDEX IF NOT EXISTS {t}_hnsw ON {t} USING hnsw "
        f"((emb::halfvec({dim})) halfvec_cosine_ops) "
        f"WITH (m = {HNSW_M}, ef_construction = {EF_CONSTRUCTION})"
    )


class PgVectorSearch:
    """The nearest rows of ``eoc_kv`` by pgvector (:class:`eoc.store.protocols.VectorSearch`)."""

    def __init__(self, owner: PgVectorKVStore, embedder: Embedding, dim: int, version: str) -> None:
        self.owner = owner
        self.store: PgStore = owner.store
        self.embedder = embedder
        self.name = embedder.name
        self.dim = dim
        self.table = f"eoc_kv_vec_{dim}"
        self.what = (
            f"pgvector {version} at {self.store.where}: HNSW over halfvec({dim}), cosine, "
            f"ef_search {EF_SEARCH}"
        )
        self.fingerprints = StoredFingerprints(self.store, self.table)
        self._prepare()
        t, d = self.table, dim
        # the nearest rows first (the HNSW index orders by the halfvec expression), then the
        # exact cosine of each on its float32 vector
        self._nearest = (
            f"SELECT k.seq, k.key, k.prompt, k.payload, k.origin, k.meta, k.checksum, "
            f"1 - (n.emb <=> %(q)s::vector({d})) FROM (SELECT key, emb FROM {t} "
            f"WHERE embedder = %(e)s{{parts}} ORDER BY emb::halfvec({d}) <=> %(q)s::halfvec({d}) "
            f"LIMIT %(k)s) n JOIN eoc_kv k ON k.key = n.key"
        )
        self.upsert = (
            f"WITH kv AS ({_KV_UPSERT.replace(' RETURNING seq', ' RETURNING seq, key')}), "
            f"v AS (INSERT INTO {t} (key, embedder, part, emb, fp_by, fp) "
            f"SELECT key, %s, %s, %s::vector({d}), %s, %s FROM kv ON CONFLICT (key) DO UPDATE "
            "SET embedder = excluded.embedder, part = excluded.part, emb = excluded.emb, "
            "fp_by = excluded.fp_by, fp = excluded.fp) "
            "SELECT seq FROM kv"
        )

    def _prepare(self) -> None:
        """The vector table and its index (once per database and dimension, under the schema's
        lock), and the vectors of rows written before it, where this embedder's are stored (once:
        ``eoc_meta`` records it, so a replica's start reads no row)."""
        t, d = self.table, self.dim
        with self.store.connection(f"creating {t}") as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('eoc_schema'))")
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {t} (key text PRIMARY KEY REFERENCES eoc_kv (key) "
                "ON DELETE CASCADE ON UPDATE CASCADE, embedder text NOT NULL, "
                f"part text NOT NULL, emb vector({d}) NOT NULL)"
            )
            conn.execute(hnsw_index(d))
            StoredFingerprints.prepare(conn, t)
            # rows written before the table, with their vector as JSON text: copied once (a
            # replica of schema 6 writes every new pair's vector here)
            done = f"vectors copied: {t} {self.name}"
            if conn.execute("SELECT 1 FROM eoc_meta WHERE key = %s", (done,)).fetchone():
                return
            self._copy_old(conn)
            conn.execute("INSERT INTO eoc_meta (key, value) VALUES (%s, 'yes')", (done,))

    def _copy_old(self, conn: Any) -> None:
        """Copy the vectors stored as JSON in ``eoc_kv.vector`` (by a replica without this
        table) for this embedder, read in batches and each decoded as the memory store decodes
        one (:func:`eoc.store.vectors.decode_vector`: bounded, finite, this many dimensions); a
        vector that does not decode is left out (its pair is not searched), never an error that
        stops a replica from starting."""
        with conn.cursor(name="eoc_copy_vectors") as old:
            old.itersize = 1_000
            old.execute(
                f"SELECT key, vector FROM eoc_kv WHERE embedder = %s AND vector IS NOT NULL "
                f"AND NOT EXISTS (SELECT 1 FROM {self.table} v WHERE v.key = eoc_kv.key)",
                (self.name,),
            )
            while batch := old.fetchmany(1_000):
                rows = []
                for key, text in batch:
                    vec = decode_vector(str(text), self.embedder, True)
                    if vec is None:
                        continue
                    try:
                        part = tag_of(str(key))
                    except EocError:
                        continue
                    rows.append((key, self.name, part, _literal(vec, self.dim)))
                with conn.cursor() as cur:
                    cur.executemany(
                        f"INSERT INTO {self.table} (key, embedder, part, emb) "
                        f"VALUES (%s, %s, %s, %s::vector({self.dim})) ON CONFLICT (key) DO NOTHING",
                        rows,
                    )

    def use_fingerprint(
        self, ident: str, fingerprint: Callable[[str], Hashable | None]
    ) -> Callable[[str], bool]:
        """Keep the kv guard's fingerprints (named ``ident``) of the prompts stored, and return
        the question asked before embedding: may any stored prompt have this text's?
        (:mod:`eoc_native.store.pgvector_fp`)."""
        return self.fingerprints.use(ident, fingerprint)

    def nearest(
        self, vec: object, k: int, parts: Sequence[str] | None
    ) -> list[tuple[float, KVRow]]:
        args: dict[str, Any] = {"q": _literal(vec, self.dim), "e": self.name, "k": int(k)}
        where = ""
        if parts is not None:
            where, args["p"] = " AND part = ANY(%(p)s)", list(parts)
        with self.store.connection("searching the kv's vectors") as conn:
            conn.execute(
                f"SET LOCAL hnsw.ef_search = {max(EF_SEARCH, int(k))}; "
                "SET LOCAL hnsw.iterative_scan = relaxed_order"
            )
            got = conn.execute(self._nearest.format(parts=where), args).fetchall()
        out = []
        for seq, *values, checksum, cosine in got:
            row = self.owner.checked_row(int(seq), values, checksum)
            if row is not None and cosine is not None:
                out.append((float(cosine), row))
        out.sort(key=lambda pair: pair[0], reverse=True)
        return out

    def fetch(self, keys: Sequence[str]) -> list[KVRow]:
        if not keys:
            return []
        with self.store.connection("reading kv pairs") as conn:
            got = conn.execute(
                "SELECT seq, key, prompt, payload, origin, meta, checksum FROM eoc_kv "
                "WHERE key = ANY(%s)",
                (list(keys),),
            ).fetchall()
        rows = [self.owner.checked_row(int(seq), values, c) for seq, *values, c in got]
        return [row for row in rows if row is not None]

    def count(self) -> int:
        with self.store.connection("counting kv pairs") as conn:
            row = conn.execute(
                f"SELECT count(*) FROM {self.table} WHERE embedder = %s", (self.name,)
            ).fetchone()
        return int(row[0])


class PgVectorKVStore(PgKVStore):
    """:class:`~eoc_native.store.postgres.PgKVStore` whose vectors PostgreSQL searches, where
    it can (the module); else exactly the store it extends."""

    def __init__(self, store: PgStore) -> None:
        super().__init__(store)
        self.search: PgVectorSearch | None = None
        self.note = ""
        self._damaged_seen: set[int] = set()

    # -- the choice, made once the stage names its embedder --------------------------------

    def searcher(self, embedder: Embedding, dense: bool) -> PgVectorSearch | None:
        self._embedder, self._dense = embedder, dense
        version, why = self._pgvector()
        dim = getattr(embedder, "dim", None)
        if not dense or not isinstance(dim, int):
            self.note = (
                f"kv vectors in each replica's memory: {embedder.name} makes sparse vectors, "
                "which pgvector does not index"
            )
            return None
        if version is None:
            self.note = (
                f"kv vectors in each replica's memory: {why}. Each replica reads every kv pair "
                f"at start and holds about {MEMORY_BYTES_PER_ENTRY:,} bytes per pair; install "
                "pgvector on the server (docs/stores.md) to search them there"
            )
            return None
        self.search = PgVectorSearch(self, embedder, dim, version)
        self.note = f"kv vectors searched by PostgreSQL: {self.search.what}"
        return self.search

    def _pgvector(self) -> tuple[str | None, str]:
        """pgvector's version on this server (created here if installed but not created), or
        ``None`` and why not."""
        where = self.store.where
        try:
            with self.store.connection("looking for pgvector") as conn:
                row = conn.execute(
                    "SELECT default_version, installed_version FROM pg_available_extensions "
                    "WHERE name = 'vector'"
                ).fetchone()
                if row is None:
                    return None, f"PostgreSQL at {where} has no pgvector extension installed"
                if row[1] is None:
                    conn.execute("SELECT pg_advisory_xact_lock(hashtext('eoc_schema'))")
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                    row = (row[0], row[0])
        except StoreError as exc:
            return None, f"pgvector could not be enabled ({exc.reason})"
        if _version(str(row[1])) < MIN_VERSION:
            return None, (
                f"PostgreSQL at {where} has pgvector {row[1]}; eoc needs "
                f"{'.'.join(map(str, MIN_VERSION))} or later (ALTER EXTENSION vector UPDATE)"
            )
        return str(row[1]), ""

    # -- rows, checked ------------------------------------------------------------------------

    def checked_row(self, seq: int, values: Sequence[Any], checksum: str) -> KVRow | None:
        """A row of ``eoc_kv`` (key, prompt, payload, origin, meta) as a KVRow when its checksum
        holds and its record reads; else ``None``, and it is listed in ``damaged`` (once)."""
        key, prompt, payload, origin, text = values
        try:
            ok = row_sum("kv", summed((key, prompt, payload, origin), text), self.store.key)
            meta = meta_from_text(text) if ok == checksum else None
        except (TypeError, ValueError, UnicodeError, InputError):
            meta = None
        if meta is None:
            if seq not in self._damaged_seen and len(self._damaged_seen) < MAX_DAMAGED:
                self._damaged_seen.add(seq)
                self.damaged.append(
                    ("kv", seq, "checksum mismatch: the row was changed outside eoc")
                )
            return None
        return KVRow(str(key), str(prompt), str(payload), str(origin), meta, None, seq)

    # -- PgKVStore's parts, where PostgreSQL searches -----------------------------------------

    def rows(self, embedder: Embedding, dense: bool) -> list[KVRow]:
        if self.search is not None:
            return []  # nothing is read at start: the database searches them
        return super().rows(embedder, dense)

    def holds(self, key: str, payload: str, origin: str) -> bool:
        if self.search is None:
            return super().holds(key, payload, origin)
        return any(
            row.payload == payload and row.origin == origin for row in self.search.fetch([key])
        )

    def put(self, rows: Sequence[KVRow]) -> str | None:
        search = self.search
        if search is None:
            return super().put(rows)
        encoded = []
        for r in rows:
            if r.vector is None:
                raise InputError("a kv pair stored for PostgreSQL's search needs its vector")
            key, prompt, payload, origin, text = (
                r.key,
                r.prompt,
                r.payload,
                r.origin,
                r.meta.to_text(),
            )
            checksum = row_sum("kv", summed((key, prompt, payload, origin), text), self.store.key)
            name = search.name
            try:
                part = tag_of(key)
            except EocError:
                part = ""
            fields = (key, prompt, payload, origin, text, name, None, checksum)
            fp = search.fingerprints.columns(prompt)
            encoded.append((*fields, name, part, _literal(r.vector, search.dim), *fp))
        if len(encoded) == 1:
            return self.store.write_or_hold("kv", search.upsert, encoded, "storing a kv pair")
        self.store.write("kv", search.upsert, encoded, "storing kv pairs")
        return None

    def _fresh(self, raw: Iterable[tuple[Any, ...]]) -> list[KVRow]:
        if self.search is None:
            return super()._fresh(raw)
        out = []
        for key, prompt, payload, origin, text, _, _ in raw:  # heard: no vector is read
            try:
                out.append(KVRow(key, prompt, payload, origin, meta_from_text(text)))
            except InputError:
                continue
        return out

    def _resync(self) -> None:
        if self.search is None:
            super()._resync()
        elif self._stage is not None:  # what was missed is in the database: forget the hot set
            self._stage.keep_only(lambda key, origin: False)

    def _prune(self) -> None:
        if self.search is None:
            super()._prune()
        elif self._stage is not None:  # another replica forgot: read again what is still there
            self._stage.keep_only(lambda key, origin: False)


def open_store(url: str) -> StoreParts:
    """A cache's, a kv's and a graph's stores in one PostgreSQL database (the ``postgresql``
    store of :mod:`eoc.assemble`), shared by replicas: the first writes the pack; each listens
    for the others' answers once started. While PostgreSQL is down, ``health`` says why and
    writes are held (``pending`` counts them)."""
    store = PgStore(url)
    kv = PgVectorKVStore(store)
    return StoreParts(
        PgCacheStore(store),
        kv,
        PgTripleRows(store),
        start=store.start,
        health=lambda: "" if store.healthy else (store.last_error or "PostgreSQL is unreachable"),
        pending=lambda: store.pending_writes,
        note=lambda: kv.note,
        unconfirmed=lambda: store.forgets.timeouts,
    )


__all__ = ["EF_SEARCH", "MIN_VERSION", "PgVectorKVStore", "PgVectorSearch", "open_store"]
