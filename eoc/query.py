"""Queries and the stages that answer them.

A :class:`Query` is content-addressed: its ``id`` is the SHA-256 (hex) of the
UTF-8 prompt, so the same text always has the same id, in any process and in
the browser.
"""

from __future__ import annotations

import enum
import hashlib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Protocol

from eoc.errors import BadEmbedding, EmptyPrompt, InputError, InvalidText, PromptTooLong

MAX_PROMPT_BYTES = 16_384
"""Largest prompt accepted, in UTF-8 bytes (16 KiB)."""

# C0 controls other than tab, newline and carriage return, DEL, and C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
CONTROL_CHARS = _CONTROL
"""The characters eoc takes in no text (a backend cleaning a model's output strips these)."""
REUSE = ("paraphrase", "exact", "never")
"""How a model's remembered answers may be reused, loosest first (:func:`checked_reuse`):
``paraphrase`` (the default) serves one to the same question and, by the kv, to a rewording of
it in the same partition; ``exact`` only to the same request (the cache); ``never`` to none. A
store's policy (:class:`eoc.Cascade`'s ``reuse``) and a request's (:attr:`Query.reuse`) both
hold: the stricter wins. Facts (answers no model made) are served under any."""


def checked_reuse(value: object, what: str = "reuse") -> str | None:
    """``value`` if it is one of :data:`REUSE` (or ``None``: no policy of its own).

    Raises:
        InvalidText: anything else.
    """
    if value is None or value in REUSE:
        return value
    raise InvalidText(f"{what} is one of {', '.join(REUSE)}, not {value!r:.40}")


def stricter(a: str | None, b: str | None) -> str:
    """The stricter of two reuse policies (``None``: the default, paraphrase)."""
    return REUSE[max(REUSE.index(a or REUSE[0]), REUSE.index(b or REUSE[0]))]


MAX_CONTEXT_BYTES = 1 << 20
"""Largest context (see :class:`Query`) accepted, in UTF-8 bytes (1 MiB)."""
_sha256 = hashlib.sha256
_NO_METADATA: Mapping[str, Any] = MappingProxyType({})


class Stage(enum.StrEnum):
    """The four stages of the cascade, cheapest first."""

    CACHE = "cache"
    KV = "kv"
    GRAPH = "graph"
    NEURAL = "neural"


def check_prompt(prompt: object) -> bytes:
    """Validate a prompt and return its UTF-8 bytes.

    Raises:
        InvalidText: not a ``str``, lone surrogates, or control characters.
        EmptyPrompt: empty or only whitespace.
        PromptTooLong: more than :data:`MAX_PROMPT_BYTES` bytes.
    """
    if type(prompt) is not str:
        if not isinstance(prompt, str):
            raise InvalidText(
                f"prompt must be text (str), not {type(prompt).__name__}: pass the question as a string"
            )
        prompt = str(prompt)
    try:
        data = prompt.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidText(
            "prompt is not valid Unicode text (it holds lone surrogates): decode your input properly"
        ) from None
    if len(data) > MAX_PROMPT_BYTES:
        raise PromptTooLong(
            f"prompt is {len(data)} bytes; the limit is {MAX_PROMPT_BYTES}: shorten it"
        )
    if not prompt.isprintable():
        if _CONTROL.search(prompt):
            raise InvalidText(
                "prompt holds control characters (NUL, escape, ...): strip them before asking"
            )
        if not prompt.strip():
            raise EmptyPrompt("prompt is only whitespace: type a question")
    elif not data or prompt.isspace():
        raise EmptyPrompt("prompt is empty: type a question")
    return data


