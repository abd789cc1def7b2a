"""Falsify breaks: SQLite stores and bounded reads."""

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "the test servers' cluster template is taken from a folder others may write",
        "tests/native/pg.py",
        "    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022",
        "    return stat.S_ISDIR(st.st_mode)",
    ),
    (
        "kv write not persisted",
        "eoc/store/sqlite.py",
        '                self.db.write(_KV_UPSERT, encoded[0], "storing a kv pair")',
        '                (lambda *a: None)(_KV_UPSERT, encoded[0], "storing a kv pair")',
    ),
    (
        "cache evictions not persisted",
        "eoc/store/sqlite.py",
        '                c.executemany("DELETE FROM cache WHERE qid = ?", [(q,) for q in evicted])',
        "                pass",
    ),
    ("reads unbounded", "eoc/files/bounded.py", "        if size > limit:", "        if False:"),
    (
        "standard input from a quiet pipe holds the read",
        "eoc/files/bounded.py",
        "    if IN_PYODIDE or fd < 0 or stat.S_ISREG(mode) or os.isatty(fd):",
        "    if True:",
    ),
    (
        "duplicate JSON keys merged",
        "eoc/files/bounded.py",
        "        if key in out:",
        "        if False:",
    ),
    (
        "deep JSON accepted",
        "eoc/files/bounded.py",
        "    if not _nesting_ok(text, max_depth):",
        "    if False:",
    ),
    (
        "store checksum ignored",
        "eoc/store/sqlite_schema.py",
        "        if not hmac.compare_digest(stored, _digest(table, fields, keyed).encode()):",
        "        if False:",
    ),
    (
        "store schema version unchecked",
        "eoc/store/sqlite_schema.py",
        "    if version not in READABLE_VERSIONS:",
        "    if False:",
    ),
    (
        "store quick_check ignored",
        "eoc/store/sqlite_db.py",
        "            if problems:",
        "            if False:",
    ),
    (
        "store non-regular file accepted",
        "eoc/store/sqlite_db.py",
        "    if st is not None and not stat.S_ISREG(st.st_mode):",
        "    if False:",
    ),
    (
        "store read-only file accepted",
        "eoc/store/sqlite_db.py",
        "    if st is not None and write and not os.access(real, os.W_OK):",
        "    if False:",
    ),
    (
        "store creates missing folders",
        "eoc/store/sqlite_db.py",
        "    if not folder_ok:",
        "    if False:",
    ),
    (
        "opening a named pipe blocks",
        "eoc/files/bounded.py",
        '    nonblocking = 0 if IN_PYODIDE else getattr(os, "O_NONBLOCK", 0)',
        "    nonblocking = 0",
    ),
    (
        "a missing path is reported as too large",
        "eoc/files/bounded.py",
        "    unreadable = InputUnreadable if error is InputTooLarge else error",
        "    unreadable = error",
    ),
    (
        "a quiet pipe is waited on forever",
        "eoc/files/bounded.py",
        "                if not ready:\n                    raise self._unreadable(",
        "                if False:\n                    raise self._unreadable(",
    ),
    (
        "eoc store reads an old row as no model's",
        "eoc/store/sqlite_schema.py",
        "        values = (*values, UNRECORDED)",
        '        values = (*values, "")',
    ),
    (
        "a migrated SQLite row gets no origin",
        "eoc/store/sqlite_schema.py",
        "                f\"'{UNRECORDED}'\"  # a constant of eoc's own, without quotes",
        "                \"''\"  # a constant of eoc's own, without quotes",
    ),
    (
        "the memory store forgets nothing a forget picked",
        "eoc/store/memory.py",
        "    def forget(self, qids: Sequence[str], match: Match | None = None) -> list[str]:\n"
        "        return list(qids)",
        "    def forget(self, qids: Sequence[str], match: Match | None = None) -> list[str]:\n"
        "        return []",
    ),
    (
        "the cache changes memory before the store's write",
        "eoc/stages/cache.py",
        "            said = self.store.put(row, plan[1])\n"
        "            with self._lock:  # lookups may have reordered entries meanwhile: planned again\n"
        "                self._place(row)",
        "            with self._lock:\n"
        "                self._place(row)\n"
        "            said = self.store.put(row, plan[1])",
    ),
    (
        "the cache serves an expired row a store hands it at start",
        "eoc/stages/cache.py",
        "                if not stale(row.origin, row.meta, now, self.ttl):",
        "                if True:",
    ),
    (
        "a PostgreSQL forget leaves the rows this replica does not hold",
        "native/eoc_native/store/postgres.py",
        "                if qid not in gone and match(qid, None, origin, meta):",
        "                if False:",
    ),
    (
        "a PostgreSQL replica keeps what another forgot",
        "native/eoc_native/store/postgres.py",
        "            self._stage.keep_only(lambda qid, origin: not origin or qid in kept)",
        "            self._stage.keep_only(lambda qid, origin: True)",
    ),
    (
        "a SQLite process keeps what another forgot",
        "eoc/store/sqlite.py",
        "        self._stage.keep_only(lambda qid, _origin: qid in kept)",
        "        self._stage.keep_only(lambda qid, _origin: True)",
    ),
    (
        "triples are added to memory before the store's write",
        "eoc/store/triples.py",
        "            if fresh:\n                self.rows.put(fresh)\n            return sum(self._insert(*t) for t in fresh)",
        "            added = sum(self._insert(*t) for t in fresh)\n            if fresh:\n                self.rows.put(fresh)\n            return added",
    ),
    (
        "a triple a rows store hands over is not checked",
        "eoc/store/triples.py",
        "                self._insert(*checked_triple(s, p, o))",
        "                self._insert(s, p, o)",
    ),
    (
        "a store imports a stage",
        "eoc/store/rules.py",
        "from eoc.text.forms import fold\n",
        "from eoc.stages.base import work_estimate  # noqa: F401\nfrom eoc.text.forms import fold\n",
    ),
    (
        "pgvector: the search's rows are taken without their checksum",
        "native/eoc_native/store/pgvector.py",
        "            meta = meta_from_text(text) if ok == checksum else None",
        "            meta = meta_from_text(text)",
    ),
    (
        "pgvector: a partition's filter is dropped from the search",
        "native/eoc_native/store/pgvector.py",
        '            where, args["p"] = " AND part = ANY(%(p)s)", list(parts)',
        '            args["p"] = list(parts)',
    ),
    (
        "pgvector: a vector is not written with its pair",
        "native/eoc_native/store/pgvector.py",
        "            encoded.append((*fields, name, part, _literal(r.vector, search.dim), *fp))",
        "            encoded.append((*fields, name, part, _literal([0.0] * (search.dim - 1) + [1.0], search.dim), *fp))",
    ),
    (
        "PostgreSQL: a forget does not wait for the other replicas",
        "native/eoc_native/store/postgres.py",
        "        self.forgets.wait(table, fid)\n",
        "",
    ),
    (
        "PostgreSQL: a replica that dropped a forgotten answer does not say so",
        "native/eoc_native/store/pg_forgets.py",
        "                self.heard(table, fid)\n",
        "",
    ),
    (
        "PostgreSQL: the forgetting replica serves the answer while it waits",
        "native/eoc_native/store/postgres.py",
        "        if drop is not None:\n            drop()\n",
        "",
    ),
    (
        "PostgreSQL: a reconnecting replica keeps what was forgotten while it was deaf",
        "native/eoc_native/store/postgres.py",
        "                    self.forgets.pruned(list(self._pruners), self._prune)\n",
        "",
    ),
    (
        "PostgreSQL: a long-silent replica is waited for",
        "native/eoc_native/store/pg_forgets.py",
        '"AND heard < %s AND seen > now() - make_interval(secs => %s) "\n',
        '"AND heard < %s AND %s > 0 "\n',
    ),
    (
        "PostgreSQL: a killed replica is waited for",
        "native/eoc_native/store/pg_forgets.py",
        '                            "AND EXISTS (SELECT 1 FROM pg_stat_activity a "\n'
        '                            "WHERE a.application_name = %s || r.replica)",\n'
        "                            (table, self.replica, fid, LIVE, LISTENER),",
        '                            "",\n                            (table, self.replica, fid, LIVE),',
    ),
    (
        "PostgreSQL: a closed replica's rows stay in eoc_replicas",
        "native/eoc_native/store/postgres.py",
        "            self.forgets.leave()\n",
        "",
    ),
    (
        "PostgreSQL: a table subscribed after the replica listens is not waited for",
        "native/eoc_native/store/postgres.py",
        "            if self._listening.is_set():  # listening already: forgets wait for this table now\n"
        "                self.forgets.pruned([table], self._prune)\n",
        "",
    ),
    (
        "PostgreSQL: /healthz never counts a forget a replica did not confirm",
        "native/eoc_native/store/pgvector.py",
        "        unconfirmed=lambda: store.forgets.timeouts,\n",
        "        unconfirmed=lambda: 0,\n",
    ),
    (
        "PostgreSQL: a forget a replica did not confirm is not counted",
        "native/eoc_native/store/pg_forgets.py",
        "            self.timeouts += 1\n",
        "",
    ),
    (
        "PostgreSQL: a listening replica sends no heartbeat",
        "native/eoc_native/store/postgres.py",
        "                        self.forgets.beat(conn)\n",
        "",
    ),
    (
        "pgvector: a question is ruled out though a stored prompt has its fingerprint",
        "native/eoc_native/store/pgvector_fp.py",
        "        return exact or unknown\n",
        "        return False\n",
    ),
    (
        "pgvector: rows of unknown fingerprint let a question be ruled out",
        "native/eoc_native/store/pgvector_fp.py",
        "        return exact or unknown\n",
        "        return exact\n",
    ),
    (
        "pgvector: the kv embeds every question though the store keeps fingerprints",
        "eoc/stages/kv.py",
        "        if self._store_fp is not None and not self._store_fp(text):",
        "        if False:",
    ),
    (
        "pgvector: rows written without a fingerprint are never filled",
        "native/eoc_native/store/pgvector_fp.py",
        "        if not row[0]:\n            return\n",
        "        if True:\n            return\n",
    ),
    (
        "pgvector: a put writes no fingerprint",
        "native/eoc_native/store/pgvector.py",
        "            fp = search.fingerprints.columns(prompt)\n",
        "            fp = (None, None)\n",
    ),
    (
        "pgvector: the hot set is never bounded",
        "eoc/stages/kv_hot.py",
        "            while len(self._items) > self.capacity:",
        "            while False:",
    ),
    (
        "pgvector: the exact path reads no pair from the store",
        "eoc/stages/kv.py",
        "            present = set(self._hold(self._searcher.fetch(exact)))",
        "            present = set(exact)",
    ),
    (
        "pgvector: rows written without the vector table are never searched",
        "native/eoc_native/store/pgvector.py",
        "            self._copy_old(conn)\n",
        "",
    ),
    (
        "pgvector: a plain question is offered every partition's entries",
        "eoc/stages/kv.py",
        "            if not self._parted and self._searcher is None:",
        "            if not self._parted:",
    ),
    (
        "pgvector: a server without pgvector is not said to cost memory",
        "native/eoc_native/store/pgvector.py",
        '                f"at start and holds about {MEMORY_BYTES_PER_ENTRY:,} bytes per pair; install "',
        '                "at start; install "',
    ),
    (
        "pgvector: a hot entry keeps its old expiry when the store's row has a new one",
        "eoc/stages/kv.py",
        "                or held.meta != row.meta  # a new expiry: never read as expired, and deleted\n",
        "",
    ),
    (
        "a widening search hands accept every candidate, past MAX_SCORED a hit",
        "eoc/stages/index.py",
        "            if self.budget == 0:\n                return True\n",
        "",
    ),
    (
        "a widening search offers a candidate again in a wider round",
        "eoc/stages/index.py",
        "            if key is None or key in self._offered:",
        "            if key is None:",
    ),
    (
        "a kv pair in memory is served without confirming it in a shared store",
        "eoc/stages/kv.py",
        "        current = self._current\n        if current is None or entry.local:",
        "        current = None\n        if current is None or entry.local:",
    ),
    (
        "a kv pair kept in memory only is confirmed in a shared store (and never served)",
        "eoc/stages/kv.py",
        "        if current is None or entry.local:",
        "        if current is None:",
    ),
    (
        "PostgreSQL confirms every pair it is asked about",
        "native/eoc_native/store/postgres.py",
        "        return {str(k): (str(p), str(o)) for k, p, o in got}",
        "        return None",
    ),
]

