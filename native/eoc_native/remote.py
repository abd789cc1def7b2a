"""A neural-stage backend for any OpenAI-compatible server, over ``http.client``.

:class:`OpenAIBackend` asks ``POST {base_url}/chat/completions`` of llama.cpp's server, vLLM,
Ollama or a hosted API, and answers with a :class:`~eoc.stages.neural.Reply`.

Honesty (docs/design.md §3): a remote model's work is seen by no counter on this host, so every
figure it gets is ESTIMATED, from :func:`~eoc.stages.base.work_estimate` over the tokens the
server says it read and wrote (its ``usage``), or one per four characters when it says nothing.
The basis says so. An energy figure the server sends (``usage.energy_j`` or any field whose
name mentions energy or joules) is quoted in the basis as the server's claim and never
becomes the figure, let alone a MEASURED one.

Everything the server sends is hostile until checked: bodies are read up to
:data:`MAX_BODY_BYTES` (streams up to the same total), JSON is parsed by
:func:`eoc.files.bounded.loads_strict`, and a reply of the wrong shape is a
:class:`~eoc.errors.BackendError`. The API key never appears in an error message.
"""

from __future__ import annotations

import codecs
import email.utils
import http.client
import json
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping
from types import TracebackType
from typing import Any

from eoc.chat.request import ChatRequest, tool_call_text
from eoc.cost import JouleCost
from eoc.errors import BackendError, BadJson, ConfigError, UpstreamRefused
from eoc.files.bounded import loads_strict
from eoc.openai.replies import (
    check_base_url,
    check_sampling,
    energy_claims,
    finish_reason_of,
    first_choice,
    message_text,
    printable,
    reply_object,
)
from eoc.query import Stage
from eoc.stages.base import WORK_RATES, WorkRates, work_estimate
from eoc.stages.neural import MAX_TOKENS, Reply, endpoint_origin
from eoc.text.tokens import approx_tokens
from eoc_native.keepalive import Connections

MAX_BODY_BYTES = 2 << 20
"""The most bytes read of one reply (and of one streamed reply, all events together)."""
MAX_RETRIES = 10
"""The most retries ``max_retries`` may ask for."""
BACKOFF_S = 0.5
"""The first retry waits this long; each later one twice the one before, up to :data:`BACKOFF_CAP_S`."""
BACKOFF_CAP_S = 8.0
MAX_RETRY_AFTER_S = 30.0
"""The longest ``Retry-After`` honoured by default; a server asking for more gets a BackendError."""
EXCERPT_CHARS = 200
"""The most characters of a server's body quoted in an error."""


