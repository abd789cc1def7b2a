"""``eoc serve``'s ASGI application: an OpenAI-compatible, energy-metered answer server.

``POST /v1/chat/completions`` and ``POST /v1/completions`` are plain ASGI: a repeat is answered
from the cache on the event loop (:meth:`eoc.cascade.Cascade.cached`) with no framework in the
way; anything else is resolved by the cascade in a worker thread, streamed as server-sent
events when asked. The other routes (``/v1/models``, ``/healthz``, ``/metrics``,
``/openapi.json``, ``/v1/eoc/budget``, ``/v1/eoc/public-key``, and ``POST /v1/eoc/forget`` for
admin keys: :mod:`eoc_native.serve.forgetroute`) are Starlette routes.

Every answer carries eoc's verdict (:mod:`eoc_native.serve.wire`); every error is a JSON body in
the OpenAI error shape with eoc's error class as its ``type``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import orjson

from eoc.cascade import Cascade
from eoc.chat.request import ChatDefaults, ChatRequest, forwarded_embedding, parse_chat
from eoc.errors import (
    BackendError,
    BadJson,
    EocError,
    InputError,
    InputTooLarge,
    PromptTooLong,
    StoreError,
    UpstreamRefused,
)
from eoc.files.bounded import loads_strict
from eoc.query import REUSE, Query
from eoc.response import Response
from eoc_native import require
from eoc_native.semantic.minilm import FIX as MINILM_FIX
from eoc_native.serve import forgetroute
from eoc_native.serve.access import ANSWERED, AccessLog
from eoc_native.serve.breaker import CircuitBreaker, Unavailable
from eoc_native.serve.budget import Budgets, Hold, OverBudget
from eoc_native.serve.embeddings import NAMES as EMBEDDING_NAMES
from eoc_native.serve.embeddings import Embeddings
from eoc_native.serve.keys import ApiKeys
from eoc_native.serve.metrics import Metrics
from eoc_native.serve.openapi import document
from eoc_native.serve.wire import (
    JSON,
    SSE,
    AnswerBodies,
    Chunks,
    Relayed,
    error_body,
    made_receipt_of,
    relayed,
    verdict_headers,
)

Scope = MutableMapping[str, Any]
Whole = tuple[bytes, list[tuple[bytes, bytes]]]
"""A whole reply: its body and headers."""
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

log = logging.getLogger("eoc.serve")
_POSTS = {"/v1/chat/completions": "chat", "/v1/completions": "completion"}
_MEMO_BODIES = 4096
"""Request bodies whose parse is remembered (a repeat skips the checks it already passed)."""
_MEMO_BODY_BYTES = 8192
_JSON_HEADERS = [(b"content-type", JSON)]
_SSE_HEADERS = [(b"content-type", SSE), (b"cache-control", b"no-cache")]
REUSE_HEADER = b"x-eoc-reuse"
REQUEST_ID = b"x-request-id"
"""Echoed on every response: the client's own (up to 128 printable ASCII characters), else a
new one, so a client's log line and the server's name the same request."""


def _request_id(scope: Scope) -> bytes:
    """The request's id: the client's ``x-request-id`` where it is plain and short, else new."""
    for name, value in scope["headers"]:
        if name == REQUEST_ID:
            if 0 < len(value) <= 128 and all(33 <= c <= 126 for c in value):
                return bytes(value)
            break
    return uuid.uuid4().hex.encode()


"""A request's own policy for remembered model answers: paraphrase, exact or never."""


def _reuse_of(scope: Scope) -> str | None:
    """The ``x-eoc-reuse`` header's policy (``None``: the store's).

    Raises:
        HttpError: 400 for a value that is none of :data:`eoc.query.REUSE`.
    """
    for name, value in scope["headers"]:
        if name == REUSE_HEADER:
            text = str(value.decode("latin-1")).strip().lower()
            if text not in REUSE:
                raise HttpError(
                    400,
                    "BadRequest",
                    f"x-eoc-reuse is one of {', '.join(REUSE)}, not {text[:40]!r}",
                    "bad_reuse",
                )
            return text
    return None


STREAMS_NAMED = 65_536
"""Streamed responses whose answers a server keeps names for (to forget by their ids)."""