_CONTRACT = "tests/native/test_store_contract.py"
FOCUS: dict[str, list[str]] = {
    "the test servers' cluster template is taken from a folder others may write": [
        "tests/native/test_store_postgres.py::"
        "test_the_test_servers_template_is_used_only_from_a_folder_of_this_user_s"
    ],
    "a store imports a stage": [
        "tests/test_layering.py::test_no_core_module_imports_a_higher_floor"
    ],
    "store.load reads unchecked": ["tests/test_facts.py"],
    "store.add unchecked": ["tests/test_facts.py"],
    "a triple a rows store hands over is not checked": [
        f"{_CONTRACT}::test_a_triple_a_rows_store_hands_over_is_checked_as_any_other"
    ],
    "triples are added to memory before the store's write": [
        f"{_CONTRACT}::test_triples_the_store_refuses_are_not_added"
    ],
    "the cache changes memory before the store's write": [
        f"{_CONTRACT}::test_a_write_the_store_refuses_leaves_memory_as_it_was"
    ],
    "the cache serves an expired row a store hands it at start": [
        f"{_CONTRACT}::test_an_answer_expired_while_nothing_ran_is_not_served_at_start"
    ],
}
_PGVECTOR = "tests/native/test_store_pgvector.py"
_PGVECTOR_FP = "tests/native/test_store_pgvector_fp.py"
_FORGETS = "tests/native/test_store_pg_forgets.py"
for _name in (
    "PostgreSQL: a forget does not wait for the other replicas",
    "PostgreSQL: the forgetting replica serves the answer while it waits",
    "PostgreSQL: a reconnecting replica keeps what was forgotten while it was deaf",
    "PostgreSQL: a closed replica's rows stay in eoc_replicas",
    "PostgreSQL: a listening replica sends no heartbeat",
    "PostgreSQL: a table subscribed after the replica listens is not waited for",
    "PostgreSQL: /healthz never counts a forget a replica did not confirm",
    "PostgreSQL: a killed replica is waited for",
    "PostgreSQL: a long-silent replica is waited for",
):
    FOCUS[_name] = [_FORGETS]
