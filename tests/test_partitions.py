"""Partitions instead of refusal (eoc/partition.py): a model's answer to a request with a system
prompt or its own parameters is kept in kv under the partition of its model, system prompt and
content-changing parameters, and served to a paraphrase in the same partition only;
``max_tokens`` only bounds it. Plain questions keep the shared partition; follow-ups keep the
exact-repeat rule."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from eoc import Cascade
from eoc.chat.request import ChatDefaults, ChatRequest, parse_chat
from eoc.errors import InvalidText
from eoc.persist import SqliteCache, SqliteKV
from eoc.query import Query
from eoc.stages.cache import CacheStage
from eoc.stages.graph import GraphStage, TripleStore
from eoc.stages.kv import KVStage
from eoc.stages.neural import NeuralStage, Reply
from eoc.store.forget import forget_in, forget_of
from eoc.store.partition import SHARED, Partition, checked_tag, keyed, tag_of, unkeyed
from eoc.store.sqlite_schema import SCHEMA_VERSION
from tests.helpers import small_stages

M = "m"
DESK = "You are the help desk of Example Air. Be brief."
FRENCH = "Reply in French."
RESET = "How do I reset my router?"
RESET_AGAIN = "how can I reset my router please"
ANSWER = "Hold the reset button for ten seconds."


class Model:
    """A stand-in model: answers each question from ``answers`` (else a fixed text), with its
    own token count and finish reason, and counts its calls."""

    name = "stand-in"
    runs_model = True

    def __init__(
        self,
        answers: dict[str, str] | None = None,
        *,
        finish: str | None = "stop",
        tokens: int | None = 9,
    ) -> None:
        self.answers = answers or {RESET: ANSWER}
        self.finish, self.tokens = finish, tokens
        self.calls = 0
        self.origin = '{"model":"stand-in"}'

    def generate(self, prompt: str) -> Reply:
        self.calls += 1
        text = self.answers.get(prompt, f"made for: {prompt}")
        counted = self.tokens is not None
        return Reply(
            text,
            tokens_in=5 if counted else None,
            tokens_out=self.tokens,
            finish_reason=self.finish,
        )

    def chat(self, request: Any, on_piece: Callable[[str], None] | None = None) -> Reply:
        return self.generate(request.question)


def cascade(model: Model | None = None, kv: KVStage | None = None) -> Cascade:
    stages = small_stages(model or Model())
    if kv is not None:
        kv.put("what is 2+2", "4")
        stages[1] = kv
    return Cascade(stages)


def request(
    question: str, system: str | None = DESK, *, facts: bool = False, **params: Any
) -> ChatRequest:
    messages = ([{"role": "system", "content": system}] if system is not None else []) + [
        {"role": "user", "content": question}
    ]
    defaults = ChatDefaults(M, max_tokens=8, facts_under_system_prompts=facts)
    return parse_chat({"model": M, "messages": messages, **params}, defaults)


def ask(c: Cascade, question: str, system: str | None = DESK, **params: Any) -> tuple[str, str]:
    r = c.resolve(request(question, system, **params).query())
    return r.stage.value, r.payload


# -- which requests are in which partition ---------------------------------------------------


def test_a_plain_question_is_in_the_shared_partition() -> None:
    assert request(RESET, None).plain and request(RESET, None).partition is None
    assert request(RESET, None).query().partition is None


def test_one_system_prompt_one_user_message_is_a_partition_of_its_own() -> None:
    a, b = request(RESET, max_tokens=32).partition, request(RESET_AGAIN, max_tokens=32).partition
    assert a is not None and a == b  # the question is not part of the partition
    assert request(RESET, FRENCH, max_tokens=32).partition != a


@pytest.mark.parametrize(
    "other",
    [
        {"temperature": 0.7, "seed": 1},
        {"stop": ["\n"]},
        {"presence_penalty": 0.5},
        {"frequency_penalty": 0.5},
        {"model": "another"},
    ],
)
def test_a_parameter_that_changes_the_content_makes_another_partition(
    other: dict[str, Any],
) -> None:
    base = request(RESET, max_tokens=32)
    doc: dict[str, Any] = {
        "model": M,
        "messages": [{"role": "system", "content": DESK}, {"role": "user", "content": RESET}],
        "max_tokens": 32,
        **other,
    }
    moved = parse_chat(doc, ChatDefaults(M, max_tokens=8))
    assert moved.partition is not None and moved.partition.name != base.partition.name  # type: ignore[union-attr]


def test_a_server_without_partitions_keeps_the_exact_repeat_rule() -> None:
    """eoc serve --no-partitions (ChatDefaults.partitions=False): as before partitions."""
    off = ChatDefaults(M, partitions=False)
    body = {
        "model": M,
        "messages": [{"role": "system", "content": DESK}, {"role": "user", "content": RESET}],
    }
    assert parse_chat(body, off).partition is None
    c = cascade()
    for question in (RESET, RESET_AGAIN):
        body["messages"][1]["content"] = question  # type: ignore[index]
        assert c.resolve(parse_chat(body, off).query()).stage.value == "neural"


def test_max_tokens_and_what_greedy_decoding_ignores_do_not_move_the_partition() -> None:
    base = request(RESET, max_tokens=32).partition
    assert base is not None
    for params in ({"max_tokens": 64}, {"max_tokens": 32, "seed": 7, "top_p": 0.5}):
        p = request(RESET, **params).partition
        assert p is not None and p.name == base.name


def test_sampled_requests_partition_by_their_seed_and_without_one_have_none() -> None:
    one = request(RESET, temperature=0.8, seed=1).partition
    two = request(RESET, temperature=0.8, seed=2).partition
    assert one is not None and two is not None and one.name != two.name
    assert request(RESET, temperature=0.8).partition is None  # each answer would differ


def test_follow_ups_completions_and_named_messages_are_in_no_partition() -> None:
    follow = parse_chat(
        {
            "model": M,
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"},
                {"role": "user", "content": RESET},
            ],
        },
        ChatDefaults(M),
    )
    assert follow.partition is None
    completion = parse_chat(
        {"model": M, "prompt": RESET, "max_tokens": 5}, ChatDefaults(M), kind="completion"
    )
    assert completion.partition is None
    named = parse_chat(
        {"model": M, "messages": [{"role": "user", "content": RESET, "name": "ann"}]},
        ChatDefaults(M),
    )
    assert named.partition is None


# -- what kv serves ----------------------------------------------------------------------------


def test_a_paraphrase_in_the_same_partition_gets_the_models_answer_from_kv() -> None:
    model = Model()
    c = cascade(model)
    assert ask(c, RESET, max_tokens=32) == ("neural", ANSWER)
    assert ask(c, RESET_AGAIN, max_tokens=32) == ("kv", ANSWER)
    assert ask(c, "How do I reset my router", max_tokens=32) == ("kv", ANSWER)  # exact key
    assert model.calls == 1


def test_another_system_prompt_never_sees_the_answer() -> None:
    model = Model()
    c = cascade(model)
    ask(c, RESET, max_tokens=32)
    assert ask(c, RESET, FRENCH, max_tokens=32)[0] == "neural"  # not even the same words
    assert ask(c, RESET_AGAIN, "Answer in JSON.", max_tokens=32)[0] == "neural"


def test_plain_questions_and_partitions_do_not_mix() -> None:
    model = Model({RESET: ANSWER, "Why is the sky blue?": "Rayleigh scattering."})
    c = cascade(model)
    ask(c, RESET, max_tokens=32)
    assert ask(c, RESET_AGAIN, None)[0] == "neural"  # the plain question does not get it
    assert ask(c, "Why is the sky blue?", None)[0] == "neural"
    assert ask(c, "why is the sky blue", None)[0] in ("cache", "kv")  # shared as before
    assert ask(c, "why is the sky blue", max_tokens=32)[0] == "neural"  # a partition does not


def test_an_answer_that_stopped_serves_any_max_tokens_it_fits_in() -> None:
    model = Model(tokens=9)
    c = cascade(model)
    ask(c, RESET, max_tokens=32)
    assert ask(c, RESET_AGAIN, max_tokens=200)[0] == "kv"  # more room: it would stop there too
    assert ask(c, RESET_AGAIN, max_tokens=9)[0] == "kv"
    assert ask(c, RESET_AGAIN, max_tokens=8)[0] == "neural"  # it would have been cut


def test_an_answer_cut_by_length_serves_only_the_same_question_and_max_tokens() -> None:
    """A cut answer is never reused for a paraphrase (issue 34: the model might have said it
    in fewer words), only for its own question (the kv's exact path: case and spaces aside)
    with the same max_tokens."""
    model = Model(finish="length", tokens=32)
    c = cascade(model)
    ask(c, RESET, max_tokens=32)
    same = "  " + RESET.upper() + " "
    assert ask(c, same, max_tokens=32)[0] == "kv"
    assert ask(c, RESET_AGAIN, max_tokens=32)[0] == "neural"  # a paraphrase: never
    assert ask(c, same, max_tokens=64)[0] == "neural"  # it would have gone on
    model2 = Model(finish="length", tokens=32)
    c2 = cascade(model2)
    ask(c2, RESET, max_tokens=32)
    assert ask(c2, same, max_tokens=16)[0] == "neural"  # it would have been cut sooner


def test_a_replay_from_a_partition_keeps_its_finish_reason() -> None:
    c = cascade(Model(finish="length", tokens=32))
    ask(c, RESET, max_tokens=32)
    r = c.resolve(request(RESET.lower(), max_tokens=32).query())
    assert r.stage.value == "kv" and r.generation is not None
    assert r.generation.finish_reason == "length" and r.generation.tokens == (5, 32)


def test_an_answer_of_unknown_finish_is_never_served_to_a_paraphrase() -> None:
    """A server that says neither why it stopped nor how many tokens it wrote: the answer may
    have been cut, so it is kept for its own question only."""
    c = cascade(Model(finish=None, tokens=None))
    ask(c, RESET, max_tokens=4)
    assert ask(c, RESET_AGAIN, max_tokens=4)[0] == "neural"
    assert ask(c, RESET_AGAIN, max_tokens=256)[0] == "neural"


def test_another_model_on_the_same_kv_does_not_serve_the_answer() -> None:
    kv = KVStage()
    first = cascade(Model(), kv)
    ask(first, RESET, max_tokens=32)
    other = Model()
    other.origin = '{"model":"another"}'
    second = Cascade([CacheStage(), kv, small_stages()[2], NeuralStage(other)])  # type: ignore[list-item]
    assert ask(second, RESET_AGAIN, max_tokens=32)[0] == "neural"


def test_a_follow_up_keeps_the_exact_repeat_rule() -> None:
    model = Model()
    c = cascade(model)
    turns = [("user", "hi"), ("assistant", "hello"), ("user", RESET)]
    body = {"model": M, "messages": [{"role": r, "content": t} for r, t in turns]}
    q = parse_chat(body, ChatDefaults(M)).query()
    assert c.resolve(q).stage.value == "neural"
    assert len(c.stages[1]) == 2  # type: ignore[arg-type]  # the two facts: nothing offered
    assert ask(c, RESET_AGAIN, None)[0] == "neural"
    turns[-1] = ("user", RESET_AGAIN)
    body = {"model": M, "messages": [{"role": r, "content": t} for r, t in turns]}
    assert c.resolve(parse_chat(body, ChatDefaults(M)).query()).stage.value == "neural"


# -- facts under a system prompt -------------------------------------------------------------


def test_facts_under_a_system_prompt_only_where_the_operator_allows() -> None:
    c = cascade()
    assert ask(c, "capital of France?", max_tokens=32)[0] == "neural"
    assert ask(c, "what is 2+2?", max_tokens=32)[0] == "neural"
    c = cascade()
    assert ask(c, "capital of France?", max_tokens=32, facts=True) == ("graph", "Paris")
    assert ask(c, "what is 2+2?", max_tokens=32, facts=True) == ("kv", "4")


def test_a_fact_answers_at_any_temperature_or_seed_and_within_max_tokens_only() -> None:
    c = cascade()
    for params in ({"temperature": 0.9}, {"temperature": 0.9, "seed": 3}, {"max_tokens": 6}):
        assert ask(c, "capital of France?", facts=True, **params) == ("graph", "Paris"), params
    assert ask(c, "capital of France?", facts=True, max_tokens=5)[0] == "neural"  # 6 at most


def test_a_request_no_fact_may_answer_never_asks_the_graph() -> None:
    """Its work is not spent: under a system prompt without --facts-under-system-prompts only
    the cache and kv (its own partition) are asked before the model."""
    asked: list[str] = []

    class Counting(GraphStage):
        def lookup(self, query: Query) -> Any:
            asked.append(query.prompt)
            return super().lookup(query)

    stages = small_stages(Model())
    stages[2] = Counting(TripleStore([("France", "capital", "Paris")]))
    c = Cascade(stages)
    assert ask(c, "capital of France?", max_tokens=32)[0] == "neural" and asked == []
    assert ask(c, "capital of Japan?", max_tokens=32, facts=True)[0] != "graph"
    assert asked == ["capital of Japan?"]


def test_a_partition_does_not_get_the_shared_partitions_model_answers_as_facts() -> None:
    model = Model({"Why is the sky blue?": "Rayleigh scattering."})
    c = cascade(model)
    ask(c, "Why is the sky blue?", None)  # a plain question's model answer: shared partition
    assert ask(c, "why is the sky blue", facts=True, max_tokens=32)[0] == "neural"


# -- the kv stage alone ---------------------------------------------------------------------


def test_the_kv_refuses_a_tag_it_does_not_make() -> None:
    kv = KVStage()
    with pytest.raises(InvalidText):
        kv.put(RESET, ANSWER, partition="(p:not-a-tag)")
    with pytest.raises(InvalidText):
        tag_of("(p:zz) reset")
    assert checked_tag("") == "" and unkeyed(keyed("(p:" + "a" * 24 + ")", "x y")) == "x y"


def test_no_plain_key_opens_like_a_partitions_key() -> None:
    from eoc.text.forms import normalize

    for text in ["(p:" + "a" * 24 + ") reset", " (p:x) hi", "（p:x) hi", "[(p:x) hi"]:
        assert tag_of(normalize(text)) == SHARED


def test_a_kv_that_keeps_no_partitions_is_neither_asked_nor_offered() -> None:
    class OldKV(KVStage):
        keeps_partitions = False

    kv = OldKV()
    model = Model()
    c = cascade(model, kv)
    ask(c, RESET, max_tokens=32)
    assert len(kv) == 1  # only the pair put by cascade(): the answer was not offered
    assert ask(c, RESET_AGAIN, max_tokens=32)[0] == "neural"


def test_forgetting_a_question_forgets_it_in_every_partition() -> None:
    c = cascade()
    ask(c, RESET, max_tokens=32)
    ask(c, RESET, FRENCH, max_tokens=32)
    kv = c.stages[1]
    assert forget_in(None, kv, forget_of(RESET, "kv"))["kv"] == 2


def test_explain_lists_only_the_querys_partition() -> None:
    c = cascade()
    ask(c, RESET, max_tokens=32)
    kv = c.stages[1]
    assert isinstance(kv, KVStage)
    plain = kv.explain(Query(RESET_AGAIN))
    assert all(row["stored"] != RESET for row in plain)
    mine = kv.explain(request(RESET_AGAIN, max_tokens=32).query())
    assert mine and mine[0]["stored"] == RESET and mine[0]["served"]


# -- stores ------------------------------------------------------------------------------------


def stored_cascade(path: Path, model: Model) -> Cascade:
    graph = GraphStage(TripleStore([("France", "capital", "Paris")]))
    return Cascade([SqliteCache(path), SqliteKV(path), graph, NeuralStage(model)])


def test_a_sqlite_store_keeps_the_partition_across_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "answers.db"
    with stored_cascade(db, Model()) as c:
        ask(c, RESET, max_tokens=32)
    model = Model()
    with stored_cascade(db, model) as c:
        assert ask(c, RESET_AGAIN, max_tokens=32) == ("kv", ANSWER)
        assert ask(c, RESET_AGAIN, None)[0] == "neural"  # a plain question: not its partition
        assert ask(c, RESET_AGAIN, FRENCH, max_tokens=32)[0] == "neural"
    with closing(sqlite3.connect(db)) as conn:
        keys = [k for (k,) in conn.execute("SELECT key FROM kv")]
    assert any(k.startswith("(p:") and unkeyed(k) == "how do i reset my router" for k in keys)


def test_a_version_3_store_opens_as_the_current_version_with_every_row_shared(
    tmp_path: Path,
) -> None:
    db = tmp_path / "old.db"
    SqliteKV(db).close()
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE info")  # version 3's layout: no table info
    conn.execute("PRAGMA user_version = 3")
    conn.commit()
    conn.close()
    kv = SqliteKV(db)
    kv.put("why is the sky blue", "Rayleigh scattering.")
    kv.close()
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5


def test_a_row_whose_key_names_no_partition_is_damaged_not_served(tmp_path: Path) -> None:
    from eoc.store.sqlite_db import store_key
    from eoc.store.sqlite_schema import row_sum, summed

    db = tmp_path / "answers.db"
    kv = SqliteKV(db)
    kv.close()
    fields = ("(p:bogus) reset", RESET, ANSWER, "hashed", None, "")
    conn = sqlite3.connect(db)
    conn.execute(
        "INSERT INTO kv (key, prompt, payload, embedder, vector, origin, meta, checksum) "
        "VALUES (?, ?, ?, ?, ?, ?, '', ?)",
        (*fields, row_sum("kv", summed(fields, ""), store_key())),
    )
    conn.commit()
    conn.close()
    kv = SqliteKV(db)
    assert len(kv) == 0 and kv.damaged and "partition" in kv.damaged[0][2]
    kv.close()


def test_partition_tags_are_stable_text() -> None:
    p = Partition.of("{}", 48)
    assert p.open_tag == f"(p:{p.name})" and p.bounded_tag == f"(p:{p.name} max_tokens=48)"
    assert tag_of(keyed(p.bounded_tag, "reset my router")) == p.bounded_tag
