"""eoc serve and remembered answers: a replay carries the finish reason and usage the model
reported (JSON and streamed), and POST /v1/eoc/forget forgets them, for admin keys only."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

pytest.importorskip("starlette")

from eoc import behind
from eoc.cascade import Cascade
from eoc.chat.request import ChatDefaults
from eoc.stages import CacheStage, KVStage, NeuralStage, Reply
from eoc_native.serve.app import ServeConfig, create_app
from eoc_native.serve.keys import ApiKeys, new_key
from tests.helpers import ModelStandIn, small_stages
from tests.native.serving import serving

MODEL = "cut"


class Cut:
    """A model that fills its max_tokens: it stopped for length."""

    name = "cut"
    runs_model = True
    max_tokens = 8

    def generate(self, prompt: str) -> Reply:
        return Reply("a long answer cut", tokens_in=6, tokens_out=8)


def make_app(**kwargs: Any) -> Any:
    stages = [*small_stages()[:-1], NeuralStage(Cut())]
    config = ServeConfig(MODEL, ChatDefaults(MODEL, max_tokens=8))
    return create_app(Cascade(stages), config, **kwargs)


def ask(text: str, **params: Any) -> dict[str, Any]:
    return {"model": MODEL, "messages": [{"role": "user", "content": text}], **params}


def _events(body: str) -> list[dict[str, Any]]:
    out = []
    for line in body.splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            out.append(orjson.loads(line[6:]))
    return out


def test_a_replay_says_length_and_the_usage_it_was_made_with() -> None:
    with serving(make_app()) as url:
        first = httpx.post(url + "/v1/chat/completions", json=ask("tell me about rivers")).json()
        again = httpx.post(url + "/v1/chat/completions", json=ask("tell me about rivers")).json()
        streamed = httpx.post(
            url + "/v1/chat/completions",
            json=ask("tell me about rivers", stream=True, stream_options={"include_usage": True}),
        ).text
    assert first["eoc"]["stage"] == "neural" and first["choices"][0]["finish_reason"] == "length"
    assert again["eoc"]["stage"] == "cache"
    assert again["choices"][0]["finish_reason"] == "length"
    assert again["usage"] == {"prompt_tokens": 6, "completion_tokens": 8, "total_tokens": 14}
    assert again["eoc"]["generation"]["replayed"] is True
    events = _events(streamed)
    assert [e["choices"][0]["finish_reason"] for e in events if e["choices"]][-1] == "length"
    assert events[-1]["usage"]["completion_tokens"] == 8
    assert events[-1]["eoc"]["stage"] == "cache"


def test_forget_needs_an_admin_key(tmp_path: Path) -> None:
    admin_key, admin_line = new_key("root", admin=True)
    user_key, user_line = new_key("alice")
    path = tmp_path / "keys"
    path.write_text(f"{admin_line}\n{user_line}\n")
    with serving(make_app(keys=ApiKeys.load(path))) as url:

        def post(path: str, body: Any, key: str | None) -> httpx.Response:
            headers = {"authorization": f"Bearer {key}"} if key else {}
            return httpx.post(url + path, json=body, headers=headers)

        asked = post("/v1/chat/completions", ask("tell me about rivers"), user_key)
        assert asked.json()["eoc"]["stored"] == "yes"
        body = {"question": "tell me about rivers"}
        assert post("/v1/eoc/forget", body, None).status_code == 401
        assert post("/v1/eoc/forget", body, "eoc-wrong").status_code == 401
        refused = post("/v1/eoc/forget", body, user_key)
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "not_admin"
        for bad in ({}, {"stage": "graph"}, {"question": 3}, {"wipe": True}, []):
            r = post("/v1/eoc/forget", bad, admin_key)
            assert r.status_code == 400, bad
            assert r.json()["error"]["type"] in ("ConfigError", "InputError", "InvalidText")
        raw = httpx.post(
            url + "/v1/eoc/forget",
            content=b"{not json",
            headers={"authorization": f"Bearer {admin_key}"},
        )
        assert raw.status_code == 400
        done = post("/v1/eoc/forget", body, admin_key)
        assert done.status_code == 200 and done.json()["forgot"] == {"cache": 1, "kv": 1}
        again = post("/v1/chat/completions", ask("tell me about rivers"), user_key).json()
        assert again["eoc"]["stage"] == "neural"  # forgotten: asked afresh
        metrics = httpx.get(url + "/metrics", headers={"authorization": f"Bearer {user_key}"})
        assert 'eoc_forgotten_entries_total{stage="cache"} 1.0' in metrics.text
        doc = httpx.get(url + "/openapi.json").json()
        assert "/v1/eoc/forget" in doc["paths"]


def test_a_server_without_keys_forgets_nothing() -> None:
    with serving(make_app()) as url:
        r = httpx.post(url + "/v1/eoc/forget", json={"stage": "cache"})
    assert r.status_code == 403 and "no API keys" in r.json()["error"]["message"]


def test_an_unknown_replay_has_no_made_up_usage_or_finish_reason() -> None:
    from eoc.chat.request import parse_chat
    from eoc.cost import JouleCost
    from eoc.query import Stage
    from eoc.receipt import Receipt
    from eoc.response import Response
    from eoc.store.entry import UNKNOWN
    from eoc_native.serve.wire import finish_reason, usage

    cost = JouleCost.estimated(10, "cache stage estimate")
    receipt = Receipt.issue("q", Stage.CACHE, cost, "an old answer")
    old = Response(Stage.CACHE, "an old answer", cost, receipt, "q", None, "", UNKNOWN, True)
    request = parse_chat(ask("tell me about rivers"), ChatDefaults(MODEL, max_tokens=8))
    assert usage(old) is None and finish_reason(request, old) is None
    fact = Response(Stage.CACHE, "4", cost, receipt, "q")
    assert usage(fact) == {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    assert finish_reason(request, fact) == "stop"


def test_a_restarted_server_reports_what_the_answer_cost_when_the_first_one_made_it(
    tmp_path: Path,
) -> None:
    from eoc.persist import SqliteCache, SqliteKV

    db = tmp_path / "answers.db"
    config = ServeConfig(MODEL, ChatDefaults(MODEL, max_tokens=8))

    def on_store() -> Any:
        cascade = Cascade([SqliteCache(db), SqliteKV(db), NeuralStage(Cut())])
        return create_app(cascade, config)

    with serving(on_store()) as url:
        made = httpx.post(url + "/v1/chat/completions", json=ask("tell me about rivers")).json()
    assert made["eoc"]["stage"] == "neural"
    with serving(on_store()) as url:  # a new process would see the same: only the file is shared
        again = httpx.post(url + "/v1/chat/completions", json=ask("tell me about rivers"))
    doc = again.json()["eoc"]
    assert doc["stage"] == "cache"
    assert doc["avoided"]["uj"] == made["eoc"]["cost"]["uj"]
    assert int(again.headers["x-eoc-avoided-microjoules"]) == made["eoc"]["cost"]["uj"]
    assert again.headers["x-eoc-avoided-provenance"] == "estimated"
    assert doc["avoided"]["basis"].startswith("what the model's answer cost when it was made")


def test_the_kv_remembers_a_model_answer_once_its_reply_is_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A write after the reply holds the interpreter while it runs: ``eoc serve`` marks each
    reply in flight (:meth:`Cascade.replying`), and the kv's write waits until it is sent."""
    monkeypatch.setattr(behind, "MAX_DEFER_S", 30.0)  # only the reply's end may release it
    order: list[str] = []

    class Noting(KVStage):
        def remember(self, *args: Any, **kwargs: Any) -> str | None:
            order.append("remembered")
            return super().remember(*args, **kwargs)

    kv = Noting()
    stages = [CacheStage(), kv, NeuralStage(ModelStandIn())]
    cascade = Cascade(stages, kv_after_reply=True)  # type: ignore[arg-type]
    app = create_app(cascade, ServeConfig(ModelStandIn.name, ChatDefaults(ModelStandIn.name)))

    async def slow_to_send(scope: Any, receive: Any, send: Any) -> None:
        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.body":
                await asyncio.sleep(0.3)  # the reply is still on its way
                order.append("sent")
            await send(message)

        await app(scope, receive, sending)

    question = {
        "model": ModelStandIn.name,
        "messages": [{"role": "user", "content": "tell me about rivers"}],
    }
    with serving(slow_to_send) as url:
        made = httpx.post(url + "/v1/chat/completions", json=question).json()
        cascade.flush()
    assert made["eoc"]["stage"] == "neural" and made["eoc"]["stored"] == "yes"
    assert order == ["sent", "remembered"] and len(kv) == 1
