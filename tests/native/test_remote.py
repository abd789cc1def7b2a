"""OpenAIBackend against a real llama.cpp OpenAI server, and its error paths against a fake one.

The answers come from ``python -m llama_cpp.server`` over SmolLM2-135M (started once for the
module, see tests/llama_server.py). The error paths use a small hostile stdlib HTTP server on
127.0.0.1 that replies what each test scripts: 5xx, 429, 404, bad JSON, huge bodies.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("httpx", reason='httpx is not installed: pip install ".[native]"')

import httpx

from eoc import Cascade, Provenance, Stage, StubCounter
from eoc.errors import BackendError, ConfigError
from eoc.stages import NeuralStage
from eoc.stages.base import work_estimate
from eoc_native.remote import MAX_BODY_BYTES, OpenAIBackend
from tests.helpers import small_stages
from tests.llama_server import running_llama_server

PROMPT = "What is the capital of France?"
KEY = "sk-test-Very-Secret-Key-0123456789"
COUNTS = re.compile(r"estimated from (\d+) tokens in, (\d+) out")


@pytest.fixture(scope="module")
def llama_url() -> Iterator[str]:
    with running_llama_server() as url:
        yield url


@pytest.fixture
def backends() -> Iterator[Callable[..., OpenAIBackend]]:
    """Builds backends and closes them after the test."""
    made: list[OpenAIBackend] = []

    def make(*args: Any, **kwargs: Any) -> OpenAIBackend:
        b = OpenAIBackend(*args, **kwargs)
        made.append(b)
        return b

    yield make
    for b in made:
        b.close()


def counts(basis: str) -> tuple[int, int]:
    m = COUNTS.search(basis)
    assert m, basis
    return int(m.group(1)), int(m.group(2))


# -- against the real server ----------------------------------------------------------


def test_a_greedy_answer_is_deterministic_and_charged_as_a_remote_estimate(
    llama_url: str, backends: Callable[..., OpenAIBackend]
) -> None:
    b = backends(llama_url, max_tokens=16)
    host = llama_url.split("/")[2]
    assert b.model.endswith(".gguf")  # the first model GET /models lists
    assert b.name == f"openai:{b.model}@{host}" and b.runs_model
    first, again = b.generate(PROMPT), b.generate(PROMPT)
    assert first.text.strip() and first.text == again.text
    assert first.memoize
    cost = first.cost
    assert cost is not None and cost.provenance is Provenance.ESTIMATED and cost.counter is None
    assert cost.basis.startswith(
        f"remote model at {host}: no local counter sees its work; estimated from "
    )
    assert "counted by the server" in cost.basis
    # the counts are the server's own usage, and the figure is the neural estimate over them
    raw = httpx.post(
        f"{llama_url}/chat/completions",
        json={
            "model": b.model,
            "messages": [{"role": "user", "content": PROMPT}],
            "max_tokens": 16,
            "temperature": 0,
        },
        timeout=60,
    ).json()
    usage = raw["usage"]
    assert counts(cost.basis) == (usage["prompt_tokens"], usage["completion_tokens"])
    assert raw["choices"][0]["message"]["content"] == first.text
    assert usage["completion_tokens"] <= 16
    expected = work_estimate(
        Stage.NEURAL, tokens_in=usage["prompt_tokens"], tokens_out=usage["completion_tokens"]
    )
    assert cost.uj == expected.uj
    assert (first.tokens_in, first.tokens_out) == (
        usage["prompt_tokens"],
        usage["completion_tokens"],
    )


def test_streamed_pieces_make_the_same_answer(
    llama_url: str, backends: Callable[..., OpenAIBackend]
) -> None:
    b = backends(llama_url, max_tokens=16)
    whole = b.generate(PROMPT)
    with b.stream(PROMPT) as s:
        assert s.reply is None
        pieces = list(s)
    assert len(pieces) > 1 and "".join(pieces) == whole.text
    assert s.reply is not None and s.reply.text == whole.text and s.reply.memoize
    assert s.reply.cost is not None and s.reply.cost.provenance is Provenance.ESTIMATED
    assert s.reply.cost.basis.startswith("remote model at ")


def test_the_cascade_answers_through_the_remote_model_and_remembers_greedy_answers(
    llama_url: str, backends: Callable[..., OpenAIBackend]
) -> None:
    b = backends(llama_url, max_tokens=12)
    cascade = Cascade(small_stages(b), meter=StubCounter())
    assert cascade.resolve("what is 2+2").stage is Stage.KV  # the cheap stages still answer first
    r = cascade.resolve("why is the sky blue")
    assert r.stage is Stage.NEURAL and r.payload == b.generate("why is the sky blue").text
    assert r.cost.provenance is Provenance.ESTIMATED and "remote model at " in r.cost.basis
    assert r.receipt.verify()
    assert cascade.resolve("why is the sky blue").stage is Stage.CACHE


def test_sampled_answers_are_not_memoized_unless_seeded(
    llama_url: str, backends: Callable[..., OpenAIBackend]
) -> None:
    sampled = backends(llama_url, max_tokens=6, temperature=0.8)
    seeded = backends(llama_url, max_tokens=6, temperature=0.8, seed=7)
    assert sampled.generate(PROMPT).memoize is False
    assert seeded.generate(PROMPT).memoize is True
    cascade = Cascade(small_stages(sampled), meter=StubCounter())
    for _ in range(2):
        assert cascade.resolve("tell me a word").stage is Stage.NEURAL  # never cached


# -- a fake, hostile server for the error paths ---------------------------------------

Action = Callable[[BaseHTTPRequestHandler], None]


def send(
    status: int, body: bytes | str | dict[str, Any], headers: dict[str, str] | None = None
) -> Action:
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    data = data.encode() if isinstance(data, str) else data

    def act(h: BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        for k, v in {"Content-Type": "application/json", **(headers or {})}.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    return act


def completion(text: object = "hi", usage: object = None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]
    }
    if usage is not None:
        doc["usage"] = usage
    return doc


def endless(content_type: str = "application/json") -> Action:
    """A body with no length that never ends (until the client hangs up or 20 s pass)."""

    def act(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", content_type)
        h.end_headers()
        chunk = (b"data: " + b"x" * 65_000 + b"\n") if "event" in content_type else b" " * 65_536
        end = time.monotonic() + 20
        try:
            while time.monotonic() < end:
                h.wfile.write(chunk)
        except OSError:
            pass

    return act


def sse(*events: object, done: bool = True) -> Action:
    lines = b"".join(
        b"data: " + (e if isinstance(e, bytes) else json.dumps(e).encode()) + b"\n\n"
        for e in events
    ) + (b"data: [DONE]\n\n" if done else b"")

    def act(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.end_headers()
        h.wfile.write(b": keep-alive\n\n" + lines)

    return act


def delta(content: object, finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}


class FakeServer:
    """Replies with the scripted actions in order; records each request.

    With ``keep_alive`` it speaks HTTP/1.1, keeps connections open between requests and closes
    one that idles ``idle_s`` seconds (as servers do); ``connections`` counts those accepted.
    """

    def __init__(self, *, keep_alive: bool = False, idle_s: float = 0.3) -> None:
        self.script: list[Action] = []
        self.requests: list[tuple[str, str, dict[str, str], Any]] = []
        self.connections = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            if keep_alive:
                protocol_version = "HTTP/1.1"
                timeout = idle_s

            def setup(self) -> None:
                fake.connections += 1
                super().setup()

            def handle_one(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n)) if n else None
                fake.requests.append((self.command, self.path, dict(self.headers), body))
                action = fake.script.pop(0) if fake.script else send(500, "script exhausted")
                action(self)

            do_GET = do_POST = handle_one

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    server = FakeServer()
    yield server
    server.close()


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def backend(
    fake: FakeServer, sleeps: list[float], backends: Callable[..., OpenAIBackend]
) -> OpenAIBackend:
    return backends(fake.url, model="fake-model", api_key=KEY, sleep=sleeps.append, timeout=5)


def test_a_5xx_is_retried_with_backoff(fake: FakeServer, backend: OpenAIBackend, sleeps) -> None:
    fake.script = [send(500, "busy"), send(503, "busy"), send(200, completion("Paris"))]
    reply = backend.generate(PROMPT)
    assert reply.text == "Paris" and sleeps == [0.5, 1.0] and len(fake.requests) == 3
    method, path, headers, body = fake.requests[0]
    assert (method, path) == ("POST", "/v1/chat/completions")
    assert headers["Authorization"] == f"Bearer {KEY}"
    assert body["model"] == "fake-model" and body["temperature"] == 0 and not body["stream"]
    assert body["messages"] == [{"role": "user", "content": PROMPT}]


def test_retries_are_bounded(fake: FakeServer, backend: OpenAIBackend, sleeps) -> None:
    fake.script = [send(502, "bad gateway")] * 3
    with pytest.raises(BackendError, match=r"HTTP 502 .*bad gateway"):
        backend.generate(PROMPT)
    assert len(fake.requests) == 3 and sleeps == [0.5, 1.0]


def test_a_429_waits_what_retry_after_asks(
    fake: FakeServer, backend: OpenAIBackend, sleeps
) -> None:
    fake.script = [send(429, "slow down", {"Retry-After": "3"}), send(200, completion())]
    assert backend.generate(PROMPT).text == "hi" and sleeps == [3.0]


def test_a_retry_after_past_the_cap_is_an_error_without_waiting(
    fake: FakeServer, backend: OpenAIBackend, sleeps
) -> None:
    fake.script = [send(429, "quota exhausted", {"Retry-After": "3600"})]
    with pytest.raises(BackendError, match=r"HTTP 429.*3600 s.*quota exhausted"):
        backend.generate(PROMPT)
    assert sleeps == [] and len(fake.requests) == 1


def test_a_404_names_the_status_and_a_short_excerpt(
    fake: FakeServer, backend: OpenAIBackend, sleeps
) -> None:
    fake.script = [send(404, "no such route " + "x" * 5000)]
    with pytest.raises(BackendError) as err:
        backend.generate(PROMPT)
    msg = str(err.value)
    assert "HTTP 404" in msg and "no such route" in msg and "/v1/chat/completions" in msg
    assert "x" * 200 not in msg and len(msg) < 500
    assert sleeps == [] and len(fake.requests) == 1  # a 4xx is not retried


def test_the_api_key_never_appears_in_an_error(
    fake: FakeServer, backend: OpenAIBackend, sleeps
) -> None:
    fake.script = [send(401, {"error": {"message": f"invalid key {KEY}"}})]
    with pytest.raises(BackendError) as err:
        backend.generate(PROMPT)
    assert "HTTP 401" in str(err.value) and "api key" in str(err.value).lower()
    assert KEY not in str(err.value) and KEY not in repr(backend)
    fake.script = [send(200, {"error": {"message": f"bad {KEY}"}})]
    with pytest.raises(BackendError) as err:
        backend.generate(PROMPT)
    assert KEY not in str(err.value)


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b'{"choices": [], "choices": []}',  # duplicate keys
        b'{"choices": [{"message": {"content": NaN}}]}',
        b"[1, 2]",
        b"\xff\xfe",
        completion(5),
        completion(None),
        completion(["a"]),
        completion(""),
        completion("   "),
        completion("hi", usage={"prompt_tokens": "12", "completion_tokens": 3}),
        completion("hi", usage={"prompt_tokens": -1, "completion_tokens": 3}),
        completion("hi", usage={"prompt_tokens": True, "completion_tokens": 3}),
        completion("hi", usage=[1]),
        {"choices": "nope"},
        {"choices": []},
        {"choices": [None]},
        {"choices": [{"message": "hi"}]},
        {"result": "hi"},
    ],
)
def test_a_malformed_reply_is_a_backend_error(
    fake: FakeServer, backend: OpenAIBackend, body: Any
) -> None:
    fake.script = [send(200, body)]
    with pytest.raises(BackendError):
        backend.generate(PROMPT)


def test_an_oversized_or_endless_body_is_refused(fake: FakeServer, backend: OpenAIBackend) -> None:
    fake.script = [send(200, b" " * (MAX_BODY_BYTES + 1))]
    with pytest.raises(BackendError, match="larger than"):
        backend.generate(PROMPT)
    fake.script = [endless()]
    start = time.monotonic()
    with pytest.raises(BackendError, match="larger than"):
        backend.generate(PROMPT)
    fake.script = [endless("text/event-stream")]
    with pytest.raises(BackendError, match="larger than"):
        list(backend.stream(PROMPT))
    assert time.monotonic() - start < 10


def test_connection_refused_is_retried_then_reported(
    sleeps: list[float], backends: Callable[..., OpenAIBackend]
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    b = backends(
        f"http://127.0.0.1:{port}/v1", model="m", api_key=KEY, sleep=sleeps.append, timeout=2
    )
    with pytest.raises(BackendError, match=r"cannot reach 127\.0\.0\.1") as err:
        b.generate(PROMPT)
    assert sleeps == [0.5, 1.0] and KEY not in str(err.value)


def test_the_server_energy_figure_is_quoted_as_a_claim_never_charged(
    fake: FakeServer, backend: OpenAIBackend
) -> None:
    usage = {"prompt_tokens": 12, "completion_tokens": 3, "energy_j": 0.42}
    fake.script = [send(200, completion("Paris", usage))]
    reply = backend.generate(PROMPT)
    cost = reply.cost
    assert cost is not None and cost.provenance is Provenance.ESTIMATED
    assert cost.uj == work_estimate(Stage.NEURAL, tokens_in=12, tokens_out=3).uj
    assert counts(cost.basis) == (12, 3) and "counted by the server" in cost.basis
    assert (reply.tokens_in, reply.tokens_out) == (12, 3)
    assert "the server claims usage.energy_j=0.42 (a claim, not measured here)" in cost.basis


def test_without_usage_tokens_are_approximated(fake: FakeServer, backend: OpenAIBackend) -> None:
    fake.script = [send(200, completion("Paris is the capital."))]
    reply = backend.generate(PROMPT)
    cost = reply.cost
    assert cost is not None and counts(cost.basis) == (8, 6)
    assert "approximated at 4 characters a token" in cost.basis
    assert reply.tokens_in is None and reply.tokens_out is None  # no counts of the model's own


def test_connections_are_kept_alive_and_replaced_when_the_server_closed_them(
    backends: Callable[..., OpenAIBackend],
) -> None:
    fake = FakeServer(keep_alive=True, idle_s=0.3)
    try:
        b = backends(fake.url, model="m", max_retries=0, timeout=5)
        fake.script = [send(200, completion(f"answer {i}")) for i in range(3)]
        assert b.generate("one").text == "answer 0"
        assert b.generate("two").text == "answer 1"
        assert fake.connections == 1  # the second request reused the first's connection
        time.sleep(0.6)  # the server closes the idle connection
        assert b.generate("three").text == "answer 2"  # no retry allowed: replaced at once
        assert fake.connections == 2
    finally:
        fake.close()


def test_an_error_body_read_in_part_never_poisons_the_next_request(
    backends: Callable[..., OpenAIBackend],
) -> None:
    fake = FakeServer(keep_alive=True, idle_s=5)
    try:
        b = backends(fake.url, model="m", max_retries=0, timeout=5)
        fake.script = [send(404, "x" * 50_000), send(200, completion("fine"))]
        with pytest.raises(BackendError, match="HTTP 404"):
            b.generate("one")
        assert b.generate("two").text == "fine"  # not the rest of the 404's body
        assert fake.connections == 2
    finally:
        fake.close()


def test_a_stream_stopped_early_closes_its_connection(
    backends: Callable[..., OpenAIBackend],
) -> None:
    fake = FakeServer(keep_alive=True, idle_s=5)
    gone = threading.Event()

    def slow(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        try:
            for i in range(200):
                event = b"data: " + json.dumps(delta(f"w{i} ")).encode() + b"\n\n"
                h.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                h.wfile.flush()
                time.sleep(0.02)
        except OSError:
            gone.set()

    try:
        b = backends(fake.url, model="m", max_retries=0, timeout=5)
        fake.script = [slow, send(200, completion("next"))]
        s = b.stream(PROMPT)
        pieces = iter(s)
        assert next(pieces) == "w0 "
        s.close()  # stopped after one piece
        assert gone.wait(5), "the server kept streaming to a client that had stopped"
        assert b.generate("again").text == "next" and fake.connections == 2
    finally:
        fake.close()


def test_streams_from_the_fake_server(fake: FakeServer, backend: OpenAIBackend) -> None:
    usage = {"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 2}}
    fake.script = [sse(delta("Par"), delta("is", "stop"), usage)]
    s = backend.stream(PROMPT)
    assert list(s) == ["Par", "is"]
    assert s.reply is not None and s.reply.text == "Paris"
    assert s.reply.cost is not None and counts(s.reply.cost.basis) == (9, 2)
    assert fake.requests[0][3]["stream"] is True
    # a server that ignores stream: true and sends one JSON reply
    fake.script = [send(200, completion("Paris"))]
    s = backend.stream(PROMPT)
    assert list(s) == ["Paris"] and s.reply is not None and s.reply.text == "Paris"


@pytest.mark.parametrize(
    "action",
    [
        sse(delta(5)),
        sse(b"{broken"),
        sse(delta("Par"), done=False),  # cut off: no [DONE], no finish_reason
        sse({"error": {"message": "model crashed"}}),
        sse({"choices": [{"delta": "x"}]}),
        sse(delta(""), delta(None, "stop")),  # nothing said
    ],
)
def test_a_malformed_stream_is_a_backend_error(
    fake: FakeServer, backend: OpenAIBackend, action: Action
) -> None:
    fake.script = [action]
    s = backend.stream(PROMPT)
    with pytest.raises(BackendError):
        list(s)
    assert s.reply is None


def test_the_model_is_the_first_the_server_lists(
    fake: FakeServer, backends: Callable[..., OpenAIBackend]
) -> None:
    fake.script = [send(200, {"object": "list", "data": [{"id": "m1"}, {"id": "m2"}]})]
    env = {"EOC_OPENAI_BASE_URL": fake.url}
    b = backends(env=env)
    assert b.model == "m1" and b.name == f"openai:m1@{fake.url.split('/')[2]}"
    assert fake.requests[0][:2] == ("GET", "/v1/models")
    assert "Authorization" not in fake.requests[0][2]  # no key given, none in the environment
    assert backends(env={**env, "EOC_OPENAI_MODEL": "mine"}).model == "mine"
    fake.script = [send(200, {"data": []})]
    with pytest.raises(BackendError, match="lists no models"):
        backends(env=env)


def test_failures_reach_the_stage_as_backend_errors(
    fake: FakeServer, backend: OpenAIBackend
) -> None:
    fake.script = [send(200, completion(None))]
    cascade = Cascade([NeuralStage(backend)], meter=StubCounter())
    with pytest.raises(BackendError, match="not text"):
        cascade.resolve("anything")


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"base_url": "ftp://example.com/v1"}, "http://"),
        ({"base_url": "localhost:8080/v1"}, "http://"),
        ({"base_url": "http://user:pw@example.com/v1"}, "api_key"),
        ({"base_url": "http://example.com/v1?x=1"}, "query"),
        ({"base_url": "http://example.com:99999/v1"}, "port"),
        ({"base_url": "http://exa mple.com/v1"}, "spaces"),
        ({"base_url": None}, "EOC_OPENAI_BASE_URL"),
        ({"timeout": 0}, "positive"),
        ({"timeout": -1.0}, "positive"),
        ({"timeout": float("nan")}, "positive"),
        ({"timeout": (1.0,)}, "pair"),
        ({"timeout": (1.0, 0)}, "positive"),
        ({"total_timeout": 0}, "positive"),
        ({"max_retries": -1}, "0 to 10"),
        ({"max_retries": 11}, "0 to 10"),
        ({"max_retries": 1.5}, "whole number"),
        ({"temperature": 3}, "0 (greedy) to 2"),
        ({"temperature": float("inf")}, "0 (greedy) to 2"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"seed": 1.5}, "seed"),
        ({"system": ""}, "system"),
        ({"api_key": "two words"}, "api_key"),
        ({"api_key": "line\nbreak"}, "api_key"),
    ],
)
def test_bad_arguments_are_config_errors_that_say_what_to_do(
    kwargs: dict[str, Any], says: str
) -> None:
    args: dict[str, Any] = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "env": {}}
    with pytest.raises(ConfigError, match=re.escape(says)) as err:
        OpenAIBackend(**{**args, **kwargs})
    for secret in ("two words", "line\nbreak", "pw@"):
        assert secret not in str(err.value)


def test_a_messages_name_is_forwarded_upstream(fake: FakeServer, backend: OpenAIBackend) -> None:
    from eoc.chat.request import ChatDefaults, parse_chat

    fake.script = [send(200, completion("hello ann"))]
    doc = {"model": "m", "messages": [{"role": "user", "content": "hi", "name": "ann"}]}
    backend.chat(parse_chat(doc, ChatDefaults("m")))
    sent = fake.requests[-1][3]
    assert sent["messages"] == [{"role": "user", "content": "hi", "name": "ann"}]


# -- forwarded requests (what eoc does not answer itself: eoc.chat.request) --------------------------


def _forwarded(doc: dict[str, Any], kind: str = "chat") -> Any:
    from eoc.chat.request import ChatDefaults, forwarded_embedding, parse_chat

    if kind == "embedding":
        return forwarded_embedding(doc, ChatDefaults("m"))
    return parse_chat(doc, ChatDefaults("m"), kind=kind, forwards=True)


TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


def test_a_forwarded_request_goes_as_sent_and_its_reply_comes_back_whole(
    fake: FakeServer, backend: OpenAIBackend
) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
    reply = {
        "id": "x",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5},
        "system_fingerprint": "fp",
    }
    raw = json.dumps(reply, indent=1)  # the upstream's own bytes, spaces and all
    fake.script = [send(200, raw)]
    doc = {"model": "alias", "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS}
    doc["temperature"] = 0
    backend.aliases = {"alias": "upstream-id"}
    got = backend.chat(_forwarded(doc))
    assert got.text == raw and got.finish_reason == "tool_calls"
    assert (got.tokens_in, got.tokens_out) == (12, 5) and got.memoize
    assert got.content == 'f\n{"a": 1}'  # what the model wrote: judged for repetition loops
    _, path, _, sent = fake.requests[0]
    assert path == "/v1/chat/completions" and sent == {**doc, "model": "upstream-id"}


def test_a_forwarded_embedding_goes_to_the_embeddings_route(
    fake: FakeServer, backend: OpenAIBackend
) -> None:
    fake.script = [send(200, {"object": "list", "data": [{"embedding": [0.5]}], "usage": {}})]
    got = backend.chat(_forwarded({"model": "e5", "input": ["a", "b"]}, "embedding"))
    assert fake.requests[0][1] == "/v1/embeddings" and fake.requests[0][3]["model"] == "fake-model"
    assert '"embedding"' in got.text and got.finish_reason == "stop"


def test_what_the_upstream_refuses_is_the_clients_to_hear(
    fake: FakeServer, backend: OpenAIBackend, sleeps: list[float]
) -> None:
    from eoc.errors import UpstreamRefused

    doc = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS}
    fake.script = [send(422, {"error": {"message": f"tools[0] is bad; key {KEY}"}})]
    with pytest.raises(UpstreamRefused) as err:
        backend.chat(_forwarded(doc))
    assert err.value.status == 422 and "tools[0] is bad" in err.value.reason
    assert KEY not in err.value.reason and sleeps == []
    # a request eoc answers itself hears the upstream's 4xx as eoc's failure, as before
    fake.script = [send(400, "no")]
    with pytest.raises(BackendError, match="HTTP 400"):
        backend.generate(PROMPT)


def test_a_forwarded_stream_is_relayed_as_it_comes(
    fake: FakeServer, backend: OpenAIBackend
) -> None:
    fake.script = [sse(delta("Hel"), delta("lo", "stop"))]
    doc = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "logprobs": True}
    pieces: list[str] = []
    got = backend.chat(_forwarded({**doc, "stream": True}), pieces.append)
    whole = "".join(pieces)
    assert got.text == whole and whole.startswith(": keep-alive") and whole.endswith("[DONE]\n\n")
    assert got.content == "Hello" and got.finish_reason == "stop"  # the deltas joined
    # a stream cut short is a failure, never a reply
    fake.script = [sse(delta("Hel"), done=False)]
    with pytest.raises(BackendError, match="ended before"):
        backend.chat(_forwarded({**doc, "stream": True}), pieces.append)
    # a stream asked for and a whole body sent (or the other way) is the upstream's fault
    fake.script = [send(200, completion("whole"))]
    with pytest.raises(BackendError, match="streamed"):
        backend.chat(_forwarded({**doc, "stream": True}), pieces.append)
    fake.script = [sse(delta("x", "stop"))]
    with pytest.raises(BackendError, match="whole"):
        backend.chat(_forwarded(doc))