def check_text(
    value: object, what: str, *, max_bytes: int, error: type[InputError] = InvalidText
) -> str:
    """Validate text entering eoc (a stored answer, a fact, a backend reply) and return it.

    The same rules as a prompt: a ``str`` of valid Unicode (no lone surrogates), no control
    characters but tab, newline and carriage return, not empty or only whitespace, at most
    ``max_bytes`` UTF-8 bytes. Text that passes can be encoded, hashed and printed later.

    Raises:
        ``error`` (an :class:`InputError` subclass; :class:`InvalidText` by default) naming ``what``.
    """
    if not isinstance(value, str):
        raise error(f"{what} must be text (str), not {type(value).__name__}")
    try:
        data = value.encode("utf-8")
    except UnicodeEncodeError:
        raise error(f"{what} is not valid Unicode text (it holds lone surrogates)") from None
    if len(data) > max_bytes:
        raise error(f"{what} is {len(data):,} bytes; the limit is {max_bytes:,}")
    if not value.isprintable() and _CONTROL.search(value):
        raise error(f"{what} holds control characters (NUL, escape, ...): strip them")
    if not value.strip():
        raise error(f"{what} is empty")
    return value


def check_embedding(embedding: object) -> tuple[float, ...]:
    """Validate a dense embedding: a non-empty sequence of finite numbers, not all zero."""
    if isinstance(embedding, (str, bytes)) or not isinstance(embedding, Sequence):
        raise BadEmbedding("embedding must be a sequence of numbers (a list of floats)")
    if not embedding:
        raise BadEmbedding("embedding is empty: pass a vector of numbers or no embedding")
    out: list[float] = []
    for value in embedding:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BadEmbedding(f"embedding holds {value!r}, which is not a number")
        f = float(value)
        if not math.isfinite(f):
            raise BadEmbedding("embedding holds NaN or infinity: recompute it")
        out.append(f)
    if not any(out):
        raise BadEmbedding("embedding is all zeros, so it has no direction: recompute it")
    return tuple(out)


class Conversation(Protocol):
    """What the cascade reads of a conversation riding on a query
    (:class:`eoc.chat.request.ChatRequest`): the neural stage hands it whole to a backend that takes
    one, and estimates its cost from its texts and ``max_tokens``."""

    @property
    def max_tokens(self) -> int: ...

    @property
    def messages(self) -> Sequence[tuple[str, str]]:
        """The conversation's turns as (role, text), the question last."""
        ...

    def texts(self) -> str: ...


class KvPartition(Protocol):
    """What the kv stage reads of a query's partition (:class:`eoc.store.partition.Partition`): the
    tags it may get entries from, which of them an entry passes, and where its own answer goes."""

    @property
    def tags(self) -> tuple[str, ...]: ...

    @property
    def facts(self) -> bool: ...

    def admits(self, tag: str, origin: str, meta: Any, payload: str) -> bool: ...

    def tag_for(self, finish_reason: str | None) -> str: ...


