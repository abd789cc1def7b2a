"""BrowserOpenAIBackend (eoc/stages/browser_remote.py) over an injected transport.

Pure Python: these run natively and inside Pyodide (the core suite under Node). The one test of
the urllib transport needs a local HTTP server and a thread, so it runs natively only; the page
drives the XHR transport against a real llama.cpp server in tests/web/test_page_llm.py.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

import eoc.stages.browser_remote as br
from eoc import Cascade, Provenance
from eoc.errors import BackendError, ConfigError
from eoc.query import Stage
from eoc.stages.base import work_estimate
from eoc.stages.browser_remote import MAX_BODY_BYTES, BrowserOpenAIBackend, check_base_url
from eoc.text.tokens import approx_tokens
from tests.helpers import IN_BROWSER, small_stages

URL = "http://127.0.0.1:8080/v1"


def completion(text: str = "The sea is wide.", usage: Any = "default", **extra: Any) -> bytes:
    doc: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
        **extra,
    }
    if usage == "default":
        usage = {"prompt_tokens": 37, "completion_tokens": 5, "total_tokens": 42}
    if usage is not None:
        doc["usage"] = usage
    return json.dumps(doc).encode()


class Server:
    """A scripted transport: answers each request with the next (status, body) and logs it."""

    def __init__(self, *replies: tuple[int, bytes] | BaseException) -> None:
        self.replies = list(replies)
        self.requests: list[tuple[str, str, Any, dict[str, str]]] = []

    def __call__(
        self, method: str, url: str, body: bytes | None, headers: Mapping[str, str]
    ) -> tuple[int, bytes]:
        self.requests.append((method, url, json.loads(body) if body else None, dict(headers)))
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, BaseException):
            raise reply
        return reply


def backend(*replies: tuple[int, bytes] | BaseException, **kwargs: Any) -> BrowserOpenAIBackend:
    kwargs.setdefault("model", "smol")
    return BrowserOpenAIBackend(URL, transport=Server(*replies), **kwargs)


def sent(b: BrowserOpenAIBackend) -> list[tuple[str, str, Any, dict[str, str]]]:
    return b._transport.requests  # type: ignore[attr-defined,no-any-return]


# -- configuration ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "match"),
    [
        ("", "no server given"),
        (None, "no server given"),
        (8080, "must be a string"),
        ("ftp://127.0.0.1/v1", "http:// or https://"),
        ("127.0.0.1:8080/v1", "http:// or https://"),
        ("javascript:alert(1)", "http:// or https://"),
        ("http:///v1", "names no host"),
        ("http://u:p@127.0.0.1:8080/v1", "credentials"),
        ("http://127.0.0.1:8080/v1?x=1", "no \\?query"),
        ("http://127.0.0.1:99999/v1", "port"),
        ("http://127.0.0.1:8080/v1 x", "spaces"),
    ],
)
def test_a_base_url_that_is_not_an_http_api_root_is_a_config_error(url: Any, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        BrowserOpenAIBackend(url)


def test_the_name_says_model_and_host_and_a_trailing_slash_is_dropped() -> None:
    assert check_base_url("https://example.org:8443/v1/") == (
        "https://example.org:8443/v1",
        "example.org:8443",
    )
    b = BrowserOpenAIBackend(URL + "/", model="smol")
    assert (b.name, b.base_url, b.runs_model) == ("openai:smol@127.0.0.1:8080", URL, True)
    assert BrowserOpenAIBackend(URL).name == "openai:?@127.0.0.1:8080"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_tokens": 0},
        {"max_tokens": True},
        {"temperature": -0.1},
        {"temperature": float("nan")},
        {"temperature": "0"},
        {"seed": 1.5},
        {"seed": 2**64},
        {"model": ""},
        {"transport": "xhr"},
    ],
)
def test_arguments_it_cannot_use_are_config_errors(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        BrowserOpenAIBackend(URL, **kwargs)


def test_constructing_sends_nothing_and_connect_asks_the_server_for_its_model() -> None:
    server = Server((200, json.dumps({"object": "list", "data": [{"id": "smollm2"}]}).encode()))
    b = BrowserOpenAIBackend(URL, transport=server)
    assert server.requests == []
    assert b.connect() == "smollm2" and b.connect() == "smollm2"
    assert [(m, u) for m, u, _, _ in server.requests] == [("GET", URL + "/models")]
    assert b.name == "openai:smollm2@127.0.0.1:8080"


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (b'{"data": []}', "lists no models"),
        (b'{"data": {}}', "no list of models"),
        (b'{"data": [{"id": 3}]}', "without a usable id"),
    ],
)
def test_a_model_list_it_cannot_use_is_a_backend_error(body: bytes, match: str) -> None:
    with pytest.raises(BackendError, match=match):
        BrowserOpenAIBackend(URL, transport=Server((200, body))).connect()


def test_the_default_transport_is_the_xhr_in_pyodide_and_urllib_natively(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expected = br.xhr_transport if IN_BROWSER else br.urllib_transport
    assert BrowserOpenAIBackend(URL)._transport is expected
    monkeypatch.setattr(br, "IN_PYODIDE", True)
    assert BrowserOpenAIBackend(URL)._transport is br.xhr_transport


# -- the request and the reply ------------------------------------------------------------------


def test_it_posts_a_chat_completion_and_answers_with_the_servers_text() -> None:
    b = backend((200, completion("Tokyo is large.")), max_tokens=64)
    reply = b.generate("tell me about Tokyo")
    assert reply.text == "Tokyo is large."
    ((method, url, body, headers),) = sent(b)
    assert (method, url) == ("POST", URL + "/chat/completions")
    assert body == {
        "model": "smol",
        "messages": [{"role": "user", "content": "tell me about Tokyo"}],
        "max_tokens": 64,
        "temperature": 0.0,
        "stream": False,
    }
    assert headers["Content-Type"] == "application/json"


def test_without_a_model_the_first_question_asks_for_one_first() -> None:
    server = Server((200, b'{"data": [{"id": "m1"}]}'), (200, completion()))
    b = BrowserOpenAIBackend(URL, transport=server)
    b.generate("hi there")
    assert [(m, u) for m, u, _, _ in server.requests] == [
        ("GET", URL + "/models"),
        ("POST", URL + "/chat/completions"),
    ]
    assert server.requests[1][2]["model"] == "m1"


def test_the_cost_is_estimated_from_the_servers_token_counts_with_a_remote_basis() -> None:
    reply = backend((200, completion())).generate("a question")
    assert reply.cost is not None and reply.cost.provenance is Provenance.ESTIMATED
    assert reply.cost.counter is None
    assert reply.cost.uj == work_estimate(Stage.NEURAL, tokens_in=37, tokens_out=5).uj
    assert (reply.tokens_in, reply.tokens_out) == (37, 5)
    basis = reply.cost.basis
    assert basis.startswith("remote model at 127.0.0.1:8080: no counter")
    assert "sees its work; estimated from 37 tokens in, 5 out (counted by the server)" in basis


def test_in_the_browser_the_basis_says_no_counter_in_the_browser_sees_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(br, "IN_PYODIDE", True)
    reply = backend((200, completion())).generate("a question")
    assert reply.cost is not None
    assert "no counter in the browser sees its work" in reply.cost.basis


def test_without_usage_tokens_are_approximated_and_not_reported_as_the_models() -> None:
    text = "An answer of some forty characters, yes."
    reply = backend((200, completion(text, usage=None))).generate("twelve chars")
    n_in, n_out = approx_tokens("twelve chars"), approx_tokens(text)
    assert reply.cost is not None
    assert reply.cost.uj == work_estimate(Stage.NEURAL, tokens_in=n_in, tokens_out=n_out).uj
    assert (
        f"{n_in} tokens in, {n_out} out (approximated at 4 characters a token)" in reply.cost.basis
    )
    assert (reply.tokens_in, reply.tokens_out) == (None, None)


def test_an_energy_figure_from_the_server_is_quoted_as_a_claim_never_the_figure() -> None:
    usage = {"prompt_tokens": 37, "completion_tokens": 5, "energy_j": 0.001}
    reply = backend((200, completion(usage=usage))).generate("q")
    assert reply.cost is not None and reply.cost.provenance is Provenance.ESTIMATED
    assert reply.cost.uj == work_estimate(Stage.NEURAL, tokens_in=37, tokens_out=5).uj
    assert "the server claims usage.energy_j=0.001 (a claim, not measured here)" in reply.cost.basis


@pytest.mark.parametrize(
    ("kwargs", "memoize"),
    [({}, True), ({"temperature": 0.7}, False), ({"temperature": 0.7, "seed": 7}, True)],
)
def test_a_sampled_answer_without_a_seed_is_not_memoized(
    kwargs: dict[str, Any], memoize: bool
) -> None:
    b = backend((200, completion()), **kwargs)
    assert b.generate("q").memoize is memoize
    if "seed" in kwargs:
        assert sent(b)[0][2]["seed"] == 7


def test_in_a_cascade_a_greedy_answer_is_remembered_and_a_sampled_one_is_not() -> None:
    greedy = Cascade(small_stages(backend((200, completion("Greedy.")))))  # type: ignore[arg-type]
    first = greedy.resolve("why does the kettle sing")
    assert (first.stage, first.payload, first.cost.provenance) == (
        Stage.NEURAL,
        "Greedy.",
        Provenance.ESTIMATED,
    )
    assert "remote model at 127.0.0.1:8080" in first.cost.basis
    assert greedy.resolve("why does the kettle sing").stage is Stage.CACHE

    sampled = Cascade(small_stages(backend((200, completion("Sampled.")), temperature=0.9)))  # type: ignore[arg-type]
    assert sampled.resolve("why does the kettle sing").stage is Stage.NEURAL
    assert sampled.resolve("why does the kettle sing").stage is Stage.NEURAL


# -- errors -------------------------------------------------------------------------------


def test_an_http_error_status_is_a_backend_error_with_a_short_excerpt() -> None:
    body = ("model exploded " * 100).encode()
    with pytest.raises(BackendError) as err:
        backend((500, body)).generate("q")
    reason = err.value.reason
    assert reason.startswith(
        "openai:smol@127.0.0.1:8080: HTTP 500 from " + URL + "/chat/completions"
    )
    excerpt = reason.split(": ", 3)[-1]
    assert excerpt.startswith("model exploded") and len(excerpt) <= 200


def test_a_404_says_to_check_the_url_and_an_empty_body_says_so() -> None:
    with pytest.raises(BackendError, match=r"HTTP 404 .*usually ends in /v1.*\(empty body\)"):
        backend((404, b"")).generate("q")


def test_a_server_that_cannot_be_reached_is_a_backend_error_naming_cors() -> None:
    with pytest.raises(
        BackendError, match=r"cannot reach 127\.0\.0\.1:8080 \(OSError: refused\).*CORS"
    ):
        backend(OSError("refused")).generate("q")


def test_a_reply_larger_than_two_mib_is_refused() -> None:
    with pytest.raises(BackendError, match="larger than 2,097,152 bytes"):
        backend((200, b" " * (MAX_BODY_BYTES + 1))).generate("q")


def message(content: Any) -> bytes:
    return json.dumps({"choices": [{"message": {"content": content}}]}).encode()


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (b"<html>Bad gateway</html>", r"is not JSON .*it begins: <html>Bad gateway"),
        (b"\xff\xfe", "UTF-8"),
        (b'{"choices": [], "choices": []}', "appears twice"),
        (b"[1, 2]", "a JSON list, not an object"),
        (b'{"error": {"message": "model not loaded"}}', "reports an error: model not loaded"),
        (b'{"object": "chat.completion"}', "no list of choices"),
        (b'{"choices": []}', "has no choices"),
        (b'{"choices": ["x"]}', "first choice is str"),
        (b'{"choices": [{"text": "hi"}]}', "no message object"),
        (message(None), "content is NoneType.*tool call or a refusal"),
        (message(42), "content is int, not text"),
        (message(" \n"), "answer is empty"),
        (completion(usage=[1]), "usage is list"),
        (
            completion(usage={"prompt_tokens": -1, "completion_tokens": 1}),
            "prompt_tokens is not a token count",
        ),
        (
            completion(usage={"prompt_tokens": 1, "completion_tokens": True}),
            "completion_tokens is not a token count",
        ),
        (
            completion(usage={"prompt_tokens": "9", "completion_tokens": 1}),
            "prompt_tokens is not a token count",
        ),
    ],
)
def test_a_reply_of_the_wrong_shape_is_a_backend_error(body: bytes, match: str) -> None:
    with pytest.raises(BackendError, match=match):
        backend((200, body)).generate("q")


def test_a_failed_answer_is_not_remembered_and_the_cheap_tiers_keep_answering() -> None:
    cascade = Cascade(small_stages(backend((503, b"loading model"))))  # type: ignore[arg-type]
    with pytest.raises(BackendError, match="HTTP 503"):
        cascade.resolve("why does the kettle sing")
    assert cascade.resolve("what is 2+2").payload == "4"
    with pytest.raises(BackendError):
        cascade.resolve("why does the kettle sing")


# -- the urllib transport (natively) ---------------------------------------------------------


@pytest.mark.skipif(IN_BROWSER, reason="needs a local HTTP server in a thread")
def test_the_urllib_transport_talks_to_a_real_http_server() -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            asked = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status, body = (
                (200, completion("echo " + asked["messages"][0]["content"]))
                if self.path == "/v1/chat/completions"
                else (404, b"no such route")
            )
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        assert BrowserOpenAIBackend(base + "/v1", model="m").generate("hi").text == "echo hi"
        with pytest.raises(BackendError, match=r"HTTP 404 .*no such route"):
            BrowserOpenAIBackend(base + "/v2", model="m").generate("hi")
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(BackendError, match="cannot reach"):
        BrowserOpenAIBackend(base + "/v1", model="m").generate("hi")


def test_the_servers_finish_reason_is_kept_and_checked() -> None:
    """Issue 34: an answer the server cut at max_tokens says so; it is never taken as finished."""

    def cut(reason: Any) -> bytes:
        doc = json.loads(completion(usage=None))
        doc["choices"][0]["finish_reason"] = reason
        return json.dumps(doc).encode()

    assert backend((200, cut("length"))).generate("q").finish_reason == "length"
    assert backend((200, cut("stop"))).generate("q").finish_reason == "stop"
    assert backend((200, completion())).generate("q").finish_reason is None
    for bad in (3, "Length!", ""):
        with pytest.raises(BackendError, match="finish_reason"):
            backend((200, cut(bad))).generate("q")