FOCUS["pgvector: the kv embeds every question though the store keeps fingerprints"] = [_PGVECTOR_FP]
FOCUS["pgvector: a put writes no fingerprint"] = [_PGVECTOR_FP]
FOCUS["pgvector: the exact path reads no pair from the store"] = [_PGVECTOR]
FOCUS["a kv pair kept in memory only is confirmed in a shared store (and never served)"] = [
    "tests/native/test_store_postgres.py::"
    "test_a_pair_forgotten_or_replaced_elsewhere_is_not_served_before_the_news_arrives"
]
FOCUS["a kv pair in memory is served without confirming it in a shared store"] = [
    "tests/native/test_store_postgres.py::"
    "test_a_pair_forgotten_or_replaced_elsewhere_is_not_served_before_the_news_arrives"
]
FOCUS["pgvector: a plain question is offered every partition's entries"] = [_PGVECTOR]
FOCUS["pgvector: a hot entry keeps its old expiry when the store's row has a new one"] = [_PGVECTOR]
FOCUS["a widening search hands accept every candidate, past MAX_SCORED a hit"] = [
    "tests/test_kv_hot.py",
    "tests/native/test_ann_index.py",
]
FOCUS["a widening search offers a candidate again in a wider round"] = [
    "tests/test_kv_hot.py",
    "tests/native/test_ann_index.py",
]