@dataclass
class ServeConfig:
    """How a server answers: the served model's name, its defaults, and the limits.

    Args:
        model_id: the name clients send as ``model`` (``GET /v1/models`` lists it).
        defaults: the sampling defaults of a request that sets none (a plain question is one
            that sets nothing else: see :mod:`eoc.chat.request`).
        max_body_bytes: the largest request body read (413 beyond).
        body_timeout_s: the longest wait for a request's body to arrive.
        request_timeout_s: the longest wait for an answer (504 beyond; the work itself runs on
            and its answer is still remembered).
        max_pending: answers being worked on at once before new ones get 503 (busy).
        workers: threads resolving queries off the event loop.
        public_key: the host key that signs receipts (hex), served at /v1/eoc/public-key.
    """

    model_id: str
    defaults: ChatDefaults = field(default_factory=lambda: ChatDefaults("eoc"))
    max_body_bytes: int = 1 << 20
    body_timeout_s: float = 10.0
    request_timeout_s: float = 600.0
    max_pending: int = 64
    workers: int = 4
    public_key: str | None = None
    store: str = "memory"
    cors_origins: tuple[str, ...] = ()
    """Web origins whose pages may call this server (the browser demo's, for one)."""
    store_health: Callable[[], str] | None = None
    """Why the shared store is down ("" when up): a miss is then refused (503), not answered
    unstored, while hits from memory keep being served."""
    store_pending: Callable[[], int] | None = None
    """How many writes wait for the shared store to be back (answers said ``pending``)."""
    store_unconfirmed: Callable[[], int] | None = None
    """How many forgets returned before every other replica had confirmed them."""
    forwards: bool = False
    """An upstream answers what eoc does not answer itself (tools, JSON mode, ``n``,
    log-probs, other fields): such a request is forwarded as sent (:mod:`eoc.chat.request`)."""
    aliases: tuple[str, ...] = ()
    """Other names clients may send as ``model`` (``--model-alias``), listed by /v1/models."""
    access_log: str = "off"
    """One line per request on standard error: ``"text"``, ``"json"`` or ``"off"``
    (:mod:`eoc_native.serve.access`)."""
    allowed_hosts: tuple[str, ...] = ()
    """Names clients reach the server by. A request whose Host names anything else (an IP
    address and ``localhost`` always pass) is refused: a page on another site that rebinds its
    DNS name to this machine cannot talk to a local server that takes no keys."""


