"""`eoc serve --upstream` as a gateway apps adopt as they are (issue 37's done-when).

A real llama.cpp server (llama-cpp-python over SmolLM2-135M, embeddings on) sits behind
`eoc serve --upstream`, and the official `openai` SDK asks both: a tool-call round trip, JSON
mode, ``n=2`` and log-probs, each whole and streamed, and embeddings (single, list, base64),
each through eoc and directly. The replies must be the same but for what differs between any two
calls (each reply's ``id`` and ``created``); repeats come from eoc's cache byte for byte; a
restart keeps the server's answers; the access log has a line for each request.
"""

from __future__ import annotations

import base64
import json
import re
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("uvicorn")

import httpx
import openai

from tests.llama_server import running_llama_server
from tests.native.serving import EocServe
from tests.native.smollm2 import needs_smollm2

pytestmark = needs_smollm2

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
FORCED = {"type": "function", "function": {"name": "get_weather"}}
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]
ALIAS = "smol"
LOG_LINE = re.compile(
    r'eoc serve: 127\.0\.0\.1 "POST (?P<path>/v1/[a-z/]+)" (?P<status>\d{3}) '
    r"(?:(?P<stage>cache|kv|graph|neural|mixed) (?P<uj>[\d,]+) µJ (?:estimated|measured)|-) "
    r"[\d.]+ ms [0-9a-f]{32}"
)


class Gateway:
    def __init__(self, upstream: str, upstream_id: str, eoc: EocServe) -> None:
        self.upstream = upstream
        self.upstream_id = upstream_id
        self.eoc = eoc
        self.via = openai.OpenAI(base_url=eoc.base + "/v1", api_key="none", max_retries=0)
        self.direct = openai.OpenAI(base_url=upstream, api_key="none", max_retries=0)

    def both(self, **kw: Any) -> tuple[Any, Any]:
        """The same chat call through eoc (naming the alias) and directly (the upstream's id)."""
        self.reset()
        mine = self.via.chat.completions.with_raw_response.create(model=ALIAS, **kw)
        self.reset()
        theirs = self.direct.chat.completions.with_raw_response.create(model=self.upstream_id, **kw)
        return mine, theirs

    def reset(self) -> None:
        """Leave the upstream's context holding nothing a chat prompt starts with.

        llama.cpp reuses the longest prefix its context shares with the last prompt and reads
        only the rest, and a token read in a smaller batch gets slightly other logits, which
        can change a greedy reply. So each call compared starts from the same state."""
        httpx.post(
            self.upstream + "/completions",
            json={"model": self.upstream_id, "prompt": "0", "max_tokens": 1},
            timeout=60,
        ).raise_for_status()


def same(a: Any) -> Any:
    """A reply without what differs between any two calls: each ``id`` (a reply's, a tool
    call's) and ``created``."""
    if isinstance(a, dict):
        return {k: same(v) for k, v in a.items() if k not in ("id", "created")}
    if isinstance(a, list):
        return [same(v) for v in a]
    return a


def events(text: str) -> list[Any]:
    """The JSON events of a streamed reply (``[DONE]`` and comments left out)."""
    out = []
    for block in text.split("\n\n"):
        for line in block.splitlines():
            if line.startswith("data: ") and line != "data: [DONE]":
                out.append(json.loads(line[6:]))
    return out


def verdict_comment(text: str) -> dict[str, Any]:
    found = [line for line in text.splitlines() if line.startswith(": eoc ")]
    assert len(found) == 1, text[-400:]
    return json.loads(found[0][6:])  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    store = tmp_path_factory.mktemp("gateway") / "store.sqlite"
    with running_llama_server(None, 1024, "--embedding", "true") as upstream:
        upstream_id = httpx.get(upstream + "/models").json()["data"][0]["id"]
        eoc = EocServe(
            "--upstream",
            upstream,
            "--model-id",
            "smol-upstream",
            "--model-alias",
            f"{ALIAS}={upstream_id}",
            "--store",
            str(store),
            model=ALIAS,
        )
        try:
            yield Gateway(upstream, upstream_id, eoc)
        finally:
            eoc.stop()


