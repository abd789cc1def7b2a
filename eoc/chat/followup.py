"""When a fact may answer a request that is more than a plain question.

A request with earlier messages, a system prompt or its own parameters is keyed by all of it:
the cache answers only its exact repeat, and a model's answer to it reaches another request only
in its kv *partition* (:mod:`eoc.store.partition`: one user message under the same model, system
prompt and content-changing parameters; never a follow-up's). A **fact** is different: an answer no model made (the pack's kv pairs, the graph, a
computation) is the same whatever was said before, at any temperature or seed, so kv and graph
may answer such a request when

* its last message is a user message that **stands alone** (:func:`stands_alone`): no word that
  points back ("it", "that one", "and its population?", "what about Spain?", "the second one"),
  and not a bare reply ("yes", "no thanks");
* nothing in it may change how a fact must be said: no stop strings, and no system prompt
  (a system prompt may ask for another language or a format: "reply in French", "answer in
  JSON") unless the server's operator says its system prompts leave facts as they are
  (``eoc serve --facts-under-system-prompts``; :attr:`eoc.chat.request.ChatDefaults.facts_under_system_prompts`);
* ``max_tokens`` and sampling only bound or vary a model's form: a fact longer than
  ``max_tokens`` tokens is not served (:func:`fits`: counted by the model's tokenizer where one
  is loaded, else bounded from above).

The rule reads words (any language's pointing-back words outside English are not known: such a
message is taken to stand alone only if it holds none of these; a question in another language
rarely matches the pack anyway).

A last message that stands alone is not enough where **earlier turns** came before it: "answer
only in JSON", "here ^ means XOR", "I'm asking about US states" ... "capital of Georgia?" each
make the pack's answer wrong in that conversation. eoc serves a fact after earlier turns only
where it can show they change neither what is asked nor how the answer must be given
(:func:`earlier_turns_change`), and passes on to the model otherwise:

* every earlier user message is a question eoc answers with a fact on its own (the cascade asks
  its kv and graph, as for a plain question), or only greets, thanks or acknowledges ("thanks!",
  "ok cool", "good morning");
* every assistant message gives the fact asked just before it and nothing else (courtesy and the
  question's own words aside: "The capital of France is Paris."), or, after a greeting or
  thanks, only courtesy ("You're welcome! Anything else?"): so no offer, instruction or other
  sense was agreed there;
* where an earlier turn was a fact, the last question names nothing with several senses
  (``eoc/knowledge/data/senses.tsv``: Georgia, Mercury, a gallon, a billion), as the topic of
  the earlier facts may have chosen another ("capital of the USA?" ... "capital of Georgia?");
* at most :data:`MAX_EARLIER_TURNS` earlier user messages (each costs a lookup).

Anything else (an instruction, a definition, a frame, a task, small talk that says more than
hello, an answer other than the fact) passes the request to the model, which reads it whole.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from importlib import resources

from eoc.text.forms import STOPWORDS, fold
from eoc.text.tokens import token_bound

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
"""A message opening with one of these continues the one before ("and its population?"),
unless a whole question follows ("and what is the capital of Spain?": what it asks is said)."""
QUESTION_WORDS = frozenset(
    "what what's whats which who whom whose where when how is are was were does do did can "
    "could".split()
)
"""Words a whole question opens with."""
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
    if words[0] in OPENERS and (len(words) < 2 or words[1] not in QUESTION_WORDS):
        return False  # "and its population?", "and on sundays?"; not "and what is 2+2?"
    if all(w in BARE_REPLIES for w in words):
        return False
    if any(w in POINTING_BACK for w in words):
        return False
    return not any(p.search(low) for p in _PHRASES)


MAX_EARLIER_TURNS = 8
"""The most earlier user messages :func:`earlier_turns_change` checks; more pass to the model."""

PLEASANTRIES = frozenset(
    """hi hello hey heya hiya hiii heyy heyyy yo howdy greetings morning afternoon evening good
    day thanks thank you thx ty tysm cheers ta ok okay k kk okie alright cool great nice perfect
    awesome brilliant lovely sweet neat amazing excellent wonderful super fab sure yes yep yeah
    yup got it gotcha understood noted right fine haha hahaha lol lmao wow oh ah ahh aha oops
    much so very a lot again appreciated appreciate it really that helps helped helpful
    all how how's hows are you doing going what's whats up sup is things""".split()
)  # fmt: skip
"""Words of a user message that only greets, thanks or acknowledges."""
COURTESIES = PLEASANTRIES | frozenset(
    """you you're youre welcome no problem any anytime time glad happy to help helped i i'm im
    can do for today else anything let me know if need more questions question what how may
    assist with there here is it be of service my pleasure sounds doing well asking hope
    your s""".split()
)  # fmt: skip
"""Words of an assistant message that only greets or offers help ("You're welcome! Anything
else I can help with?")."""
_TEXT_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_NUMBER_SEP = re.compile(r"(?<=\d)[,\u202f\u00a0](?=\d{3})")
_FACT_CORE = re.compile(r"\s*(?:\(|;|—|--)")
Lookup = Callable[[str], "str | None"]
"""A question's fact: what eoc answers it with alone, with no model (``None``: no fact)."""


def _words(text: str) -> list[str]:
    return _TEXT_WORD.findall(_NUMBER_SEP.sub("", fold(text)).replace("’", "'"))


def only_pleasantries(text: str, allowed: frozenset[str] = PLEASANTRIES) -> bool:
    """Whether ``text`` holds no word but ``allowed`` ones (emoji and punctuation aside)."""
    return all(w in allowed for w in _words(text))


def gives_only(reply: str, fact: str, question: str) -> bool:
    """Whether an assistant ``reply`` gives ``fact`` (its value, before any note in brackets)
    and says nothing else: its other words are courtesy, stopwords, or the question's or the
    fact's own ("The capital of France is Paris."). An offer, an instruction or another value
    beside it ("Stockholm. Shall I answer in JSON from now on?") fails."""
    core = _words(_FACT_CORE.split(fact, maxsplit=1)[0])
    said = _words(reply)
    if not core:
        return False
    n = len(core)
    at = next((i for i in range(len(said) - n + 1) if said[i : i + n] == core), -1)
    if at < 0:
        return False
    rest = said[:at] + said[at + n :]
    known = COURTESIES | STOPWORDS | set(_words(question)) | set(_words(fact))
    return all(w in known or w.rstrip("s") in known for w in rest)


@functools.cache
def senses() -> tuple[tuple[str, ...], ...]:
    """The names of ``eoc/knowledge/data/senses.tsv`` (each as its words), longest first."""
    text = (resources.files("eoc.knowledge") / "data" / "senses.tsv").read_text(encoding="utf-8")
    names = {
        tuple(line.split("\t", 1)[0].split())
        for line in text.splitlines()
        if line.strip() and not line.startswith("#")
    }
    return tuple(sorted(names, key=lambda n: (-len(n), n)))


def several_senses(text: str) -> str:
    """The first name in ``text`` with several senses (:func:`senses`), "" when none is."""
    ws = _words(text)
    for name in senses():
        n = len(name)
        if any(tuple(ws[i : i + n]) == name for i in range(len(ws) - n + 1)):
            return " ".join(name)
    return ""


def earlier_turns_change(messages: Sequence[tuple[str, str]], fact_of: Lookup) -> str:
    """Why the turns before the last message may change its answer, or "" when eoc can show
    they do not (the rule is in the module docstring). ``messages`` are (role, text), the last
    one the question; system messages are left to the operator's switch
    (``--facts-under-system-prompts``) and skipped here. ``fact_of(text)`` is the fact eoc
    answers a message with alone, ``None`` when it has none."""
    *earlier, (_, last) = messages
    turns = [(role, text) for role, text in earlier if role != "system"]
    if not turns:
        return ""
    if sum(role == "user" for role, _ in turns) > MAX_EARLIER_TURNS:
        return f"more than {MAX_EARLIER_TURNS} earlier messages to check"
    courtesy = "\x00courtesy"  # what an assistant may say after a greeting: courtesy alone
    expected: tuple[str, str] | None = (courtesy, "")  # an app may open with a greeting
    facts = 0
    for role, text in turns:
        if role == "user":
            if only_pleasantries(text):
                expected = (courtesy, "")
                continue
            fact = fact_of(text)
            if fact is None:
                return f"an earlier message is no fact eoc knows, nor a greeting: {text!r:.60}"
            expected, facts = (fact, text), facts + 1
        elif role == "assistant":
            if expected is None:
                return "two assistant messages in a row: the second answers nothing eoc knows"
            value, question = expected
            if value == courtesy:
                if not only_pleasantries(text, COURTESIES):
                    return f"an assistant message says more than courtesy: {text!r:.60}"
            elif not gives_only(text, value, question):
                return f"an earlier answer is not only the fact {value!r:.40}: {text!r:.60}"
            expected = None
        else:
            return f"a {role} message: eoc reads only user and assistant turns"
    if facts:
        name = several_senses(last)
        if name:
            return f"{name!r} has several senses, and an earlier fact may have chosen another"
    return ""


def fits(payload: str, max_tokens: int, tokens: int | None = None) -> bool:
    """Whether a fact fits in ``max_tokens`` tokens: ``tokens`` is the count of the model's own
    tokenizer where one is loaded; without it, a bound that can only over-count
    (:func:`eoc.text.tokens.token_bound`: one a UTF-8 byte), so a fact is never served as
    finished where the model would have been cut ("1.41421356..." at ``max_tokens`` 4)."""
    n = token_bound(payload) if tokens is None else tokens
    return n <= max_tokens


__all__ = [
    "BARE_REPLIES",
    "COURTESIES",
    "MAX_EARLIER_TURNS",
    "OPENERS",
    "PLEASANTRIES",
    "POINTING_BACK",
    "QUESTION_WORDS",
    "earlier_turns_change",
    "fits",
    "gives_only",
    "only_pleasantries",
    "several_senses",
    "stands_alone",
]
