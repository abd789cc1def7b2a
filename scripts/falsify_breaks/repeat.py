"""Falsify breaks: the exact-repeat path of Cascade.resolve (an answer found by its id alone)."""

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "an exact repeat serves another model's answer",
        "eoc/cascade.py",
        '                        or (answer.origin == self.origin() and self.reuse != "never")',
        '                        or (True and self.reuse != "never")',
    ),
    (
        "an exact repeat serves a response made for another id",
        "eoc/cascade.py",
        "                    and built.qid == qid",
        "                    and True",
    ),
    (
        "an exact repeat ignores the cache's TTL",
        "eoc/stages/cache.py",
        "        if self._aging:\n            return None\n        entries = self._entries",
        "        entries = self._entries",
    ),
    (
        "an exact repeat leaves the LRU order as it was",
        "eoc/stages/cache.py",
        "            entries.move_to_end(qid)",
        "            pass",
    ),
    (
        "an exact repeat skips a live counter's charge",
        "eoc/cascade.py",
        "type(first[0][0]) is CacheStage and not self.live",
        "type(first[0][0]) is CacheStage",
    ),
]

FOCUS: dict[str, list[str]] = {name: ["tests/test_exact_repeat.py"] for name, *_ in BREAKS}