def test_a_tool_call_round_trip_through_eoc_is_the_direct_one(gw: Gateway) -> None:
    mine, theirs = gw.both(
        messages=ASK, tools=[WEATHER], tool_choice=FORCED, temperature=0, max_tokens=40
    )
    assert same(json.loads(mine.http_response.text)) == same(json.loads(theirs.http_response.text))
    call = mine.parse().choices[0].message.tool_calls[0]
    assert call.function.name == "get_weather" and json.loads(call.function.arguments)
    assert mine.headers["x-eoc-stage"] == "neural"
    assert mine.headers["x-eoc-provenance"] == "estimated"  # a remote model: never measured here
    # the tool's result goes back, and the model answers in words
    turn = [
        *ASK,
        # content "": llama-cpp-python's server takes no null content
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": call.id, "type": "function", "function": call.function.model_dump()}
            ],
        },
        {"role": "tool", "tool_call_id": call.id, "content": '{"temp_c": 18, "sky": "clear"}'},
    ]
    final, direct = gw.both(
        messages=turn, tools=[WEATHER], tool_choice="none", temperature=0, max_tokens=24
    )
    assert final.http_response.status_code == 200
    assert same(json.loads(final.http_response.text)) == same(json.loads(direct.http_response.text))
    assert final.parse().choices[0].message.content
    # the same request again is the same tool call, from the cache, byte for byte
    again = gw.via.chat.completions.with_raw_response.create(
        model=ALIAS, messages=ASK, tools=[WEATHER], tool_choice=FORCED, temperature=0, max_tokens=40
    )
    assert again.headers["x-eoc-stage"] == "cache"
    assert again.http_response.content == mine.http_response.content
    # another tool list is another request: asked afresh, never the stored call
    other = {**WEATHER, "function": {**WEATHER["function"], "name": "get_forecast"}}
    changed = gw.via.chat.completions.with_raw_response.create(
        model=ALIAS,
        messages=ASK,
        tools=[other],
        tool_choice={"type": "function", "function": {"name": "get_forecast"}},
        temperature=0,
        max_tokens=40,
    )
    assert changed.headers["x-eoc-stage"] == "neural"
    assert changed.parse().choices[0].message.tool_calls[0].function.name == "get_forecast"


CALLS = {
    "tools": {"messages": ASK, "tools": [WEATHER], "tool_choice": FORCED, "max_tokens": 40},
    "json mode": {
        "messages": [{"role": "user", "content": "Give a JSON object with a key colour."}],
        "response_format": {"type": "json_object"},
        "max_tokens": 30,
    },
    "n=2": {"messages": [{"role": "user", "content": "Say hi."}], "n": 2, "max_tokens": 8},
    "logprobs": {
        "messages": [{"role": "user", "content": "Say hi."}],
        "logprobs": True,
        "top_logprobs": 2,
        "max_tokens": 4,
    },
}


@pytest.mark.parametrize("name", list(CALLS))
def test_each_feature_whole_and_streamed_is_the_direct_reply(gw: Gateway, name: str) -> None:
    kw = {**CALLS[name], "temperature": 0}
    mine, theirs = gw.both(**kw)
    assert mine.http_response.status_code == 200, mine.http_response.text
    assert same(json.loads(mine.http_response.text)) == same(json.loads(theirs.http_response.text))
    if name == "json mode":
        assert isinstance(json.loads(mine.parse().choices[0].message.content), dict)
    if name == "logprobs":
        assert mine.parse().choices[0].logprobs.content[0].top_logprobs
    # streamed: the upstream's events as they came, then eoc's verdict as an SSE comment
    streams = []
    for client, model in ((gw.via, ALIAS), (gw.direct, gw.upstream_id)):
        gw.reset()
        with client.chat.completions.with_streaming_response.create(
            model=model, stream=True, **kw
        ) as r:
            streams.append(r.read().decode())
    mine_s, theirs_s = streams
    assert [same(e) for e in events(mine_s)] == [same(e) for e in events(theirs_s)]
    assert len(events(mine_s)) > 1
    said = verdict_comment(mine_s)
    assert said["stage"] == "neural" and said["cost"]["provenance"] == "estimated"
    # and the SDK reads eoc's stream as it reads the upstream's
    chunks = list(gw.via.chat.completions.create(model=ALIAS, stream=True, **kw))
    assert [same(c.model_dump(exclude_unset=True)) for c in chunks] == [
        same(e) for e in events(theirs_s)
    ]


