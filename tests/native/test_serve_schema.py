"""eoc serve against its own OpenAPI document: Schemathesis over a real socket.

The document is fetched from the running server (``GET /openapi.json``) and every operation in
it is called with requests Schemathesis generates from it: valid ones (positive mode) and
invalid ones (negative mode). Whatever is sent, the server never answers 5xx, every response
conforms to the document (a documented status code, content type, headers and schema), and
every non-2xx response is a JSON body in the OpenAI error shape. The neural stage is eoc's own
runner on a tiny random model, so a generated question the cheap stages cannot answer is still
answered (or refused with a 4xx when it does not fit the model's 64-token context).

Generation is bounded and derandomized (the same examples on every run).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("schemathesis")
pytest.importorskip("starlette")

import httpx
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from eoc_native.serve.breaker import CircuitBreaker
from eoc_native.serve.openapi import document
from tests.native.serving import serving
from tests.native.test_llm_tiny import BLOCKS, write_tiny_model
from tests.native.test_serve import MODEL, make_app

POSITIVE_EXAMPLES = 30
"""Generated valid requests per operation (an operation with nothing to vary stops sooner)."""
NEGATIVE_EXAMPLES = 40
"""Generated invalid requests per operation that takes a body."""

OPERATIONS = sorted(
    (method.upper(), path) for path, item in document(MODEL)["paths"].items() for method in item
)
POSTS = [op for op in OPERATIONS if op[0] == "POST"]
FORGET = "/v1/eoc/forget"  # admin keys only: this keyless server refuses it (403)


def json_error_body(ctx: Any, response: Any, case: Any) -> bool | None:
    """Every non-2xx response is JSON: ``{"error": {"message", "type", "code", ...}}``."""
    if 200 <= response.status_code < 300:
        return None
    ctype = response.headers.get("content-type", [""])
    ctype = ctype[0] if isinstance(ctype, list) else ctype
    assert ctype.split(";")[0].strip() == "application/json", (
        f"{response.status_code} answered as {ctype!r}, not JSON"
    )
    doc = response.json()
    assert isinstance(doc, dict) and isinstance(doc.get("error"), dict), (
        f"{response.status_code} body has no error object: {response.text[:200]!r}"
    )
    err = doc["error"]
    for name in ("message", "type", "code"):
        assert isinstance(err.get(name), str) and err[name], (
            f"{response.status_code} error object lacks a {name!r} string: {err!r}"
        )
    assert err.get("status", response.status_code) == response.status_code
    return True


def rejected_as_client_error(ctx: Any, response: Any, case: Any) -> bool | None:
    """An invalid request is refused with a 4xx, never answered and never a server error."""
    assert 400 <= response.status_code < 500, (
        f"an invalid request got {response.status_code}, not a 4xx: {response.text[:200]!r}"
    )
    return True


CONFORMANCE = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    json_error_body,
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("llm") / "tiny.gguf", tensor_types=BLOCKS)


@pytest.fixture(scope="module")
def server(tiny: Path) -> Iterator[str]:
    # with the native embeddings, so POST /v1/embeddings is answered too
    with serving(make_app(tiny, embed=True)) as url:
        yield url


@pytest.fixture(scope="module")
def schema(server: str) -> Any:
    # requests are shown whole when a check fails (Schemathesis masks keys like "max_tokens")
    config = schemathesis.Config.from_dict({"output": {"sanitization": {"enabled": False}}})
    return schemathesis.openapi.from_url(f"{server}/openapi.json", config=config, timeout=30)


@pytest.fixture(scope="module")
def session() -> Iterator[requests.Session]:
    with requests.Session() as s:
        yield s


def explore(
    schema: Any,
    operation: tuple[str, str],
    mode: GenerationMode,
    examples: int,
    run: Callable[[Any], None],
) -> None:
    """Run ``run(case)`` on ``examples`` cases generated in ``mode``, the same ones each time."""
    method, path = operation
    strategy = schema[path][method].as_strategy(generation_mode=mode)

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    @given(case=strategy)
    def check(case: Any) -> None:
        run(case)

    check()


def test_the_served_document_is_the_one_tested(server: str) -> None:
    served = httpx.get(f"{server}/openapi.json", timeout=30).json()
    assert served == document(MODEL)
    assert served["openapi"].startswith("3.1")
    assert ("POST", "/v1/chat/completions") in OPERATIONS and len(OPERATIONS) == 9


@pytest.mark.parametrize("operation", OPERATIONS, ids=" ".join)
def test_valid_requests_get_documented_answers(
    schema: Any, server: str, session: requests.Session, operation: tuple[str, str]
) -> None:
    statuses: list[int] = []

    def run(case: Any) -> None:
        response = case.call_and_validate(base_url=server, session=session, checks=CONFORMANCE)
        statuses.append(response.status_code)

    explore(schema, operation, GenerationMode.POSITIVE, POSITIVE_EXAMPLES, run)
    assert statuses, "no request was generated"
    # valid requests are answered, not just refused: at least one 2xx per operation (the public
    # key route is the exception: this server signs nothing, and says so with a 404; so is
    # forgetting: this server takes no keys, so no one is an admin, and it says so with a 403;
    # tests/native/test_serve_memo.py checks its 200s and 400s with an admin key)
    if operation == ("GET", "/v1/eoc/public-key"):
        assert set(statuses) == {404}
    elif operation == ("POST", FORGET):
        assert set(statuses) == {403}
    else:
        assert any(200 <= s < 300 for s in statuses), sorted(set(statuses))


@pytest.mark.parametrize("operation", POSTS, ids=" ".join)
def test_invalid_requests_get_json_4xx_errors(
    schema: Any, server: str, session: requests.Session, operation: tuple[str, str]
) -> None:
    statuses: list[int] = []

    def run(case: Any) -> None:
        response = case.call_and_validate(
            base_url=server, session=session, checks=[*CONFORMANCE, rejected_as_client_error]
        )
        statuses.append(response.status_code)

    explore(schema, operation, GenerationMode.NEGATIVE, NEGATIVE_EXAMPLES, run)
    assert len(statuses) >= NEGATIVE_EXAMPLES // 2, f"only {len(statuses)} invalid requests"
    assert (403 if operation[1] == FORGET else 400) in statuses, sorted(set(statuses))


def ask(text: str, **params: Any) -> dict[str, Any]:
    return {"model": MODEL, "messages": [{"role": "user", "content": text}], **params}


CHAT, COMPLETIONS = "/v1/chat/completions", "/v1/completions"

# Requests Schemathesis found (or that pin what it checks), run through the same checks.
VALID = {
    # streamed answers: every event conforms to the document's StreamEvent
    "chat-stream-usage": (CHAT, ask("hello", stream=True, stream_options={"include_usage": True})),
    "chat-stream-graph": (CHAT, ask("what is 2+2", stream=True)),  # one piece
    "completion-stream": (COMPLETIONS, {"model": MODEL, "prompt": "hello", "stream": True}),
    # content parts and a one-prompt list, as the document allows
    "content-parts": (
        CHAT,
        {
            "model": MODEL,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        },
    ),
    "prompt-list": (COMPLETIONS, {"model": MODEL, "prompt": ["hello"], "max_tokens": 2}),
    # found: the sampler divides the logits by a subnormal temperature (502, overflow)
    "completion-subnormal-temperature": (
        COMPLETIONS,
        {"model": MODEL, "prompt": "0", "max_tokens": 1, "temperature": 5e-324},
    ),
    "chat-subnormal-temperature": (CHAT, ask("hello there", temperature=5e-324, seed=1)),
    # found: the model's one token decodes to no text (502, "the reply is empty")
    "completion-empty-reply": (
        COMPLETIONS,
        {"model": MODEL, "top_p": 1.0, "max_tokens": 1, "prompt": "\u00ae"},
    ),
}
INVALID = {
    # found: max_tokens is not checked when max_completion_tokens is sent (200)
    "max-tokens-0-beside-max-completion-tokens": (
        CHAT,
        ask("0", max_completion_tokens=1, max_tokens=0),
    ),
    "message-name-not-a-string": (
        CHAT,
        {"model": MODEL, "messages": [{"role": "user", "content": "hi", "name": 5}]},
    ),
    "logprobs-0": (CHAT, ask("hi", logprobs=0)),  # 0 is not false in JSON
    "tools": (CHAT, ask("hi", tools=[{"type": "function", "function": {"name": "f"}}])),
    "two-prompts": (COMPLETIONS, {"model": MODEL, "prompt": ["a", "b"]}),
    "stop-too-long": (CHAT, ask("hi", stop="x" * 257)),
}


@pytest.mark.parametrize(("path", "body"), list(VALID.values()), ids=list(VALID))
def test_pinned_valid_requests_get_documented_answers(
    schema: Any, server: str, session: requests.Session, path: str, body: dict[str, Any]
) -> None:
    case = schema[path]["POST"].Case(body=body, media_type="application/json")
    response = case.call_and_validate(base_url=server, session=session, checks=CONFORMANCE)
    assert response.status_code == 200, response.text[:300]


@pytest.mark.parametrize(("path", "body"), list(INVALID.values()), ids=list(INVALID))
def test_pinned_invalid_requests_get_json_4xx_errors(
    schema: Any, server: str, session: requests.Session, path: str, body: dict[str, Any]
) -> None:
    case = schema[path]["POST"].Case(body=body, media_type="application/json")
    case.call_and_validate(
        base_url=server, session=session, checks=[*CONFORMANCE, rejected_as_client_error]
    )


def test_requests_the_model_refuses_do_not_open_the_breaker(tiny: Path) -> None:
    """Found: a client's 4xx counted as the backend failing, so three refused requests (valid by
    the document, refused by the model runner: a penalty, too long for its context) opened the
    breaker and every client's next question got 503 upstream_unavailable."""
    breaker = CircuitBreaker(3, 30.0, 60.0)
    with serving(make_app(tiny, breaker=breaker)) as url:
        for doc in (
            ask("hello", presence_penalty=0.5),
            ask("hello", frequency_penalty=-1.0),
            ask("word " * 40),
        ):
            r = httpx.post(f"{url}{CHAT}", json=doc, timeout=30)
            assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request", r.text
        assert httpx.get(f"{url}/healthz", timeout=30).json()["breaker"] == "closed"
        r = httpx.post(f"{url}{CHAT}", json=ask("hello model"), timeout=30)
        assert r.status_code == 200, r.text
        assert r.json()["eoc"]["stage"] == "neural"


def test_the_server_is_still_healthy_afterwards(server: str) -> None:
    """After everything above: nothing pending, and no 5xx ever counted."""
    r = httpx.get(f"{server}/healthz", timeout=30)
    assert r.status_code == 200 and r.json()["pending"] == 0
    metrics = httpx.get(f"{server}/metrics", timeout=30).text
    counted = {
        line.split('"')[1]: float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith('eoc_request_errors_total{status="')
    }
    assert "# TYPE eoc_request_errors_total counter" in metrics
    assert not [status for status in counted if status.startswith("5")], counted
