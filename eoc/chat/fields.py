"""The one table of request fields ``eoc serve`` takes: which request kinds take each, and its
JSON Schema. :func:`eoc.chat.request.parse_chat` refuses a field the table does not give the request's
kind and reads each number's bounds from it; the server's OpenAPI document
(``GET /openapi.json``) is generated from it (:func:`request_schema`), so the two cannot differ.
"""

from __future__ import annotations

import copy
from typing import Any

MAX_MESSAGES = 256
"""The most messages one request may hold."""
MAX_STOP = 4
"""The most stop strings (the OpenAI API's own limit)."""
MAX_STOP_BYTES = 256
MAX_OUTPUT_TOKENS = 32_768
"""The largest ``max_tokens`` accepted."""
MAX_SEED = (1 << 63) - 1
MAX_USER_CHARS = 256
ROLES = ("system", "developer", "user", "assistant")
"""Message roles taken (``tool`` messages need tools, which are not taken yet)."""

CHAT, COMPLETION = "chat", "completion"
_BOTH = frozenset({CHAT, COMPLETION})

_STOP_ONE = {"type": "string", "minLength": 1, "maxLength": MAX_STOP_BYTES}
# each stop string is at most MAX_STOP_BYTES of UTF-8: as many characters at most, fewer when
# they are not ASCII (the server refuses a longer one with a 400)

_MESSAGE = {
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
                        "properties": {"type": {"const": "text"}, "text": {"type": "string"}},
                    },
                },
            ]
        },
        "name": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
    },
}

FIELDS: dict[str, tuple[frozenset[str], dict[str, Any]]] = {
    "model": (_BOTH, {"type": "string", "minLength": 1, "maxLength": 256}),
    "messages": (
        frozenset({CHAT}),
        {"type": "array", "minItems": 1, "maxItems": MAX_MESSAGES, "items": _MESSAGE},
    ),
    "prompt": (
        frozenset({COMPLETION}),
        {
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
    ),
    "max_completion_tokens": (
        frozenset({CHAT}),
        {"type": ["integer", "null"], "minimum": 1, "maximum": MAX_OUTPUT_TOKENS},
    ),
    "max_tokens": (
        _BOTH,
        {"type": ["integer", "null"], "minimum": 1, "maximum": MAX_OUTPUT_TOKENS},
    ),
    "temperature": (_BOTH, {"type": ["number", "null"], "minimum": 0, "maximum": 2}),
    "top_p": (_BOTH, {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1}),
    "seed": (_BOTH, {"type": ["integer", "null"], "minimum": 0, "maximum": MAX_SEED}),
    "stop": (
        _BOTH,
        {
            "oneOf": [
                _STOP_ONE,
                {"type": "array", "items": _STOP_ONE, "maxItems": MAX_STOP},
                {"type": "null"},
            ]
        },
    ),
    "n": (_BOTH, {"type": ["integer", "null"], "enum": [1, None]}),
    "stream": (_BOTH, {"type": ["boolean", "null"]}),
    "stream_options": (
        _BOTH,
        {
            "type": ["object", "null"],
            "properties": {"include_usage": {"type": "boolean"}},
            "additionalProperties": False,
        },
    ),
    "presence_penalty": (_BOTH, {"type": ["number", "null"], "minimum": -2, "maximum": 2}),
    "frequency_penalty": (_BOTH, {"type": ["number", "null"], "minimum": -2, "maximum": 2}),
    "user": (_BOTH, {"type": ["string", "null"], "maxLength": MAX_USER_CHARS}),
    "logprobs": (_BOTH, {"enum": [False, None]}),
    "response_format": (
        _BOTH,
        {
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
    ),
    "tools": (frozenset({CHAT}), {"type": ["array", "null"], "maxItems": 0}),
    "tool_choice": (frozenset({CHAT}), {"enum": ["none", None]}),
}
"""Every field, the request kinds that take it, and its JSON Schema."""

REQUIRED = {CHAT: ("model", "messages"), COMPLETION: ("model", "prompt")}


def fields_of(kind: str) -> frozenset[str]:
    """The fields a request of ``kind`` (``chat`` or ``completion``) may hold."""
    return frozenset(name for name, (kinds, _) in FIELDS.items() if kind in kinds)


def bounds(name: str) -> tuple[float, float]:
    """The inclusive bounds of a number field (an exclusive minimum is checked apart)."""
    schema = FIELDS[name][1]
    low = schema["minimum"] if "minimum" in schema else schema["exclusiveMinimum"]
    return low, schema["maximum"]


def request_schema(kind: str, model: str | None = None) -> dict[str, Any]:
    """The JSON Schema of a request body of ``kind``; ``model`` pins the model field to the
    one served."""
    properties = {
        name: copy.deepcopy(schema) for name, (kinds, schema) in FIELDS.items() if kind in kinds
    }
    if model is not None:
        properties["model"] = {"type": "string", "enum": [model]}
    return {
        "type": "object",
        "required": list(REQUIRED[kind]),
        "additionalProperties": False,
        "properties": properties,
    }


__all__ = [
    "CHAT",
    "COMPLETION",
    "FIELDS",
    "MAX_MESSAGES",
    "MAX_OUTPUT_TOKENS",
    "MAX_SEED",
    "MAX_STOP",
    "MAX_STOP_BYTES",
    "MAX_USER_CHARS",
    "REQUIRED",
    "ROLES",
    "bounds",
    "fields_of",
    "request_schema",
]
