"""The server's OpenAPI 3.1 document (``GET /openapi.json``), written out in full.

The hot path is plain ASGI (no framework validates or documents it), so the document is kept
here by hand, next to the checks in :mod:`eoc.chat` it describes; the test suite runs
Schemathesis against it.
"""

from __future__ import annotations

from typing import Any

from eoc import __version__
from eoc.chat import MAX_MESSAGES, MAX_OUTPUT_TOKENS, MAX_STOP, MAX_STOP_BYTES, ROLES

_ERR = {"$ref": "#/components/schemas/Error"}


def _errors(*codes: int) -> dict[str, Any]:
    why = {
        400: "The request is malformed or asks for what this server does not do.",
        401: "An API key is required and none (or an unknown one) was sent.",
        404: "No such model (or route).",
        405: "Method not allowed.",
        408: "The request body did not arrive in time.",
        413: "The body, a message or the conversation is too large.",
        415: "The body is not JSON.",
        429: "A joule budget is spent; Retry-After says when it has room.",
        502: "The neural backend (model or upstream server) failed.",
        503: "The upstream is failing (breaker open), the store is unavailable, or the server "
        "is busy; Retry-After says when to retry.",
        504: "The answer took longer than the request timeout.",
    }
    return {
        str(c): {"description": why[c], "content": {"application/json": {"schema": _ERR}}}
        for c in codes
    }


def _stop() -> dict[str, Any]:
    # each stop string is at most MAX_STOP_BYTES of UTF-8: as many characters at most, fewer
    # when they are not ASCII (the server refuses a longer one with a 400)
    one = {"type": "string", "minLength": 1, "maxLength": MAX_STOP_BYTES}
    return {
        "oneOf": [
            one,
            {"type": "array", "items": one, "maxItems": MAX_STOP},
            {"type": "null"},
        ]
    }


def _unsupported() -> dict[str, Any]:
    """Fields of the OpenAI API taken only at the value that asks for nothing eoc lacks."""
    return {
        "logprobs": {"enum": [False, None]},
        "response_format": {
            "oneOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "required": ["type"],
                    "properties": {"type": {"const": "text"}},
                    "additionalProperties": False,
                },
            ]
        },
    }


def _sampling() -> dict[str, Any]:
    return {
        "max_tokens": {"type": ["integer", "null"], "minimum": 1, "maximum": MAX_OUTPUT_TOKENS},
        "temperature": {"type": ["number", "null"], "minimum": 0, "maximum": 2},
        "top_p": {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1},
        "seed": {"type": ["integer", "null"], "minimum": 0, "maximum": (1 << 63) - 1},
        "stop": _stop(),
        "n": {"type": ["integer", "null"], "enum": [1, None]},
        "stream": {"type": ["boolean", "null"]},
        "stream_options": {
            "type": ["object", "null"],
            "properties": {"include_usage": {"type": "boolean"}},
            "additionalProperties": False,
        },
        "presence_penalty": {"type": ["number", "null"], "minimum": -2, "maximum": 2},
        "frequency_penalty": {"type": ["number", "null"], "minimum": -2, "maximum": 2},
        "user": {"type": ["string", "null"], "maxLength": 256},
    }


