"""Forgetting remembered answers: by question, by stage, by age, or one answer by its name
(``eoc store forget``, ``POST /v1/eoc/forget`` on ``eoc serve``, :meth:`eoc.Cascade.forget_answer`).

A :class:`Forget` says what to forget; every criterion given must hold (they combine with
"and"). ``question`` matches every entry stored for that question (its text as the kv folds
it): in the kv in every partition (:mod:`eoc.store.partition`); in the cache, every entry that records
it answers that question (``EntryMeta.asked``), whatever system prompt, earlier turns or
parameters it was asked with, and for an entry from before eoc recorded that, the question's
own key and a model's answer to it keyed by what made it (tried for every origin stored);
``stages`` limits it to the cache or the kv; ``older_than`` (seconds) matches entries stored at
least that long ago. An entry kept before eoc recorded its age (store schema 2 or older) has no
age: ``older_than`` never matches it (forget it by question or by stage).

``answer`` names one model answer: the digest of the receipt it was given with when the model
made it (kept with the answer as :attr:`eoc.store.entry.Generation.receipt`, in the cache and the kv
alike, and shown with every replay of it as ``generation.receipt``), or the first 32 or more of
its hex digits: what a response id of ``eoc serve`` carries (:func:`answer_in_id`). So an app's
thumbs-down button, which holds the response it showed, removes that answer wherever it is kept.
An answer remembered before eoc named answers so has no name: forget it by its question.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from eoc.errors import ConfigError, InputError
from eoc.query import Query, check_prompt
from eoc.store.entry import EntryMeta, checked_ttl
from eoc.store.partition import tag_of as tag_of_key
from eoc.store.rules import asked_of
from eoc.text.forms import fold

STAGES = ("cache", "kv")
MIN_ANSWER_DIGITS = 32
"""The fewest hex digits of a made receipt that name an answer (128 bits)."""
_HEX = re.compile(r"[0-9a-f]{32,64}")
_ID_ANSWER = re.compile(r"-a([0-9a-f]{32})$")


def answer_in_id(response_id: str) -> str | None:
    """The made receipt's first 32 hex digits an ``eoc serve`` response id carries
    (``chatcmpl-...-a<32 hex>``, :func:`id_naming`), or ``None`` (an answer no model made)."""
    m = _ID_ANSWER.search(response_id)
    return None if m is None else m.group(1)


def id_naming(prefix: str, made_receipt: str | None) -> str:
    """A response id that names the model answer it carries: ``prefix`` (unique per response),
    then ``-a`` and the made receipt's first 32 hex digits; ``prefix`` alone for an answer no
    model made."""
    return prefix if made_receipt is None else f"{prefix}-a{made_receipt[:MIN_ANSWER_DIGITS]}"


def checked_answer_name(name: object) -> str:
    """A receipt digest (64 hex digits), the first 32 or more of them, or the digits a response
    id of ``eoc serve`` carries, as the hex digits that name an answer.

    Raises:
        InputError: anything else.
    """
    if isinstance(name, str):
        text = name.strip().lower()
        in_id = answer_in_id(text) if len(text) <= 200 else None
        if in_id is not None:
            return in_id
        if _HEX.fullmatch(text):
            return text
    raise InputError(
        "an answer is named by the receipt it was given with (64 hex digits, or the first 32 "
        f"or more) or by eoc serve's response id (chatcmpl-...-a<32 hex>), not {name!r:.80}"
    )


Match = Callable[[str, str | None, str, EntryMeta | None], bool]
"""Whether to forget an entry: (its key, its prompt or ``None`` for a cache entry, its origin,
its record)."""


@dataclass(frozen=True, slots=True)
class Forget:
    """What to forget (see the module docstring); build it with :func:`forget_of`."""

    question: str | None
    stages: tuple[str, ...]
    older_than: float | None
    answer: str | None = None

    def matcher(self, stage: str, now: float | None = None) -> Match:
        """The test an entry of ``stage`` must pass to be forgotten, at ``now``."""
        at = time.time() if now is None else now
        question, age = self.question, self.older_than
        plain = None if question is None else Query(question).id
        kv_key = None if question is None else fold(question)
        asked = None if question is None else asked_of(question)

        named = self.answer

        def match(key: str, prompt: str | None, origin: str, meta: EntryMeta | None) -> bool:
            if named is not None:
                gen = None if meta is None else meta.generation
                if gen is None or gen.receipt is None or not gen.receipt.startswith(named):
                    return False
            if age is not None:
                stored = None if meta is None else meta.stored_at
                if stored is None or at - stored < age:
                    return False
            if question is None:
                return True
            if stage == "kv":  # in any partition (eoc.store.partition), whatever its key's format
                return prompt is not None and fold(prompt) == kv_key
            if key == plain or (meta is not None and meta.asked == asked):
                return True  # the question's entry in any conversation or partition
            return bool(origin) and key == Query(question, context=f"made by {origin}").id

        return match

    def describe(self) -> str:
        parts = [f"question {self.question!r}"] if self.question is not None else []
        if self.answer is not None:
            parts.append(f"the answer made with receipt {self.answer[:16]}...")
        if self.older_than is not None:
            parts.append(f"older than {self.older_than:g} s")
        return f"{' and '.join(self.stages)} entries" + (
            f" ({', '.join(parts)})" if parts else " (all)"
        )


def forget_of(
    question: object = None,
    stage: object = None,
    older_than: object = None,
    *,
    answer: object = None,
) -> Forget:
    """A checked :class:`Forget`. ``stage`` is "cache", "kv" or ``None`` (both); ``older_than``
    a duration ("30d", "12h") or seconds; ``answer`` a made receipt or a response id
    (:func:`checked_answer_name`).

    Raises:
        ConfigError: no criterion at all (nothing says what to forget), an unknown stage, a bad
            duration.
        InputError: a question that is not valid text, an answer's name that is none.
    """
    if question is None and stage is None and older_than is None and answer is None:
        raise ConfigError(
            "say what to forget: a question (--question), an answer (--receipt or "
            "--response-id), a stage (--stage cache|kv) or an age (--older-than 30d), or "
            "several of them"
        )
    named = None if answer is None else checked_answer_name(answer)
    if question is not None:
        check_prompt(question)
    if stage is not None and stage not in STAGES:
        raise ConfigError(f"the stage to forget is cache or kv, not {stage!r:.40}")
    age = checked_ttl(older_than, "the age to forget (older than)")
    return Forget(
        None if question is None else str(question),
        STAGES if stage is None else (str(stage),),
        age,
        named,
    )


def forget_from_json(doc: object, made_receipt: Any = None) -> Forget:
    """A :class:`Forget` from a request body: ``{"question": str, "stage": "cache"|"kv",
    "older_than": "30d"|seconds, "receipt": hex, "response_id": str}``, at least one of them
    (``receipt`` and ``response_id`` name one answer: give one of the two).
    ``made_receipt(name)``: the made receipt a receipt or response id names, where the caller
    knows more than the name says (a server knows which answer a replay's receipt, or a
    streamed response's id, served: :meth:`eoc.Cascade.made_receipt`).

    Raises:
        InputError: not an object, other fields, wrong types, or as :func:`forget_of`.
    """
    fields = ("question", "stage", "older_than", "receipt", "response_id")
    if not isinstance(doc, Mapping):
        raise InputError(f"the body is a JSON object: {{{', '.join(fields)}}}")
    extra = set(doc) - set(fields)
    if extra:
        raise InputError(f"unknown fields {sorted(extra)!r:.100}: use {', '.join(fields)}")
    question, stage, age = doc.get("question"), doc.get("stage"), doc.get("older_than")
    receipt, response_id = doc.get("receipt"), doc.get("response_id")
    if receipt is not None and response_id is not None:
        raise InputError("name the answer once: a receipt or a response_id, not both")
    name = receipt if receipt is not None else response_id
    if name is not None and (not isinstance(name, str) or len(name) > 200):
        raise InputError("receipt is 64 hex digits, response_id the id of a response (text)")
    if name is not None and made_receipt is not None:
        name = made_receipt(name)
    if question is not None and not isinstance(question, str):
        raise InputError("question is the exact text of a question")
    if stage is not None and not isinstance(stage, str):
        raise InputError('stage is "cache" or "kv"')
    if age is not None and (isinstance(age, bool) or not isinstance(age, (str, int, float))):
        raise InputError('older_than is a duration ("30d", "12h") or a number of seconds')
    return forget_of(question, stage, age, answer=name)


KV_PLACES = ("shared", "partitions")
"""Where a forgotten kv entry was (:func:`forget_in`'s ``where``): in the shared partition
(plain questions and facts), or in the partitions of requests that carried a system prompt or
parameters of their own (:mod:`eoc.store.partition`)."""


def forget_in(
    cache: Any,
    kv: Any,
    what: Forget,
    now: float | None = None,
    where: dict[str, dict[str, int]] | None = None,
) -> dict[str, int]:
    """Forget what ``what`` says from ``cache`` and ``kv`` (memory and the store they write
    to); the number forgotten per stage. A part that is ``None`` forgets nothing. ``where``,
    when given, is filled with how many of the kv's were in each of :data:`KV_PLACES`."""
    out: dict[str, int] = {}
    for name, part in (("cache", cache), ("kv", kv)):
        if name not in what.stages:
            continue
        match = what.matcher(name, now)
        picked: set[str] = set()

        def noting(
            key: str,
            prompt: str | None,
            origin: str,
            meta: Any,
            match: Match = match,
            picked: set[str] = picked,
        ) -> bool:
            hit = match(key, prompt, origin, meta)
            if hit:
                picked.add(key)
            return hit

        out[name] = 0 if part is None else int(part.forget_where(noting))
        if where is not None and name == "kv":
            shared = sum(1 for k in picked if not tag_of_key(k))
            where[name] = {KV_PLACES[0]: shared, KV_PLACES[1]: out[name] - shared}
    return out


__all__ = [
    "KV_PLACES",
    "MIN_ANSWER_DIGITS",
    "STAGES",
    "Forget",
    "Match",
    "answer_in_id",
    "checked_answer_name",
    "forget_from_json",
    "forget_in",
    "forget_of",
    "id_naming",
]
