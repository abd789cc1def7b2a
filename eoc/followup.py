"""When a fact may answer a request that is more than a plain question.

A request with earlier messages, a system prompt or its own parameters is keyed by all of it:
the cache answers only its exact repeat, and a model's answer to it reaches another request only
in its kv *partition* (:mod:`eoc.partition`: one user message under the same model, system
prompt and content-changing parameters; never a follow-up's). A **fact** is different: an answer no model made (the pack's kv pairs, the graph, a
computation) is the same whatever was said before, at any temperature or seed, so kv and graph
may answer such a request when

* its last message is a user message that **stands alone** (:func:`stands_alone`): no word that
  points back ("it", "that one", "and its population?", "what about Spain?", "the second one"),
  and not a bare reply ("yes", "no thanks");
* nothing in it may change how a fact must be said: no stop strings, and no system prompt
  (a system prompt may ask for another language or a format: "reply in French", "answer in
  JSON") unless the server's operator says its system prompts leave facts as they are
  (``eoc serve --facts-under-system-prompts``; :attr:`eoc.chat.ChatDefaults.facts_under_system_prompts`);
* ``max_tokens`` and sampling only bound or vary a model's form: a fact longer than
  ``max_tokens`` tokens is not served (:func:`fits`).

The rule reads words (any language's pointing-back words outside English are not known: such a
message is taken to stand alone only if it holds none of these; a question in another language
rarely matches the pack anyway).
"""

from __future__ import annotations

import re

from eoc.stages.base import approx_tokens

_WORD = re.compile(r"[a-z0-9']+")

POINTING_BACK = frozenset(
    {
        "it", "its", "it's", "itself", "that", "this", "these", "those", "they", "them",
        "their", "theirs", "themselves", "he", "him", "his", "she", "her", "hers", "former",
        "latter", "above", "aforementioned", "same", "else", "other", "another", "too",
        "also", "either", "neither", "previous", "earlier", "again", "instead", "there's",
    }
)  # fmt: skip
"""Words that point back to something said before."""
OPENERS = frozenset({"and", "but", "or", "so", "then", "also", "plus"})
"""A message opening with one of these continues the one before ("and its population?")."""
BARE_REPLIES = frozenset(
    {
        "yes", "no", "ok", "okay", "sure", "please", "thanks", "thank", "you", "yep", "nope",
        "yeah", "nah", "y", "n", "fine", "great", "cool", "right", "correct", "wrong", "go",
        "ahead", "do", "don't", "both", "neither", "none", "all",
    }
)  # fmt: skip
"""A message made only of these answers a question the assistant asked."""
_PHRASES = (
    re.compile(r"\bwhat about\b"),
    re.compile(r"\bhow about\b"),
    re.compile(r"\b(the|which|that|this|other) ones?\b"),
    re.compile(
        r"\bthe (first|second|third|fourth|fifth|last|next|previous) (one|option|choice)?\b"
    ),
    re.compile(r"^(the )?(first|second|third|last|next)\b"),
    re.compile(r"\bas well\b"),
    re.compile(r"\b(you|u) (said|say|mentioned|mention|told)\b"),
)
"""Phrases that point back although each word alone may not."""


def stands_alone(text: str) -> bool:
    """Whether a message can be read without what came before it."""
    low = text.casefold().replace("’", "'")
    words = _WORD.findall(low)
    if not words:
        return False
    if words[0] in OPENERS:
        return False
    if all(w in BARE_REPLIES for w in words):
        return False
    if any(w in POINTING_BACK for w in words):
        return False
    return not any(p.search(low) for p in _PHRASES)


def fits(payload: str, max_tokens: int) -> bool:
    """Whether a fact fits in ``max_tokens`` tokens (counted as the work estimates count them:
    :func:`eoc.stages.base.approx_tokens`)."""
    return approx_tokens(payload) <= max_tokens


__all__ = ["BARE_REPLIES", "OPENERS", "POINTING_BACK", "fits", "stands_alone"]
