"""The OpenAI wire format, and eoc's verdict on every answer.

Bodies are built as dicts and written with ``orjson``. Each answer carries an ``eoc`` object
(:func:`verdict`), the answer in the shape ``eoc query --json`` prints: the stage that
answered, the payload, the cost (µJ, MEASURED or ESTIMATED, the counter and its kind, the
basis) and the receipt. Headers carry the same in short (:func:`verdict_headers`). A streamed answer carries the verdict in its last event, because the
headers leave before it is known.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Sequence
from typing import Any

import orjson

from eoc.chat.request import ChatRequest
from eoc.cost import Provenance
from eoc.response import Response
from eoc.store.forget import id_naming

_ids = itertools.count(1)
_PREFIX = os.urandom(6).hex()
JSON = b"application/json"
SSE = b"text/event-stream"


def completion_id(kind: str, made_receipt: str | None = None) -> str:
    """A unique id for one response (``chatcmpl-...`` or ``cmpl-...``); one that gives a
    remembered model answer names it (``-a`` and its made receipt's first 32 hex digits,
    :func:`eoc.store.forget.id_naming`), so forgetting it by the id works on any replica."""
    unique = f"{'chatcmpl' if kind == 'chat' else 'cmpl'}-{_PREFIX}{next(_ids):x}"
    return id_naming(unique, made_receipt)


def made_receipt_of(response: Response) -> str | None:
    """The receipt the answer of ``response`` was made with, where a model made and a store
    kept it (the answer's name); ``None`` otherwise."""
    gen = response.generation
    return None if gen is None else gen.receipt


def verdict(response: Response, public_key: str | None = None) -> dict[str, Any]:
    """The ``eoc`` object: the answer in the one shape eoc writes it
    (:meth:`eoc.response.Response.to_dict`, what ``eoc verify`` reads back), and the server's
    public key when it signs receipts."""
    doc = response.to_dict()
    if public_key is not None:
        doc["public_key"] = public_key
    return doc


def verdict_headers(response: Response) -> list[tuple[bytes, bytes]]:
    """The ``x-eoc-*`` headers (:meth:`eoc.response.Response.headers`) as ASGI wants them."""
    return [(k.encode(), v.encode("ascii", "replace")) for k, v in response.headers()]


def summed(answers: Sequence[Response]) -> tuple[str, int, str]:
    """Several answers in short (a list of texts embedded): the stage they share (else
    ``mixed``), their µJ summed, and ``measured`` only when every figure was."""
    stages = {r.stage.value for r in answers}
    measured = all(r.cost.provenance is Provenance.MEASURED for r in answers)
    stage = stages.pop() if len(stages) == 1 else "mixed"
    return stage, sum(r.cost.uj for r in answers), "measured" if measured else "estimated"


def usage(response: Response) -> dict[str, int] | None:
    """Tokens a model read and wrote for this answer; for a remembered model answer, those it
    read and wrote when it made it; ``None`` (the body's ``usage`` is null) when nothing counted
    them (a remembered answer kept before eoc recorded them, a server that sent no usage); 0 and
    0 when no model made the answer."""
    counts = response.tokens
    gen = response.generation
    if counts is None and gen is not None:
        counts = gen.tokens
        if counts is None:
            return None  # a model made it, and nothing counted its tokens: unknown, never 0
    n_in, n_out = counts if counts is not None else (0, 0)
    return {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out}


def finish_reason(request: ChatRequest, response: Response) -> str | None:
    """Why the answer ended: the model's reason (kept with a remembered answer and replayed);
    ``None`` for a remembered answer kept before eoc recorded it (unknown, never made up);
    "stop" for an answer no model made."""
    gen = response.generation
    if gen is not None:
        return gen.finish_reason
    if response.tokens is not None and response.tokens[1] >= request.max_tokens:
        return "length"
    return "stop"


class AnswerBodies:
    """Whole answers as bytes, the part after ``id`` and ``created`` kept per response.

    The cascade hands out the same (read-only) :class:`Response` for every repeat of a cache
    hit charged the same, so its choices, usage and verdict are serialized once; each answer
    still gets its own ``id`` and ``created``.
    """

    MAX = 4096

    def __init__(self, model: str, public_key: str | None) -> None:
        self.model = model
        self.public_key = public_key
        self._tails: dict[
            tuple[int, str, str], tuple[Response, bytes, list[tuple[bytes, bytes]]]
        ] = {}
        self._model_json = orjson.dumps(model)

    def answer(
        self, request: ChatRequest, response: Response
    ) -> tuple[bytes, list[tuple[bytes, bytes]]]:
        """The body of the completion object and its headers (content type, length, verdict)."""
        reason = finish_reason(request, response)
        key = (id(response), request.kind, str(reason))
        known = self._tails.get(key)
        if known is None or known[0] is not response:
            tail = _tail(request, response, reason, self.public_key)
            known = (response, tail, [(b"content-type", JSON), *verdict_headers(response)])
            if len(self._tails) >= self.MAX:
                self._tails.clear()
            self._tails[key] = known
        _, tail, headers = known
        obj = b"chat.completion" if request.kind == "chat" else b"text_completion"
        body = (
            b'{"id":"'
            + completion_id(request.kind, made_receipt_of(response)).encode()
            + b'","object":"'
            + obj
            + b'","created":'
            + str(int(time.time())).encode()
            + b',"model":'
            + self._model_json
            + b","
            + tail
        )
        return body, [*headers, (b"content-length", str(len(body)).encode())]


def _tail(
    request: ChatRequest, response: Response, reason: str | None, public_key: str | None
) -> bytes:
    """``"choices":...,"usage":...,"eoc":...}``: the part of a body shared by repeats."""
    if request.kind == "chat":
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": response.payload},
            "finish_reason": reason,
            "logprobs": None,
        }
    else:
        choice = {"index": 0, "text": response.payload, "finish_reason": reason, "logprobs": None}
    doc = {"choices": [choice], "usage": usage(response), "eoc": verdict(response, public_key)}
    return orjson.dumps(doc)[1:]


