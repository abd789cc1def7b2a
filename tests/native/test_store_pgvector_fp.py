"""The guard's fingerprints kept beside the vectors PostgreSQL searches: a question whose numbers
no stored prompt has is a miss without an embedding, as it is in memory, and a row whose
fingerprint is unknown never lets one be skipped (on a throwaway pgvector server)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

pytest.importorskip("psycopg")

import psycopg

from eoc.query import Query
from eoc.stages.kv import KVStage
from eoc_native.semantic import semantic_kv_options
from eoc_native.store.pgvector import PgVectorKVStore
from eoc_native.store.pgvector_fp import fingerprint_text
from eoc_native.store.postgres import PgStore

_names = itertools.count()
TABLE = "eoc_kv_vec_384"
GATE = "Which gate does flight 2231 leave from?"


class Counting:
    """The kv's embedder, keeping each text a lookup or a put embedded."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed(self, text: str) -> Any:
        self.calls.append(text)
        return self.inner.embed(text)


@pytest.fixture
def url(pgvector_server: Any) -> str:
    return str(pgvector_server.new_database(f"eoc_fp_{next(_names)}"))


@pytest.fixture(scope="module")
def options() -> dict[str, Any]:
    return semantic_kv_options(judge=False)  # MiniLM, threshold 0.7, the entity guard


def kv_on(url: str, options: dict[str, Any]) -> tuple[KVStage, Counting, PgStore]:
    store = PgStore(url)
    embedder = Counting(options["embedder"])
    kv = KVStage(store=PgVectorKVStore(store), **{**options, "embedder": embedder})
    return kv, embedder, store


def columns(url: str) -> dict[str, tuple[str | None, str | None]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(f"SELECT key, fp_by, fp FROM {TABLE}").fetchall()
    return {str(k): (by, fp) for k, by, fp in rows}


def test_a_question_whose_numbers_no_stored_prompt_has_is_not_embedded(
    url: str, options: Any
) -> None:
    a, embedder, store_a = kv_on(url, options)
    b, _, store_b = kv_on(url, options)
    try:
        store_a.start()
        store_b.start()
        a.put(GATE, "Gate 12")
        embedder.calls.clear()
        assert a.lookup(Query("Which gate does flight 9876 leave from?")) is None
        assert embedder.calls == []  # no stored prompt has 9876: nothing to embed
        assert a.lookup(Query("What gate does flight 2231 leave from?")).payload == "Gate 12"
        assert len(embedder.calls) == 1  # its numbers are stored: embedded, searched, served
        # another replica's pair with the number: found at once, the same as any write
        b.put("Which gate does flight 9876 leave from?", "Gate 4")
        assert a.lookup(Query("What gate does flight 9876 leave from?")).payload == "Gate 4"
    finally:
        a.close()
        b.close()


def test_every_row_holds_its_prompt_s_fingerprint_and_a_corrected_one_opens_the_search(
    url: str, options: Any
) -> None:
    a, embedder, _ = kv_on(url, options)
    try:
        a.put(GATE, "Gate 12")
        a.put("what does it cost, no sorry, what did it cost in 1999", "Less")
        held = columns(url)
        assert sorted(by for by, _ in held.values()) == ["entities/1", "entities/1"]
        assert sorted(fp is None for _, fp in held.values()) == [False, True]  # the correction
        embedder.calls.clear()
        # a stored prompt that corrects itself may hold any numbers: nothing is ruled out
        assert a.lookup(Query("Which gate does flight 9876 leave from?")) is None
        assert len(embedder.calls) == 1
    finally:
        a.close()


def test_rows_without_a_fingerprint_are_searched_until_a_replica_fills_them(
    url: str, options: Any
) -> None:
    a, embedder, _ = kv_on(url, options)
    try:
        a.put(GATE, "Gate 12")
        a.put("How many seats does row 31 have?", "Six")
        written = columns(url)
        with psycopg.connect(url) as conn:  # as an older replica or a bulk load writes them
            conn.execute(f"UPDATE {TABLE} SET fp_by = NULL, fp = NULL")
        embedder.calls.clear()
        assert a.lookup(Query("Which gate does flight 9876 leave from?")) is None
        assert len(embedder.calls) == 1  # unknown rows: it may not skip the search
        c, _, _ = kv_on(url, options)  # a start fills them in the background
        try:
            c.store.search.fingerprints.join(30)
            assert columns(url) == written  # what a put writes, row for row
        finally:
            c.close()
        embedder.calls.clear()
        assert a.lookup(Query("Which gate does flight 9875 leave from?")) is None
        assert embedder.calls == []
        assert a.lookup(Query("what gate does flight 2231 leave from")).payload == "Gate 12"
    finally:
        a.close()


def test_a_fingerprint_is_a_short_digest_whatever_the_prompt_holds(url: str, options: Any) -> None:
    numbers = " ".join(str(n) for n in range(3_000))
    assert fingerprint_text("entities/1", None) is None
    assert fingerprint_text("entities/1", ({1, 2}, ())) is None  # not JSON: unknown
    one = fingerprint_text("entities/1", (("12",), ("+",)))
    assert one is not None and len(one) == 32
    assert one != fingerprint_text("entities/2", (("12",), ("+",)))  # another kind, unknown
    a, _, _ = kv_on(url, options)
    try:
        a.put(f"which of these is prime: {numbers}", "Several")
        assert all(fp is not None and len(fp) == 32 for _, fp in columns(url).values())
    finally:
        a.close()
