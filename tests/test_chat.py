"""Conversations and their cache keys (eoc.chat.request), and the cascade's rules for them."""

from __future__ import annotations

import pytest

from eoc import Cascade
from eoc.chat.request import MAX_MESSAGES, BadRequest, ChatDefaults, parse_chat
from eoc.errors import InputTooLarge, PromptTooLong
from eoc.query import Query, Stage
from eoc.testing import ScriptedBackend
from tests.helpers import small_stages

D = ChatDefaults("m", max_tokens=64)


def chat(*messages: tuple[str, str], **params: object) -> dict[str, object]:
    return {"model": "m", "messages": [{"role": r, "content": c} for r, c in messages], **params}


def key(doc: dict[str, object]) -> str:
    return parse_chat(doc, D).query().id


Q = ("user", "What is the capital of France?")


def test_a_plain_question_is_keyed_by_its_text_and_may_be_answered_by_kv_and_graph() -> None:
    r = parse_chat(chat(Q), D)
    assert r.plain and r.query().context is None
    assert r.query().id == Query(Q[1]).id  # shared with `eoc query` and the browser
    # the defaults spelled out are still the plain question
    same = chat(Q, max_tokens=64, temperature=0, top_p=0.5, seed=9, stream=True, user="u")
    assert key(same) == r.query().id


@pytest.mark.parametrize(
    "other",
    [
        chat(("system", "Answer in French."), Q),
        chat(("user", "Hi"), ("assistant", "Hello!"), Q),
        chat(Q, max_tokens=10),
        chat(Q, stop=["."]),
        chat(Q, temperature=0.5, seed=1),
        chat(Q, presence_penalty=0.5),
        {"model": "m", "prompt": Q[1]},  # a raw completion is another kind of request
    ],
)
def test_anything_that_changes_the_answer_changes_the_key(other: dict[str, object]) -> None:
    kind = "completion" if "prompt" in other else "chat"
    r = parse_chat(other, D, kind=kind)
    assert not r.plain
    q = r.query()
    assert q.context is not None and q.id != key(chat(Q))


def test_parameters_that_cannot_change_a_greedy_answer_are_not_in_the_key() -> None:
    base = chat(("system", "Be brief."), Q)
    assert key({**base, "top_p": 0.3, "seed": 4}) == key(base)
    assert key({**base, "temperature": 0.5, "seed": 1, "top_p": 0.3}) != key(
        {**base, "temperature": 0.5, "seed": 1, "top_p": 0.4}
    )
    # developer and system are the same role to a model
    assert key(chat(("developer", "Be brief."), Q)) == key(base)


def test_a_follow_up_never_shares_a_key_across_conversations() -> None:
    a = chat(
        ("user", "Tell me about France."),
        ("assistant", "France is..."),
        ("user", "And its population?"),
    )
    b = chat(
        ("user", "Tell me about Japan."),
        ("assistant", "Japan is..."),
        ("user", "And its population?"),
    )
    assert key(a) != key(b)
    assert parse_chat(a, D).question == parse_chat(b, D).question


def test_no_plain_prompt_can_take_a_contextual_key() -> None:
    r = parse_chat(chat(("system", "s"), Q), D)
    q = r.query()
    # even the context typed in as a question is another key (NUL separates them)
    assert Query(q.context + "\n" + Q[1]).id != q.id
    assert Query(q.context).id != q.id


def test_sampled_requests_without_a_seed_are_not_cacheable_unless_asked() -> None:
    assert not parse_chat(chat(Q, temperature=0.7), D).query().cacheable
    assert parse_chat(chat(Q, temperature=0.7, seed=3), D).query().cacheable
    loose = ChatDefaults("m", max_tokens=64, cache_sampled=True)
    assert parse_chat(chat(Q, temperature=0.7), loose).query().cacheable


