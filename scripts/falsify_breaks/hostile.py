"""Falsify breaks: issue 34's sequel, hostile files and shared stores (issue 35) on the store
side. Expiry that a clock set back cannot undo, an avoided figure a client cannot inflate and a
recorded cost past what its tokens could cost, forgetting that reaches every partition and
process, and store rows signed with the user's key. Each runs the test that catches it
(``FOCUS``)."""

_TTL = "tests/test_ttl.py"
_MADE = "tests/test_made_cost.py"
_KEYS = "tests/test_store_keys.py"
_FORGET = "tests/test_forget.py"
_PG = "tests/native/test_store_postgres.py"

BREAKS: list[tuple[str, str, str, str]] = [
    # item 8: expiry, once seen, is final
    (
        "the cache reads a clock set back as it is",
        "eoc/stages/cache.py",
        "        if t < self._latest:\n            return self._latest\n",
        "",
    ),
    (
        "the kv reads a clock set back as it is",
        "eoc/stages/kv.py",
        "        if t < self._latest:\n            return self._latest\n",
        "",
    ),
    (
        "the kv keeps an entry it saw expired",
        "eoc/stages/kv.py",
        "            self._expired.append(entry.key)  # one operation: atomic under the GIL\n",
        "",
    ),
    (
        "the SQLite cache keeps the row of an answer seen expired",
        "eoc/store/sqlite.py",
        '        with self.db.lock, self.db.transaction("removing expired cached answers") as c:\n'
        '            c.executemany("DELETE FROM cache WHERE qid = ?", [(q,) for q in qids])\n',
        "        pass\n",
    ),
    (
        "the SQLite kv keeps the row of a pair seen expired",
        "eoc/store/sqlite.py",
        '            with self.db.transaction("removing expired kv pairs") as c:\n'
        '                c.executemany("DELETE FROM kv WHERE key = ?", [(k,) for k in keys])\n',
        "            pass\n",
    ),
    # item 6: what an answer avoided
    (
        "a fact's avoided figure counts padding around the question",
        "eoc/stages/neural.py",
        "            tokens_in=approx_tokens(fold(query.prompt)),  # spaces and edges padded: not read",
        "            tokens_in=approx_tokens(query.prompt),",
    ),
    (
        "a recorded cost past its tokens' ceiling is believed",
        "eoc/cascade.py",
        "                if made.uj > ceiling:  # a record past what its tokens could cost: not believed",
        "                if False:",
    ),
    (
        "the ceiling of a recorded cost has no bound on its tokens",
        "eoc/ledger.py",
        "    return max(1, int(MADE_SLACK * uj))",
        "    return max(1, int(MADE_SLACK * uj)) * 10**9",
    ),
    # item 5: rows signed with the user's key
    (
        "a store's rows are checked with a plain digest anyone can recompute",
        "eoc/store/sqlite_schema.py",
        "        keyed = key if version >= KEYED_VERSION else None\n",
        "        keyed = None\n",
    ),
    (
        "a store signed with another key is opened",
        "eoc/store/sqlite_schema.py",
        "    if found is not None and found[0] != key_id(key):",
        "    if False:",
    ),
    (
        "an older store's rows are not signed when it opens",
        "eoc/store/sqlite_schema.py",
        "        _sign(conn, layout.tables, key)\n",
        "        pass  # (was: sign the older rows)\n",
    ),
    (
        "a PostgreSQL replica with another key is accepted",
        "native/eoc_native/store/postgres.py",
        "        if row is not None and row[0] == SCHEMA_VERSION and signed[0] != key_id(self.key):",
        "        if False:",
    ),
    # item 7: forgetting everywhere
    (
        "a SQLite cache entry does not record the question it answers",
        "eoc/stages/cache.py",
        "        meta = new_meta(self.now(), generation, ttl, asked=asked_of(query.prompt))",
        "        meta = new_meta(self.now(), generation, ttl)",
    ),
    (
        "forgetting a question ignores the question a cache entry records",
        "eoc/store/forget.py",
        "            if key == plain or (meta is not None and meta.asked == asked):",
        "            if key == plain:",
    ),
    (
        "a forget is not counted in the file",
        "eoc/store/sqlite.py",
        "    count_forget(c)\n    db.forgets = forgets(c)\n",
        "    db.forgets = forgets(c)\n",
    ),
    (
        "a process never hears what another forgot",
        "eoc/store/sqlite.py",
        "            if seen != db.forgets:\n                drop()\n",
        "            if False:\n                drop()\n",
    ),
]

FOCUS: dict[str, list[str]] = {
    BREAKS[0][0]: [_TTL],
    BREAKS[1][0]: [_TTL],
    BREAKS[2][0]: [_TTL],
    BREAKS[3][0]: [_TTL],
    BREAKS[4][0]: [_TTL],
    BREAKS[5][0]: [_MADE],
    BREAKS[6][0]: [_MADE],
    BREAKS[7][0]: [_MADE],
    BREAKS[8][0]: [_KEYS],
    BREAKS[9][0]: [_KEYS],
    BREAKS[10][0]: [_KEYS],
    BREAKS[11][0]: [_PG],
    BREAKS[12][0]: [_FORGET],
    BREAKS[13][0]: [_FORGET],
    BREAKS[14][0]: [_FORGET],
    BREAKS[15][0]: [_FORGET],
}
