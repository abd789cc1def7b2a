"""Falsify breaks: eoc serve, PostgreSQL and remote backends."""

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "the server writes a model's answer to the kv while its reply is being sent",
        "native/eoc_native/serve/app.py",
        "        with self.cascade.replying():",
        "        with contextlib.nullcontext():",
    ),
    (
        "an error body read in part leaves its connection in the pool",
        "native/eoc_native/remote.py",
        "                # an error body read only in part: its connection is closed, never reused\n                self._conns.done(conn, resp)",
        "                resp.close()\n                self._conns.done(conn, resp)",
    ),
    (
        "kept-alive connection closed by the server not replaced",
        "native/eoc_native/keepalive.py",
        "            if not reused:\n                raise",
        "            raise",
    ),
    (
        "connections never kept alive",
        "native/eoc_native/keepalive.py",
        "        if not finished or resp.will_close:",
        "        if True:",
    ),
    (
        "a stream stopped early keeps its connection",
        "native/eoc_native/keepalive.py",
        "        finished = resp.isclosed() or (not resp.chunked and resp.length == 0)",
        "        finished = True",
    ),
    (
        "pg cache never trimmed",
        "native/eoc_native/store/postgres.py",
        "        if held is None and self._writes % TRIM_EVERY == 0:",
        "        if False:",
    ),
    (
        "pg cache reads every row at start-up",
        "native/eoc_native/store/postgres.py",
        '        found = (self._checked(*r) for r in self.store.rows("cache", self.damaged, newest=newest))',
        '        found = (self._checked(*r) for r in self.store.rows("cache", self.damaged))',
    ),
    (
        "remote reply read without a bound",
        "native/eoc_native/remote.py",
        "            parts.append(chunk)\n            size += len(chunk)\n            if size > MAX_BODY_BYTES:",
        "            parts.append(chunk)\n            size += len(chunk)\n            if False:",
    ),
    (
        "remote errors leak the API key",
        "native/eoc_native/remote.py",
        '        return text.replace(self._key, "[api key]") if self._key else text',
        "        return text",
    ),
    (
        "a spent joule budget lets requests through",
        "native/eoc_native/serve/budget.py",
        "        if over < 0 or (more_uj and over == 0):",
        "        if True:",
    ),
    (
        "an open breaker asks the backend anyway",
        "native/eoc_native/serve/breaker.py",
        "            if now < self._open_until or self._trial:",
        "            if False:",
    ),
    (
        "any API key admitted",
        "native/eoc_native/serve/keys.py",
        "        return self._by_hash.get(hash_key(key))",
        "        return next(iter(self._by_hash.values()), None)",
    ),
    (
        "a request for another model answered by this one",
        "native/eoc_native/serve/app.py",
        "        if isinstance(model, str) and model not in self._names:",
        "        if False:",
    ),
    (
        "a miss answered while the store is down",
        "native/eoc_native/serve/app.py",
        '        down = self.config.store_health() if self.config.store_health else ""\n        if down:',
        '        down = ""\n        if down:',
    ),
    (
        "the server's verdict claims measured",
        "native/eoc_native/serve/wire.py",
        "    doc = response.to_dict()",
        '    doc = {**response.to_dict(), "cost": {**response.cost.to_dict(), "provenance": "measured"}}',
    ),
    (
        "a PostgreSQL row that fails its checksum is served",
        "native/eoc_native/store/postgres.py",
        "                ok = row_sum(table, fields, self.key) == checksum",
        "                ok = True",
    ),
    (
        "the breaker hides the model's origin",
        "native/eoc_native/serve/breaker.py",
        '        found = getattr(self.backend, "origin", None)',
        "        found = None",
    ),
    (
        "a migrated PostgreSQL row is served as no model's",
        "native/eoc_native/store/postgres.py",
        "                f\"ALTER TABLE eoc_{table} ADD COLUMN origin text NOT NULL DEFAULT '{UNRECORDED}'\"",
        "                f\"ALTER TABLE eoc_{table} ADD COLUMN origin text NOT NULL DEFAULT ''\"",
    ),
    (
        "request headers have no deadline",
        "native/eoc_native/serve/connections.py",
        "            self._deadline = self.loop.call_later(header_timeout_s, self._close_with, late)",
        "            self._deadline = None",
    ),
    (
        "open connections are not capped",
        "native/eoc_native/serve/connections.py",
        "            if len(self.connections) > max_connections and not self._make_room():",
        "            if False:",
    ),
    (
        "a full server refuses instead of shedding a slow client",
        "native/eoc_native/serve/connections.py",
        "            if not slow:\n                return False",
        "            if True:\n                return False",
    ),
    (
        "one connection is kept alive without bound",
        "native/eoc_native/serve/connections.py",
        "            if self._served >= max_requests and self.cycle is not None:",
        "            if False:",
    ),
    (
        "any Host header is accepted",
        "native/eoc_native/serve/app.py",
        '        if scope["type"] == "http" and not self._host_ok(scope):',
        "        if False:",
    ),
    (
        "eoc serve runs without the connection guards",
        "native/eoc_native/serve/run.py",
        "        http=guarded_protocol(",
        '        http="auto" or guarded_protocol(',
    ),
    (
        "a request body's duplicate keys are merged",
        "native/eoc_native/serve/app.py",
        '        return loads_strict(body, what="the request body")',
        "        return orjson.loads(body)",
    ),
    (
        "a miss asks the model without reserving its worst case",
        "native/eoc_native/serve/app.py",
        "        before = None if hold is None else hold.reserve",
        "        before = None",
    ),
    (
        "a reservation ignores what is held",
        "native/eoc_native/serve/budget.py",
        "        held = self._reserved if more_uj else 0",
        "        held = 0",
    ),
    (
        "a write that meets a stopped database is dropped",
        "native/eoc_native/store/postgres.py",
        "            self._pending.append((table, sql, rows, doing))\n        return PENDING",
        "            pass\n        return PENDING",
    ),
    (
        "held writes are never made",
        "native/eoc_native/store/postgres.py",
        "                        if self._pending:\n                            self.flush_pending()",
        "                        if False:\n                            self.flush_pending()",
    ),
    (
        "a miss asks the cache twice",
        "native/eoc_native/serve/app.py",
        "before_model=before, cache_missed=True",
        "before_model=before, cache_missed=False",
    ),
    (
        "a wrong API key is told the same as a missing one",
        "native/eoc_native/serve/app.py",
        '                        "the API key sent is not one of this server\'s keys: check the key, or "',
        '                        "this server needs an API key: send Authorization: Bearer <key> "',
    ),
    (
        "the banner says 1 API keys",
        "native/eoc_native/serve/run.py",
        "        f\"{n_keys or 'no'} API key{'' if n_keys == 1 else 's'}\"",
        "        f\"{n_keys or 'no'} API keys\"",
    ),
    (
        "a client's request id is not echoed",
        "native/eoc_native/serve/app.py",
        "                return bytes(value)\n",
        "                break\n",
    ),
    (
        "a hostile request id is echoed",
        "native/eoc_native/serve/app.py",
        "            if 0 < len(value) <= 128 and all(33 <= c <= 126 for c in value):\n",
        "            if True:\n",
    ),
]

FOCUS: dict[str, list[str]] = {
    "the server writes a model's answer to the kv while its reply is being sent": [
        "tests/native/test_serve_memo.py::"
        "test_the_kv_remembers_a_model_answer_once_its_reply_is_sent"
    ],
    "a client's request id is not echoed": [
        "tests/native/test_serve.py::"
        "test_every_response_carries_a_request_id_the_client_s_own_where_it_is_plain"
    ],
    "a hostile request id is echoed": [
        "tests/native/test_serve.py::"
        "test_every_response_carries_a_request_id_the_client_s_own_where_it_is_plain"
    ],
    "the banner says 1 API keys": [
        "tests/native/test_serve.py::test_api_keys_are_stored_hashed_and_required"
    ],
    "a wrong API key is told the same as a missing one": [
        "tests/native/test_serve.py::test_api_keys_are_stored_hashed_and_required"
    ],
}
