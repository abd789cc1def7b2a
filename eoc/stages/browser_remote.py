"""A neural-stage backend for an OpenAI-compatible server, in pure Python (it runs in the page).

No language model runs in the browser. :class:`BrowserOpenAIBackend` lets the page ask one that
runs on the user's machine (llama.cpp's server, vLLM, Ollama...) through
``POST {base_url}/chat/completions``. It mirrors ``eoc_native.remote.OpenAIBackend`` (which keeps
connections alive with ``http.client``, and Pyodide has no sockets) with the standard library's
pure parts only, so the same code runs natively and under Pyodide.

How a request is made (the *transport*):

* in Pyodide, :func:`xhr_transport`: ``pyodide.http.pyxhr``, a synchronous ``XMLHttpRequest``
  (``open(method, url, false)``), which the page's main thread and workers both allow. The
  server must allow the page's origin (CORS); llama-cpp-python's server allows any.
* natively, :func:`urllib_transport`: ``urllib.request`` with no proxies and no redirects.
* tests inject their own: any ``transport(method, url, body, headers) -> (status, body)``.

Honesty (docs/design.md §3): no counter in the browser (or on this host) sees the remote
model's work, so every figure is ESTIMATED, by :func:`~eoc.stages.base.work_estimate` over
the tokens the server says it read and wrote (its ``usage``), else one per four characters;
the basis says so. An energy figure the server sends is quoted in the basis as its claim and
never becomes the figure.

Everything the server sends is checked: at most :data:`MAX_BODY_BYTES` of body, JSON parsed by
:func:`eoc.files.bounded.loads_strict`, and a reply of the wrong shape is a
:class:`~eoc.errors.BackendError` quoting a short excerpt.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

from eoc._compat import IN_PYODIDE
from eoc.cost import JouleCost
from eoc.errors import BackendError, BadJson, ConfigError
from eoc.files.bounded import loads_strict
from eoc.openai.replies import (
    EXCERPT_CHARS,
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
from eoc.stages.base import WORK_RATES, work_estimate
from eoc.stages.neural import MAX_TOKENS, Reply, endpoint_origin
from eoc.text.tokens import approx_tokens

MAX_BODY_BYTES = 2 << 20
"""The most bytes of one reply eoc reads (2 MiB); a larger one is a BackendError."""
TIMEOUT_S = 120.0
"""Seconds :func:`urllib_transport` waits for the server (a synchronous XHR in a page cannot
set a timeout: the browser's own applies)."""

Transport = Callable[[str, str, bytes | None, Mapping[str, str]], tuple[int, bytes]]
"""``transport(method, url, body, headers) -> (status, body)``: one HTTP request. It raises
(any exception) when no response came back; it returns the status of any response that did."""


def xhr_transport(
    method: str, url: str, body: bytes | None, headers: Mapping[str, str]
) -> tuple[int, bytes]:
    """One synchronous request through ``pyodide.http.pyxhr`` (a blocking XMLHttpRequest).

    The browser reads the whole body before this returns, so its size is checked afterwards.
    A request the browser refuses (server down, CORS not allowed) raises ``XHRNetworkError``.
    """
    from pyodide.http import pyxhr  # type: ignore[import-not-found]  # only in Pyodide

    kwargs: dict[str, Any] = {"headers": dict(headers)}
    if body is not None:
        kwargs["data"] = body.decode("utf-8")
    resp = pyxhr.post(url, **kwargs) if method == "POST" else pyxhr.get(url, **kwargs)
    status = int(resp.status_code)
    if status == 0:  # the browser gave up without a response (no error thrown in some cases)
        raise OSError("the browser got no response (is the server running, does it allow CORS?)")
    return status, bytes(resp.content)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a 3xx comes back as it is: redirects are not followed


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect)


def urllib_transport(
    method: str, url: str, body: bytes | None, headers: Mapping[str, str]
) -> tuple[int, bytes]:
    """One request through ``urllib`` (no proxies from the environment, no redirects followed),
    reading at most :data:`MAX_BODY_BYTES` + 1 bytes of the body."""
    request = urllib.request.Request(url, data=body, headers=dict(headers), method=method)
    try:
        with _OPENER.open(request, timeout=TIMEOUT_S) as resp:
            return int(resp.status), resp.read(MAX_BODY_BYTES + 1)
    except urllib.error.HTTPError as exc:
        try:
            data = exc.read(4 * EXCERPT_CHARS)
        except OSError:
            data = b""
        finally:
            exc.close()
        return int(exc.code), data


