"""Falsify breaks: memo hygiene (issue 24 item 5): replayed generations, TTLs, forgetting."""

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "a replay forgets how the model generated it",
        "eoc/store/rules.py",
        "        return meta.generation\n",
        "        return None\n",
    ),
    (
        "an unknown generation is replayed as stop",
        "eoc/store/rules.py",
        "    return UNKNOWN if origin else None",
        '    return Generation("stop") if origin else None',
    ),
    (
        "any finish reason is accepted",
        "eoc/store/entry.py",
        "    if reason is not None and (not isinstance(reason, str) or not _REASON.fullmatch(reason)):",
        "    if False:",
    ),
    (
        "the server does not replay the finish reason",
        "native/eoc_native/serve/wire.py",
        "    if gen is not None:\n        return gen.finish_reason",
        "    if False:\n        return gen.finish_reason",
    ),
    (
        "an unknown usage is made up",
        "native/eoc_native/serve/wire.py",
        "        if counts is None:\n            return None  # a model made it",
        "        if False:\n            return None  # a model made it",
    ),
    (
        "an expired cache entry is served",
        "eoc/stages/cache.py",
        "            if self._aging and stale(answer.origin, answer.meta, self._clock(), self.ttl):",
        "            if False:",
    ),
    (
        "an expired kv entry is served",
        "eoc/stages/kv.py",
        "        if self._aging and stale(entry.origin, entry.meta, self._clock(), self.ttl):",
        "        if False:",
    ),
    (
        "an entry of unknown age passes the store TTL",
        "eoc/store/entry.py",
        "        return self.stored_at is None or now - self.stored_at >= max_age",
        "        return self.stored_at is not None and now - self.stored_at >= max_age",
    ),
    (
        "a negative or absurd TTL is accepted",
        "eoc/store/entry.py",
        "    if not 0 < value <= MAX_TTL_S:",
        "    if False:",
    ),
    (
        "expired kv rows stay in the file",
        "eoc/stages/kv.py",
        "                expired.append(row.key)  # never served: removed from the store below",
        "                pass",
    ),
    (
        "forget ignores the age",
        "eoc/store/forget.py",
        "                if stored is None or at - stored < age:",
        "                if False:",
    ),
    (
        "forget misses a model's cache key",
        "eoc/store/forget.py",
        '            return bool(origin) and key == Query(question, context=f"made by {origin}").id',
        "            return False",
    ),
    (
        "forget with no criterion wipes everything",
        "eoc/store/forget.py",
        "    if question is None and stage is None and older_than is None and answer is None:",
        "    if False:",
    ),
    (
        "forget leaves the cache rows in the file",
        "eoc/store/sqlite.py",
        '            c.executemany("DELETE FROM cache WHERE qid = ?", [(q,) for q in qids])\n'
        "            _count(self.db, c)\n"
        "        return list(qids)",
        "            pass\n            _count(self.db, c)\n        return list(qids)",
    ),
    (
        "a key not marked admin may forget",
        "native/eoc_native/serve/app.py",
        "                if self.keys is None or not self.keys.is_admin(name):",
        "                if self.keys is None:",
    ),
]

FOCUS: dict[str, list[str]] = {
    "a replay forgets how the model generated it": ["tests/test_replay.py"],
    "an unknown generation is replayed as stop": ["tests/test_replay.py"],
    "any finish reason is accepted": ["tests/test_replay.py"],
    "the server does not replay the finish reason": ["tests/native/test_serve_memo.py"],
    "an unknown usage is made up": ["tests/native/test_serve_memo.py"],
    "an expired cache entry is served": ["tests/test_ttl.py"],
    "an expired kv entry is served": ["tests/test_ttl.py"],
    "an entry of unknown age passes the store TTL": ["tests/test_ttl.py"],
    "a negative or absurd TTL is accepted": ["tests/test_ttl.py"],
    "expired kv rows stay in the file": ["tests/test_ttl.py"],
    "forget ignores the age": ["tests/test_forget.py"],
    "forget misses a model's cache key": ["tests/test_forget.py"],
    "forget with no criterion wipes everything": ["tests/test_forget.py"],
    "forget leaves the cache rows in the file": ["tests/test_forget.py"],
    "a key not marked admin may forget": ["tests/native/test_serve_memo.py"],
}