class HttpError(Exception):
    """An error answered with ``status`` and a JSON body (raised inside the server only)."""

    def __init__(
        self, status: int, kind: str, message: str, code: str, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.code = code
        self.retry_after = retry_after
        self.extra: dict[str, Any] = {}

    @classmethod
    def of(cls, exc: BaseException) -> HttpError:
        """The HTTP error for an eoc error raised while answering."""
        if isinstance(exc, HttpError):
            return exc
        kind = type(exc).__name__
        if isinstance(exc, OverBudget):
            err = cls(429, kind, exc.reason, "joule_budget_exceeded", exc.retry_after)
            err.extra["budget"] = {"scope": exc.scope, **exc.state.to_dict()}
            return err
        if isinstance(exc, Unavailable):
            return cls(503, kind, exc.reason, "upstream_unavailable", exc.retry_after)
        if isinstance(exc, UpstreamRefused):
            return cls(exc.status, kind, exc.reason, "upstream_refused")
        if isinstance(exc, PromptTooLong | InputTooLarge):
            return cls(413, kind, exc.reason, "too_large")
        if isinstance(exc, InputError):
            return cls(400, kind, exc.reason, "invalid_request")
        if isinstance(exc, StoreError):
            return cls(503, kind, exc.reason, "store_unavailable", 1.0)
        if isinstance(exc, BackendError):
            return cls(502, kind, exc.reason, "backend_error")
        if isinstance(exc, EocError):
            return cls(503, kind, exc.reason, "refused", 1.0)
        return cls(500, "InternalError", "the server failed; its log says why", "internal_error")

    def body(self) -> bytes:
        return error_body(self.status, self.kind, self.message, self.code, **self.extra)

    def headers(self) -> list[tuple[bytes, bytes]]:
        out = list(_JSON_HEADERS)
        if self.retry_after is not None:
            out.append((b"retry-after", str(max(1, round(self.retry_after + 0.499))).encode()))
        return out


class EocServer:
    """The ASGI application (see the module docstring). Build it with :func:`create_app`."""

    def __init__(
        self,
        cascade: Cascade,
        config: ServeConfig,
        *,
        keys: ApiKeys | None = None,
        budgets: Budgets | None = None,
        breaker: CircuitBreaker | None = None,
        metrics: Metrics | None = None,
        embeddings: Embeddings | None = None,
    ) -> None:
        self.cascade = cascade
        self.embeddings = embeddings
        self.config = config
        self.keys = keys
        self.budgets = budgets if budgets is not None and budgets.active else None
        self.breaker = breaker
        self.metrics = metrics if metrics is not None else Metrics()
        self.metrics.judging = cascade.judging  # the kv's judge of meaning, when it has one
        self.executor = ThreadPoolExecutor(config.workers, thread_name_prefix="eoc-answer")
        self.pending = 0
        self._streams: dict[str, str] = {}  # a streamed response's id -> its answer's name
        self._parsed: dict[tuple[str, bytes], tuple[ChatRequest, Query | None]] = {}
        self._reading: dict[asyncio.Task[Any], float] = {}  # body reads and their deadlines
        self._late: set[asyncio.Task[Any]] = set()
        self._watchdog: asyncio.Task[None] | None = None
        self._bodies = AnswerBodies(config.model_id, config.public_key)
        self.openapi = document(config.model_id, forwards=config.forwards, aliases=config.aliases)
        self._openapi_body = orjson.dumps(self.openapi)
        self._models_body = orjson.dumps(
            {
                "object": "list",
                "data": [
                    {"id": name, "object": "model", "created": 0, "owned_by": "eoc"}
                    for name in (config.model_id, *config.aliases)
                ],
            }
        )
        self._names = frozenset((config.model_id, *config.aliases))
        self._hosts = frozenset({"localhost", *(h.lower() for h in config.allowed_hosts)})
        self._access = AccessLog.of(config.access_log)
        self.other = self._routes()
        self._entry: Callable[[Scope, Receive, Send], Awaitable[None]] = self._dispatch
        if config.cors_origins:
            self._entry = _json_cors()(
                self._dispatch,
                allow_origins=list(config.cors_origins),
                allow_methods=["GET", "POST"],
                allow_headers=["authorization", "content-type", "x-eoc-reuse"],
                expose_headers=[
                    "x-eoc-stage",
                    "x-eoc-microjoules",
                    "x-eoc-provenance",
                    "x-eoc-receipt",
                    "x-eoc-avoided-microjoules",
                    "x-eoc-avoided-provenance",
                    "retry-after",
                    "x-request-id",
                ],
            )

    # -- the Starlette part ------------------------------------------------------------------

    def _routes(self) -> Any:
        starlette = require("starlette.applications", package="starlette", why="eoc serve")
        routing = require("starlette.routing", package="starlette", why="eoc serve")
        responses = require("starlette.responses", package="starlette", why="eoc serve")
        exceptions = require("starlette.exceptions", package="starlette", why="eoc serve")
        Raw = responses.Response

        def json(body: bytes, status: int = 200, headers: Any = None) -> Any:
            return Raw(body, status, headers=headers, media_type="application/json")

        def guarded(fn: Callable[[Any], Any]) -> Callable[[Any], Awaitable[Any]]:
            async def endpoint(request: Any) -> Any:
                try:
                    key = self._key_of(request.scope)
                    return fn(key)
                except HttpError as err:
                    self.metrics.error(err.status, err.code)
                    return json(err.body(), err.status, dict(_str_headers(err.headers())))

            return endpoint

        def public_key(_key: str | None) -> Any:
            if self.config.public_key is None:
                raise HttpError(
                    404,
                    "NotFound",
                    "this server signs no receipts (start it with --sign-key)",
                    "no_key",
                )
            return json(orjson.dumps({"alg": "ed25519", "public_key": self.config.public_key}))

        def metrics(_key: str | None) -> Any:
            body, ctype = self.metrics.render()
            return Raw(body, 200, media_type=ctype)

        def budget(key: str | None) -> Any:
            doc = self.budgets.describe(key) if self.budgets is not None else {}
            return json(orjson.dumps({"budgets": doc}))

        async def forget(request: Any) -> Any:
            try:
                name = self._key_of(request.scope)  # 401 without a valid key
                if self.keys is None or not self.keys.is_admin(name):
                    why = (
                        "this server takes no API keys, so no one may forget: start it with "
                        "--api-keys FILE holding a key marked admin (eoc serve-key NAME --admin)"
                        if self.keys is None
                        else f"the key {name!r} may not forget: only a key marked admin in the "
                        "keys file may (eoc serve-key NAME --admin)"
                    )
                    raise HttpError(403, "Forbidden", why, "not_admin")
                chunks, size = [], 0
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > forgetroute.MAX_BODY_BYTES:
                        raise HttpError(
                            413,
                            "InputTooLarge",
                            f"a forget request is at most {forgetroute.MAX_BODY_BYTES} bytes",
                            "too_large",
                        )
                    chunks.append(chunk)
                what = forgetroute.parse(b"".join(chunks), self.answer_name)
                loop = asyncio.get_running_loop()
                counts = await loop.run_in_executor(
                    self.executor, forgetroute.forget, self.cascade, what
                )
            except EocError as exc:
                err = HttpError.of(exc)
            except HttpError as exc:
                err = exc
            else:
                for stage, n in counts.items():
                    self.metrics.forgotten[stage] += n
                log.info("eoc serve: key %r forgot %s: %s", name, what.describe(), counts)
                return json(orjson.dumps({"forgot": counts, "what": what.describe()}))
            self.metrics.error(err.status, err.code)
            return json(err.body(), err.status, dict(_str_headers(err.headers())))

        async def healthz(_request: Any) -> Any:
            down = self.config.store_health() if self.config.store_health else ""
            doc = {
                "status": "degraded" if down else "ok",
                "store_down": down or None,
                "model": self.config.model_id,
                "store": self.config.store,
                "breaker": self.breaker.state if self.breaker is not None else "none",
                "store_errors": self.cascade.store_errors,
                "store_pending": self.config.store_pending() if self.config.store_pending else 0,
                "forgets_unconfirmed": (
                    self.config.store_unconfirmed() if self.config.store_unconfirmed else 0
                ),
                "pending": self.pending,
            }
            return json(orjson.dumps(doc))

        async def openapi(_request: Any) -> Any:
            return json(self._openapi_body)

        async def http_error(_request: Any, exc: Any) -> Any:
            status = int(getattr(exc, "status_code", 500))
            message = {404: "no such route: see /openapi.json", 405: "method not allowed"}.get(
                status, str(getattr(exc, "detail", "error"))
            )
            code = {404: "not_found", 405: "method_not_allowed"}.get(status, "http_error")
            self.metrics.error(status, code)
            return json(error_body(status, "HTTPError", message, code), status)

        async def fault(_request: Any, _exc: Exception) -> Any:
            log.exception("eoc serve: a route failed")
            err = HttpError.of(RuntimeError())
            self.metrics.error(err.status, err.code)
            return json(err.body(), err.status)

        @contextlib.asynccontextmanager
        async def lifespan(_app: Any) -> AsyncIterator[None]:
            yield
            if self._watchdog is not None:
                self._watchdog.cancel()
            self.close()

        Route = routing.Route
        return starlette.Starlette(
            routes=[
                Route("/v1/models", guarded(lambda _k: json(self._models_body))),
                Route("/v1/eoc/budget", guarded(budget)),
                Route("/v1/eoc/public-key", guarded(public_key)),
                Route("/metrics", guarded(metrics)),
                Route("/v1/eoc/forget", forget, methods=["POST"]),
                # POSTs never reach these (the hot path takes them); other methods get a 405
                *(Route(path, healthz, methods=["POST"]) for path in _POSTS),
                Route("/healthz", healthz),
                Route("/openapi.json", openapi),
            ],
            exception_handlers={exceptions.HTTPException: http_error, Exception: fault},
            lifespan=lifespan,
        )

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.cascade.close()

    # -- ASGI --------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._entry(scope, receive, send)
            return
        rid = _request_id(scope)
        line = self._access.start(scope, rid) if self._access is not None else None

        async def send_with_id(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), (REQUEST_ID, rid)]}
                if line is not None:
                    line.status = message["status"]
            await send(message)

        if line is None:
            await self._entry(scope, receive, send_with_id)
            return
        token = ANSWERED.set(line)
        try:
            await self._entry(scope, receive, send_with_id)
        finally:
            ANSWERED.reset(token)
            self._access.end(line)  # type: ignore[union-attr]

    async def _dispatch(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._host_ok(scope):
            await self._error(send, self._wrong_host(scope))
            return
        if scope["type"] == "http" and scope["method"] == "POST":
            kind = _POSTS.get(scope["path"])
            if kind is not None:
                await self._answer(scope, receive, send, kind)
                return
            if scope["path"] == "/v1/embeddings":
                await self._embed(scope, receive, send)
                return
        await self.other(scope, receive, send)

    def _host_ok(self, scope: Scope) -> bool:
        """Whether the request's Host names this server: an IP address, ``localhost``, or one of
        the configured names (a request without one, HTTP/1.0, passes)."""
        for name, value in scope["headers"]:
            if name == b"host":
                host = _host_name(value)
                return host in self._hosts or _is_address(host)
        return True

    def _wrong_host(self, scope: Scope) -> HttpError:
        host = next((v for n, v in scope["headers"] if n == b"host"), b"")
        shown = host.decode("latin-1", "replace")[:80]
        return HttpError(
            400,
            "WrongHost",
            f"this server does not answer to the name {shown!r}: reach it by its IP address or "
            "localhost, or start it with --allow-host NAME",
            "invalid_host",
        )

    def _key_of(self, scope: Scope) -> str | None:
        """The name of the API key sent (``None`` when the server takes no keys)."""
        if self.keys is None:
            return None
        said = "this server needs an API key: send Authorization: Bearer <key>"
        for name, value in scope["headers"]:
            if name == b"authorization":
                scheme, _, token = value.decode("latin-1").partition(" ")
                if scheme.lower() == "bearer" and token.strip():
                    found = self.keys.name_of(token.strip())
                    if found is not None:
                        return found
                    said = (
                        "the API key sent is not one of this server's keys: check the key, or "
                        "make one with eoc serve-key NAME and add its line to the keys file"
                    )
                else:
                    said = "the Authorization header is not 'Bearer <key>': send the key that way"
                break
        raise HttpError(401, "Unauthorized", said, "invalid_api_key")

    async def _body(self, scope: Scope, receive: Receive) -> bytes:
        ctype = b""
        for name, value in scope["headers"]:
            if name == b"content-type":
                ctype = value
            elif name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    raise HttpError(
                        400, "BadRequest", "Content-Length is not a number", "bad_length"
                    ) from None
                if declared > self.config.max_body_bytes:
                    raise self._too_large()
        if not ctype.split(b";")[0].strip().lower() == JSON:
            raise HttpError(
                415,
                "UnsupportedMediaType",
                "send the body as JSON (Content-Type: application/json)",
                "unsupported_media_type",
            )
        parts: list[bytes] = []
        size = 0
        # the body must arrive within body_timeout_s; a watchdog cancels a read that is late
        # (cheaper on the hot path than a timer per request)
        task = asyncio.current_task()
        assert task is not None
        self._reading[task] = time.monotonic() + self.config.body_timeout_s
        if self._watchdog is None:
            self._watchdog = asyncio.get_running_loop().create_task(self._watch())
        try:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise HttpError(400, "BadRequest", "the client went away", "disconnected")
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.config.max_body_bytes:
                    raise self._too_large()
                parts.append(chunk)
                if not message.get("more_body", False):
                    break
        except asyncio.CancelledError:
            if task not in self._late:
                raise
            self._late.discard(task)
            task.uncancel()
            raise HttpError(
                408,
                "RequestTimeout",
                f"the body did not arrive within {self.config.body_timeout_s:g} s",
                "body_timeout",
            ) from None
        finally:
            self._reading.pop(task, None)
        return b"".join(parts)

    async def _watch(self) -> None:
        """Cancel body reads past their deadline (see :meth:`_body`)."""
        while True:
            await asyncio.sleep(min(0.5, self.config.body_timeout_s / 4))
            now = time.monotonic()
            for task, deadline in list(self._reading.items()):
                if now > deadline and task not in self._late:
                    self._late.add(task)
                    task.cancel()

    def _too_large(self) -> HttpError:
        return HttpError(
            413,
            "InputTooLarge",
            f"the request body is larger than {self.config.max_body_bytes:,} bytes",
            "too_large",
        )

    def _request(self, body: bytes, kind: str) -> tuple[ChatRequest, Query | None]:
        """The checked request and its query; a body seen before is not parsed again. A streamed
        request's query is ``None``: it is built once per request, with where its pieces go
        (:meth:`_stream`)."""
        key = (kind, body)
        known = self._parsed.get(key)
        if known is not None:
            return known
        request = self._parse(body, kind)
        query = None if request.stream else request.query()
        if len(body) <= _MEMO_BODY_BYTES:
            if len(self._parsed) >= _MEMO_BODIES:
                self._parsed.clear()
            self._parsed[key] = (request, query)
        return request, query

    def _parse(self, body: bytes, kind: str) -> ChatRequest:
        doc = _decoded(body)
        model = doc.get("model") if isinstance(doc, dict) else None
        if isinstance(model, str) and model not in self._names:
            raise HttpError(
                404,
                "ModelNotFound",
                f"this server serves {self.config.model_id!r}, not {model[:80]!r} (GET /v1/models)",
                "model_not_found",
            )
        return parse_chat(doc, self.config.defaults, kind=kind, forwards=self.config.forwards)

    async def _answer(self, scope: Scope, receive: Receive, send: Send, kind: str) -> None:
        t0 = time.perf_counter()

        async def work() -> Whole | None:
            key = self._key_of(scope)
            reuse = _reuse_of(scope)
            request, query = self._request(await self._body(scope, receive), kind)
            if self.budgets is not None:
                self.budgets.check(key)
            if query is None:
                await self._stream(request, key, t0, send, reuse)
                return None
            if reuse is not None:
                query = request.query(reuse=reuse)
            response = await self._cached_or_made(query, key, t0)
            if request.forward is not None:
                return relayed(response)
            return self._bodies.answer(request, response)

        with self.cascade.replying():  # the kv's write of a model's answer waits for the reply
            await self._replying(scope, send, work)

    async def _embed(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``POST /v1/embeddings``: the native MiniLM's (:mod:`eoc_native.serve.embeddings`),
        or the upstream's for any other model, forwarded as sent and kept exactly."""
        t0 = time.perf_counter()

        async def work() -> Whole:
            key = self._key_of(scope)
            doc = _decoded(await self._body(scope, receive))
            model = doc.get("model") if isinstance(doc, dict) else None
            native = self.embeddings is not None and model in EMBEDDING_NAMES
            if not native and not (self.config.forwards and isinstance(model, str)):
                raise HttpError(
                    404,
                    "ModelNotFound",
                    f"this server embeds with {EMBEDDING_NAMES[0]!r}"
                    + ("" if self.embeddings is not None else f" once installed ({MINILM_FIX})")
                    + f", not {str(model)[:80]!r}; with --upstream other models go there",
                    "model_not_found",
                )
            if self.budgets is not None:
                self.budgets.check(key)
            if native:
                return await self._embed_here(doc, key, t0)
            query = forwarded_embedding(doc, self.config.defaults).query()
            return relayed(await self._cached_or_made(query, key, t0))

        await self._replying(scope, send, work)

    async def _replying(
        self, scope: Scope, send: Send, work: Callable[[], Awaitable[Whole | None]]
    ) -> None:
        """Send what ``work`` made (``None``: it sent its reply itself, a stream), or its error
        as a JSON error body."""
        try:
            made = await work()
        except (EocError, HttpError) as exc:
            await self._error(send, HttpError.of(exc))
            return
        except Exception:  # a fault of eoc's own: logged, and still a JSON error
            log.exception("eoc serve: answering %s failed", scope["path"])
            await self._error(send, HttpError.of(RuntimeError()))
            return
        if made is None:
            return
        body, headers = made
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _cached_or_made(self, query: Query, key: str | None, t0: float) -> Response:
        """The cache's answer to ``query``, else the cascade's (a miss reserves its worst case
        first, where there are budgets), counted."""
        hold = None
        response = self.cascade.cached(query)
        if response is None:
            self._store_up()
            hold = self._hold(key)
            response = await self._resolve(query, hold)
        self._account(key, response, t0, hold)
        return response

    async def _embed_here(self, doc: dict[str, Any], key: str | None, t0: float) -> Whole:
        """The native embeddings of a request: each text from the cache, or MiniLM's (the
        misses embedded in one worker, one after another)."""
        assert self.embeddings is not None
        texts, fmt = self.embeddings.parse(doc)
        queries = [self.embeddings.query(t) for t in texts]
        embed = self.embeddings.cascade
        answers: list[Response | None] = [embed.cached(q) for q in queries]
        missed = [i for i, a in enumerate(answers) if a is None]
        if missed:
            self._store_up()
            self._admit()
            self.pending += 1
            try:
                work = asyncio.get_running_loop().run_in_executor(
                    self.executor,
                    lambda: [embed.resolve(queries[i], cache_missed=True) for i in missed],
                )
                try:
                    made = await asyncio.wait_for(
                        asyncio.shield(work), self.config.request_timeout_s
                    )
                except TimeoutError:
                    raise self._timeout() from None
            finally:
                self.pending -= 1
            for i, response in zip(missed, made, strict=True):
                answers[i] = response
        given = [a for a in answers if a is not None]
        for response in given:
            self._account(key, response, t0)
        return self.embeddings.body(str(doc["model"]), given, fmt, self.config.public_key)

    def _hold(self, key: str | None) -> Hold | None:
        """The budgets' part in a miss: the answer's worst case is reserved before the model is
        asked (``None`` without budgets)."""
        if self.budgets is None:
            return None
        return Hold(self.budgets, key, lambda q: self.cascade.worst_case(q).uj)

    def _account(
        self, key: str | None, response: Response, t0: float, hold: Hold | None = None
    ) -> None:
        """Count an answer: charged to the budgets here unless a hold settles it (a miss's, when
        its work ends: :meth:`_work`)."""
        if hold is None and self.budgets is not None:
            self.budgets.charge(key, response.cost)
        self.metrics.answered(response, time.perf_counter() - t0)
        line = ANSWERED.get()
        if line is not None:
            line.answers.append(response)

    async def _error(self, send: Send, err: HttpError) -> None:
        self._count_error(err)
        body = err.body()
        headers = [*err.headers(), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": err.status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _stream_error(self, send: Send, err: HttpError, started: bool) -> None:
        """An error of a streamed answer: a JSON error before the stream began, else its last event."""
        if not started:
            await self._error(send, err)
            return
        self._count_error(err)
        body = Chunks.error(err.status, err.kind, err.message, err.code)
        await send({"type": "http.response.body", "body": body})

    def _count_error(self, err: HttpError) -> None:
        self.metrics.error(err.status, err.code, err.extra.get("budget", {}).get("scope"))

    def _store_up(self) -> None:
        """Refuse a miss while the shared store is down: its answer could not be kept."""
        down = self.config.store_health() if self.config.store_health else ""
        if down:
            raise HttpError(
                503,
                "StoreUnusable",
                f"the store is unavailable ({down}); cached answers are still served: retry soon",
                "store_unavailable",
                1.0,
            )

    def _admit(self) -> None:
        if self.pending >= self.config.max_pending:
            raise HttpError(
                503,
                "Busy",
                f"{self.pending} answers are being worked on, the most this server takes: retry soon",
                "busy",
                1.0,
            )

    def _work(self, query: Query, hold: Hold | None) -> asyncio.Future[Response]:
        """``cascade.resolve(query)`` in a worker thread, for a query the cache just missed
        (:meth:`Cascade.cached`: it is not asked again), the model asked only once ``hold`` has
        reserved the answer's worst case. Whatever becomes of the request, the hold is settled
        when the work ends (charged if an answer came, released if none did)."""
        before = None if hold is None else hold.reserve
        resolve = functools.partial(
            self.cascade.resolve, query, before_model=before, cache_missed=True
        )
        work = asyncio.get_running_loop().run_in_executor(self.executor, resolve)
        if hold is not None:
            work.add_done_callback(lambda f: _end_hold(f, hold))
        return work

    async def _resolve(self, query: Query, hold: Hold | None = None) -> Response:
        self._admit()
        self.pending += 1
        try:
            work = self._work(query, hold)
            try:
                return await asyncio.wait_for(asyncio.shield(work), self.config.request_timeout_s)
            except TimeoutError:
                raise self._timeout() from None
        finally:
            self.pending -= 1

    def _name_stream(self, response_id: str, response: Response) -> None:
        """Keep which remembered answer a streamed response gave (its id was sent before the
        answer was made, so it cannot carry the name): the newest :data:`STREAMS_NAMED`."""
        made = made_receipt_of(response)
        if made is None:
            return
        named = self._streams
        if len(named) >= STREAMS_NAMED:
            del named[next(iter(named))]
        named[response_id] = made

    def answer_name(self, name: str) -> str:
        """The made receipt a forget request names: a streamed response's id this server gave,
        else as :meth:`eoc.Cascade.made_receipt` reads a receipt or an id."""
        made = self._streams.get(name.strip())
        return made if made is not None else self.cascade.made_receipt(name)

    def _timeout(self) -> HttpError:
        return HttpError(
            504,
            "Timeout",
            f"no answer within {self.config.request_timeout_s:g} s (the work goes on and its "
            "answer is remembered: ask again later)",
            "timeout",
        )

    async def _stream(
        self, request: ChatRequest, key: str | None, t0: float, send: Send, reuse: str | None
    ) -> None:
        public_key = self.config.public_key
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str | None] = asyncio.Queue()

        def on_piece(piece: str) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, piece)

        query = request.query(on_piece=on_piece, reuse=reuse)
        hit = self.cascade.cached(query)
        chunks: Chunks | Relayed = (
            Relayed(public_key)
            if request.forward is not None
            else Chunks(
                request, self.config.model_id, None if hit is None else made_receipt_of(hit)
            )
        )
        if hit is not None:
            self._account(key, hit, t0)
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [*_SSE_HEADERS, *verdict_headers(hit)],
                }
            )
            await send(
                {
                    "type": "http.response.body",
                    "body": chunks.piece(hit.payload) + chunks.end(hit, public_key),
                    "more_body": False,
                }
            )
            return
        self._store_up()
        self._admit()
        hold = self._hold(key)
        self.pending += 1
        try:
            work = self._work(query, hold)
            work.add_done_callback(lambda _f: queue.put_nowait(None))
            started = False
            deadline = loop.time() + self.config.request_timeout_s
            while True:
                try:
                    piece = await asyncio.wait_for(queue.get(), max(0.0, deadline - loop.time()))
                except TimeoutError:
                    await self._stream_error(send, self._timeout(), started)
                    return
                if piece is None:
                    break
                if not started:
                    headers = [*_SSE_HEADERS, (b"x-eoc-stage", b"neural")]
                    await send({"type": "http.response.start", "status": 200, "headers": headers})
                    started = True
                await send(
                    {"type": "http.response.body", "body": chunks.piece(piece), "more_body": True}
                )
            try:
                response = work.result()
            except Exception as exc:
                if not isinstance(exc, EocError | HttpError):
                    log.exception("eoc serve: a streamed answer failed")
                await self._stream_error(send, HttpError.of(exc), started)
                return
        finally:
            self.pending -= 1
        self._account(key, response, t0, hold)
        if chunks.id is not None:
            self._name_stream(chunks.id, response)
        body = chunks.end(response, public_key)
        if not started:  # kv, graph or a model that streamed nothing: the answer in one piece
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [*_SSE_HEADERS, *verdict_headers(response)],
                }
            )
            body = chunks.piece(response.payload) + body
        await send({"type": "http.response.body", "body": body, "more_body": False})


