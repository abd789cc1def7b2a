"""Forgetting remembered answers by question, stage and age: the API, SQLite, ``eoc store
forget``."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from eoc import Cascade
from eoc.errors import ConfigError, InputError
from eoc.persist import SqliteCache, SqliteKV
from eoc.query import Query
from eoc.stages import CacheStage, KVStage, NeuralStage
from eoc.store.forget import forget_from_json, forget_in, forget_of
from tests.helpers import ModelStandIn


def _filled(cache: object, kv: object) -> None:
    c = Cascade([cache, kv, NeuralStage(ModelStandIn())])  # type: ignore[list-item]
    for q in ("tell me about rivers", "tell me about lakes"):
        c.resolve(q)  # not closed: the stages stay open for the test
    kv.put("what is 2+2", "4")  # type: ignore[attr-defined]


def test_forget_by_question_takes_the_models_answer_from_cache_and_kv() -> None:
    cache, kv = CacheStage(), KVStage()
    _filled(cache, kv)
    assert forget_in(cache, kv, forget_of("tell me about rivers")) == {"cache": 1, "kv": 1}
    with Cascade([cache, kv, NeuralStage(ModelStandIn())]) as c:
        assert c.resolve("tell me about rivers").stage == "neural"
        assert c.resolve("tell me about lakes").stage == "cache"


def test_forget_by_stage_and_age_combine() -> None:
    cache, kv = CacheStage(), KVStage()
    t = [1_700_000_000.0]
    cache.now = kv.now = lambda: t[0]  # type: ignore[method-assign]
    _filled(cache, kv)
    t[0] += 3600
    kv.put("what is 3+3", "6")
    day = forget_of(stage="kv", older_than="30m")
    assert forget_in(cache, kv, day, now=t[0]) == {"kv": 3}  # rivers, lakes, 2+2; not 3+3
    assert len(cache) == 2 and len(kv) == 1
    assert forget_in(cache, kv, forget_of(stage="cache"), now=t[0]) == {"cache": 2}


def test_forget_in_a_sqlite_store_deletes_the_rows(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    cache, kv = SqliteCache(db), SqliteKV(db)
    _filled(cache, kv)
    assert forget_in(cache, kv, forget_of("tell me about lakes")) == {"cache": 1, "kv": 1}
    cache.close()
    kv.close()
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM cache").fetchone() == (1,)
    assert sorted(r[0] for r in conn.execute("SELECT prompt FROM kv")) == [
        "tell me about rivers",
        "what is 2+2",
    ]
    conn.close()


@pytest.mark.parametrize(
    ("kw", "error"),
    [
        ({}, ConfigError),
        ({"stage": "graph"}, ConfigError),
        ({"older_than": "-1d"}, ConfigError),
        ({"older_than": "soon"}, ConfigError),
        ({"question": ""}, InputError),
    ],
)
def test_bad_criteria_are_refused(kw: dict, error: type) -> None:
    with pytest.raises(error):
        forget_of(**kw)


@pytest.mark.parametrize(
    "body",
    [[], "x", {"everything": True}, {"question": 3}, {"stage": ["kv"]}, {"older_than": True}, {}],
)
def test_a_malformed_body_is_an_input_error(body: object) -> None:
    with pytest.raises(InputError):
        forget_from_json(body)


def test_eoc_store_forget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eoc.cli.main import main

    db = tmp_path / "s.db"
    cache, kv = SqliteCache(db), SqliteKV(db)
    _filled(cache, kv)
    cache.close()
    kv.close()
    code = main(["store", "forget", "--store", str(db), "--question", "tell me about rivers"])
    out = capsys.readouterr().out
    assert code == 0 and "forgot : 1 cache entry, 1 kv entry (shared 1, partitions 0)" in out
    assert "every process sharing the file drops them from memory" in out
    code = main(["store", "forget", "--store", str(db), "--stage", "kv", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["forgot"] == {"kv": 2}
    assert main(["store", "forget", "--store", str(db)]) == 2  # nothing said what to forget
    assert "say what to forget" in capsys.readouterr().err
    cache = SqliteCache(db)
    assert cache.lookup(Query("tell me about lakes")) is None  # kept under its model's key
    assert len(cache) == 1
    cache.close()


CARD = "Your card ending 4242 expires 09/29."


class CardModel:
    """A stand-in model that answers every request with a card number (what a user wants gone)."""

    name = "card-model"
    runs_model = True
    origin = '{"model":"card-model"}'

    def generate(self, prompt: str) -> Any:
        from eoc.stages.neural import Reply

        return Reply(CARD, tokens_in=5, tokens_out=9, finish_reason="stop")

    def chat(self, request: Any, on_piece: Any = None) -> Any:
        return self.generate(request.question)


def _asked_every_way(db: Path) -> None:
    """The same question alone, under a system prompt, after earlier turns, and with another
    max_tokens: each answer is kept under its own key."""
    from eoc.chat.request import ChatDefaults, parse_chat

    cache, kv = SqliteCache(db), SqliteKV(db)
    c = Cascade([cache, kv, NeuralStage(CardModel())])
    q = "which card do I have on file?"
    c.resolve(q)
    for messages, extra in (
        ([("system", "You are the billing desk.")], {}),
        ([("user", "hi"), ("assistant", "Hello! How can I help?")], {}),
        ([], {"max_tokens": 77}),
        ([("user", "hello"), ("assistant", "Hi.")], {"max_tokens": 33}),
    ):
        body = {
            "model": "m",
            "messages": [
                *({"role": r, "content": t} for r, t in messages),
                {"role": "user", "content": q},
            ],
            **extra,
        }
        c.resolve(parse_chat(body, ChatDefaults("m")).query())
    cache.close()
    kv.close()


def _rows_holding(db: Path, text: str) -> int:
    with closing(sqlite3.connect(db)) as conn:
        return sum(
            conn.execute(f"SELECT count(*) FROM {t} WHERE payload = ?", (text,)).fetchone()[0]
            for t in ("cache", "kv")
        )


def test_forgetting_a_question_reaches_every_conversation_and_partition(tmp_path: Path) -> None:
    """A question asked under a system prompt, after earlier turns or with another max_tokens
    is kept under keys of its own; eoc store forget --question removes every one of them."""
    from eoc.cli.main import main

    db = tmp_path / "s.db"
    _asked_every_way(db)
    held = _rows_holding(db, CARD)
    assert held >= 5
    assert (
        main(["store", "forget", "--store", str(db), "--question", "Which card do I have on file"])
        == 0
    )
    assert _rows_holding(db, CARD) == 0


def test_a_forget_in_one_process_reaches_another_serving_from_the_same_file(
    tmp_path: Path,
) -> None:
    """A running process (two open stores on one file: each its own connection, as two
    processes have) stops serving what the other forgot, within LISTEN_EVERY_S."""
    import time

    from eoc.store.sqlite import LISTEN_EVERY_S

    db = tmp_path / "s.db"
    server_cache, server_kv = SqliteCache(db), SqliteKV(db)
    serving = Cascade([server_cache, server_kv, NeuralStage(CardModel())])
    assert serving.resolve("which card do I have on file").stage == "neural"
    assert serving.resolve("which card do I have on file").stage == "cache"
    assert serving.resolve("Which card do I have on file?").stage in ("cache", "kv")
    other_cache, other_kv = SqliteCache(db), SqliteKV(db)
    gone = forget_in(other_cache, other_kv, forget_of("which card do I have on file"))
    assert gone["cache"] >= 1 and gone["kv"] == 1
    other_cache.close()
    other_kv.close()
    time.sleep(LISTEN_EVERY_S + 0.05)
    assert serving.resolve("Which card do I have on file?").stage == "neural"
    serving.close()


def test_an_entry_kept_before_questions_were_recorded_is_forgotten_by_its_own_key() -> None:
    """A cache entry from before schema 5 records no question (``EntryMeta.asked`` None): the
    question's own key, and a model's answer to it keyed by what made it, are still matched."""
    from dataclasses import replace

    cache = CacheStage()
    origin = '{"model":"old"}'
    q = "tell me about rivers"
    cache.remember(Query(q), "a fact")
    cache.remember(Query(q, context=f"made by {origin}"), "a model's answer", origin)
    for qid, answer in cache._entries.items():  # as an older eoc kept them
        cache._entries[qid] = replace(answer, meta=replace(answer.meta, asked=None))
    assert forget_in(cache, None, forget_of(q, "cache")) == {"cache": 2}
    assert len(cache) == 0
