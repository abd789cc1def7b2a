"""A request builds its query once and a miss asks the cache once; the conversation and the
stream's callback ride on the query as typed fields (Query.conversation, Query.on_piece), and
a model's pieces reach a streamed answer through that one path."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

pytest.importorskip("starlette")

from eoc import Cascade
from eoc.chat.request import ChatDefaults, ChatRequest
from eoc.query import Query
from eoc.stages.cache import CacheStage
from eoc.stages.neural import Reply
from eoc.testing import ScriptedBackend
from eoc_native.serve.app import ServeConfig, create_app
from tests.helpers import small_stages
from tests.native.serving import serving

MODEL = "m"


class CountingCache(CacheStage):
    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def lookup(self, query: Query) -> Any:
        self.asked.append(query.id)  # the question's key, or the key of its model's answer
        return super().lookup(query)


class Streaming:
    """A backend that streams its answer in three pieces, through ``on_piece``."""

    name = "streaming"
    streams = True

    def generate(self, prompt: str, on_piece: Callable[[str], None] | None = None) -> Reply:
        pieces = ["an ", "answer ", "here"]
        for p in pieces:
            if on_piece is not None:
                on_piece(p)
        return Reply("".join(pieces), None, tokens_in=3, tokens_out=3)


@pytest.fixture
def app_and_cache() -> tuple[Any, CountingCache]:
    cache = CountingCache()
    stages = [cache, *small_stages(Streaming())[1:]]
    app = create_app(Cascade(stages), ServeConfig(MODEL, ChatDefaults(MODEL, max_tokens=8)))
    return app, cache


def ask(url: str, question: str, **extra: Any) -> httpx.Response:
    body = {"model": MODEL, "messages": [{"role": "user", "content": question}], **extra}
    return httpx.post(url + "/v1/chat/completions", json=body, timeout=30)


def test_a_miss_asks_the_cache_once_streamed_or_not(
    app_and_cache: tuple[Any, CountingCache], monkeypatch: pytest.MonkeyPatch
) -> None:
    app, cache = app_and_cache
    built: list[str] = []
    original = ChatRequest.query

    def counted(self: ChatRequest, on_piece: Any = None, reuse: str | None = None) -> Query:
        built.append(self.question)
        return original(self, on_piece, reuse)

    monkeypatch.setattr(ChatRequest, "query", counted)
    with serving(app) as url:
        assert ask(url, "tell me something").json()["eoc"]["stage"] == "neural"
        assert cache.asked.count(Query("tell me something").id) == 1
        assert len(cache.asked) == 2  # the question's key and its model's (Cascade._made_by)
        assert built == ["tell me something"]
        r = ask(url, "tell me more", stream=True)
        assert r.status_code == 200 and "[DONE]" in r.text
        assert cache.asked.count(Query("tell me more").id) == 1 and len(cache.asked) == 4
        assert built.count("tell me more") == 1


def test_a_streamed_answer_arrives_in_the_models_pieces(
    app_and_cache: tuple[Any, CountingCache],
) -> None:
    app, _ = app_and_cache
    with serving(app) as url:
        r = ask(url, "stream it please", stream=True)
    contents = [
        line for line in r.text.splitlines() if line.startswith("data: {") and '"content"' in line
    ]
    assert len(contents) == 3, r.text  # "an ", "answer ", "here", each its own event


def test_typed_fields_are_checked() -> None:
    from eoc.errors import InvalidText

    with pytest.raises(InvalidText, match="on_piece"):
        Query("hello", on_piece="print")  # type: ignore[arg-type]
    with pytest.raises(InvalidText, match="conversation"):
        Query("hello", conversation=object())  # type: ignore[arg-type]
    q = Query("hello", on_piece=print)
    assert q.on_piece is print and q.conversation is None and q.id == Query("hello").id


def test_an_app_with_one_fixed_system_prompt_gets_facts_when_the_operator_allows() -> None:
    """With facts under system prompts allowed (eoc serve --facts-under-system-prompts), the
    same app's users get graph and kv facts in their own wordings; without, the model answers."""
    system = {"role": "system", "content": "You are the help desk of Example Air. Be brief."}
    for allowed, expect in ((True, {"graph", "kv"}), (False, {"neural"})):
        defaults = ChatDefaults(MODEL, max_tokens=8, facts_under_system_prompts=allowed)
        app = create_app(Cascade(small_stages(ScriptedBackend())), ServeConfig(MODEL, defaults))
        with serving(app) as url:
            for wording in ("capital of France?", "what's the capital of Japan", "what is 2+2"):
                body = {"model": MODEL, "messages": [system, {"role": "user", "content": wording}]}
                r = httpx.post(url + "/v1/chat/completions", json=body, timeout=30)
                assert r.status_code == 200 and r.json()["eoc"]["stage"] in expect, (
                    wording,
                    r.text,
                )
