"""The rules every store keeps for an entry, whatever keeps it (memory, SQLite, PostgreSQL):
what an answer and its origin may be, the record a new entry gets, when an entry is stale, what
a replay says of its generation, and the keys entries are stored under."""

from __future__ import annotations

import hashlib

from eoc.errors import InputError, InvalidText
from eoc.query import check_prompt, check_text
from eoc.store.entry import UNKNOWN, EntryMeta, Generation, checked_generation, checked_ttl
from eoc.text.forms import fold

MAX_ANSWER_BYTES = 1 << 20
"""Largest answer cached, in UTF-8 bytes: the largest reply the neural stage accepts."""


def checked_answer(payload: object) -> str:
    """Validate an answer about to be cached (see :func:`eoc.query.check_text`).

    Raises:
        InvalidText: not text, lone surrogates, control characters, empty, or too long.
    """
    return check_text(payload, "a cached answer", max_bytes=MAX_ANSWER_BYTES)


MAX_ORIGIN_BYTES = 4096
"""Largest record of what made an answer (a model's identity and parameters), in UTF-8 bytes."""


def checked_origin(origin: object) -> str:
    """Validate what made an answer: "" (no model) or valid text of at most
    :data:`MAX_ORIGIN_BYTES` bytes.

    Raises:
        InvalidText: anything else.
    """
    if origin == "":
        return ""
    return check_text(origin, "an answer's origin", max_bytes=MAX_ORIGIN_BYTES)


def asked_of(question: str) -> str:
    """The digest a cache entry records of the question it answers (``EntryMeta.asked``): the
    first 32 hex digits of the SHA-256 of the question as the kv folds it."""
    return hashlib.sha256(fold(question).encode("utf-8")).hexdigest()[:32]


def new_meta(
    now: float,
    generation: Generation | None,
    ttl: object,
    *,
    what: str = "an entry's TTL",
    asked: str | None = None,
) -> EntryMeta:
    """The record of an entry remembered at ``now``: made by a model (``generation``) or not
    (``None``), expiring ``ttl`` seconds later (``None``: by the store's TTL only); ``asked``:
    for a cache entry, the question it answers (:func:`asked_of`).

    Raises:
        ConfigError: a bad ``ttl`` (see :func:`eoc.store.entry.checked_ttl`).
        InvalidText: a bad ``generation``.
    """
    seconds = checked_ttl(ttl, what)
    gen = None if generation is None else checked_generation(generation)
    expires = None if seconds is None else round(now + seconds, 3)
    return EntryMeta(round(now, 3), expires, gen, asked)


def replayed(origin: str, meta: EntryMeta | None) -> Generation | None:
    """What a remembered answer replays of its generation: the one kept, :data:`UNKNOWN` for a
    model's answer kept without one, ``None`` for an answer no model made."""
    if meta is not None and meta.generation is not None:
        return meta.generation
    return UNKNOWN if origin else None


def stale(answer_origin: str, meta: EntryMeta | None, now: float, ttl: float | None) -> bool:
    """Whether an entry may no longer be served: past its own expiry, or, under a store-wide
    ``ttl``, a model's answer older than it (or of unknown age). Answers no model made (the pack,
    the graph, a computation) are aged by their own TTL only."""
    if meta is None:
        return ttl is not None and bool(answer_origin)
    return meta.expired(now, ttl if answer_origin else None)


def qid_of(query: object) -> str:
    """The id of a :class:`Query`; anything else is :class:`InvalidText`, not AttributeError."""
    try:
        return query.id  # type: ignore[attr-defined,no-any-return]
    except AttributeError:
        raise InvalidText(f"a cache is asked with a Query, not {type(query).__name__}") from None


MAX_PAYLOAD_BYTES = 1 << 20
"""Largest kv answer, in UTF-8 bytes."""


def kv_key(prompt: str, payload: str) -> str:
    """Validate a kv prompt and its answer; returns the exact-match key (the folded prompt,
    :func:`eoc.text.forms.fold`).

    Raises:
        InputError: a bad prompt or answer, or a prompt with no words to key on.
    """
    check_prompt(prompt)
    check_text(payload, "a kv answer", max_bytes=MAX_PAYLOAD_BYTES)
    key = fold(prompt)
    if not key:
        raise InputError(f"prompt {prompt!r} has no words to key on")
    return key


__all__ = [
    "MAX_ANSWER_BYTES",
    "MAX_ORIGIN_BYTES",
    "MAX_PAYLOAD_BYTES",
    "asked_of",
    "checked_answer",
    "checked_origin",
    "kv_key",
    "new_meta",
    "qid_of",
    "replayed",
    "stale",
]
