"""Two `eoc serve` processes on one PostgreSQL: shared answers, kill -9, a PostgreSQL restart.

Everything listens on 127.0.0.1; the loads are bounded in count and time. The replicas are
real processes (so one can be killed with SIGKILL) running eoc's model runner on a tiny model.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("psycopg")
pytest.importorskip("uvicorn")

import httpx

from eoc import Cascade
from eoc.query import Query
from eoc_native.store.postgres import PgStore
from tests.native.serving import EocServe
from tests.native.test_llm_tiny import BLOCKS, write_tiny_model

MODEL = "tiny"
_names = itertools.count()


class Replica(EocServe):
    def __init__(self, model: Path, url: str) -> None:
        super().__init__(
            "--model", str(model), "--model-id", MODEL, "--max-tokens", "6", "--store", url
        )


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("llm") / "tiny.gguf", tensor_types=BLOCKS)


@pytest.fixture(scope="module")
def pair(postgres: Any, tiny: Path) -> Iterator[tuple[Replica, Replica, str]]:
    """Two replicas on one database for the whole file; the tests run in order, the one that
    kills a replica last."""
    url = postgres.new_database(f"eoc_replicas_{next(_names)}")
    a = Replica(tiny, url)
    b = Replica(tiny, url)
    try:
        yield a, b, url
    finally:
        a.stop()
        b.stop()


def stored_answers(url: str) -> dict[str, str]:
    """Every cache row in PostgreSQL whose checksum holds (failing rows make the test fail), by
    the query id it answers: a model's answer is keyed by its question and what made it
    (``Cascade._made_by``), so it is found here under the question's own id."""
    store = PgStore(url)
    try:
        damaged: list[Any] = []
        rows = {
            qid: (payload, origin) for qid, payload, origin, _meta in store.rows("cache", damaged)
        }
    finally:
        store.close()
    assert not damaged, damaged
    return {qid: payload for qid, (payload, _origin) in rows.items()}


def model_key(question: str, url: str) -> str:
    """The cache key of a model's answer to ``question`` on these replicas."""
    store = PgStore(url)
    try:
        origins = {o for _q, _p, o, _meta in store.rows("cache", []) if o}
    finally:
        store.close()
    assert len(origins) == 1, origins  # the replicas run one model with one setting
    return Cascade._made_by(Query(question), origins.pop()).id


def test_an_answer_computed_on_one_replica_is_a_hit_on_the_other_within_100_ms(
    pair: tuple[Replica, Replica, str],
) -> None:
    a, b, _ = pair
    first = a.ask("hello there")
    assert first.status_code == 200 and first.headers["x-eoc-stage"] == "neural"
    time.sleep(0.1)
    hit = b.ask("hello there")
    assert hit.headers["x-eoc-stage"] == "cache", b.output()
    assert (
        hit.json()["choices"][0]["message"]["content"]
        == first.json()["choices"][0]["message"]["content"]
    )


WORKLOAD = [f"q{i} tell me" for i in range(12)]


def mixed(i: int, tag: str = "") -> str:
    """Repeats, near-repeats (a paraphrase kv may take) and new questions."""
    kind = i % 3
    if kind == 0:
        return tag + WORKLOAD[i % 4]  # repeats
    if kind == 1:
        return tag + WORKLOAD[i % 4] + " please"  # near-repeat
    return f"{tag}new {i} ok"  # new


