"""eoc serve and issue 34, over a real socket: a cut upstream answer is kept as cut (and never
served to a paraphrase or a request allowing more), a look-alike by one character gets no
neighbour's answer, a fact longer than max_tokens is not served as finished (counted by the
loaded model's own tokenizer), a thumbs-down forgets one answer by its response id or receipt
on any replica, and x-eoc-reuse sets a request's own reuse policy."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

pytest.importorskip("starlette")

from eoc.cascade import Cascade
from eoc.chat.request import ChatDefaults
from eoc.stages import NeuralStage, Reply
from eoc_native.remote import OpenAIBackend
from eoc_native.serve.app import ServeConfig, create_app
from eoc_native.serve.keys import ApiKeys, new_key
from tests.helpers import small_stages
from tests.native.serving import serving
from tests.native.smollm2 import SMOLLM2, needs_smollm2
from tests.native.test_remote import FakeServer, completion, delta, send, sse

MODEL = "m"


class Scripted:
    """A model that answers every question with its own text and says it stopped."""

    name = "scripted"
    runs_model = True
    max_tokens = 256

    def __init__(self) -> None:
        self.calls = 0

    def generate(self, prompt: str) -> Reply:
        self.calls += 1
        return Reply(f"the model's answer to: {prompt}", tokens_in=5, tokens_out=7)


def app_over(backend: Any, **kwargs: Any) -> Any:
    stages = [*small_stages()[:-1], NeuralStage(backend)]
    config = ServeConfig(MODEL, ChatDefaults(MODEL, max_tokens=256))
    return create_app(Cascade(stages), config, **kwargs)


def ask(text: str, **params: Any) -> dict[str, Any]:
    return {"model": MODEL, "messages": [{"role": "user", "content": text}], **params}


@pytest.fixture
def upstream() -> Iterator[FakeServer]:
    fake = FakeServer()
    yield fake
    fake.close()


def cut(text: str) -> dict[str, Any]:
    """An upstream reply cut at max_tokens, with no usage (as the issue's upstream sent)."""
    doc = completion(text)
    doc["choices"][0]["finish_reason"] = "length"
    return doc


def test_a_cut_upstream_answer_stays_cut_and_is_never_served_to_more_room(
    upstream: FakeServer,
) -> None:
    backend = OpenAIBackend(upstream.url, model="up", timeout=5)
    upstream.script = [send(200, cut("The Eiffel Tower is a")) for _ in range(4)]
    with serving(app_over(backend)) as url:
        first = httpx.post(
            url + "/v1/chat/completions", json=ask("tell me about the Eiffel Tower", max_tokens=6)
        ).json()
        assert first["choices"][0]["finish_reason"] == "length"
        assert first["usage"] is None  # nothing counted its tokens: not 0/0
        again = httpx.post(
            url + "/v1/chat/completions", json=ask("tell me about the Eiffel Tower", max_tokens=6)
        ).json()
        assert again["eoc"]["stage"] == "cache" and again["choices"][0]["finish_reason"] == "length"
        more = httpx.post(
            url + "/v1/chat/completions", json=ask("tell me about the Eiffel Tower", max_tokens=256)
        ).json()
        para = httpx.post(
            url + "/v1/chat/completions",
            json=ask("tell me about the eiffel tower please", max_tokens=6),
        ).json()
    assert more["eoc"]["stage"] == "neural" and para["eoc"]["stage"] == "neural"
    backend.close()


def test_a_streamed_upstream_finish_reason_is_kept(upstream: FakeServer) -> None:
    backend = OpenAIBackend(upstream.url, model="up", timeout=5)
    upstream.script = [sse(delta("The Eiffel"), delta(" Tower is", finish="length"))]
    with serving(app_over(backend)) as url:
        body = httpx.post(
            url + "/v1/chat/completions", json=ask("tell me about it", max_tokens=4, stream=True)
        ).text
    events = [orjson.loads(x[6:]) for x in body.splitlines() if x.startswith("data: {")]
    assert [e["choices"][0]["finish_reason"] for e in events if e["choices"]][-1] == "length"
    backend.close()


def test_a_look_alike_by_one_character_gets_no_neighbours_answer() -> None:
    model = Scripted()
    with serving(app_over(model)) as url:
        post = lambda text: httpx.post(url + "/v1/chat/completions", json=ask(text)).json()  # noqa: E731
        stored = {
            q: post(q)["choices"][0]["message"]["content"] for q in ("what is 23", "what is x2")
        }
        for look_alike in ("what is 2³", "what is x²", "what is 23!", "what is 2‼3"):
            got = post(look_alike)
            assert got["choices"][0]["message"]["content"] not in stored.values(), look_alike
    assert model.calls >= 5  # the graph computes 23! itself


def _keys(tmp_path: Path) -> tuple[str, Any]:
    admin_key, admin_line = new_key("root", admin=True)
    path = tmp_path / "keys"
    path.write_text(admin_line + "\n")
    return admin_key, ApiKeys.load(path)


@pytest.mark.parametrize("name_by", ["response_id", "streamed_id", "receipt", "made_receipt"])
def test_a_thumbs_down_forgets_one_answer_by_what_the_client_holds(
    tmp_path: Path, name_by: str
) -> None:
    key, keys = _keys(tmp_path)
    auth = {"authorization": f"Bearer {key}"}
    model = Scripted()
    with serving(app_over(model, keys=keys)) as url:

        def post(body: Any, path: str = "/v1/chat/completions") -> httpx.Response:
            return httpx.post(url + path, json=body, headers=auth)

        made = post(ask("who painted the Mona Lisa")).json()
        replay = post(ask("Who painted the Mona Lisa?")).json()
        assert replay["eoc"]["stage"] == "kv"
        streamed = post(ask("who painted the mona lisa", stream=True)).text
        last = [orjson.loads(x[6:]) for x in streamed.splitlines() if x.startswith("data: {")]
        assert replay["id"].endswith("-a" + made["eoc"]["receipt"]["digest"][:32])
        body = {
            "response_id": {"response_id": replay["id"]},
            "streamed_id": {"response_id": last[-1]["id"]},
            "receipt": {"receipt": replay["eoc"]["receipt"]["digest"]},
            "made_receipt": {"receipt": replay["eoc"]["generation"]["receipt"]},
        }[name_by]
        done = post(body, "/v1/eoc/forget")
        assert done.status_code == 200, done.text
        assert done.json()["forgot"]["kv"] == 1 and done.json()["forgot"]["cache"] >= 1
        calls = model.calls
        assert post(ask("Who painted the Mona Lisa?")).json()["eoc"]["stage"] == "neural"
        assert model.calls == calls + 1
        unknown = post({"response_id": "chatcmpl-nothing"}, "/v1/eoc/forget")
        assert unknown.status_code == 400


def test_a_request_sets_its_own_reuse_policy_with_a_header() -> None:
    model = Scripted()
    with serving(app_over(model)) as url:

        def post(text: str, reuse: str | None = None) -> httpx.Response:
            headers = {} if reuse is None else {"x-eoc-reuse": reuse}
            return httpx.post(url + "/v1/chat/completions", json=ask(text), headers=headers)

        post("who painted the Mona Lisa")
        assert post("Who painted the Mona Lisa?").json()["eoc"]["stage"] == "kv"
        assert post("who painted the mona lisa ??", "exact").json()["eoc"]["stage"] == "neural"
        assert post("who painted the Mona Lisa", "exact").json()["eoc"]["stage"] == "cache"
        assert post("who painted the Mona Lisa", "never").json()["eoc"]["stage"] == "neural"
        assert post("what is 2+2", "never").json()["eoc"]["stage"] == "kv"  # a fact
        bad = post("what is 2+2", "sometimes")
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "bad_reuse"


@needs_smollm2
def test_a_fact_is_counted_by_the_loaded_models_tokenizer() -> None:
    """ "Paris" is one SmolLM2 token: at max_tokens 2 the graph answers once the model is loaded;
    before (no tokenizer at hand) the bound, 6, keeps it out."""
    from eoc.chat.request import parse_chat
    from eoc_native.llm.backend import LocalModel

    assert SMOLLM2 is not None
    backend = LocalModel(SMOLLM2, max_tokens=8)
    c = Cascade([*small_stages()[:-1], NeuralStage(backend)])
    request = parse_chat(ask("capital of France?", max_tokens=2), ChatDefaults(MODEL))
    assert c.resolve(request.query()).stage.value == "neural"  # loads the model
    assert backend.count_tokens("Paris") == 1
    again = parse_chat(ask("What is the capital of France?", max_tokens=2), ChatDefaults(MODEL))
    assert c.resolve(again.query()).stage.value == "graph"
    too_short = parse_chat(ask("what is 17 times 23", max_tokens=1), ChatDefaults(MODEL))
    assert backend.count_tokens("391") > 1
    assert c.resolve(too_short.query()).stage.value == "neural"