def default_transport() -> Transport:
    """The transport here: the synchronous XHR in Pyodide, ``urllib`` natively."""
    return xhr_transport if IN_PYODIDE else urllib_transport


class BrowserOpenAIBackend:
    """Answers through an OpenAI-compatible ``/chat/completions`` endpoint, in pure Python.

    Constructing it sends nothing. The model is the one given, else the first that
    ``GET {base_url}/models`` lists, asked on :meth:`connect` or the first question.

    Args:
        base_url: the API root, e.g. ``http://127.0.0.1:8080/v1`` (http or https).
        model: the model to ask for (else the server's first).
        max_tokens: the most tokens one answer may have.
        temperature: 0 (the default) is greedy; above 0 samples, and without a ``seed`` such an
            answer is never memoized (``Reply.memoize`` False).
        seed: the sampling seed sent to the server.
        transport: how a request is made (see the module docstring); by default
            :func:`default_transport`.

    Raises:
        ConfigError: an argument it cannot use (the message says what to pass instead).
    """

    runs_model = True

    def __init__(
        self,
        base_url: str,
        *,
        model: str | None = None,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = None,
        transport: Transport | None = None,
    ) -> None:
        self.base_url, self.host = check_base_url(base_url)
        if model is not None and (
            not isinstance(model, str) or not model.strip() or len(model) > 256
        ):
            raise ConfigError("model must be a model name (1 to 256 characters), or None")
        check_sampling(max_tokens, temperature, seed)
        if transport is not None and not callable(transport):
            raise ConfigError("transport must be a function (method, url, body, headers)")
        self.model = model
        self.max_tokens = max_tokens
        self.temperature = float(temperature)
        self.seed = seed
        self._transport: Transport = transport or default_transport()

    @property
    def name(self) -> str:
        """``openai:<model>@<host>`` (``?`` for the model until the server has named it)."""
        return f"openai:{self.model or '?'}@{self.host}"

    @property
    def origin(self) -> str:
        """What makes this backend's answers: the server and model asked, and the parameters
        that change an answer to a plain question."""
        return endpoint_origin(
            self.model or "?", self.base_url, self.max_tokens, self.temperature, self.seed
        )

    @property
    def memoize(self) -> bool:
        """False when answers are sampled without a seed: the same question gets another one."""
        return not (self.temperature > 0 and self.seed is None)

    def __repr__(self) -> str:
        return f"BrowserOpenAIBackend({self.name!r})"

    # -- the Backend protocol -----------------------------------------------------------

    def connect(self) -> str:
        """The model this backend asks for, asking ``GET /models`` once if none was given.

        Raises:
            BackendError: the server cannot be reached, or lists no usable model.
        """
        if self.model is None:
            doc = self._json(self._request("GET", "/models", None), "model list")
            data = doc.get("data")
            if not isinstance(data, list):
                raise self._fail('GET /models sent no list of models ("data")')
            if not data:
                raise self._fail("the server lists no models: pass model=")
            first = data[0]
            name = first.get("id") if isinstance(first, dict) else None
            if not isinstance(name, str) or not name.strip() or len(name) > 256:
                raise self._fail("GET /models listed a model without a usable id")
            self.model = name
        return self.model

    def generate(self, prompt: str) -> Reply:
        """One answer to ``prompt``.

        Raises:
            BackendError: the server failed, refused, or sent something that is not an answer.
        """
        if not isinstance(prompt, str) or not prompt:
            raise BackendError("the prompt must be non-empty text")
        model = self.connect()
        body: dict[str, Any] = {
            "model": model,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "stream": False,
        }
        if self.seed is not None:
            body["seed"] = self.seed
        doc = self._json(self._request("POST", "/chat/completions", body), "reply")
        text = self._message_text(doc)
        tokens_in, tokens_out, claims = self._usage(doc)
        reply = self._reply(prompt, text, tokens_in, tokens_out, claims)
        return reply._replace(
            finish_reason=finish_reason_of(first_choice(doc, self._fail), self._fail)
        )

    # -- requests -------------------------------------------------------------------------

    def _fail(self, message: str) -> BackendError:
        return BackendError(f"{self.name}: {message}")

    def _request(self, method: str, path: str, body: dict[str, Any] | None) -> bytes:
        url = self.base_url + path
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        try:
            status, payload = self._transport(method, url, data, headers)
        except Exception as exc:  # no response came back: say what to check
            raise self._fail(
                f"cannot reach {self.host} ({type(exc).__name__}: {printable(str(exc), 120)}): "
                "is the server running, is the URL right (it usually ends in /v1), "
                "and does the server allow this page's origin (CORS)?"
            ) from None
        if isinstance(status, bool) or not isinstance(status, int):
            raise self._fail(f"the transport returned a status of {type(status).__name__}")
        if not isinstance(payload, bytes | bytearray):
            raise self._fail(f"the transport returned a body of {type(payload).__name__}")
        if not 200 <= status < 300:
            excerpt = printable(
                bytes(payload[: 4 * EXCERPT_CHARS]).decode("utf-8", "replace"), EXCERPT_CHARS
            )
            hint = (
                " (check the URL, which usually ends in /v1, and the model name)"
                if status == 404
                else ""
            )
            if 300 <= status < 400:
                hint = " (redirects are not followed: give the final URL)"
            raise self._fail(f"HTTP {status} from {url}{hint}: {excerpt or '(empty body)'}")
        if len(payload) > MAX_BODY_BYTES:
            raise self._fail(
                f"the reply is larger than {MAX_BODY_BYTES:,} bytes, more than eoc reads: "
                "ask for fewer max_tokens"
            )
        return bytes(payload)

    def _json(self, data: bytes, what: str) -> dict[str, Any]:
        try:
            doc = loads_strict(data, what=f"the server's {what}")
        except BadJson as exc:
            excerpt = printable(data[: 4 * EXCERPT_CHARS].decode("utf-8", "replace"), 80)
            raise self._fail(f"{exc.reason} (it begins: {excerpt or '(empty)'})") from None
        return reply_object(doc, what, self._fail)

    def _message_text(self, doc: Mapping[str, Any]) -> str:
        content = message_text(doc, self._fail)
        if not content.strip():
            raise self._fail("the server's answer is empty")
        return content

    def _usage(self, doc: Mapping[str, Any]) -> tuple[int | None, int | None, dict[str, str]]:
        """Token counts from ``usage`` and any energy claims in the reply or its usage."""
        usage = doc.get("usage")
        if usage is not None and not isinstance(usage, dict):
            raise self._fail(f"the server's usage is {type(usage).__name__}, not an object")
        usage = usage or {}
        counts = []
        for key in ("prompt_tokens", "completion_tokens"):
            value = usage.get(key)
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, int)
                or not 0 <= value <= MAX_TOKENS
            ):
                raise self._fail(f"the server's usage.{key} is not a token count: {value!r:.40}")
            counts.append(value)
        claims: dict[str, str] = {}
        energy_claims(doc, usage, claims)
        return counts[0], counts[1], claims

    def _reply(
        self,
        prompt: str,
        text: str,
        tokens_in: int | None,
        tokens_out: int | None,
        claims: Mapping[str, str],
    ) -> Reply:
        counted = tokens_in is not None and tokens_out is not None
        n_in = tokens_in if tokens_in is not None else approx_tokens(prompt)
        n_out = tokens_out if tokens_out is not None else approx_tokens(text)
        est = work_estimate(Stage.NEURAL, tokens_in=n_in, tokens_out=n_out)
        rates = WORK_RATES[Stage.NEURAL]
        where = "in the browser" if IN_PYODIDE else "on this host"
        basis = (
            f"remote model at {self.host}: no counter {where} sees its work; estimated from "
            f"{n_in} tokens in, {n_out} out "
            f"({'counted by the server' if counted else 'approximated at 4 characters a token'}) "
            f"at {rates.per_token_in_uj:g} µJ a token in, {rates.per_token_out_uj:g} µJ out"
        )
        if claims:
            said = ", ".join(f"{k}={v}" for k, v in claims.items())
            basis += f"; the server claims {said} (a claim, not measured here)"
        return Reply(
            text,
            JouleCost.estimated(est.uj, basis),
            self.memoize,
            tokens_in=n_in if counted else None,
            tokens_out=n_out if counted else None,
        )


__all__ = [
    "MAX_BODY_BYTES",
    "BrowserOpenAIBackend",
    "Transport",
    "check_base_url",
    "default_transport",
    "finish_reason_of",
    "urllib_transport",
    "xhr_transport",
]
