"""Forwarded requests (eoc.chat.request): what eoc does not answer itself goes to the upstream as sent,
and the caching rules for its replies (docs/gateway.md, "What is cached").

The rules: with an upstream, a request with tools, a tool choice, a response_format other than
text, ``n`` above 1, log-probs, a field eoc does not know, or a message it does not read is
forwarded; its key is its whole body but ``user``; the cache answers only the same request
again (greedy or seeded); kv and graph never answer it, nor does a plain question's answer.
Without an upstream such a request is refused, naming ``--upstream``.
"""

from __future__ import annotations

from typing import Any

import pytest

from eoc import Cascade
from eoc.chat.request import BadRequest, ChatDefaults, forwarded_embedding, parse_chat
from eoc.query import Query, Stage
from eoc.testing import ScriptedBackend
from tests.helpers import small_stages

D = ChatDefaults("m", max_tokens=64)
Q = "what is the capital of Japan"
TOOL = {"type": "function", "function": {"name": "capital", "parameters": {"type": "object"}}}
SCHEMA = {
    "type": "json_schema",
    "json_schema": {"name": "c", "schema": {"type": "object", "properties": {"city": {}}}},
}
FEATURES: dict[str, dict[str, Any]] = {
    "tools": {"tools": [TOOL]},
    "tool choice": {"tools": [TOOL], "tool_choice": "required"},
    "json mode": {"response_format": {"type": "json_object"}},
    "json schema": {"response_format": SCHEMA},
    "n": {"n": 2},
    "logprobs": {"logprobs": True, "top_logprobs": 2},
    "parallel tool calls": {"tools": [TOOL], "parallel_tool_calls": False},
    "an unknown field": {"logit_bias": {"42": -100}},
}


def body(**extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": Q}], **extra}


def key(doc: dict[str, Any]) -> str:
    return parse_chat(doc, D, forwards=True).query().id


@pytest.mark.parametrize("name", list(FEATURES))
def test_without_an_upstream_each_feature_is_refused_naming_the_way(name: str) -> None:
    with pytest.raises(BadRequest, match="--upstream"):
        parse_chat(body(**FEATURES[name]), D)


@pytest.mark.parametrize("name", list(FEATURES))
def test_with_an_upstream_each_feature_is_forwarded_as_sent(name: str) -> None:
    doc = body(temperature=0, **FEATURES[name])
    r = parse_chat(doc, D, forwards=True)
    assert r.forward is not None and r.body == doc
    q = r.query()
    assert q.context is not None and q.partition is None and not q.facts_ok and not r.plain


def test_messages_eoc_does_not_read_are_forwarded_too() -> None:
    turn = [
        {"role": "user", "content": Q},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "capital", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Tokyo"},
    ]
    doc = {"model": "m", "messages": turn, "tools": [TOOL], "temperature": 0}
    r = parse_chat(doc, D, forwards=True)
    assert r.forward is not None and r.messages[-1] == ("tool", "Tokyo")
    assert "capital" in r.texts()  # a tool call's name and arguments count in the estimate
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    seen = parse_chat(
        {"model": "m", "messages": [{"role": "user", "content": [image]}]}, D, forwards=True
    )
    assert seen.forward is not None and seen.query().prompt  # no text: still a valid query
    with pytest.raises(BadRequest, match="an image"):
        parse_chat({"model": "m", "messages": [{"role": "user", "content": [image]}]}, D)


def test_the_tools_the_schema_and_every_parameter_are_part_of_the_key() -> None:
    base = key(body(temperature=0, tools=[TOOL]))
    other_tool = {**TOOL, "function": {**TOOL["function"], "name": "population"}}
    assert key(body(temperature=0, tools=[other_tool])) != base
    assert key(body(temperature=0, tools=[TOOL], tool_choice="required")) != base
    assert key(body(temperature=0, tools=[TOOL], max_tokens=9)) != base
    assert key(body(temperature=0, tools=[TOOL], stream=True)) != base  # kept as its events
    json_mode = key(body(temperature=0, response_format={"type": "json_object"}))
    assert key(body(temperature=0, response_format=SCHEMA)) != json_mode
    other_schema = {**SCHEMA, "json_schema": {**SCHEMA["json_schema"], "name": "d"}}
    assert key(body(temperature=0, response_format=other_schema)) != key(
        body(temperature=0, response_format=SCHEMA)
    )
    assert key(body(temperature=0, n=2)) != key(body(temperature=0, n=3))
    assert key(body(temperature=0, tools=[TOOL], model="n")) != base
    # who asks changes no reply
    assert key(body(temperature=0, tools=[TOOL], user="alice")) == base
    # nor does the order the client wrote the fields in
    assert key(dict(reversed(list(body(temperature=0, tools=[TOOL]).items())))) == base


def test_a_forwarded_key_is_never_a_plain_questions() -> None:
    forwarded = parse_chat(body(temperature=0, tools=[TOOL]), D, forwards=True).query()
    assert forwarded.id != Query(Q).id
    assert forwarded.id != parse_chat(body(temperature=0), D).query().id


def test_only_a_repeatable_forwarded_request_is_remembered() -> None:
    # no temperature: the upstream samples at its own default, unknown here
    assert not parse_chat(body(tools=[TOOL]), D, forwards=True).query().cacheable
    assert not parse_chat(body(tools=[TOOL], temperature=0.7), D, forwards=True).query().cacheable
    assert parse_chat(body(tools=[TOOL], temperature=0.7, seed=3), D, forwards=True).repeatable
    assert parse_chat(body(tools=[TOOL], temperature=0), D, forwards=True).query().cacheable
    loose = ChatDefaults("m", cache_sampled=True)
    assert parse_chat(body(tools=[TOOL]), loose, forwards=True).query().cacheable
    # an embedding is the same each time
    assert forwarded_embedding({"model": "e", "input": "hi"}, D).query().cacheable


def test_the_worst_case_counts_every_choice() -> None:
    r = parse_chat(body(temperature=0, n=3, max_tokens=20), D, forwards=True)
    assert r.max_tokens == 60


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"n": 0}, '"n"'),
        ({"n": True}, '"n"'),
        ({"stream": "yes", "tools": [TOOL]}, "stream"),
        ({"temperature": "hot", "tools": [TOOL]}, "temperature"),
        ({"user": 5, "tools": [TOOL]}, "user"),
    ],
)
def test_what_eoc_reads_of_a_forwarded_request_is_still_checked(
    extra: dict[str, Any], words: str
) -> None:
    with pytest.raises(BadRequest, match=words):
        parse_chat(body(**extra), D, forwards=True)
    with pytest.raises(BadRequest, match="messages"):
        parse_chat({"model": "m", "messages": [], "tools": [TOOL]}, D, forwards=True)
    with pytest.raises(BadRequest, match="role"):
        parse_chat(
            {"model": "m", "messages": [{"content": "x"}], "tools": [TOOL]}, D, forwards=True
        )


