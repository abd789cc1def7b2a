"""Forgetting remembered answers by question, stage and age: the API, SQLite, ``eoc store
forget``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from eoc import Cascade
from eoc.errors import ConfigError, InputError
from eoc.forget import forget_from_json, forget_in, forget_of
from eoc.persist import SqliteCache, SqliteKV
from eoc.query import Query
from eoc.stages import CacheStage, KVStage, NeuralStage
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
    assert code == 0 and "forgot : 1 cache entry, 1 kv entry" in out
    code = main(["store", "forget", "--store", str(db), "--stage", "kv", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["forgot"] == {"kv": 2}
    assert main(["store", "forget", "--store", str(db)]) == 2  # nothing said what to forget
    assert "say what to forget" in capsys.readouterr().err
    cache = SqliteCache(db)
    assert cache.lookup(Query("tell me about lakes")) is None  # kept under its model's key
    assert len(cache) == 1
    cache.close()
