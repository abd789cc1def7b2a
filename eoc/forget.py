"""Forgetting remembered answers: by question, by stage, by age (``eoc store forget``, and
``POST /v1/eoc/forget`` on ``eoc serve``).

A :class:`Forget` says what to forget; every criterion given must hold (they combine with
"and"). ``question`` matches an entry stored for that exact question (its text as asked; the
cache also keys a model's answer by what made it, which is tried for every origin stored; kv
matches it in every partition, :mod:`eoc.partition`);
``stages`` limits it to the cache or the kv; ``older_than`` (seconds) matches entries stored at
least that long ago. An entry kept before eoc recorded its age (store schema 2 or older) has no
age: ``older_than`` never matches it (forget it by question or by stage).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from eoc.entry import EntryMeta, checked_ttl
from eoc.errors import ConfigError, InputError
from eoc.query import Query, check_prompt
from eoc.stages.text import fold

STAGES = ("cache", "kv")

Match = Callable[[str, str | None, str, EntryMeta | None], bool]
"""Whether to forget an entry: (its key, its prompt or ``None`` for a cache entry, its origin,
its record)."""


@dataclass(frozen=True, slots=True)
class Forget:
    """What to forget (see the module docstring); build it with :func:`forget_of`."""

    question: str | None
    stages: tuple[str, ...]
    older_than: float | None

    def matcher(self, stage: str, now: float | None = None) -> Match:
        """The test an entry of ``stage`` must pass to be forgotten, at ``now``."""
        at = time.time() if now is None else now
        question, age = self.question, self.older_than
        plain = None if question is None else Query(question).id
        kv_key = None if question is None else fold(question)

        def match(key: str, prompt: str | None, origin: str, meta: EntryMeta | None) -> bool:
            if age is not None:
                stored = None if meta is None else meta.stored_at
                if stored is None or at - stored < age:
                    return False
            if question is None:
                return True
            if stage == "kv":  # in any partition (eoc.partition), whatever its key's format
                return prompt is not None and fold(prompt) == kv_key
            if key == plain:
                return True
            return bool(origin) and key == Query(question, context=f"made by {origin}").id

        return match

    def describe(self) -> str:
        parts = [f"question {self.question!r}"] if self.question is not None else []
        if self.older_than is not None:
            parts.append(f"older than {self.older_than:g} s")
        return f"{' and '.join(self.stages)} entries" + (
            f" ({', '.join(parts)})" if parts else " (all)"
        )


def forget_of(question: object = None, stage: object = None, older_than: object = None) -> Forget:
    """A checked :class:`Forget`. ``stage`` is "cache", "kv" or ``None`` (both); ``older_than``
    a duration ("30d", "12h") or seconds.

    Raises:
        ConfigError: no criterion at all (nothing says what to forget), an unknown stage, a bad
            duration.
        InputError: a question that is not valid text.
    """
    if question is None and stage is None and older_than is None:
        raise ConfigError(
            "say what to forget: a question (--question), a stage (--stage cache|kv) or an age "
            "(--older-than 30d), or several of them"
        )
    if question is not None:
        check_prompt(question)
    if stage is not None and stage not in STAGES:
        raise ConfigError(f"the stage to forget is cache or kv, not {stage!r:.40}")
    age = checked_ttl(older_than, "the age to forget (older than)")
    return Forget(
        None if question is None else str(question),
        STAGES if stage is None else (str(stage),),
        age,
    )


def forget_from_json(doc: object) -> Forget:
    """A :class:`Forget` from a request body: ``{"question": str, "stage": "cache"|"kv",
    "older_than": "30d"|seconds}``, at least one of them.

    Raises:
        InputError: not an object, other fields, wrong types, or as :func:`forget_of`.
    """
    if not isinstance(doc, Mapping):
        raise InputError("the body is a JSON object: {question, stage, older_than}")
    extra = set(doc) - {"question", "stage", "older_than"}
    if extra:
        raise InputError(f"unknown fields {sorted(extra)!r:.100}: use question, stage, older_than")
    question, stage, age = doc.get("question"), doc.get("stage"), doc.get("older_than")
    if question is not None and not isinstance(question, str):
        raise InputError("question is the exact text of a question")
    if stage is not None and not isinstance(stage, str):
        raise InputError('stage is "cache" or "kv"')
    if age is not None and (isinstance(age, bool) or not isinstance(age, (str, int, float))):
        raise InputError('older_than is a duration ("30d", "12h") or a number of seconds')
    return forget_of(question, stage, age)


def forget_in(cache: Any, kv: Any, what: Forget, now: float | None = None) -> dict[str, int]:
    """Forget what ``what`` says from ``cache`` and ``kv`` (memory and the store they write
    to); the number forgotten per stage. A part that is ``None`` forgets nothing."""
    out: dict[str, int] = {}
    for name, part in (("cache", cache), ("kv", kv)):
        if name in what.stages:
            out[name] = 0 if part is None else int(part.forget_where(what.matcher(name, now)))
    return out


__all__ = ["STAGES", "Forget", "Match", "forget_from_json", "forget_in", "forget_of"]
