"""Partitions of the kv: which remembered model answers a request that is not a plain question
may get.

A *plain question* (one user message, no system prompt, every parameter at the server's
default) is in the **shared partition**: kv answers it from the pack and from the model's
answers to other plain questions, paraphrases included. A request with its own system prompt
or parameters used to get a model's answer only for its exact repeat (the cache). Now a request
whose conversation is one user message, after system messages or none, is in a **partition**
of its own kind: the model answers kept there were made under the same

* model (the request's ``model``; the cascade checks also that its own model and parameters,
  the answer's *origin*, made it),
* system prompt (every system message, in order),
* parameters that change an answer's content: ``temperature``; ``top_p`` and ``seed`` when
  sampling (greedy decoding ignores both); ``stop``; ``presence_penalty`` and
  ``frequency_penalty``,

and a later request in that partition whose question is a paraphrase (as the kv's embedder and
guard judge it, the same as for plain questions) gets the answer. Requests in other partitions,
plain questions included, never see it.

``max_tokens`` only bounds an answer's length, so it is not part of the partition; it decides
*which* of the partition's answers fit:

* an answer that finished by itself (``finish_reason`` ``stop``) is kept under the partition's
  *open* tag and served to a request whose ``max_tokens`` is at least the answer's tokens (the
  model, given room, would have stopped there too);
* an answer cut by ``max_tokens`` (``length``), or whose finish is unknown, is kept under the
  partition's *bounded* tag, which names its ``max_tokens``: served only to a request with that
  same ``max_tokens`` (with more room the model would have gone on; with less it would have
  been cut sooner) and the same question (the kv's exact path: never to a paraphrase, which
  the model might have answered in fewer words, nor as finished: the replay says ``length``).

A fact (an answer no model made: kv's pack, the graph, a computation) is in the shared
partition; a request in a partition gets one only where :attr:`eoc.chat.request.ChatRequest.facts_may_answer`
allows (not under a system prompt unless the server runs with ``--facts-under-system-prompts``),
at any ``temperature`` or ``seed``, and only if it fits ``max_tokens``.

A partition's entries are keyed in the kv (and in a store's ``key`` column) as
``"(p:NAME) folded question"`` or ``"(p:NAME max_tokens=N) ..."``. A plain question's key is its
folded text (:func:`eoc.text.forms.fold`), which never opens with a space; one that opens with
"(" ("(2+3)*4") is keyed after one space, so no plain key opens like a partition's, whatever a
question says, and a store keeps the partition in the key it already has.

Pure standard library: the browser build uses it too.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from eoc.errors import InvalidText
from eoc.store.entry import EntryMeta
from eoc.text.tokens import token_bound

SHARED = ""
"""The shared partition's tag: plain questions and facts."""
_TAG = re.compile(r"\(p:[0-9a-f]{24}(?: max_tokens=[1-9][0-9]{0,6})?\)")
_NAME_HEX = 24


@dataclass(frozen=True, slots=True)
class Partition:
    """The partition of one request (see the module docstring).

    ``name`` is a digest of what the partition holds fixed (:meth:`of`), ``max_tokens`` the
    request's, and ``facts`` whether the shared partition's facts may answer it too.
    """

    name: str
    max_tokens: int
    facts: bool = False

    @classmethod
    def of(cls, material: str, max_tokens: int, *, facts: bool = False) -> Partition:
        """The partition named by ``material`` (canonical text of what it holds fixed)."""
        digest = hashlib.sha256(material.encode("utf-8")).hexdigest()[:_NAME_HEX]
        return cls(digest, max_tokens, facts)

    @property
    def open_tag(self) -> str:
        """Where answers that finished by themselves are kept."""
        return f"(p:{self.name})"

    @property
    def bounded_tag(self) -> str:
        """Where answers cut by this ``max_tokens`` (or of unknown finish) are kept."""
        return f"(p:{self.name} max_tokens={self.max_tokens})"

    @property
    def tags(self) -> tuple[str, str]:
        """The tags whose entries this request may get (besides facts, where allowed)."""
        return self.open_tag, self.bounded_tag

    def tag_for(self, finish_reason: str | None) -> str:
        """The tag a model's answer to this request is kept under, given its finish reason."""
        return self.open_tag if finish_reason == "stop" else self.bounded_tag

    def admits(self, tag: str, origin: str, meta: EntryMeta | None, payload: str) -> bool:
        """Whether a kv entry kept under ``tag`` may answer this request: an answer cut at this
        ``max_tokens``; one that finished by itself within it; or, where facts may answer, a
        fact of the shared partition (its length is checked by the cascade)."""
        if tag == self.bounded_tag:
            return True
        if tag == self.open_tag:
            generation = None if meta is None else meta.generation
            if generation is None or generation.finish_reason != "stop":
                return False  # only an answer that stopped by itself fits a larger max_tokens
            if generation.tokens is not None:
                return generation.tokens[1] <= self.max_tokens
            return token_bound(payload) <= self.max_tokens  # counts can only be over-counted
        return self.facts and tag == SHARED and not origin


def keyed(tag: str, folded: str) -> str:
    """A kv key: the folded question, after its partition's tag unless shared (a shared one
    that opens with "(" after a space, so that it never reads as a tag)."""
    if tag:
        return f"{tag} {folded}"
    return f" {folded}" if folded.startswith("(") else folded


def unkeyed(key: str) -> str:
    """The folded question of a kv key, without its partition's tag."""
    tag = tag_of(key)
    if tag:
        return key[len(tag) + 1 :]
    return key[1:] if key.startswith(" (") else key


def tag_of(key: str) -> str:
    """The partition tag a kv key was stored under (:data:`SHARED` for a plain key).

    Raises:
        InvalidText: a key that opens like a partition's but names none eoc writes.
    """
    if not key.startswith("("):
        return SHARED
    end = key.find(")")
    tag = key[: end + 1]
    if end < 0 or not _TAG.fullmatch(tag) or key[end + 1 : end + 2] != " ":
        raise InvalidText(f"a kv key opening with '(' names no partition eoc writes: {key:.60}")
    return tag


def checked_tag(tag: object) -> str:
    """``tag`` if it is :data:`SHARED` or a tag :class:`Partition` makes.

    Raises:
        InvalidText: anything else.
    """
    if tag == SHARED:
        return SHARED
    if not isinstance(tag, str) or not _TAG.fullmatch(tag):
        raise InvalidText(f"a kv partition is '' or a tag like (p:HEX), not {tag!r:.60}")
    return tag


__all__ = ["SHARED", "Partition", "checked_tag", "keyed", "tag_of", "unkeyed"]