def _decoded(body: bytes) -> Any:
    """A request body's JSON, strictly: a key given twice is refused (orjson would keep the
    last silently)."""
    try:
        return loads_strict(body, what="the request body")
    except BadJson as exc:
        raise HttpError(400, "BadJson", exc.reason, "invalid_json") from None


def _json_cors() -> Any:
    """Starlette's CORS middleware, answering a refused preflight with a JSON error body."""
    cors: Any = require("starlette.middleware.cors", package="starlette", why="eoc serve")
    responses: Any = require("starlette.responses", package="starlette", why="eoc serve")

    class JsonCors(cors.CORSMiddleware):  # type: ignore[misc]
        def preflight_response(self, request_headers: Any) -> Any:
            plain = super().preflight_response(request_headers)
            if plain.status_code == 200:
                return plain
            message = plain.body.decode("utf-8", "replace")
            headers = {k: v for k, v in plain.headers.items() if k.lower() != "content-length"}
            headers.pop("content-type", None)
            return responses.Response(
                error_body(
                    400,
                    "CorsRefused",
                    f"{message}: this origin may not call the server",
                    "cors_refused",
                ),
                400,
                headers=headers,
                media_type="application/json",
            )

    return JsonCors


def _end_hold(work: asyncio.Future[Response], hold: Hold) -> None:
    """Settle a miss's budget hold when its work ends: the answer's cost if one came."""
    if work.cancelled() or work.exception() is not None:
        hold.release()
    else:
        hold.settle(work.result().cost)


def _host_name(value: bytes) -> str:
    """The name of a Host header, lowercased, without its port or IPv6 brackets."""
    text = value.decode("latin-1").strip().lower()
    if text.startswith("["):
        return text[1 : text.find("]")] if "]" in text else text
    return text.rsplit(":", 1)[0] if text.count(":") == 1 else text


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _str_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers]


def create_app(cascade: Cascade, config: ServeConfig, **options: Any) -> EocServer:
    """The ASGI app answering through ``cascade`` (run it with uvicorn: :mod:`eoc_native.serve.run`).

    ``options`` are :class:`EocServer`'s: ``keys``, ``budgets``, ``breaker`` (the one guarding
    the cascade's neural backend, :class:`eoc_native.serve.breaker.GuardedBackend`, passed here to
    be reported) and ``metrics``.
    """
    return EocServer(cascade, config, **options)


__all__ = ["EocServer", "HttpError", "ServeConfig", "create_app"]
