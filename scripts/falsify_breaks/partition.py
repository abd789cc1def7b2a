"""Falsify breaks: kv partitions (issue 24 item 3, eoc/partition.py): a model's answer to a
request with a system prompt or its own parameters is served to paraphrases in its partition
only, within the request's max_tokens, and stores keep the partition."""

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "a partition's answer is served to a plain question",
        "eoc/stages/kv.py",
        "        if part is None:\n            if not self._parted and self._searcher is None:\n                return None\n",
        "        if part is None:\n            return None\n",
    ),
    (
        "another system prompt shares the partition",
        "eoc/chat/request.py",
        '            "system": [text for _, text in before],',
        '            "system": [],',
    ),
    (
        "stop strings are left out of the partition",
        "eoc/chat/request.py",
        '            "stop": list(self.stop),\n            "presence_penalty": self.presence_penalty,',
        '            "presence_penalty": self.presence_penalty,',
    ),
    (
        "the seed is left out of a sampled partition",
        "eoc/chat/request.py",
        '            doc["seed"] = self.seed\n        return doc',
        "        return doc",
    ),
    (
        "a follow-up gets a partition",
        "eoc/chat/request.py",
        '        if last[0] != "user" or any(role != "system" for role, _ in before):\n            return None\n        doc',
        "        doc",
    ),
    (
        "an answer cut by length serves a larger max_tokens",
        "eoc/store/partition.py",
        '        return self.open_tag if finish_reason == "stop" else self.bounded_tag',
        "        return self.open_tag",
    ),
    (
        "an answer that stopped serves any max_tokens",
        "eoc/store/partition.py",
        "                return generation.tokens[1] <= self.max_tokens",
        "                return True",
    ),
    (
        "a partition gets the shared partition's model answers",
        "eoc/store/partition.py",
        "        return self.facts and tag == SHARED and not origin",
        "        return self.facts and tag == SHARED",
    ),
    (
        "a tag eoc does not write is accepted",
        "eoc/store/partition.py",
        '    if end < 0 or not _TAG.fullmatch(tag) or key[end + 1 : end + 2] != " ":',
        "    if end < 0:",
    ),
    (
        "a kv that keeps no partitions is asked for them",
        "eoc/cascade.py",
        "        self._parts = wiring.partitions",
        "        self._parts = True",
    ),
    (
        "another model's answer in the partition is served",
        "eoc/cascade.py",
        "            and q.partition is not None\n            and answer.origin == self.origin()\n",
        "            and q.partition is not None\n",
    ),
    (
        "a partition's model answer is not kept in kv",
        "eoc/cascade.py",
        "            and (q.context is None or (q.partition is not None and self._parts))",
        "            and q.context is None",
    ),
    (
        "a SQLite store forgets the partition on restart",
        "eoc/stages/kv.py",
        "            tag = tag_of(row.key)\n            key = keyed(tag, kv_key(row.prompt, row.payload))\n            checked_origin(row.origin)\n            vec",
        '            tag = ""\n            key = keyed(tag, kv_key(row.prompt, row.payload))\n            checked_origin(row.origin)\n            vec',
    ),
    (
        "a SQLite store of schema 4 says 3",
        "eoc/store/sqlite_schema.py",
        "SCHEMA_VERSION = 5\n",
        "SCHEMA_VERSION = 3\n",
    ),
    (
        "a PostgreSQL replica forgets the partition",
        "eoc/stages/kv.py",
        "            tag = tag_of(row.key)\n            key = keyed(tag, kv_key(row.prompt, row.payload))\n            checked_origin(row.origin)\n            vec",
        '            tag = ""\n            key = keyed(tag, kv_key(row.prompt, row.payload))\n            checked_origin(row.origin)\n            vec',
    ),
    (
        "a PostgreSQL store of schema 3 stays 3",
        "native/eoc_native/store/postgres.py",
        '            if row is not None and row[0] == "3":\n                self._from_v3(conn)\n',
        "",
    ),
    (
        "forgetting a question misses its partitions",
        "eoc/store/forget.py",
        "                return prompt is not None and fold(prompt) == kv_key",
        "                return key == kv_key",
    ),
]

FOCUS: dict[str, list[str]] = {
    name: ["tests/test_partitions.py"]
    for name, path, _, _ in BREAKS
    if not path.startswith("native/")
}
FOCUS["a PostgreSQL replica forgets the partition"] = ["tests/native/test_store_postgres.py"]
FOCUS["a PostgreSQL store of schema 3 stays 3"] = ["tests/native/test_store_postgres.py"]