def test_a_sampled_forwarded_request_is_never_answered_from_the_cache(gw: Gateway) -> None:
    kw = {"messages": [{"role": "user", "content": "Name a fruit."}], "n": 2, "max_tokens": 6}
    first = gw.via.chat.completions.with_raw_response.create(model=ALIAS, **kw)
    again = gw.via.chat.completions.with_raw_response.create(model=ALIAS, **kw)
    # no temperature: the upstream samples at its own default, so each reply may differ
    assert first.headers["x-eoc-stage"] == again.headers["x-eoc-stage"] == "neural"


def test_a_plain_answer_is_never_served_for_a_json_mode_request(gw: Gateway) -> None:
    text = "Which colour is the sky on a clear day?"
    plain = gw.via.chat.completions.with_raw_response.create(
        model=ALIAS, messages=[{"role": "user", "content": text}], temperature=0, max_tokens=12
    )
    assert plain.headers["x-eoc-stage"] == "neural"
    json_mode = gw.via.chat.completions.with_raw_response.create(
        model=ALIAS,
        messages=[{"role": "user", "content": text}],
        temperature=0,
        max_tokens=12,
        response_format={"type": "json_object"},
    )
    assert json_mode.headers["x-eoc-stage"] == "neural"
    assert json_mode.http_response.content != plain.http_response.content


def test_what_the_upstream_refuses_is_said_with_its_reason(gw: Gateway) -> None:
    # llama-cpp-python answers a body it cannot validate with 500 (a 400, 413 or 422 from an
    # upstream is relayed with its own status: tests/native/test_remote.py)
    bad = httpx.post(
        gw.eoc.base + "/v1/chat/completions",
        json={"model": ALIAS, "messages": ASK, "tools": "not a list"},
        timeout=30,
    )
    assert bad.status_code == 502
    said = bad.json()["error"]["message"]
    assert "HTTP 500" in said and "validation error" in said


def _floats(b64: str) -> list[float]:
    raw = base64.b64decode(b64)
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def test_minilm_embeddings_in_openais_shape_and_remembered(gw: Gateway) -> None:
    one = gw.via.embeddings.with_raw_response.create(
        model="all-MiniLM-L6-v2", input="The cat sat on the mat."
    )
    got = one.parse()
    vector = got.data[0].embedding
    assert len(vector) == 384 and abs(sum(v * v for v in vector) - 1) < 1e-4
    assert got.usage.prompt_tokens == got.usage.total_tokens > 0
    assert one.headers["x-eoc-stage"] == "neural"
    verdicts = json.loads(one.http_response.text)["eoc"]["answers"]
    assert len(verdicts) == 1 and verdicts[0]["receipt"]
    listed = gw.via.embeddings.with_raw_response.create(
        model="all-MiniLM-L6-v2", input=["The cat sat on the mat.", "A dog ran in the park."]
    )
    # the first text again is the stored vector; the second is new
    assert listed.headers["x-eoc-stage"] == "mixed"
    stages = [v["stage"] for v in json.loads(listed.http_response.text)["eoc"]["answers"]]
    assert stages == ["cache", "neural"]
    both = listed.parse().data
    assert both[0].embedding == vector and both[1].index == 1 and len(both[1].embedding) == 384
    packed = httpx.post(
        gw.eoc.base + "/v1/embeddings",
        json={
            "model": "all-MiniLM-L6-v2",
            "input": "A dog ran in the park.",
            "encoding_format": "base64",
        },
        timeout=30,
    )
    assert packed.headers["x-eoc-stage"] == "cache"
    assert _floats(packed.json()["data"][0]["embedding"]) == both[1].embedding
    refused = httpx.post(
        gw.eoc.base + "/v1/embeddings",
        json={"model": "all-MiniLM-L6-v2", "input": "x", "dimensions": 128},
        timeout=30,
    )
    assert refused.status_code == 400 and "384" in refused.json()["error"]["message"]


