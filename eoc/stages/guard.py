"""Hit guards: before a similarity hit is served, the query and the stored prompt must agree on
what cosine similarity cannot see.

Similarity alone is unsafe for a cache: "convert 10 miles to km" and "convert 10 km to miles"
score 0.99 on MiniLM, "capital of France" and "capital of Germany" 0.97 on a static model.

* :class:`ExactWordsGuard` (strict): the content words and numbers must be the same, in the
  same order; only wording differences (stopwords, case, punctuation, plurals) pass.
* :class:`EntityGuard` (the default, with either embedder): numbers, named entities (a
  capitalized word not opening the sentence, an acronym, a quoted phrase) and the question words
  that fix the kind of answer must agree in order (a query that corrects itself may carry extra
  ones it took back); every content word of the stored question must be in the query; and words
  around "to", "from", "than" keep their sides. Other wording may differ, as in a paraphrase.

Both are pure Python and work with any embedder.
"""

from __future__ import annotations

import re
from typing import Protocol, runtime_checkable

from eoc.stages.text import STOPWORDS, normalize, signature, words

_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?")
_TOKEN = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)
_QUOTED = re.compile(r"[\"“”']([^\"“”']{2,})[\"“”']")
_SENTENCE_START = re.compile(r"(^|[.!?]\s+)$")
_ORDINAL_WORDS = {"first", "second", "third", "last", "next", "previous"}
# question words that fix the kind of answer; "what" and "which" do not, so they are left out
ANSWER_TYPE_WORDS = frozenset({"when", "where", "who", "whom", "whose", "why", "how"})


@runtime_checkable
class HitGuard(Protocol):
    """Says whether a stored prompt may answer a query it is similar to."""

    name: str

    def allows(self, query: str, stored: str) -> bool: ...


class ExactWordsGuard:
    """Same content words and numbers, same order (lightly stemmed)."""

    name = "exact-words"

    def allows(self, query: str, stored: str) -> bool:
        return signature(normalize(query)) == signature(normalize(stored))


def numbers(text: str) -> list[str]:
    """The numbers of ``text`` in order, with thousands separators dropped."""
    return [m.group().replace(",", "").lstrip("+") for m in _NUMBER.finditer(text)]


def entities(text: str) -> list[str]:
    """Named entities in order, lowercased: capitalized words not opening a sentence,
    acronyms (even opening one), and quoted phrases."""
    out: list[str] = []
    for m in _TOKEN.finditer(text):
        w = m.group()
        if not w[0].isupper():
            continue
        at_start = bool(_SENTENCE_START.search(text[: m.start()]))
        acronym = len(w) > 1 and w.isupper()
        if (not at_start or acronym) and w.lower() not in STOPWORDS:
            out.append(w.lower())
    out += [q.lower().strip() for q in _QUOTED.findall(text)]
    return out


# Self-corrections ("the 2007 I mean 2001 report", "when did no sorry what do ..."): the words
# before such a marker were taken back, so they may hold numbers, names or question words the
# stored question lacks.
_CORRECTION = re.compile(
    r"\b(no,? sorry|no,? wait|no no|i mean|i meant|or rather|rather|make that|scratch that|"
    r"or better yet|let me rephrase|oh,? sorry|sorry|actually|wait|oh|um+|uh+|er+|no)\b",
    re.IGNORECASE,
)
_DIRECTIONAL = frozenset(
    {"to", "into", "from", "than", "versus", "vs", "per", "over", "before", "after"}
)


def _stem(w: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w


def _content(text: str) -> list[str]:
    return [_stem(w) for w in words(normalize(text)) if w not in STOPWORDS and not w.isdigit()]


def _directions(text: str) -> set[tuple[str, str, str]]:
    """(word before, directional word, word after) triples: "miles to km" -> (mile, to, km)."""
    ws = [w for w in words(normalize(text)) if w not in STOPWORDS or w in _DIRECTIONAL]
    out = set()
    for i, w in enumerate(ws[1:-1], 1):
        if w in _DIRECTIONAL:
            out.add((_stem(ws[i - 1]), w, _stem(ws[i + 1])))
    return out


def _subsequence(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


class EntityGuard:
    """Serve a similar stored question only if it asks the same thing:

    * its numbers, named entities and answer-type question words (when, where, who, why, how)
      are the query's, in the same order — or, when the query corrects itself ("2007 I mean
      2001"), appear in the query in that order;
    * every content word of the stored question appears in the query (lightly stemmed), so
      "when did the age of imperialism end?" never answers "... begin?";
    * words around "to", "from", "than" ... keep their sides ("10 miles to km" is not "10 km to miles").
    """

    name = "entities"

    def allows(self, query: str, stored: str) -> bool:
        corrected = bool(_CORRECTION.search(query))
        q_num, s_num = numbers(query), numbers(stored)
        q_ent, s_ent = entities(query), entities(stored)
        qn, sn = normalize(query), normalize(stored)
        q_wh = [w for w in words(qn) if w in ANSWER_TYPE_WORDS]
        s_wh = [w for w in words(sn) if w in ANSWER_TYPE_WORDS]
        if corrected:
            if not (_subsequence(s_num, q_num) and _subsequence(s_wh, q_wh)):
                return False
        elif q_num != s_num or set(q_wh) != set(s_wh):
            return False
        q_words, s_words = set(words(qn)), set(words(sn))
        for ent in s_ent if corrected else (*q_ent, *s_ent):
            parts = ent.split()
            if not all(p in q_words for p in parts) or not all(p in s_words for p in parts):
                return False
        shared = [e for e in s_ent if e in q_ent]
        if not _subsequence(shared, q_ent):
            return False
        if not set(_content(stored)) <= set(_content(query)):
            return False
        s_dir = _directions(stored)
        swapped = {(b, d, a) for (a, d, b) in s_dir} - s_dir
        return not swapped & _directions(query)


class NoGuard:
    """Serves any hit above the threshold (what GPTCache and RedisVL do) — for comparison only."""

    name = "none"

    def allows(self, query: str, stored: str) -> bool:
        return True


__all__ = [
    "ANSWER_TYPE_WORDS",
    "EntityGuard",
    "ExactWordsGuard",
    "HitGuard",
    "NoGuard",
    "entities",
    "numbers",
]
