"""The server's OpenAPI 3.1 document (``GET /openapi.json``).

The hot path is plain ASGI (no framework validates or documents it). The request bodies are
generated from the one table of fields :func:`eoc.chat.request.parse_chat` checks
(:mod:`eoc.chat.fields`); the answers, errors and routes are described here. The test suite runs
Schemathesis against it.
"""

from __future__ import annotations

import copy
from typing import Any

from eoc import __version__
from eoc.chat.fields import CHAT, COMPLETION, request_schema
from eoc.ledger import AVOIDED_PROVENANCES
from eoc_native.serve.embeddings import NAMES as EMBEDDING_NAMES

_ERR = {"$ref": "#/components/schemas/Error"}


def _errors(*codes: int) -> dict[str, Any]:
    why = {
        400: "The request is malformed or asks for what this server does not do.",
        401: "An API key is required and none (or an unknown one) was sent.",
        403: "The key may not do this (forgetting needs a key marked admin).",
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


FORWARDED_NOTE = "With --upstream: forwarded to the upstream as sent (eoc does not answer it)."


def _forwarding(schema: dict[str, Any], names: tuple[str, ...]) -> None:
    """``schema`` as a forwarding server takes it: any field (the upstream checks what eoc does
    not), and the fields eoc answers only through the upstream described as such."""
    schema["additionalProperties"] = True
    schema["description"] = (
        "Fields eoc does not answer itself (tools, JSON mode, n, log-probs, any other) are "
        "forwarded to the upstream as sent; eoc checks only what it reads."
    )
    props = schema["properties"]
    for name in names:
        if name in props:
            props[name] = {"description": FORWARDED_NOTE}
    messages = props.get("messages")
    if messages is not None:
        messages["items"] = {"type": "object", "required": ["role"], "description": FORWARDED_NOTE}


_EMBEDDING_REQUEST: dict[str, Any] = {
    "type": "object",
    "required": ["model", "input"],
    "additionalProperties": False,
    "properties": {
        "model": {
            "type": "string",
            "enum": list(EMBEDDING_NAMES),
            "description": "all-MiniLM-L6-v2 (embedded here); with --upstream, any other model "
            "is the upstream's (its request forwarded as sent)",
        },
        "input": {
            "oneOf": [
                {"type": "string", "minLength": 1},
                {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
            ]
        },
        "encoding_format": {"enum": ["float", "base64"]},
        "dimensions": {"const": 384, "description": "MiniLM makes 384 only"},
        "user": {"type": "string"},
    },
}


def document(
    model: str, *, forwards: bool = False, aliases: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The OpenAPI document of a server that serves ``model`` (``forwards``: with an upstream,
    which takes what eoc does not answer itself; ``aliases``: other names it takes for it)."""
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
            (
                "x-eoc-avoided-microjoules",
                "An answer given without the model: the µJ of model work it avoided, gross "
                "(the body's eoc.avoided has it net too, with its basis). Absent, never 0, for "
                "a model's answer and where no model is configured to compare with.",
            ),
            (
                "x-eoc-avoided-provenance",
                "With x-eoc-avoided-microjoules: measured-when-made (a live counter read the "
                "model make the answer replayed) or estimated; never measured.",
            ),
        )
    }
    chat_request = request_schema(CHAT, model)
    completion_request = request_schema(COMPLETION, model)
    for schema in (chat_request, completion_request):
        schema["properties"]["model"] = {"type": "string", "enum": [model, *aliases]}
    embedding_request = copy.deepcopy(_EMBEDDING_REQUEST)
    if forwards:
        del embedding_request["properties"]["model"]["enum"]
        forwarded = ("tools", "tool_choice", "response_format", "n", "logprobs")
        _forwarding(chat_request, forwarded)
        _forwarding(completion_request, forwarded)
    eoc_verdict = {
        "type": "object",
        "description": "The answer as `eoc query --json` prints it (eoc verify reads either).",
        "required": ["query_id", "stage", "payload", "cost", "receipt"],
        "properties": {
            "query_id": {"type": "string"},
            "stage": {"type": "string", "enum": ["cache", "kv", "graph", "neural"]},
            "payload": {"type": "string"},
            "cost": {
                "type": "object",
                "required": ["uj", "provenance", "basis", "counter", "counter_kind"],
                "properties": {
                    "uj": {"type": "integer", "minimum": 0},
                    "provenance": {"type": "string", "enum": ["measured", "estimated"]},
                    "basis": {"type": "string"},
                    "counter": {"type": ["string", "null"]},
                    "counter_kind": {"type": ["string", "null"]},
                },
            },
            "receipt": {"type": "object"},
            "tokens": {"type": "object"},
            "generation": {
                "type": "object",
                "description": "How a model generated the answer (absent when no model made "
                "it): finish_reason, tokens {in, out}, seconds; replayed when a store served it "
                "again; receipt, the digest of the receipt it was made with (its name: POST "
                "/v1/eoc/forget forgets it by that). A remembered answer kept before eoc recorded "
                "this has finish_reason, tokens and seconds null and a note; finish_reason is "
                "null too where the model's server said neither why it stopped nor how many "
                "tokens it wrote.",
                "required": ["finish_reason", "tokens", "seconds", "replayed"],
                "properties": {
                    "finish_reason": {"type": ["string", "null"]},
                    "tokens": {"type": ["object", "null"]},
                    "seconds": {"type": ["number", "null"]},
                    "replayed": {"type": "boolean"},
                    "receipt": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                    "note": {"type": "string"},
                },
            },
            "stored": {"type": "string", "enum": ["yes", "pending", "no"]},
            "avoided": {
                "type": "object",
                "description": "What an answer given without the model avoided (absent for a "
                "model's answer, or with no model to compare with).",
                "required": ["uj", "net_uj", "provenance", "basis", "counter", "counter_kind"],
                "properties": {
                    "uj": {"type": "integer", "minimum": 1},
                    "net_uj": {"type": "integer"},
                    "provenance": {"type": "string", "enum": list(AVOIDED_PROVENANCES)},
                    "basis": {"type": "string"},
                    "counter": {"type": ["string", "null"]},
                    "counter_kind": {"type": ["string", "null"]},
                },
            },
            "public_key": {"type": "string"},
        },
    }
    usage = {
        "type": ["object", "null"],
        "description": "Tokens the model read and wrote; for a remembered answer, when it made "
        "it; null when a remembered answer was kept before eoc recorded them (unknown).",
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
                            "description": "stop, length, or the model's own reason; a "
                            "remembered answer replays the one it was made with, null when it "
                            "was kept before eoc recorded it (unknown)",
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
            "/v1/embeddings": {
                "post": {
                    "summary": "Embed texts (MiniLM here, or the upstream's model)",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/EmbeddingRequest"}
                            }
                        },
                    },
                    "responses": {
                        "200": {
                            "description": "OpenAI's embeddings list, each text's verdict in "
                            "eoc.answers (a forwarded one's body as the upstream sent it)",
                            "headers": {
                                k: answer_headers[k]
                                for k in ("x-eoc-stage", "x-eoc-microjoules", "x-eoc-provenance")
                            },
                            "content": obj,
                        },
                        **_errors(400, 401, 404, 408, 413, 415, 429, 502, 503, 504),
                    },
                }
            },
            "/v1/models": get("The served model", obj, 401),
            "/v1/eoc/budget": get("The joule budgets and what they counted", obj, 401),
            "/v1/eoc/public-key": get("The host key that signs receipts", obj, 401, 404),
            "/healthz": get("Liveness and the store's state", obj, 503),
            "/metrics": get(
                "Prometheus metrics", {"text/plain": {"schema": {"type": "string"}}}, 401
            ),
            "/v1/eoc/forget": {
                "post": {
                    "summary": "Forget remembered answers (admin keys only)",
                    "description": "Removes cache and kv entries by exact question, stage, "
                    "age, or one remembered model answer named by a receipt or response id this "
                    "server gave with it (an app's thumbs-down); every criterion given must hold. "
                    "401 without a valid key, 403 with a key not marked admin in the keys file or "
                    "on a server that takes no keys.",
                    "security": [{"bearer": []}],
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/ForgetRequest"}
                            }
                        },
                    },
                    "responses": {
                        "200": {
                            "description": "How many entries each stage removed.",
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": "#/components/schemas/Forgot"}
                                }
                            },
                        },
                        **_errors(400, 401, 403, 413, 503),
                    },
                }
            },
        },
        "components": {
            "schemas": {
                "ChatRequest": chat_request,
                "CompletionRequest": completion_request,
                "EmbeddingRequest": embedding_request,
                "Completion": completion,
                "CompletionChunk": chunk,
                "StreamEvent": stream_event,
                "Verdict": eoc_verdict,
                "ForgetRequest": {
                    "type": "object",
                    "additionalProperties": False,
                    "minProperties": 1,
                    "properties": {
                        "question": {"type": "string", "description": "its exact text"},
                        "stage": {"type": "string", "enum": ["cache", "kv"]},
                        "older_than": {
                            "type": ["string", "number"],
                            "description": 'a duration ("30d", "12h", "90m") or seconds',
                        },
                        "receipt": {
                            "type": "string",
                            "description": "a receipt digest of the answer (64 hex digits)",
                        },
                        "response_id": {
                            "type": "string",
                            "description": "the id of a response that gave the answer",
                        },
                    },
                },
                "Forgot": {
                    "type": "object",
                    "required": ["forgot", "what"],
                    "properties": {
                        "forgot": {
                            "type": "object",
                            "additionalProperties": {"type": "integer", "minimum": 0},
                        },
                        "what": {"type": "string"},
                    },
                },
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