def test_kv_and_graph_never_answer_a_forwarded_request_nor_a_plain_answer() -> None:
    backend = ScriptedBackend()
    c = Cascade(small_stages(backend))
    # the graph knows the answer to the plain question
    assert c.resolve(parse_chat(body(), D).query()).stage is Stage.GRAPH
    for name, extra in FEATURES.items():
        r = c.resolve(parse_chat(body(temperature=0, **extra), D, forwards=True).query())
        assert r.stage is Stage.NEURAL, name
    assert len(backend.chats) == len(FEATURES)
    assert all(chat.forward is not None for chat in backend.chats)
    # the same request again is the cache's; a plain question still the graph's
    again = c.resolve(parse_chat(body(temperature=0, tools=[TOOL]), D, forwards=True).query())
    assert again.stage is Stage.CACHE
    plain = c.resolve(parse_chat(body(), D).query())
    assert plain.stage is Stage.CACHE and plain.payload == "Tokyo"  # the graph's, remembered


def test_a_forwarded_reply_is_judged_for_loops_by_what_the_model_wrote() -> None:
    from eoc.stages.neural import Reply

    class Relay(ScriptedBackend):
        """Replies as a forwarding backend does: the whole body, and what the model wrote."""

        def __init__(self, body: str, wrote: str) -> None:
            super().__init__()
            self.reply = Reply(body, finish_reason="stop", content=wrote)

        def chat(self, request: Any, on_piece: Any = None) -> Reply:
            return self.reply

    # a body of many log-probs repeats its keys; the model's words do not loop
    whole = '{"logprobs": [' + ", ".join(['{"token": "x", "logprob": -1}'] * 40) + "]}"
    doc = body(temperature=0, logprobs=True)
    c = Cascade(small_stages(Relay(whole, "A short, fine answer.")))
    first = c.resolve(parse_chat(doc, D, forwards=True).query())
    assert first.stage is Stage.NEURAL and first.payload == whole
    assert c.resolve(parse_chat(doc, D, forwards=True).query()).stage is Stage.CACHE
    # words that loop are never kept, whatever the body around them
    looped = Cascade(small_stages(Relay('{"a": 1}', "so so so so so so so so so so so so")))
    looped.resolve(parse_chat(doc, D, forwards=True).query())
    assert looped.resolve(parse_chat(doc, D, forwards=True).query()).stage is Stage.NEURAL
