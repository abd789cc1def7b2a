"""The conversations eoc answers: an OpenAI chat request as eoc reads it and what it may be
answered with (:mod:`eoc.chat.request`), the table of its fields (:mod:`eoc.chat.fields`), and
whether its earlier turns change what its last question asks (:mod:`eoc.chat.followup`).

The request's public names are here too: ``from eoc.chat import parse_chat, ChatRequest``."""

from eoc.chat.request import (
    MAX_CONVERSATION_BYTES,
    MAX_MESSAGES,
    MAX_OUTPUT_TOKENS,
    MAX_STOP,
    MAX_STOP_BYTES,
    ROLES,
    BadRequest,
    ChatDefaults,
    ChatRequest,
    embedding_inputs,
    forwarded_embedding,
    forwarded_feature,
    forwarded_key,
    parse_chat,
    tool_call_text,
)

__all__ = [
    "MAX_CONVERSATION_BYTES",
    "MAX_MESSAGES",
    "MAX_OUTPUT_TOKENS",
    "MAX_STOP",
    "MAX_STOP_BYTES",
    "ROLES",
    "BadRequest",
    "ChatDefaults",
    "ChatRequest",
    "embedding_inputs",
    "forwarded_embedding",
    "forwarded_feature",
    "forwarded_key",
    "parse_chat",
    "tool_call_text",
]