def test_a_postgres_restart_mid_load_gives_typed_503s_then_replicas_reconnect(
    pair: tuple[Replica, Replica, str], postgres: Any
) -> None:
    a, b, url = pair
    for r in (a, b):
        assert r.ask("before the restart").status_code == 200
    seen: list[tuple[int, str | None]] = []
    stop = threading.Event()

    def load(offset: int) -> None:  # a steady mixed load through the whole restart
        for i in itertools.count(offset, 2):
            if stop.is_set() or i > 400:
                return
            r = (a, b)[i % 2].ask(mixed(i), timeout=20)
            seen.append((r.status_code, r.json().get("error", {}).get("code")))

    threads = [threading.Thread(target=load, args=(k,)) for k in (0, 1)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    postgres.stop("fast")
    try:
        gap = [r.ask(f"asked in the gap {i}", timeout=20) for i, r in enumerate((a, b, a, b))]
        for resp in gap:
            # A replica that has seen PostgreSQL go refuses a miss (503); one that has not yet
            # noticed answers, and holds the write until PostgreSQL is back (stored: pending).
            # Which one a request meets is a race with the listener; both are honest.
            if resp.status_code == 200:
                assert resp.headers["x-eoc-stored"] == "pending", resp.text
                continue
            assert resp.status_code == 503, resp.text
            err = resp.json()["error"]
            assert err["code"] == "store_unavailable" and "retry-after" in resp.headers
        held = [f"asked in the gap {i}" for i, r in enumerate(gap) if r.status_code == 200]
        # what is in memory is still served
        assert a.ask("before the restart").headers["x-eoc-stage"] == "cache"
    finally:
        postgres.start()
    deadline = time.monotonic() + 15
    while any(httpx.get(r.base + "/healthz").json()["status"] != "ok" for r in (a, b)):
        assert time.monotonic() < deadline, "the replicas did not reconnect"
        time.sleep(0.1)
    stop.set()
    for t in threads:
        t.join(30)
    assert seen and {code for code, _ in seen} <= {200, 503}, seen
    assert all(c == "store_unavailable" for code, c in seen if code == 503), seen
    deadline = time.monotonic() + 15  # the writes held in the gap are made first
    while any(httpx.get(r.base + "/healthz").json().get("store_pending") for r in (a, b)):
        assert time.monotonic() < deadline, "held writes were never made"
        time.sleep(0.1)
    after = a.ask("asked after the restart")
    assert after.status_code == 200 and after.headers["x-eoc-stage"] == "neural"
    time.sleep(0.1)
    assert b.ask("asked after the restart").headers["x-eoc-stage"] == "cache"
    rows = stored_answers(url)  # every row whole: no partial writes
    deadline = time.monotonic() + 15  # a held write is made once PostgreSQL is back
    keys = {model_key(question, url) for question in held}
    while not keys <= set(rows):
        assert time.monotonic() < deadline, f"held answers never written: {keys - set(rows)}"
        time.sleep(0.2)
        rows = stored_answers(url)


def test_kill_9_one_replica_mid_load_the_other_answers_and_nothing_acknowledged_is_lost(
    pair: tuple[Replica, Replica, str],
) -> None:
    a, b, url = pair
    acked: dict[str, str] = {}  # question -> answer, for answers a replica acknowledged

    def send(i: int) -> tuple[int, str, int]:
        target = a if i % 2 == 0 else b
        question = mixed(i, "k ")
        try:
            r = target.ask(question, timeout=20)
        except httpx.HTTPError:
            return (i, "", -1)  # the killed replica's connections fail; nothing was acknowledged
        if r.status_code == 200:
            verdict = r.json()["eoc"]
            if verdict["stage"] == "neural":
                acked[question] = verdict["receipt"]["payload"]
        return (i, "b" if target is b else "a", r.status_code)

    with ThreadPoolExecutor(4) as pool:
        first = list(pool.map(send, range(30)))
        a.kill()  # SIGKILL, mid-load: no shutdown code runs
        after = list(pool.map(send, range(30, 60)))
    assert all(code == 200 for _, _, code in first), first
    to_b = [code for i, who, code in after if who == "b"]
    assert to_b and all(code == 200 for code in to_b), after
    rows = stored_answers(url)
    keys = {question: model_key(question, url) for question in acked}
    missing = {question for question, key in keys.items() if key not in rows}
    assert len(acked) >= 10  # the load did make new answers
    assert not missing, f"acknowledged answers lost: {missing}"
    assert all(rows[keys[question]] == text for question, text in acked.items())