class Query:
    """A prompt with its content-addressed id, optional embedding and metadata.

    Args:
        prompt: the question text (1 to :data:`MAX_PROMPT_BYTES` UTF-8 bytes).
        embedding: optional dense vector to use instead of the kv stage's embedder.
        metadata: optional free-form mapping carried along, never hashed.
        context: everything besides the prompt that changes the answer (earlier messages, a
            system prompt, the model, sampling parameters: :meth:`eoc.chat.request.ChatRequest.canonical`).
            It is hashed into the id, so the cache answers only the same prompt in the same
            context; kv and graph, which match a question alone, answer a query with a context
            only with a fact, where ``facts_ok`` allows, or (kv) with a model's answer kept in
            its ``partition``. ``None``: a plain question, whose id
            is the SHA-256 of its text.
        cacheable: ``False`` for a query whose answer would differ each time (sampled without a
            seed): the cache and kv neither answer it nor remember its answer.
        conversation: the whole request when it is more than the prompt (earlier messages, a
            system prompt, its own sampling parameters: a :class:`eoc.chat.request.ChatRequest`), for
            the neural stage; what of it changes the answer is in ``context``.
        on_piece: told each piece of a model's answer as it is produced (a backend that
            streams; another gives the whole answer at the end). Never hashed.
        facts_ok: a query with a context that a fact (an answer no model made: kv's pack
            pairs, the graph, a computation) may still answer, as :mod:`eoc.chat.followup` decides
            for a request; never a model's remembered answer (except from its partition).
        partition: the kv partition of a query with a context whose model answers may be kept
            and served to its paraphrases in the same partition (same model, system prompt and
            content-changing parameters: :mod:`eoc.store.partition`); ``None``: none (a plain
            question is in the shared partition).
        reuse: how this request lets a model's remembered answer be served to it
            (:data:`REUSE`: "paraphrase", "exact", "never"); ``None``: as the store allows.
            Never hashed: it decides what may answer, not what the question is.
    """

    __slots__ = (
        "cacheable",
        "context",
        "conversation",
        "embedding",
        "facts_ok",
        "id",
        "metadata",
        "on_piece",
        "partition",
        "prompt",
        "reuse",
        "size",
    )

    prompt: str
    id: str
    size: int
    embedding: tuple[float, ...] | None
    metadata: Mapping[str, Any]
    context: str | None
    cacheable: bool
    conversation: Conversation | None
    on_piece: Callable[[str], None] | None
    facts_ok: bool
    partition: KvPartition | None
    reuse: str | None

    def __init__(
        self,
        prompt: str,
        *,
        embedding: Sequence[float] | None = None,
        metadata: Mapping[str, Any] | None = None,
        context: str | None = None,
        cacheable: bool = True,
        conversation: Conversation | None = None,
        on_piece: Callable[[str], None] | None = None,
        facts_ok: bool = False,
        partition: KvPartition | None = None,
        reuse: str | None = None,
    ) -> None:
        # Fast path for ordinary text; anything unusual gets the full check (and its error).
        if type(prompt) is str and prompt.isprintable() and not prompt.isspace():
            data = prompt.encode()  # UTF-8; printable text holds no lone surrogates
            if not data or len(data) > MAX_PROMPT_BYTES:
                data = check_prompt(prompt)
        else:
            data = check_prompt(prompt)
        self.prompt = prompt
        self.size = len(data)  # UTF-8 bytes: what hashing and matching it costs scales with this
        if context is None:
            self.id = _sha256(data).hexdigest()
        else:
            # NUL cannot occur in a prompt (it is a control character), so no plain prompt's
            # id can equal a contextual one
            ctx = check_text(context, "context", max_bytes=MAX_CONTEXT_BYTES).encode("utf-8")
            self.id = _sha256(b"\x00" + ctx + b"\x00" + data).hexdigest()
        self.context = context
        if not isinstance(cacheable, bool):
            raise InvalidText("cacheable must be True or False")
        self.cacheable = cacheable
        self.embedding = None if embedding is None else check_embedding(embedding)
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InvalidText("metadata must be a mapping (dict) or None")
        self.metadata = _NO_METADATA if metadata is None else MappingProxyType(dict(metadata))
        if conversation is not None and not callable(getattr(conversation, "texts", None)):
            raise InvalidText(
                "conversation must be a request with texts() (eoc.chat.request.ChatRequest)"
            )
        self.conversation = conversation
        if on_piece is not None and not callable(on_piece):
            raise InvalidText("on_piece must be a function of one text piece, or None")
        self.on_piece = on_piece
        if not isinstance(facts_ok, bool):
            raise InvalidText("facts_ok must be True or False")
        self.facts_ok = facts_ok and context is not None
        if partition is not None and not callable(getattr(partition, "admits", None)):
            raise InvalidText("partition must be an eoc.store.partition.Partition or None")
        self.partition = partition if context is not None and cacheable else None
        self.reuse = checked_reuse(reuse)

    def __repr__(self) -> str:
        return f"Query({self.prompt!r}, id={self.id[:12]}...)"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Query)
            and other.id == self.id
            and other.embedding == self.embedding
            and other.cacheable == self.cacheable
        )

    def __hash__(self) -> int:
        return hash(self.id)


def query_id(prompt: str) -> str:
    """The content address of a prompt: SHA-256 hex of its UTF-8 bytes (validated)."""
    return _sha256(check_prompt(prompt)).hexdigest()


__all__ = [
    "CONTROL_CHARS",
    "MAX_CONTEXT_BYTES",
    "MAX_PROMPT_BYTES",
    "REUSE",
    "Conversation",
    "KvPartition",
    "Query",
    "Stage",
    "check_embedding",
    "check_prompt",
    "check_text",
    "checked_reuse",
    "query_id",
    "stricter",
]