def document(model: str) -> dict[str, Any]:
    """The OpenAPI document of a server that serves ``model``."""
    answer_headers = {
        name: {"description": desc, "schema": {"type": "string"}}
        for name, desc in (
            ("x-eoc-stage", "The stage that answered: cache, kv, graph or neural."),
            ("x-eoc-microjoules", "The µJ charged for this answer."),
            (
                "x-eoc-provenance",
                "measured (read from a live counter over this work) or estimated.",
            ),
            (
                "x-eoc-receipt",
                "The receipt's digest (the whole receipt is in the body's eoc object).",
            ),
        )
    }
    chat_request = {
        "type": "object",
        "required": ["model", "messages"],
        "additionalProperties": False,
        "properties": {
            "model": {"type": "string", "enum": [model]},
            "messages": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_MESSAGES,
                "items": {
                    "type": "object",
                    "required": ["role", "content"],
                    "additionalProperties": False,
                    "properties": {
                        "role": {"type": "string", "enum": list(ROLES)},
                        "content": {
                            "oneOf": [
                                {"type": "string", "minLength": 1},
                                {
                                    "type": "array",
                                    "minItems": 1,
                                    "description": "Content parts: text parts only.",
                                    "items": {
                                        "type": "object",
                                        "required": ["type", "text"],
                                        "properties": {
                                            "type": {"const": "text"},
                                            "text": {"type": "string"},
                                        },
                                    },
                                },
                            ]
                        },
                        "name": {"type": "string"},
                    },
                },
            },
            "max_completion_tokens": {
                "type": ["integer", "null"],
                "minimum": 1,
                "maximum": MAX_OUTPUT_TOKENS,
            },
            **_sampling(),
            **_unsupported(),
            "tools": {"type": ["array", "null"], "maxItems": 0},
            "tool_choice": {"enum": ["none", None]},
        },
    }
    completion_request = {
        "type": "object",
        "required": ["model", "prompt"],
        "additionalProperties": False,
        "properties": {
            "model": {"type": "string", "enum": [model]},
            "prompt": {
                "oneOf": [
                    {"type": "string", "minLength": 1},
                    {
                        "type": "array",
                        "items": {"type": "string", "minLength": 1},
                        "minItems": 1,
                        "maxItems": 1,
                    },
                ]
            },
            **_sampling(),
            **_unsupported(),
        },
    }
    eoc_verdict = {
        "type": "object",
        "required": ["stage", "microjoules", "provenance", "basis", "receipt", "query_id"],
        "properties": {
            "stage": {"type": "string", "enum": ["cache", "kv", "graph", "neural"]},
            "microjoules": {"type": "integer", "minimum": 0},
            "provenance": {"type": "string", "enum": ["measured", "estimated"]},
            "counter": {"type": ["string", "null"]},
            "counter_kind": {"type": ["string", "null"]},
            "basis": {"type": "string"},
            "query_id": {"type": "string"},
            "receipt": {"type": "object"},
            "tokens": {"type": "object"},
            "public_key": {"type": "string"},
        },
    }
    usage = {
        "type": "object",
        "required": ["prompt_tokens", "completion_tokens", "total_tokens"],
        "properties": {
            k: {"type": "integer", "minimum": 0}
            for k in ("prompt_tokens", "completion_tokens", "total_tokens")
        },
    }
    completion = {
        "type": "object",
        "required": ["id", "object", "created", "model", "choices", "eoc"],
        "properties": {
            "id": {"type": "string"},
            "object": {"type": "string", "enum": ["chat.completion", "text_completion"]},
            "created": {"type": "integer"},
            "model": {"type": "string"},
            "choices": {"type": "array", "minItems": 1, "items": {"type": "object"}},
            "usage": usage,
            "eoc": {"$ref": "#/components/schemas/Verdict"},
        },
    }
    chunk = {
        "type": "object",
        "required": ["id", "object", "created", "model", "choices"],
        "properties": {
            "id": {"type": "string"},
            "object": {"type": "string", "enum": ["chat.completion.chunk", "text_completion"]},
            "created": {"type": "integer"},
            "model": {"type": "string"},
            "choices": {
                "type": "array",
                "maxItems": 1,
                "items": {
                    "type": "object",
                    "required": ["index", "finish_reason"],
                    "properties": {
                        "index": {"type": "integer", "minimum": 0},
                        "delta": {
                            "type": "object",
                            "properties": {
                                "role": {"type": "string", "enum": ["assistant"]},
                                "content": {"type": "string"},
                            },
                        },
                        "text": {"type": "string"},
                        "finish_reason": {
                            "type": ["string", "null"],
                            "enum": ["stop", "length", None],
                        },
                    },
                },
            },
            "usage": usage,
            "eoc": {"$ref": "#/components/schemas/Verdict"},
        },
    }
    # One server-sent event (OpenAPI 3.1 describes a text/event-stream by its events): its data
    # is a chunk, the last one carrying eoc's verdict, or an error met after the stream began,
    # then [DONE].
    stream_event = {
        "type": "object",
        "required": ["data"],
        "properties": {
            "event": {"type": "string"},
            "data": {
                "type": "string",
                "if": {"const": "[DONE]"},
                "else": {
                    "contentMediaType": "application/json",
                    "contentSchema": {
                        "anyOf": [
                            {"$ref": "#/components/schemas/CompletionChunk"},
                            {"$ref": "#/components/schemas/Error"},
                        ]
                    },
                },
            },
        },
    }
    answer_content = {
        "application/json": {"schema": {"$ref": "#/components/schemas/Completion"}},
        "text/event-stream": {
            "schema": {"$ref": "#/components/schemas/StreamEvent"},
            "description": "With stream: true, one event per piece of the answer; the last data "
            "event before [DONE] carries eoc.",
        },
    }

    def post(summary: str, schema: str) -> dict[str, Any]:
        return {
            "post": {
                "summary": summary,
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}
                    },
                },
                "responses": {
                    "200": {
                        "description": "The answer, with eoc's verdict.",
                        "headers": answer_headers,
                        "content": answer_content,
                    },
                    **_errors(400, 401, 404, 408, 413, 415, 429, 502, 503, 504),
                },
            }
        }

    def get(summary: str, content: dict[str, Any], *codes: int) -> dict[str, Any]:
        return {
            "get": {
                "summary": summary,
                "responses": {
                    "200": {"description": summary, "content": content},
                    **_errors(*codes),
                },
            }
        }

    obj = {"application/json": {"schema": {"type": "object"}}}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "eoc serve",
            "version": __version__,
            "description": "An OpenAI-compatible answer server: cache -> kv -> graph -> neural, "
            "each answer charged in joules and marked measured or estimated.",
        },
        "paths": {
            "/v1/chat/completions": post("Answer a conversation", "ChatRequest"),
            "/v1/completions": post("Continue a text", "CompletionRequest"),
            "/v1/models": get("The served model", obj, 401),
            "/v1/eoc/budget": get("The joule budgets and what they counted", obj, 401),
            "/v1/eoc/public-key": get("The host key that signs receipts", obj, 401, 404),
            "/healthz": get("Liveness and the store's state", obj, 503),
            "/metrics": get(
                "Prometheus metrics", {"text/plain": {"schema": {"type": "string"}}}, 401
            ),
        },
        "components": {
            "schemas": {
                "ChatRequest": chat_request,
                "CompletionRequest": completion_request,
                "Completion": completion,
                "CompletionChunk": chunk,
                "StreamEvent": stream_event,
                "Verdict": eoc_verdict,
                "Error": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {
                        "error": {
                            "type": "object",
                            "required": ["message", "type", "code"],
                            "properties": {
                                "message": {"type": "string"},
                                "type": {"type": "string"},
                                "code": {"type": "string"},
                                "param": {"type": ["string", "null"]},
                                "status": {"type": "integer"},
                            },
                        }
                    },
                },
            },
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }


__all__ = ["document"]