def _count(value: object, what: str) -> int | None:
    """A token count from ``usage``: a whole number, or ``None`` when absent."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        raise BackendError(f"the server's usage.{what} is not a token count: {value!r:.40}")
    return value


def _positive(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{what} must be a number of seconds, not {type(value).__name__}")
    if not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{what} must be a positive, finite number of seconds; got {value!r}")
    return float(value)


class _Usage:
    """What the server said of its own work: token counts and any energy claims."""

    __slots__ = ("claims", "tokens_in", "tokens_out")

    def __init__(self) -> None:
        self.tokens_in: int | None = None
        self.tokens_out: int | None = None
        self.claims: dict[str, str] = {}

    def read(self, doc: Mapping[str, Any]) -> None:
        """Take the counts from ``doc["usage"]`` and energy claims from ``doc`` and its usage."""
        usage = doc.get("usage")
        if usage is not None and not isinstance(usage, dict):
            raise BackendError(f"the server's usage is {type(usage).__name__}, not an object")
        if usage:
            n_in = _count(usage.get("prompt_tokens"), "prompt_tokens")
            n_out = _count(usage.get("completion_tokens"), "completion_tokens")
            self.tokens_in = n_in if n_in is not None else self.tokens_in
            self.tokens_out = n_out if n_out is not None else self.tokens_out
        energy_claims(doc, usage or {}, self.claims)


class ReplyStream:
    """The pieces of one streamed answer; after the last, :attr:`reply` is the whole Reply.

    Iterate it once (``for piece in stream``); ``reply`` stays ``None`` until the server has
    finished and the answer passed every check. Use it as a context manager, or call
    :meth:`close`, to drop the connection of a stream left unfinished.
    """

    def __init__(self, start: Callable[[ReplyStream], Iterator[str]]) -> None:
        self.reply: Reply | None = None
        self._pieces = start(self)

    def __iter__(self) -> Iterator[str]:
        return self._pieces

    def close(self) -> None:
        close = getattr(self._pieces, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> ReplyStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


ENV_JOULES = "EOC_OPENAI_JOULES_PER_TOKEN"


def declared_rates(given: tuple[float, float] | None, env_value: str | None) -> WorkRates | None:
    """The upstream's declared joules per token read and written, as work rates (``None``:
    none declared). ``env_value`` is ``$EOC_OPENAI_JOULES_PER_TOKEN``: "IN,OUT" in joules."""
    where = "joules_per_token"
    if given is None and env_value:
        where = ENV_JOULES
        try:
            a, b = (float(x) for x in env_value.split(","))
        except ValueError:
            raise ConfigError(
                f"{ENV_JOULES} is two numbers, joules per token read and written: e.g. 0.05,0.5"
            ) from None
        given = (a, b)
    if given is None:
        return None
    try:
        j_in, j_out = (float(x) for x in given)
    except (TypeError, ValueError):
        raise ConfigError(f"{where} is (joules per token read, joules per token written)") from None
    if not all(math.isfinite(x) and 0 < x <= 1000 for x in (j_in, j_out)):
        raise ConfigError(f"{where}: each figure is above 0 and at most 1000 J a token")
    return WorkRates(
        0.0,
        per_token_in_uj=j_in * 1e6,
        per_token_out_uj=j_out * 1e6,
        why=f"the upstream's figures as declared ({where}), not measured here",
    )


class OpenAIBackend:
    """Answers through an OpenAI-compatible ``/chat/completions`` endpoint.

    Args:
        base_url: the API root, e.g. ``http://127.0.0.1:8080/v1``; else ``$EOC_OPENAI_BASE_URL``,
            else ``$OPENAI_BASE_URL``.
        api_key: sent as a bearer token; else ``$EOC_OPENAI_API_KEY``, else ``$OPENAI_API_KEY``;
            optional (local servers need none).
        model: the model to ask for; else ``$EOC_OPENAI_MODEL``, else the first that
            ``GET {base_url}/models`` lists (asked once, here).
        max_tokens: the most tokens one answer may have.
        temperature: 0 (the default) is greedy; above 0 samples, and without a ``seed`` such an
            answer is never memoized (``Reply.memoize`` False).
        seed: the sampling seed sent to the server.
        timeout: seconds to wait for the server: one number for connecting and for each read,
            or ``(connect, read)``.
        total_timeout: the most seconds one request may take, body included.
        max_retries: retries (0 to 10) after a 429, a 5xx or a failed connection, waiting
            0.5 s, 1 s, 2 s ... (at most 8 s) or what ``Retry-After`` asks, up to
            ``max_retry_after`` (a server asking for longer gets a BackendError at once).
        system: an optional system prompt sent before each question.
        joules_per_token: what the upstream model spends, as ``(joules per token read, joules
            per token written)``; else ``$EOC_OPENAI_JOULES_PER_TOKEN`` ("IN,OUT"), else eoc's
            default for a small model (:data:`eoc.stages.base.WORK_RATES`). A declared figure,
            never a measurement: every answer's estimate and what the kv's judge weighs its
            joules against (:mod:`eoc.stages.judging`) read it, and the basis says it was declared.
        sleep: the wait between retries (tests inject their own).
        env: where the defaults are read (``os.environ`` unless given).

    Raises:
        ConfigError: an argument it cannot use (the message says what to pass instead).
        BackendError: no model given and the server did not list one.
    """

    runs_model = True

    def __init__(
        self,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        model: str | None = None,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = None,
        timeout: float | tuple[float, float] = (10.0, 120.0),
        total_timeout: float = 600.0,
        max_retries: int = 2,
        max_retry_after: float = MAX_RETRY_AFTER_S,
        system: str | None = None,
        joules_per_token: tuple[float, float] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        env: Mapping[str, str] | None = None,
    ) -> None:
        env = os.environ if env is None else env
        self.work_rates = declared_rates(joules_per_token, env.get(ENV_JOULES))
        url = base_url or env.get("EOC_OPENAI_BASE_URL") or env.get("OPENAI_BASE_URL")
        self.base_url, self.host = self._check_url(url)
        key = (
            api_key
            if api_key is not None
            else (env.get("EOC_OPENAI_API_KEY") or env.get("OPENAI_API_KEY"))
        )
        if key is not None and not isinstance(key, str):
            raise ConfigError(f"api_key must be a string, not {type(key).__name__}")
        if key is not None and (
            not key.strip() or any(not c.isprintable() or c.isspace() for c in key)
        ):
            raise ConfigError(
                "api_key is empty or holds spaces or control characters: pass the key alone"
            )
        self._key = key or None
        check_sampling(max_tokens, temperature, seed)
        if isinstance(timeout, tuple):
            if len(timeout) != 2:
                raise ConfigError("timeout must be seconds, or a pair (connect, read)")
            connect, read = (_positive(t, "timeout") for t in timeout)
        else:
            connect = read = _positive(timeout, "timeout")
        self.total_timeout = _positive(total_timeout, "total_timeout")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int):
            raise ConfigError(
                f"max_retries must be a whole number, not {type(max_retries).__name__}"
            )
        if not 0 <= max_retries <= MAX_RETRIES:
            raise ConfigError(f"max_retries must be 0 to {MAX_RETRIES}; got {max_retries}")
        self.max_retry_after = _positive(max_retry_after, "max_retry_after")
        if system is not None and (not isinstance(system, str) or not system.strip()):
            raise ConfigError("system must be a non-empty string, or None for no system prompt")
        if not callable(sleep):
            raise ConfigError("sleep must be a function of seconds")
        self.max_tokens = max_tokens
        self.temperature = float(temperature)
        self.seed = seed
        self.max_retries = max_retries
        self.system = system
        self._sleep = sleep
        # keep-alive http.client connections, one per thread (eoc_native.keepalive says why);
        # no proxy or .netrc settings are read from the environment
        self._conns = Connections(self.base_url, connect_s=connect, read_s=read)
        headers = {"Accept-Encoding": "identity", "User-Agent": "eoc-openai-backend"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        self._headers = headers
        self._post_headers = {**headers, "Content-Type": "application/json"}
        self.aliases: dict[str, str] = {}
        """Names clients send for an upstream model, and its id there (``--model-alias``)."""
        self.name = f"openai:?@{self.host}"
        given = model if model is not None else env.get("EOC_OPENAI_MODEL")
        if given is not None:
            if not isinstance(given, str) or not given.strip() or len(given) > 256:
                raise ConfigError("model must be a model name (1 to 256 characters)")
            self.model = given
        else:
            self.model = self._first_model()
        self.name = f"openai:{self.model}@{self.host}"

    # -- configuration ----------------------------------------------------------------

    @staticmethod
    def _check_url(url: object) -> tuple[str, str]:
        return check_base_url(
            url,
            missing="no server given: pass base_url= or set EOC_OPENAI_BASE_URL "
            "(e.g. http://127.0.0.1:8080/v1)",
            credentials="base_url must not hold credentials: pass the key as api_key= or "
            "EOC_OPENAI_API_KEY",
        )

    # -- the Backend protocol -----------------------------------------------------------

    @property
    def memoize(self) -> bool:
        """False when answers are sampled without a seed: the same question gets another one."""
        return not (self.temperature > 0 and self.seed is None)

    @property
    def origin(self) -> str:
        """What makes this backend's answers: the server and model asked, and the parameters
        that change an answer to a plain question."""
        return endpoint_origin(
            self.model, self.base_url, self.max_tokens, self.temperature, self.seed
        )

    def generate(self, prompt: str) -> Reply:
        """One answer to ``prompt``.

        Raises:
            BackendError: the server failed, refused, or sent something that is not an answer.
        """
        with self._open("POST", "/chat/completions", self._body(prompt, stream=False)) as resp:
            body = self._read_body(resp)
        doc = self._json(body, "reply")
        usage = _Usage()
        usage.read(doc)
        sent = prompt if not self.system else f"{self.system}\n{prompt}"
        text = message_text(doc, self._fail)
        return self._reply(sent, text, usage, self.memoize, self._finish(doc))

    def chat(self, request: ChatRequest, on_piece: Callable[[str], None] | None = None) -> Reply:
        """Answer a whole conversation with its own parameters (what ``eoc serve`` forwards).

        The conversation, ``max_tokens``, ``temperature``, ``top_p``, ``stop``, ``seed`` and the
        penalties go to the server as sent; the model is this backend's. A ``completion``
        request goes to ``POST /completions``. With ``on_piece`` the answer is streamed from the
        server and each piece handed on as it arrives.

        Raises:
            BackendError: the server failed, refused, or sent something that is not an answer.
        """
        if request.forward is not None:
            return self._forward(request, on_piece)
        body = self._request_body(request, stream=on_piece is not None)
        path = "/chat/completions" if request.kind == "chat" else "/completions"
        memo = request.repeatable
        if on_piece is None:
            with self._open("POST", path, body) as resp:
                raw = self._read_body(resp)
            doc = self._json(raw, "reply")
            usage = _Usage()
            usage.read(doc)
            text = message_text(doc, self._fail) if request.kind == "chat" else self._text(doc)
            return self._reply(request.texts(), text, usage, memo, self._finish(doc))
        stream = ReplyStream(
            lambda holder: self._stream_pieces(
                request.texts(), holder, body, path, memo, raw_text=request.kind != "chat"
            )
        )
        with stream:
            for piece in stream:
                on_piece(piece)
        assert stream.reply is not None
        return stream.reply

    def upstream_model(self, request: ChatRequest) -> str:
        """The upstream's id of the model a request names: an alias's (:attr:`aliases`), else
        this backend's model."""
        return self.aliases.get(request.model, self.model)

    def _forward(self, request: ChatRequest, on_piece: Callable[[str], None] | None) -> Reply:
        """A request eoc does not answer itself (:attr:`eoc.chat.request.ChatRequest.forward`), sent as
        the client sent it but for the model's id, its reply kept whole: the body's text, or a
        streamed reply's events as they came (each handed to ``on_piece`` as it arrives).

        The reply is checked as any other (JSON objects, a stream that ends, the size) and
        estimated from the usage it reports, else from what the model wrote (content, tool
        calls) at 4 characters a token.

        Raises:
            UpstreamRefused: the upstream refused the request (400, 413, 422): its reason.
            BackendError: the upstream failed, or sent what is not a reply.
        """
        assert request.body is not None
        body = {**request.body, "model": self.upstream_model(request)}
        path = _PATHS[request.kind]
        usage = _Usage()
        with self._open("POST", path, body, relay=True) as resp:
            ctype = resp.response.headers.get("content-type", "")
            if request.stream != ctype.startswith("text/event-stream"):
                raise self._fail(
                    f"the upstream answered a {'streamed' if request.stream else 'whole'} "
                    f"request with {ctype or 'no content type'}"
                )
            if not request.stream:
                raw = self._read_body(resp)
                doc = self._json(raw, "reply")
                usage.read(doc)
                text = self._utf8(raw)
                said = _wrote(doc.get("choices"), self._fail)
                # an embedding is whole or an error: it has no finish reason
                finish = "stop" if request.kind == "embedding" else self._finish(doc)
                return self._reply(request.texts(), text, usage, request.repeatable, finish, said)
            parts: list[str] = []
            decoder = codecs.getincrementaldecoder("utf-8")()

            def relayed() -> Iterator[bytes]:
                for chunk in resp.chunks(self):
                    try:
                        piece = decoder.decode(chunk)
                    except UnicodeDecodeError:
                        raise self._fail("the stream is not UTF-8 text") from None
                    if piece:
                        parts.append(piece)
                        if on_piece is not None:
                            on_piece(piece)
                    yield chunk

            wrote: list[str] = []
            done = finished = False
            reason: str | None = None
            for data in self._events(relayed()):
                if data == "[DONE]":
                    done = True
                    continue
                doc = self._json(data, "stream event")
                usage.read(doc)
                wrote.append(_wrote(doc.get("choices"), self._fail, delta=True))
                choice = first_choice(doc, self._fail, allow_none=True)
                ended = None if choice is None else finish_reason_of(choice, self._fail)
                if ended is not None and not finished:
                    finished, reason = True, ended
        if not (done or finished):
            raise self._fail("the stream ended before the reply did (no [DONE], no finish_reason)")
        return self._reply(
            request.texts(), "".join(parts), usage, request.repeatable, reason, "".join(wrote)
        )

    def _utf8(self, raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self._fail("the reply is not UTF-8 text") from None

    def _request_body(self, request: ChatRequest, *, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.upstream_model(request),
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": stream,
        }
        if request.kind == "chat":
            messages = request.as_messages()
            if self.system and messages[0]["role"] != "system":
                messages.insert(0, {"role": "system", "content": self.system})
            body["messages"] = messages
        else:
            body["prompt"] = request.question
        if not request.greedy:
            body["top_p"] = request.top_p
            if request.seed is not None:
                body["seed"] = request.seed
        if request.stop:
            body["stop"] = list(request.stop)
        for name in ("presence_penalty", "frequency_penalty"):
            if getattr(request, name):
                body[name] = getattr(request, name)
        if stream:
            body["stream_options"] = {"include_usage": True}
        return body

    def _text(self, doc: Mapping[str, Any]) -> str:
        """The text of a (non-streamed) ``/completions`` reply's first choice."""
        choice = first_choice(doc, self._fail)
        assert choice is not None
        text = choice.get("text")
        if not isinstance(text, str):
            raise self._fail(f"the completion's text is {type(text).__name__}, not text")
        return text

    def stream(self, prompt: str) -> ReplyStream:
        """The answer to ``prompt`` in pieces as the server writes them (server-sent events).

        The returned :class:`ReplyStream` yields text pieces; once it is exhausted its
        ``reply`` is the same :class:`Reply` :meth:`generate` would return for that text.
        Nothing is sent until the first piece is asked for. A failure midway raises
        :class:`BackendError` from the iteration.
        """
        body = self._body(prompt, stream=True)
        sent = prompt if not self.system else f"{self.system}\n{prompt}"
        return ReplyStream(
            lambda holder: self._stream_pieces(
                sent, holder, body, "/chat/completions", self.memoize
            )
        )

    def close(self) -> None:
        """Close the connections held to the server."""
        self._conns.close()

    def __enter__(self) -> OpenAIBackend:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"OpenAIBackend({self.name!r})"

    # -- requests -------------------------------------------------------------------------

    def _messages(self, prompt: str) -> list[dict[str, str]]:
        if not isinstance(prompt, str) or not prompt:
            raise BackendError("the prompt must be non-empty text")
        messages = [{"role": "system", "content": self.system}] if self.system else []
        messages.append({"role": "user", "content": prompt})
        return messages

    def _body(self, prompt: str, *, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": self._messages(prompt),
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "stream": stream,
        }
        if self.seed is not None:
            body["seed"] = self.seed
        if stream:
            body["stream_options"] = {"include_usage": True}
        return body

    def _redact(self, text: str) -> str:
        return text.replace(self._key, "[api key]") if self._key else text

    def _fail(self, message: str) -> BackendError:
        return BackendError(self._redact(f"{self.name}: {message}"))

    def _open(
        self, method: str, path: str, body: dict[str, Any] | None, *, relay: bool = False
    ) -> _Response:
        """Send the request, retrying as configured; the response is open and its status 2xx.

        ``relay``: the body is a client's request forwarded as sent, and a 400, 413 or 422 is
        the client's to hear (:class:`~eoc.errors.UpstreamRefused`), not a failure."""
        url = self.base_url + path
        deadline = time.monotonic() + self.total_timeout
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                conn, resp = self._conns.request(
                    method,
                    path,
                    None if body is None else json.dumps(body).encode(),
                    self._headers if body is None else self._post_headers,
                )
            except TimeoutError as exc:
                raise self._fail(
                    f"{url} timed out ({type(exc).__name__}): "
                    "raise timeout=, or ask for fewer max_tokens"
                ) from None
            except (OSError, http.client.HTTPException) as exc:
                if last:
                    raise self._fail(
                        f"cannot reach {self.host} ({type(exc).__name__}: "
                        f"{printable(str(exc), 120)}) after {attempt + 1} attempts: "
                        "is the server running, and is base_url right?"
                    ) from None
                self._wait(self._backoff(attempt), deadline)
                continue
            status = resp.status
            if 200 <= status < 300:
                return _Response(self._conns, conn, resp, deadline)
            try:
                excerpt = self._excerpt(resp, deadline)
                retry_after = resp.headers.get("retry-after")
            finally:
                # an error body read only in part: its connection is closed, never reused
                self._conns.done(conn, resp)
            if (status == 429 or status >= 500) and not last:
                wait = self._backoff(attempt)
                if retry_after is not None:
                    asked = _retry_after_s(retry_after)
                    if asked is not None and asked > self.max_retry_after:
                        raise self._fail(
                            f"HTTP {status} from {url}, and the server "
                            f"asks to retry after {asked:g} s, longer than the "
                            f"{self.max_retry_after:g} s eoc waits: try again later "
                            f"(body: {excerpt})"
                        )
                    if asked is not None:
                        wait = asked
                self._wait(wait, deadline)
                continue
            if relay and status in (400, 413, 422):
                raise UpstreamRefused(
                    self._redact(f"the upstream model server refused the request: {excerpt}"),
                    status,
                )
            raise self._fail(f"HTTP {status} from {url}{_hint(status)}: {excerpt}")
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _backoff(attempt: int) -> float:
        return float(min(BACKOFF_CAP_S, BACKOFF_S * 2**attempt))

    def _wait(self, seconds: float, deadline: float) -> None:
        if time.monotonic() + seconds > deadline:
            raise self._fail(
                f"gave up retrying: waiting {seconds:g} s more would pass total_timeout "
                f"({self.total_timeout:g} s)"
            )
        self._sleep(seconds)

    def _excerpt(self, resp: http.client.HTTPResponse, deadline: float) -> str:
        """At most :data:`EXCERPT_CHARS` characters of an error body, on one line."""
        data = b""
        try:
            while len(data) < 4 * EXCERPT_CHARS and time.monotonic() <= deadline:
                chunk = resp.read1(4 * EXCERPT_CHARS)
                if not chunk:
                    break
                data += chunk
        except (OSError, http.client.HTTPException):
            pass
        text = printable(self._redact(data.decode("utf-8", "replace")), EXCERPT_CHARS)
        return text or "(empty body)"

    def _read_body(self, resp: _Response) -> bytes:
        parts: list[bytes] = []
        size = 0
        for chunk in resp.chunks(self):
            parts.append(chunk)
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise self._fail(
                    f"the reply is larger than {MAX_BODY_BYTES:,} bytes, more than eoc reads: "
                    "ask for fewer max_tokens"
                )
        return b"".join(parts)

    def _json(self, data: bytes | str, what: str) -> dict[str, Any]:
        try:
            doc = loads_strict(data, what=f"the server's {what}")
        except BadJson as exc:
            raise self._fail(exc.reason) from None
        return reply_object(doc, what, self._fail)

    def _models_list(self) -> list[str]:
        with self._open("GET", "/models", None) as resp:
            body = self._read_body(resp)
        doc = self._json(body, "model list")
        data = doc.get("data")
        if not isinstance(data, list):
            raise self._fail('GET /models sent no list of models ("data")')
        names = []
        for item in data:
            name = item.get("id") if isinstance(item, dict) else None
            if not isinstance(name, str) or not name.strip() or len(name) > 256:
                raise self._fail("GET /models listed a model without a usable id")
            names.append(name)
        return names

    def _first_model(self) -> str:
        names = self._models_list()
        if not names:
            raise self._fail("the server lists no models: pass model= or set EOC_OPENAI_MODEL")
        return names[0]

    # -- streaming -----------------------------------------------------------------------

    def _stream_pieces(
        self,
        sent: str,
        holder: ReplyStream,
        body: dict[str, Any],
        path: str,
        memo: bool,
        *,
        raw_text: bool = False,
    ) -> Iterator[str]:
        usage = _Usage()
        text: list[str] = []
        done = finished = False
        reason: str | None = None  # the last finish_reason a choice gave
        with self._open("POST", path, body) as resp:
            ctype = resp.response.headers.get("content-type", "")
            if ctype.startswith("application/json"):  # a server that does not stream
                doc = self._json(self._read_body(resp), "reply")
                usage.read(doc)
                whole = self._text(doc) if raw_text else message_text(doc, self._fail)
                holder.reply = self._reply(sent, whole, usage, memo, self._finish(doc))
                yield whole
                return
            for data in self._events(resp.chunks(self)):
                if data == "[DONE]":
                    done = True
                    break
                doc = self._json(data, "stream event")
                usage.read(doc)
                choice = first_choice(doc, self._fail, allow_none=True)
                if choice is None:
                    continue
                said = finish_reason_of(choice, self._fail)
                if said is not None:
                    finished, reason = True, said
                if raw_text:
                    piece = choice.get("text")
                else:
                    delta = choice.get("delta")
                    if delta is None:
                        continue
                    if not isinstance(delta, dict):
                        raise self._fail("a stream event's delta is not an object")
                    piece = delta.get("content")
                if piece is None:
                    continue
                if not isinstance(piece, str):
                    raise self._fail(
                        f"a stream event's content is {type(piece).__name__}, not text"
                    )
                if piece:
                    text.append(piece)
                    yield piece
        if not (done or finished):
            raise self._fail("the stream ended before the answer did (no [DONE], no finish_reason)")
        holder.reply = self._reply(sent, "".join(text), usage, memo, reason)

    def _events(self, chunks: Iterator[bytes]) -> Iterator[str]:
        """The ``data`` of each server-sent event, the whole stream at most MAX_BODY_BYTES."""
        buffer = b""
        size = 0
        data: list[str] = []
        for chunk in chunks:
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise self._fail(
                    f"the streamed reply is larger than {MAX_BODY_BYTES:,} bytes, more than "
                    "eoc reads: ask for fewer max_tokens"
                )
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for raw in lines:
                line = raw.rstrip(b"\r")
                if not line:
                    if data:
                        yield "\n".join(data)
                        data = []
                    continue
                try:
                    decoded = line.decode("utf-8")
                except UnicodeDecodeError:
                    raise self._fail("the stream is not UTF-8 text") from None
                if decoded.startswith(":"):
                    continue  # an SSE comment (keep-alive)
                field, _, value = decoded.partition(":")
                if field == "data":
                    data.append(value[1:] if value.startswith(" ") else value)
        tail = buffer.rstrip(b"\r")
        if tail.startswith(b"data:"):
            data.append(tail[5:].decode("utf-8", "replace").lstrip(" "))
        if data:
            yield "\n".join(data)

    # -- the reply and its cost -------------------------------------------------------------

    def _finish(self, doc: Mapping[str, Any]) -> str | None:
        """The finish reason of a whole reply's first choice (``None``: the server gave none)."""
        return finish_reason_of(first_choice(doc, self._fail), self._fail)

    def _reply(
        self,
        sent: str,
        text: str,
        usage: _Usage,
        memo: bool,
        finish: str | None = None,
        wrote: str | None = None,
    ) -> Reply:
        """The Reply for ``text``; ``sent`` is all the text the server read (for the estimate);
        ``finish`` why the server says the answer ended (``None``: it did not say); ``wrote``
        what the model wrote where ``text`` is a whole forwarded reply (:meth:`_forward`)."""
        if not text.strip():
            raise self._fail("the server's answer is empty")
        counted = usage.tokens_in is not None and usage.tokens_out is not None
        n_in = usage.tokens_in if usage.tokens_in is not None else approx_tokens(sent)
        n_out = (
            usage.tokens_out
            if usage.tokens_out is not None
            else approx_tokens(text if wrote is None else wrote)
        )
        rates = self.work_rates or WORK_RATES[Stage.NEURAL]
        est = work_estimate(Stage.NEURAL, tokens_in=n_in, tokens_out=n_out, rates=rates)
        basis = (
            f"remote model at {self.host}: no local counter sees its work; estimated from "
            f"{n_in} tokens in, {n_out} out "
            f"({'counted by the server' if counted else 'approximated at 4 characters a token'}) "
            f"at {rates.per_token_in_uj:g} µJ a token in, {rates.per_token_out_uj:g} µJ out"
            + (f" ({rates.why})" if self.work_rates is not None else "")
        )
        if usage.claims:
            said = ", ".join(f"{k}={v}" for k, v in usage.claims.items())
            basis += f"; the server claims {said} (a claim, not measured here)"
        cost = JouleCost.estimated(est.uj, self._redact(basis))
        # the model's own counts go to the stage only when the server gave both
        return Reply(
            text,
            cost,
            memo,
            tokens_in=n_in if counted else None,
            tokens_out=n_out if counted else None,
            finish_reason=finish,
            content=wrote,
        )


_PATHS = {"chat": "/chat/completions", "completion": "/completions", "embedding": "/embeddings"}
"""Where each kind of forwarded request goes on the upstream."""


def _wrote(choices: object, fail: Callable[[str], BackendError], *, delta: bool = False) -> str:
    """What a model wrote in a forwarded reply's choices (a stream event's deltas): the text,
    and each tool call's name and arguments, one per line."""
    if choices is None:
        return ""
    if not isinstance(choices, list):
        raise fail(f"the reply's choices are {type(choices).__name__}, not a list")
    found: list[str] = []
    for choice in choices:
        if not isinstance(choice, dict):
            raise fail("a choice of the reply is not an object")
        said = choice.get("delta" if delta else "message")
        if isinstance(choice.get("text"), str):
            found.append(choice["text"])
        if not isinstance(said, dict):
            continue
        if isinstance(said.get("content"), str):
            found.append(said["content"])
        found.extend(tool_call_text(said.get("tool_calls")))
    return "\n".join(found)


class _Response:
    """An open streaming response and the deadline its body must arrive by."""

    def __init__(
        self,
        conns: Connections,
        conn: http.client.HTTPConnection,
        response: http.client.HTTPResponse,
        deadline: float,
    ) -> None:
        self.conns = conns
        self.conn = conn
        self.response = response
        self.deadline = deadline

    def chunks(self, backend: OpenAIBackend) -> Iterator[bytes]:
        """The body as it arrives (a streamed reply's events as soon as they are sent)."""
        read = self.response.read1
        try:
            while chunk := read(1 << 16):
                yield chunk
                if time.monotonic() > self.deadline:
                    raise backend._fail(
                        f"the reply took longer than total_timeout ({backend.total_timeout:g} s)"
                    )
        except (OSError, http.client.HTTPException) as exc:
            raise backend._fail(
                f"reading the reply failed: {type(exc).__name__}: {printable(str(exc), 120)}"
            ) from None

    def __enter__(self) -> _Response:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # a body read to its end keeps its connection alive; one left unfinished (a stream
        # stopped early) closes it, so the server stops
        self.conns.done(self.conn, self.response)


def _hint(status: int) -> str:
    if status in (401, 403):
        return " (check the API key: api_key= or EOC_OPENAI_API_KEY)"
    if status == 404:
        return " (check base_url, which usually ends in /v1, and the model name)"
    return ""


def _retry_after_s(value: str) -> float | None:
    """Seconds a ``Retry-After`` header asks for (a number or an HTTP date); None if unreadable."""
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - time.time()
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


__all__ = ["MAX_BODY_BYTES", "OpenAIBackend", "ReplyStream"]
