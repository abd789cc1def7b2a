"""The cascade asks a kv's two halves apart (issue 40, item 5): the question itself before the
graph, a similar one after it, so a question the graph or a computation answers is never
embedded; and ``kv_after_reply`` writes a model's answer to the kv once the reply is made."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

import eoc.behind as after_reply
from eoc import Cascade, Query
from eoc.behind import Behind
from eoc.errors import StoreError
from eoc.knowledge import seeded_graph
from eoc.meter.counter import StubCounter
from eoc.query import Stage
from eoc.stages import CacheStage, HashedNgramEmbedder, KVStage
from eoc.stages.contract import Half, steps
from eoc.stages.neural import NeuralStage
from eoc.testing import ScriptedBackend
from tests.helpers import IN_BROWSER, CountingEmbedder


def _cascade(kv: KVStage, backend: ScriptedBackend | None = None, **kw: object) -> Cascade:
    stages = [CacheStage(), kv, seeded_graph(), NeuralStage(backend or ScriptedBackend())]
    return Cascade(stages, StubCounter(), **kw)  # type: ignore[arg-type]


def test_the_kv_is_asked_in_two_halves_around_the_graph() -> None:
    kv = KVStage()
    graph = seeded_graph()
    order = steps([CacheStage(), kv, graph, NeuralStage(ScriptedBackend())])
    assert [s.stage for s in order] == [Stage.CACHE, Stage.KV, Stage.GRAPH, Stage.KV]
    first, last = order[1], order[3]
    assert isinstance(first, Half) and isinstance(last, Half)
    assert first.lookup == kv.lookup_exact and last.lookup == kv.lookup_similar
    assert first.figure is kv.figure
    # no graph: one step, the whole lookup
    alone = steps([kv, NeuralStage(ScriptedBackend())])
    assert alone == (kv,)


def test_a_question_the_graph_or_a_computation_answers_is_never_embedded() -> None:
    emb = CountingEmbedder()
    kv = KVStage(embedder=emb)
    kv.put("tell me about the sea", "It is wet.")
    emb.calls.clear()
    with _cascade(kv) as cascade:
        for question, stage in (
            ("capital of Japan?", "graph"),
            ("What's the capital city of France", "graph"),
            ("what is 17*23", "graph"),
        ):
            assert cascade.resolve(question).stage == stage
        assert emb.calls == []
        # a question the graph does not answer still reaches the kv's similar half
        hit = cascade.resolve("please tell me about the sea")
        assert (hit.stage, hit.payload) == ("kv", "It is wet.")
        assert emb.calls


def test_the_graph_answers_before_a_similar_stored_question_and_after_the_same_one() -> None:
    kv = KVStage()
    kv.put("what is the capital city of Japan", "Kyoto")  # a wrong answer kept for a rewording
    kv.put("capital of France", "Paris (kept)")  # the very question, folded
    with _cascade(kv) as cascade:
        graph = cascade.resolve("what's the capital of Japan")
        assert (graph.stage, graph.payload) == ("graph", "Tokyo")
        exact = cascade.resolve("Capital of France")
        assert (exact.stage, exact.payload) == ("kv", "Paris (kept)")
    # the whole lookup, asked alone, is unchanged: exact, then similar
    assert kv.lookup(Query("what's the capital city of Japan")) is not None


def test_a_bad_embedding_is_an_error_in_either_half() -> None:
    kv = KVStage()
    kv.put("tell me about the sea", "It is wet.")
    bad = Query("tell me about the sea", embedding=[1.0, 0.0])
    from eoc.errors import BadEmbedding

    with pytest.raises(BadEmbedding):
        kv.lookup_exact(bad)
    with pytest.raises(BadEmbedding):
        kv.lookup_similar(bad)


# -- after the reply -------------------------------------------------------------------------

needs_threads = pytest.mark.skipif(IN_BROWSER, reason="the browser has no threads")


@needs_threads
def test_behind_runs_writes_in_order_waits_on_flush_and_runs_a_full_queues_write_itself() -> None:
    done: list[int] = []
    gate = threading.Event()
    failed: list[BaseException] = []
    behind = Behind(failed.append, limit=2)

    def write(i: int) -> None:
        gate.wait(5)
        done.append(i)

    assert behind.submit(lambda: write(1))
    time.sleep(0.05)  # the worker holds the first, waiting on the gate
    assert behind.submit(lambda: write(2)) and behind.submit(lambda: write(3))
    gate.set()
    assert not behind.submit(lambda: done.append(4))  # full: the caller ran it
    behind.flush()
    assert sorted(done) == [1, 2, 3, 4] and [i for i in done if i != 4] == [1, 2, 3]
    behind.submit(lambda: (_ for _ in ()).throw(StoreError("disk full")))
    behind.submit(lambda: done.append(5))  # the worker lives on
    behind.close()
    assert done[-1] == 5 and [str(e) for e in failed] == ["disk full"]
    assert not behind.submit(lambda: done.append(6)) and done[-1] == 6  # closed: at once


@needs_threads
def test_a_write_waits_for_the_replies_in_flight_at_most_its_limit_and_never_for_a_flush() -> None:
    done: list[int] = []
    ran = threading.Event()

    def write(i: int) -> Callable[[], None]:
        return lambda: (done.append(i), ran.set())

    behind = Behind(lambda exc: None, max_defer_s=15.0)
    with behind.replying():
        with behind.replying():  # two replies in flight
            assert behind.submit(write(1))
        assert not ran.wait(0.2) and done == []  # one still in flight: the write waits
    assert ran.wait(5) and done == [1]  # none in flight: it runs
    with behind.replying():
        assert behind.submit(write(2))
        t0 = time.monotonic()
        behind.flush()  # a flush does not wait for the reply
        assert done == [1, 2]
        assert behind.submit(write(3))
        behind.close()  # nor does a close
        assert done == [1, 2, 3] and time.monotonic() - t0 < 5
    ran.clear()
    hurried = Behind(lambda exc: None, max_defer_s=0.1)
    with hurried.replying():  # a reply that never ends: the write runs once its limit is up
        t0 = time.monotonic()
        assert hurried.submit(write(4))
        assert ran.wait(5) and done[-1] == 4
        assert time.monotonic() - t0 >= 0.09
    hurried.close()


@needs_threads
def test_kv_after_reply_remembers_once_flushed_and_a_forget_waits_for_it() -> None:
    slow = threading.Event()

    class Slow(HashedNgramEmbedder):
        def embed(self, text: str):  # type: ignore[no-untyped-def]
            slow.wait(5)
            return super().embed(text)

    kv = KVStage(embedder=Slow())
    with _cascade(kv, kv_after_reply=True) as cascade:
        first = cascade.resolve("tell me about the sea")
        assert first.stage == "neural" and first.stored == "yes"  # the cache has it already
        assert cascade.resolve("tell me about the sea").stage == "cache"
        assert len(kv) == 0  # the kv's write waits on its embedding, after the reply
        slow.set()
        cascade.flush()
        assert cascade.resolve("please tell me about the sea").stage == "kv"
        # a forget runs the writes still queued first: what it forgets stays forgotten
        slow.clear()
        made = cascade.resolve("tell me about the moon")
        threading.Timer(0.1, slow.set).start()
        forgot = cascade.forget_answer(made)
        assert forgot.get("kv") == 1
        assert cascade.resolve("please tell me about the moon").stage == "neural"


@needs_threads
def test_kv_after_reply_writes_once_no_reply_is_in_flight(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(after_reply, "MAX_DEFER_S", 30.0)  # only the reply's end may release it
    kv = KVStage()
    with _cascade(kv, kv_after_reply=True) as cascade:
        with cascade.replying():  # a server sending this reply
            assert cascade.resolve("tell me about the sea").stored == "yes"
            time.sleep(0.2)
            assert len(kv) == 0  # the write waits for the reply to be sent
        cascade.flush()
        assert len(kv) == 1
    with _cascade(KVStage()) as plain, plain.replying():  # no writes after the reply: no mark
        assert plain.resolve("tell me about the sea").stored == "yes"


@needs_threads
def test_kv_after_reply_counts_a_write_that_fails_and_keeps_serving() -> None:
    class Refusing(KVStage):
        def remember(self, *a: object, **k: object) -> str | None:  # type: ignore[override]
            raise StoreError("the store is read-only")

    with _cascade(Refusing(), kv_after_reply=True) as cascade:
        assert cascade.resolve("tell me about the sea").stage == "neural"
        cascade.flush()
        assert cascade.store_errors == 1
        assert "read-only" in cascade.last_store_error
        assert cascade.resolve("tell me about the moon").stage == "neural"