@pytest.mark.parametrize(
    ("doc", "error", "words"),
    [
        ([], BadRequest, "JSON object"),
        ({"messages": [{"role": "user", "content": "hi"}]}, BadRequest, "model"),
        (chat(), BadRequest, "non-empty list"),
        (chat(("robot", "hi")), BadRequest, "role"),
        (chat(("user", "")), BadRequest, "empty"),
        (chat(("user", "a\x00b")), BadRequest, "control"),
        (chat(("system", "only a system prompt")), BadRequest, "last message"),
        (chat(Q, n=2), BadRequest, '"n"'),
        (chat(Q, temperature=3), BadRequest, "temperature"),
        (chat(Q, temperature="hot"), BadRequest, "temperature"),
        (chat(Q, top_p=0), BadRequest, "top_p"),
        (chat(Q, max_tokens=0), BadRequest, "max_tokens"),
        (chat(Q, max_tokens=True), BadRequest, "max_tokens"),
        (chat(Q, seed=-1), BadRequest, "seed"),
        (chat(Q, stop=["a", "b", "c", "d", "e"]), BadRequest, "stop"),
        (chat(Q, stop=[""]), BadRequest, "stop"),
        (chat(Q, tools=[{"type": "function"}]), BadRequest, "tools"),
        (chat(Q, logprobs=True), BadRequest, "logprobs"),
        (chat(Q, frobnicate=1), BadRequest, "frobnicate"),
        (chat(Q, stream="yes"), BadRequest, "stream"),
        (chat(("user", "x" * 20_000)), PromptTooLong, "limit"),
        (chat(*[("user", "hi")] * (MAX_MESSAGES + 1)), InputTooLarge, "messages"),
        (chat(*[("user", "y" * 16_000)] * 17), InputTooLarge, "bytes"),
        (
            {"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]},
            BadRequest,
            "an image) needs a model server behind eoc",
        ),
    ],
)
def test_bad_requests_are_refused_with_what_to_send(
    doc: object, error: type[Exception], words: str
) -> None:
    with pytest.raises(error) as info:
        parse_chat(doc, D)
    assert words in str(info.value)


def test_text_parts_are_joined() -> None:
    doc = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "What is 2+2"}]}],
    }
    assert parse_chat(doc, D).question == "What is 2+2"


# -- the cascade's rules ------------------------------------------------------------------


def cascade() -> tuple[Cascade, ScriptedBackend]:
    backend = ScriptedBackend()
    return Cascade(small_stages(backend)), backend


def test_a_plain_question_goes_through_every_stage() -> None:
    c, backend = cascade()
    r = c.resolve(parse_chat(chat(("user", "what is the capital of Japan")), D).query())
    assert r.stage is Stage.GRAPH and r.payload == "Tokyo"
    assert backend.calls == 0


def test_a_question_in_a_conversation_is_answered_by_the_cache_or_the_model_only() -> None:
    c, backend = cascade()
    doc = chat(("system", "Answer in one word."), ("user", "what is the capital of Japan"))
    first = c.resolve(parse_chat(doc, D).query())
    assert first.stage is Stage.NEURAL  # not the graph: the system prompt may change the answer
    assert backend.chats[-1].messages[0] == ("system", "Answer in one word.")
    again = c.resolve(parse_chat(doc, D).query())
    assert again.stage is Stage.CACHE and again.payload == first.payload
    # the model's answer in a conversation is not offered to kv for plain questions
    plain = c.resolve(parse_chat(chat(("user", "what is the capital of Japan")), D).query())
    assert plain.stage is Stage.GRAPH
    other = chat(("system", "Answer in French."), ("user", "what is the capital of Japan"))
    assert c.resolve(parse_chat(other, D).query()).stage is Stage.NEURAL


def test_a_conversational_answer_is_never_remembered_by_kv() -> None:
    c, _ = cascade()
    doc = chat(("user", "tell me a story"), ("assistant", "Once..."), ("user", "go on please"))
    c.resolve(parse_chat(doc, D).query())
    assert c.resolve(Query("go on please")).stage is Stage.NEURAL


def test_sampled_without_a_seed_is_neither_served_nor_stored() -> None:
    c, backend = cascade()
    doc = chat(("user", "tell me something new"), temperature=0.9)
    for _ in range(2):
        assert c.resolve(parse_chat(doc, D).query()).stage is Stage.NEURAL
    assert len(backend.chats) == 2
    assert c.cached(parse_chat(doc, D).query()) is None
    # a fact is the same at any temperature: kv answers it (eoc/followup.py), nothing is stored
    fact = chat(("user", "what is 2+2"), temperature=0.9)
    assert c.resolve(parse_chat(fact, D).query()).stage is Stage.KV
    assert c.cached(parse_chat(fact, D).query()) is None
    seeded = chat(("user", "pick a number"), temperature=0.9, seed=5)
    c.resolve(parse_chat(seeded, D).query())
    hit = c.cached(parse_chat(seeded, D).query())
    assert hit is not None and hit.stage is Stage.CACHE


def test_cached_asks_the_cache_only() -> None:
    c, backend = cascade()
    q = parse_chat(chat(("user", "what is 2+2")), D).query()
    assert c.cached(q) is None  # kv would answer, but cached() does not ask it
    c.resolve(q)
    hit = c.cached(q)
    assert hit is not None and hit.stage is Stage.CACHE and hit.payload == "4"
    assert backend.calls == 0


def test_streamed_pieces_reach_the_caller() -> None:
    c, _ = cascade()
    pieces: list[str] = []
    q = parse_chat(chat(("user", "say something new")), D).query(on_piece=pieces.append)
    r = c.resolve(q)
    assert "".join(pieces) == r.payload