def relayed(response: Response) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """A forwarded request's whole reply (:attr:`eoc.chat.request.ChatRequest.forward`): the upstream's
    body byte for byte, as first made (a repeat gets the kept body, its ``id`` included), eoc's
    verdict in the headers alone."""
    body = response.payload.encode("utf-8")
    headers = [(b"content-type", JSON), *verdict_headers(response)]
    return body, [*headers, (b"content-length", str(len(body)).encode())]


class Relayed:
    """The events of a forwarded request's streamed reply: the upstream's as they came (a
    repeat gets the kept events), then eoc's verdict as one SSE comment line
    (``: eoc {...}``), which clients skip."""

    id = None

    def __init__(self, public_key: str | None) -> None:
        self.public_key = public_key

    @staticmethod
    def piece(text: str) -> bytes:
        return text.encode("utf-8")

    def end(self, response: Response, public_key: str | None) -> bytes:
        return b": eoc " + orjson.dumps(verdict(response, public_key)) + b"\n\n"


class Chunks:
    """The server-sent events of one streamed answer."""

    def __init__(self, request: ChatRequest, model: str, made_receipt: str | None = None) -> None:
        """``made_receipt``: the name of the remembered answer it replays, when known before
        the first event (a cache hit): the id carries it, as a whole answer's does."""
        self.request = request
        self.model = model
        self.id = completion_id(request.kind, made_receipt)
        self.created = int(time.time())
        self.chat = request.kind == "chat"
        self._first = True

    def _event(self, choices: list[dict[str, Any]], **extra: Any) -> bytes:
        doc = {
            "id": self.id,
            "object": "chat.completion.chunk" if self.chat else "text_completion",
            "created": self.created,
            "model": self.model,
            "choices": choices,
            **extra,
        }
        return b"data: " + orjson.dumps(doc) + b"\n\n"

    def piece(self, text: str) -> bytes:
        if self.chat:
            delta: dict[str, Any] = {"content": text}
            if self._first:
                delta["role"] = "assistant"
                self._first = False
            choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": None}
        else:
            choice = {"index": 0, "text": text, "finish_reason": None}
        return self._event([choice])

    def end(self, response: Response, public_key: str | None) -> bytes:
        """The finishing event(s), the last carrying the verdict, then ``[DONE]``."""
        reason = finish_reason(self.request, response)
        choice: dict[str, Any] = (
            {"index": 0, "delta": {}, "finish_reason": reason}
            if self.chat
            else {"index": 0, "text": "", "finish_reason": reason}
        )
        judged = verdict(response, public_key)
        if self.request.include_usage:
            out = self._event([choice]) + self._event([], usage=usage(response), eoc=judged)
        else:
            out = self._event([choice], eoc=judged)
        return out + b"data: [DONE]\n\n"

    @staticmethod
    def error(status: int, kind: str, message: str, code: str) -> bytes:
        """An error met after the stream began: one event with the error object, then [DONE]."""
        doc = error_doc(status, kind, message, code)
        return b"data: " + orjson.dumps(doc) + b"\n\ndata: [DONE]\n\n"


def error_doc(status: int, kind: str, message: str, code: str, **extra: Any) -> dict[str, Any]:
    """The OpenAI error object (``{"error": {...}}``), with eoc's error class as ``type``."""
    err: dict[str, Any] = {
        "message": message,
        "type": kind,
        "param": None,
        "code": code,
        "status": status,
    }
    err.update(extra)
    return {"error": err}


def error_body(status: int, kind: str, message: str, code: str, **extra: Any) -> bytes:
    return orjson.dumps(error_doc(status, kind, message, code, **extra))


__all__ = [
    "JSON",
    "SSE",
    "AnswerBodies",
    "Chunks",
    "Relayed",
    "completion_id",
    "error_body",
    "error_doc",
    "relayed",
    "summed",
    "usage",
    "verdict",
    "verdict_headers",
]