@pytest.mark.parametrize(
    "kw",
    [
        {"input": "The cat sat on the mat."},
        {"input": ["The cat sat.", "A dog ran."]},
        {"input": "The cat sat on the mat.", "encoding_format": "base64"},
    ],
    ids=["single", "list", "base64"],
)
def test_other_embedding_models_are_the_upstreams_own(gw: Gateway, kw: dict[str, Any]) -> None:
    mine = httpx.post(gw.eoc.base + "/v1/embeddings", json={"model": ALIAS, **kw}, timeout=60)
    theirs = httpx.post(
        gw.upstream + "/embeddings", json={"model": gw.upstream_id, **kw}, timeout=60
    )
    assert mine.status_code == theirs.status_code == 200
    assert same(mine.json()) == same(theirs.json())
    again = httpx.post(gw.eoc.base + "/v1/embeddings", json={"model": ALIAS, **kw}, timeout=60)
    assert again.headers["x-eoc-stage"] == "cache" and again.content == mine.content
    # through the SDK too (it asks for base64 and decodes it itself)
    sdk = gw.via.embeddings.create(model=ALIAS, input=kw["input"])
    assert len(sdk.data) == (1 if isinstance(kw["input"], str) else 2)


def test_the_access_log_has_a_line_for_each_request(gw: Gateway) -> None:
    before = gw.eoc.output(whole=True).count("\neoc serve: 127.0.0.1 ")
    gw.via.chat.completions.create(
        model=ALIAS, messages=[{"role": "user", "content": "Say hi."}], temperature=0, max_tokens=4
    )
    httpx.get(gw.eoc.base + "/v1/models", timeout=10)
    httpx.post(gw.eoc.base + "/v1/chat/completions", json={"model": "nobody"}, timeout=10)
    log = gw.eoc.output(whole=True)
    lines = [line for line in log.splitlines() if line.startswith("eoc serve: 127.0.0.1 ")]
    assert len(lines) == before + 3, log[-2000:]
    last = lines[-3:]
    chat = LOG_LINE.fullmatch(last[0])
    assert chat and chat["path"] == "/v1/chat/completions" and chat["stage"] in ("neural", "cache")
    assert '"GET /v1/models" 200 - ' in last[1]
    missing = LOG_LINE.fullmatch(last[2])
    assert missing and missing["status"] == "404" and missing["stage"] is None
    # every request line of the whole run reads the same way
    assert all(LOG_LINE.fullmatch(line) or '"GET ' in line for line in lines)


def test_a_restarted_server_keeps_its_answers(gw: Gateway, tmp_path: Path) -> None:
    # no --store: the per-user store ($XDG_DATA_HOME/eoc/store.sqlite), as eoc query's
    args = ("--upstream", gw.upstream, "--model-id", "smol-upstream")
    tool = {"messages": ASK, "tools": [WEATHER], "tool_choice": FORCED, "max_tokens": 40}
    first = EocServe(*args, model="smol-upstream")
    try:
        assert "store memory" not in first.output() and "eoc/store.sqlite" in first.output()
        a = first.ask("Write one word about the sea.")
        c = openai.OpenAI(base_url=first.base + "/v1", api_key="none", max_retries=0)
        t = c.chat.completions.with_raw_response.create(
            model="smol-upstream", temperature=0, **tool
        )
        assert a.headers["x-eoc-stage"] == t.headers["x-eoc-stage"] == "neural"
    finally:
        first.stop()
    second = EocServe(*args, model="smol-upstream")
    try:
        b = second.ask("Write one word about the sea.")
        assert b.headers["x-eoc-stage"] == "cache"
        assert b.json()["choices"] == a.json()["choices"]
        c = openai.OpenAI(base_url=second.base + "/v1", api_key="none", max_retries=0)
        u = c.chat.completions.with_raw_response.create(
            model="smol-upstream", temperature=0, **tool
        )
        assert u.headers["x-eoc-stage"] == "cache"
        assert u.http_response.content == t.http_response.content
    finally:
        second.stop()
    memory = EocServe(*args, "--store", ":memory:", "--quiet", model="smol-upstream")
    try:
        assert "store memory" in memory.output()
        assert memory.ask("Write one word about the sea.").headers["x-eoc-stage"] == "neural"
        assert "eoc serve: 127.0.0.1 " not in memory.output(whole=True)  # --quiet: no lines
    finally:
        memory.stop()