def test_a_backend_without_chat_is_refused_a_conversation_plainly() -> None:
    from eoc.errors import BackendError
    from tests.helpers import ModelStandIn

    c = Cascade(small_stages(ModelStandIn()))
    # a plain question is what generate() answers
    plain = c.resolve(parse_chat(chat(("user", "something new")), D).query())
    assert plain.payload == "echo: something new"
    with pytest.raises(BackendError, match="single questions only"):
        c.resolve(parse_chat(chat(("system", "s"), ("user", "something new")), D).query())


def test_an_uncacheable_answer_is_not_remembered_even_if_the_backend_says_it_may_be() -> None:
    class Careless(ScriptedBackend):  # reports memoize=True whatever the sampling
        def chat(self, request, on_piece=None):  # type: ignore[no-untyped-def]
            return super().chat(request, on_piece)._replace(memoize=True)

    backend = Careless()
    c = Cascade(small_stages(backend))
    doc = chat(("user", "roll a die"), temperature=1.0)
    q = parse_chat(doc, D).query()
    assert c.resolve(q).stage is Stage.NEURAL
    same_key = Query(q.prompt, context=q.context)  # the same id, asked as cacheable
    assert same_key.id == q.id and c.cached(same_key) is None


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"max_tokens": 0, "max_completion_tokens": 5}, "max_tokens"),
        ({"logprobs": 0}, "logprobs"),
    ],
)
def test_every_field_is_checked_even_when_another_wins(
    extra: dict[str, object], words: str
) -> None:
    with pytest.raises(BadRequest, match=words):
        parse_chat({**chat(Q), **extra}, D)


def test_a_message_name_must_be_text() -> None:
    for bad in (5, "", "a b", "x" * 65):
        doc = {"model": "m", "messages": [{"role": "user", "content": "hi", "name": bad}]}
        with pytest.raises(BadRequest, match="name"):
            parse_chat(doc, D)


def test_a_message_name_is_part_of_the_key_and_handed_on() -> None:
    """``messages[].name`` was silently dropped: two requests that differ by it shared a key."""

    def named(name: str | None) -> dict[str, object]:
        msg: dict[str, object] = {"role": "user", "content": "who am I?"}
        if name is not None:
            msg["name"] = name
        return {"model": "m", "messages": [msg]}

    alice, bob, nobody = (parse_chat(named(n), D) for n in ("alice", "bob", None))
    assert len({alice.query().id, bob.query().id, nobody.query().id}) == 3
    assert nobody.plain and not alice.plain  # a name is not a plain question: kv never answers
    assert alice.as_messages() == [{"role": "user", "content": "who am I?", "name": "alice"}]
    assert nobody.as_messages() == [{"role": "user", "content": "who am I?"}]


def test_a_model_that_says_nothing_gives_an_empty_answer_never_remembered() -> None:
    from eoc.stages.neural import Reply

    class Silent(ScriptedBackend):
        def chat(self, request, on_piece=None):  # type: ignore[no-untyped-def]
            return Reply(" ", tokens_in=3, tokens_out=1)

    c = Cascade(small_stages(Silent()))
    q = parse_chat(chat(("user", "say nothing")), D).query()
    r = c.resolve(q)
    assert r.stage is Stage.NEURAL and r.payload == "" and r.tokens == (3, 1)
    assert c.cached(q) is None


def test_every_number_field_is_checked_at_the_bounds_the_field_table_documents() -> None:
    """parse_chat and the OpenAPI document read one table (eoc.chat.fields): a value at a
    documented bound is taken, one past it refused, and a field the table does not give a kind
    is unknown to it."""
    from eoc.chat.fields import FIELDS, fields_of, request_schema

    defaults = ChatDefaults("m")
    base = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    numbers = {n: s for n, (kinds, s) in FIELDS.items() if "maximum" in s and "chat" in kinds}
    assert set(numbers) >= {"temperature", "top_p", "seed", "max_tokens", "presence_penalty"}
    for name, schema in numbers.items():
        high = schema["maximum"]
        parse_chat({**base, name: high}, defaults)
        past = high + (1 if isinstance(high, int) else 0.5)
        with pytest.raises(BadRequest, match=name):
            parse_chat({**base, name: past}, defaults)
        if "minimum" in schema:
            parse_chat({**base, name: schema["minimum"]}, defaults)
            with pytest.raises(BadRequest, match=name):
                parse_chat({**base, name: schema["minimum"] - 1}, defaults)
    for kind in ("chat", "completion"):
        assert set(request_schema(kind)["properties"]) == fields_of(kind)
    with pytest.raises(BadRequest, match="unknown field 'prompt'"):
        parse_chat({**base, "prompt": "x"}, defaults)
