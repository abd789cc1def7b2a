"""Hit guards: before a similarity hit is served, the query and the stored prompt must agree on
what cosine similarity cannot see.

Similarity alone is unsafe for a cache: "convert 10 miles to km" and "convert 10 km to miles"
score 0.99 on MiniLM, "capital of France" and "capital of Germany" 0.97 on a static model.

* :class:`ExactWordsGuard` (strict): the content words and numbers must be the same, in the
  same order; only wording differences (stopwords, case, punctuation, plurals) pass.
* :class:`EntityGuard` (the default, with either embedder) compares what decides the answer
  and lets what only rewords differ. It refuses, saying why (:meth:`EntityGuard.refusal`):
  numbers that differ; named entities (a capitalized word not opening the sentence, an acronym,
  a quoted phrase) missing from either side or in another order (unless a possessive or "of" moved
  them); question words that fix the kind of answer and differ (when both have some); a
  negation on one side only; opposite poles of an axis ("turn on" / "disable", "within" /
  "after", "largest" / "smallest") or different actions; ranks that differ ("second largest");
  the sides of a transfer ("from savings to current") that differ or swap; the time asked about
  (``data/when.tsv``; a time or a name one side adds and the other leaves out is refused as
  :class:`Wording`, which a judge of meaning may decide); and, when the two are one question
  frame (:class:`Frame`), any content word one side has and the other lacks (a word that
  narrows a noun: "gift" / "gift card"), unless the query is the stored question in fewer words
  (:meth:`Frame.fewer`: "overdraft cost?" / "How much does an arranged overdraft cost?"). A
  rewording in other words is refused by default; ``rewordings=True`` leaves it to similarity
  if the two share enough content words (opt-in: on Disfl-QA it served topic-sharing questions
  about the same paragraph, 8.1 % of hits wrong with MiniLM); greetings, slips of the keys,
  clipped words and acronyms are read as what they stand for (:mod:`eoc.stages.spelling`).
  Politeness, framing, filler and pronouns ("please", "I'd like to", "could you name") may
  differ; so may a word that names the kind of thing next to what it names ("the capital city",
  "the element Iron"; alone, as in "delete a table", it is what is asked). Synonyms and set
  phrases are compared as one word ("reserve" is "book", "how many people live in" is
  population), question words are read after them ("where do I go to" asks how), and a
  possessive ending is dropped ("Algeria's capital"). A statement the query opens with ("I forgot
  my password, how do I ...") is context: its words may be ones the stored question lacks. A
  query that corrects itself ("no sorry", "I mean", a bare "no" that does not follow "there is"
  or "I have") may carry words and numbers it took back, but not add a denial in what it says
  last. A relation's technical names in the knowledge pack ("ISO 3166 code", "proton number")
  are one word, with the noun for the kind it is about allowed inside ("alpha-2 country code");
  "no." before "of" or a number is number. The word lists are data,
  next to this module: ``data/polarity.tsv`` (the axes), ``data/synonyms.tsv`` and
  ``data/rewording.tsv``.

Both are pure Python and work with any embedder. Besides ``allows``, a guard may offer

* ``fingerprint(text)``: a hashable value, or ``None`` for "no constraint", such that two texts
  whose fingerprints are both set and differ can never pass ``allows``. The kv stage keeps each
  stored prompt's fingerprint and skips mismatches without calling ``allows`` (a dict lookup
  instead of a text analysis), which is what keeps a store of prompts that differ only by a
  number cheap to miss in.
* ``prepare(text)``: an analysis of ``text`` that ``allows`` takes in place of the text, so the
  kv stage analyses a query once per lookup and a stored prompt once, not once per check.
* ``terms(text)``: a set of hashable terms such that ``allows(query, stored)`` holds only if
  ``terms(stored) <= terms(query)``. The kv stage indexes each stored prompt by its terms and,
  when no stored prompt's terms are all in the query's, knows before embedding the query that
  the guard would refuse every candidate: a new question is a miss without an embedding
  (which, with a neural embedder, is most of what a miss costs).
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Hashable
from importlib import resources
from typing import Protocol, runtime_checkable

from eoc.compute import is_computation
from eoc.stages.lexicon import is_name, is_word
from eoc.stages.spelling import acronym_of, clipped, same_word
from eoc.stages.swaps import keys, traded_around, traded_blocks, traded_words
from eoc.stages.wrappers import unwrap
from eoc.text.forms import STOPWORDS, fold, signature, words

_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?")
_TOKEN = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)
# a quote opens after no letter and closes before none: the apostrophes of "What's Iron's" are
# not quotes
# "atomic no. of", "room no. 12": the abbreviation of number, not the word no
_NUMBER_SIGN = re.compile(r"\b(?:[Nn]o|[Nn]r|[Nn]um)\.(?=\s?(?:of\b|\d))")
_QUOTED = re.compile(r"(?<!\w)[\"“”']([^\"“”']{2,})[\"“”'](?!\w)")
# A token opens a sentence when the text before it is empty (or a lone newline, which ``$``
# also matches before) or ends in ".", "!" or "?" and whitespace. The ends of these matches are
# exactly such positions: found in one pass instead of searching each token's prefix again.
_SENTENCE_BREAK = re.compile(r"[.!?]\s+")
# question words that fix the kind of answer; "what" and "which" do not, so they are left out
ANSWER_TYPE_WORDS = frozenset({"when", "where", "who", "whom", "whose", "why", "how"})
_KIND_OF_ANSWER = ANSWER_TYPE_WORDS - {"how"}  # "how" asks for a way, an amount, a time...
COMPUTATION_REFUSAL = "a computation is answered by computing it, never by a similar question"


class Wording(str):
    """A refusal for want of evidence, never for a difference that decides the answer: the
    query says the stored question in other words, changes or adds a word that may or may not
    matter (:meth:`Frame.wording`), names an action or a pole the other side does not say at all
    ("begin" / "start", "descale" / "remove limescale"), or asks a kind of answer where the
    other asks none ("oakfield primary start time" / "What time does school start?"). Where no
    decisive difference is there besides, also: a name one side adds with no name in its place
    ("HMRC"), a time one side names and the other leaves open ("last night"), both poles of an
    axis joined by "or" or "and" on one side ("before or after"). A judge of meaning
    (:mod:`eoc.stages.judging`) may decide such a pair; every other refusal is final: numbers,
    operators and symbols, a name in place of another, capitals and the order of names,
    negation, ranks, opposite poles and different actions both sides name, the sides of a
    transfer, who does what to whom, two different times, the tense, and question words both
    sides ask."""

    __slots__ = ()


def judgeable(reason: str) -> bool:
    """Whether a guard's refusal leaves the pair to a judge of meaning: only a refusal for
    want of evidence (:class:`Wording`), never a decisive difference."""
    return isinstance(reason, Wording) and bool(reason)


@runtime_checkable
class HitGuard(Protocol):
    """Says whether a stored prompt may answer a query it is similar to."""

    name: str

    def allows(self, query: str, stored: str) -> bool: ...


class ExactWordsGuard:
    """Same content words and numbers, same order (lightly stemmed)."""

    name = "exact-words"

    def allows(self, query: str, stored: str) -> bool:
        return (
            signature(fold(query)) == signature(fold(stored))
            and symbols(query) == symbols(stored)
            and not is_computation(query)
        )

    def fingerprint(self, text: str) -> Hashable | None:
        """The whole signature and the operators: equal whenever ``allows`` holds."""
        return signature(fold(text)), symbols(text)

    def terms(self, text: str) -> frozenset[Hashable]:
        """The signature's words: equal signatures have equal sets."""
        return frozenset(signature(fold(text)))


def numbers(text: str) -> list[str]:
    """The numbers of ``text`` in order, with thousands separators dropped."""
    return [m.group().replace(",", "").lstrip("+") for m in _NUMBER.finditer(text)]


def entities(text: str) -> list[str]:
    """Named entities in order, lowercased: capitalized words not opening a sentence (a lone
    capital letter too: "type A"), acronyms (even opening one), and quoted phrases."""
    starts = {m.end() for m in _SENTENCE_BREAK.finditer(text)}
    starts.add(0)
    if text[:1] == "\n":
        starts.add(1)
    out: list[str] = []
    for m in _TOKEN.finditer(text):
        w = _own(m.group())
        if not w[0].isupper():
            continue
        acronym = len(w) > 1 and w.isupper()
        letter = len(w) == 1 and w != "I"  # "type A", "vitamin C": a capital letter names one
        if (m.start() not in starts or acronym) and (letter or w.lower() not in _NOT_NAMES):
            out.append(fold(w))
    out += [fold(q).strip() for q in _QUOTED.findall(text)]
    return out


# capitalized inside a sentence without naming anything: "Hey, I'm ..."
_NOT_NAMES = STOPWORDS | {"i'm", "i've", "i'd", "i'll", "i’m", "i’ve", "i’d", "i’ll"}
_NOT_NAMES |= {"ok", "okay"}  # "Is it OK to ...": capitals that name nothing

# Self-corrections ("the 2007 I mean 2001 report", "when did no sorry what do ..."): the words
# before such a marker were taken back, so they may hold numbers, names or question words the
# stored question lacks.
_CORRECTION = re.compile(
    r"\b(no,? sorry|no,? wait|no no|i mean|i meant|or rather|rather|make that|scratch that|"
    r"or better yet|let me rephrase|never mind|nevermind|oh,? sorry|sorry|actually|wait|oh|"
    r"um+|uh+|er+|nope|no)\b",
    re.IGNORECASE,
)
# "no" after a verb of having or being ("there is no signal", "I have no access", "with no
# fee") denies, unless what follows takes something back ("has no, what areas ..."); elsewhere
# a bare "no" in a question most often takes back what came before it ("Pauli repulsion no
# electron clouds").
_DENYING_NO = re.compile(
    r"(?:\b(?:is|are|was|were|be|been|being|am|have|has|had|having|get|gets|got|getting|"
    r"there|there's|with|see|saw|seeing|find|found|receive|received|need|needs|shows?|"
    r"showing|gives?|gave|giving|takes?|took|allows?|leaves?|left)|'s|'ve|'re)\s+(no)\b"
    r"(?!\s*,|\s+(?:sorry|wait|i\s+mean|make\s+that|what|when|where|who|whom|whose|which|"
    r"why|how|rather|actually|um+|uh+|er+|no)\b)",
    re.IGNORECASE,
)


# Operators and symbols decide an answer as numbers do: "7+8" is not "7*8", "a >= b" is not
# "a <= b", C++ is not C#. Read from the raw text, each run of them as one symbol; spellings of
# one symbol are made one ("×" is "*", "≤" is "<=", "percent" is "%").
_SYMBOL_CHARS = frozenset("+-*/^%<>=!?&|~#$@\\♭♮♯")
"""Characters read as operators and symbols, besides any of Unicode's math and currency signs."""


_SYMBOL_SPELLINGS = (
    (re.compile(r"[×·∙]"), "*"),
    (re.compile(r"[÷∕]"), "/"),
    (re.compile(r"[−–—]"), "-"),
    (re.compile(r"≤"), "<="),
    (re.compile(r"≥"), ">="),
    (re.compile(r"≠"), "!="),
    (re.compile(r"\b(?:per ?cent|pct)\b", re.IGNORECASE), "%"),
)


_SYMBOL_WORDS = frozenset({"percent", "pct"})


_MARKS = frozenset("‼⁇⁈⁉‰‱′″‴⁗")
"""Punctuation that says something of a number: a double factorial, per mille, feet and inches."""
_SIGN_CATEGORIES = frozenset({"Sm", "Sc", "Sk", "So", "No"})
"""Unicode's math, currency, modifier and other signs, and the numbers that are not digits:
superscripts and subscripts ("2³" is not "23"), fractions ("½"), the degree sign ("30°")."""


def _symbolic(c: str) -> bool:
    return c in _SYMBOL_CHARS or (
        c > "\x7f" and (c in _MARKS or unicodedata.category(c) in _SIGN_CATEGORIES)
    )


@functools.lru_cache(maxsize=4096)
def symbols(text: str) -> tuple[str, ...]:
    """The operator and symbol runs of ``text`` in order ("what is 7+8" -> ("+",), "C#" ->
    ("#",), "a ♯" -> ("♯",)), less what only joins or ends words: a hyphen inside a word or a
    name ("e-mail", "alpha-2", "ISO 3166-1"), a slash after a letter ("km/h"), a dash between
    words, and a "!" or "?" that ends what a word says ("hello!", "why?"; a chess move's "!!"
    stands alone). A computation ("10-3") is never matched by similarity anyway."""
    for rx, repl in _SYMBOL_SPELLINGS:
        text = rx.sub(repl, text)
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if not _symbolic(text[i]):
            i += 1
            continue
        a = i
        while i < n and _symbolic(text[i]):
            i += 1
        run, b = text[a:i], i
        before = text[a - 1] if a else " "
        after = text[b] if b < n else " "
        if (run == "-" and before.isalnum() and after.isalnum()) or (
            run == "/" and before.isalpha() and after.isalnum()
        ):
            continue  # inside a word or a name: "e-mail", "alpha-2", "3166-1", "km/h", "and/or"
        if run in ("-", "--") and before.isspace() and after.isspace():
            nearby = text[max(0, a - 2) : a].strip()[-1:] + text[b : b + 2].strip()[:1]
            if not any(c.isdigit() or c in "()" for c in nearby):
                continue  # a dash between words ("Paris - the capital")
        factorial = run == "!" and (before.isdigit() or before == ")")  # "5!", "(2+3)!"
        if set(run) <= {"!", "?"} and not after.isalnum() and not factorial:
            if not before.isspace() or not text[b:].strip():
                continue  # ends what was said ("hello!", "why?", "France ?")
        out.append(run)
    return tuple(out)


def decisive_difference(query: str, stored: str) -> str:
    """What always decides and differs between two texts, "" when nothing does: their numbers
    (:func:`numbers`) or their operators and signs in order (:func:`symbols`: "7*8!" / "7*8",
    "2³" / "23", "30°" / "30"). Both guards refuse such a pair, and the kv's exact path checks
    it too, whatever key found the entry."""
    if numbers(query) != numbers(stored):
        return "numbers differ"
    if symbols(query) != symbols(stored):
        return "operators or symbols differ"
    return ""


# The tense a question asks in, from its auxiliaries: "Who is the president" and "Who was the
# president" have different answers.
_TENSES = {
    **dict.fromkeys(("is", "are", "am", "do", "does", "has", "have"), "present"),
    **dict.fromkeys(("was", "were", "did", "had"), "past"),
}


def _tenses(ws: list[str]) -> frozenset[str]:
    return frozenset(_TENSES[w] for w in ws if w in _TENSES)


def _negation(ws: list[str]) -> str:
    """The first word of ``ws`` that denies ("not", "never", "don't"), or ""."""
    return next((w for w in ws if w in NEGATIONS or w.endswith("n't")), "")


# the words a denying "not" follows ("do not", "was not"); after a correction, "not" after any
# other word sets one thing against another ("per hectare not square kilometer")
_AUXILIARIES = frozenset(
    "do does did is are was were am be been being can could will would shall should have has had "
    "may might must need dare why".split()
)


def _denial(ws: list[str]) -> str:
    """The first word of ``ws``, what a query says after taking words back, that denies: "not"
    only after an auxiliary ("I do not need"), as "X not Y" contrasts."""
    for i, w in enumerate(ws):
        if w == "not" and (i == 0 or ws[i - 1] not in _AUXILIARIES):
            continue
        if w in NEGATIONS or w.endswith("n't"):
            return w
    return ""


def corrections(text: str) -> list[re.Match[str]]:
    """Where ``text`` takes back what it said ("no sorry", "I mean", "wait", a bare "no"),
    a denying "no" ("I have no access") left out."""
    denying = {m.start(1) for m in _DENYING_NO.finditer(text)}
    return [
        m
        for m in _CORRECTION.finditer(text)
        if not (m.group().lower() == "no" and m.start() in denying)
    ]


# A statement a query opens with, before what it asks: "I forgot my password, how do I reset
# it?". Its words may hold what the stored question asks about, and may add what the stored
# question lacks (the user's situation, not a narrower question).
_CONTEXT = re.compile(
    r"(?:i|i'm|i've|i'd|i am|i have|my)\b[^,;.!?]{0,200}[,;.]\s+"
    r"(?=(?:so\s+|but\s+|and\s+)?(?:how|what|where|when|why|which|who|can|could|would|will|"
    r"please|is|are|do|does|help|tell|i need|i want|i'd like)\b)"
)
_DIRECTIONAL = frozenset(
    {"to", "into", "from", "than", "versus", "vs", "per", "over", "before", "after", "in"}
)


NEGATIONS = frozenset({"not", "no", "never", "cannot", "nor", "neither", "without"})
"""Words that negate what they are said of (besides any word ending in "n't")."""
_ORDINALS = frozenset(
    "second third fourth fifth sixth seventh eighth ninth tenth 2nd 3rd 4th 5th 6th 7th 8th 9th 10th".split()
)
_SIDE_END = frozenset(
    {"to", "into", "onto", "from", "and", "or", "for", "with", "by", "via", "then"}
)
Axis = tuple[str, tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]]]


@functools.cache
def polarity_axes() -> tuple[Axis, ...]:
    """The opposites of ``data/polarity.tsv``: (axis, (pole A phrases, pole B phrases)), each
    phrase a tuple of stemmed words."""
    text = (resources.files(__package__) / "data" / "polarity.tsv").read_text(encoding="utf-8")
    axes = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, a, b = line.split("\t")
        poles = tuple(
            tuple(tuple(_stem(w) for w in phrase.split()) for phrase in side.split("|"))
            for side in (a, b)
        )
        axes.append((name, (poles[0], poles[1])))
    return tuple(axes)


def _data_rows(name: str) -> list[tuple[str, str]]:
    """The (first field, rest) rows of a tab-separated file in ``data/``, comments skipped."""
    text = (resources.files(__package__) / "data" / name).read_text(encoding="utf-8")
    return [
        (first, rest)
        for first, rest in (
            line.split("\t", 1)
            for line in text.splitlines()
            if line.strip() and not line.startswith("#")
        )
    ]


@functools.cache
def _rewording_kinds() -> dict[str, frozenset[str]]:
    """The stems of ``data/rewording.tsv``, by kind (politeness, framing, naming, ...)."""
    kinds: dict[str, set[str]] = {}
    for kind, listed in _data_rows("rewording.tsv"):
        kinds.setdefault(kind, set()).update(_stem(w) for w in listed.split())
    return {kind: frozenset(stems) for kind, stems in kinds.items()}


@functools.cache
def _rewording() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The stems of ``data/rewording.tsv`` by where a rewording may add or drop them: anywhere;
    ``naming`` words next to what they name ("capital city", "which city", "the element
    Iron", "city of Paris"); ``opening`` words at the start of a text ("Name the capital")."""
    kinds = _rewording_kinds()
    anywhere = frozenset().union(*(v for k, v in kinds.items() if k not in ("naming", "opening")))
    return anywhere, kinds.get("naming", frozenset()), kinds.get("opening", frozenset())


@functools.cache
def _loose_words() -> frozenset[str]:
    """The stems of ``data/rewording.tsv``'s chat: politeness, pronouns, contractions, filler
    (not framing or verbs of being, which may stand in a question for what it asks)."""
    kinds = _rewording_kinds()
    chat = ("politeness", "pronoun", "contraction", "filler")
    return frozenset().union(*(kinds.get(k, frozenset()) for k in chat))


def rewording_words() -> frozenset[str]:
    """The stems of ``data/rewording.tsv``: words a rewording may add or drop (the ``naming``
    and ``opening`` ones only where they name a kind or open the text)."""
    anywhere, naming, opening = _rewording()
    return anywhere | naming | opening


@functools.cache
def _pole_index() -> dict[str, list[tuple[tuple[str, ...], str, int, tuple[str, ...]]]]:
    """Every phrase of an axis by its first word: (phrase, axis, pole, the pole's first phrase,
    which :func:`lexical_words` reads it as)."""
    index: dict[str, list[tuple[tuple[str, ...], str, int, tuple[str, ...]]]] = {}
    for name, poles in polarity_axes():
        for i, phrases in enumerate(poles):
            for phrase in phrases:
                index.setdefault(phrase[0], []).append((phrase, name, i, phrases[0]))
    return index


def relation_labels() -> list[tuple[str, list[str], frozenset[str]]]:
    """The knowledge pack's names for its relations that mean the relation wherever they
    appear (the ``same`` lines of ``eoc/knowledge/data/relations.tsv``): "ISO 3166 code",
    "alpha-2 code" and "two-letter country code" are the ISO country code, "proton number" is
    the atomic number. The guard reads each as the line's first name, a number or acronym
    inside it included. A relation's other labels ("size" for an area, "port number" for a
    default port) may mean something else outside the pack and are not read so.

    With each: the nouns (``kinds.tsv``) that name the kind of thing the relation is about,
    which a name may hold inside it ("alpha-2 country code", "chemical element symbol")."""
    from eoc.stages.questions import Vocabulary  # the one reader of relations.tsv

    data = resources.files("eoc.knowledge") / "data"
    vocabulary = Vocabulary.parse(
        (data / "relations.tsv").read_text(encoding="utf-8"),
        (data / "kinds.tsv").read_text(encoding="utf-8"),
        source=str(data),
    )
    nouns: dict[str, set[str]] = {}
    for noun, kind in vocabulary.kinds.items():
        if " " not in noun:
            nouns.setdefault(kind, set()).add(_stem(noun))
    # each compared as its line's first name, the plainest wording
    return [
        (r.same[0], r.same[1:], frozenset(n for k in r.subjects for n in nouns.get(k, ())))
        for r in vocabulary.relations.values()
        if r.same
    ]


Phrase = tuple[tuple[str, ...], tuple[str, ...], frozenset[str]]
"""A synonym phrase's stems, the stems it is compared as, and the words it may hold inside."""


@functools.cache
def synonyms() -> dict[str, list[Phrase]]:
    """``data/synonyms.tsv``, then the pack's relation labels (:func:`relation_labels`), by
    first word: (phrase, the words it is compared as, the kind nouns it may hold inside)."""
    text = (resources.files(__package__) / "data" / "synonyms.tsv").read_text(encoding="utf-8")
    groups: list[tuple[str, list[str], frozenset[str]]] = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            first, rest = line.split("\t")
            groups.append((first, rest.split("|"), frozenset()))
    groups += relation_labels()
    index: dict[str, list[Phrase]] = {}
    seen: set[tuple[str, ...]] = set()
    for head, variants, inside in groups:
        canon = tuple(_stem(w) for w in _words(head))
        for v in (head, *variants):  # the head too, so its words count as one phrase
            phrase = tuple(_stem(w) for w in _words(v))
            if phrase and phrase not in seen:  # the first list to name it wins
                seen.add(phrase)
                index.setdefault(phrase[0], []).append((phrase, canon, inside))
    for phrases in index.values():
        phrases.sort(key=lambda p: -len(p[0]))  # the longest first
    return index


def _span(phrase: tuple[str, ...], stems: list[str], inside: frozenset[str]) -> int:
    """How many of ``stems`` (from the first) ``phrase`` covers, words of ``inside`` between
    its words included ("alpha-2 country code" is "alpha-2 code"); 0 if it is not there."""
    j = 0
    for k, want in enumerate(phrase):
        while k and j < len(stems) and stems[j] != want and stems[j] in inside:
            j += 1
        if j >= len(stems) or stems[j] != want:
            return 0
        j += 1
    return j


def _canonical(ws: list[str]) -> tuple[list[str], tuple[str, ...], tuple[str, ...]]:
    """``ws`` and their stems with each synonym phrase replaced by the word it is compared as,
    and the words those phrases covered (a number or acronym inside "ISO 3166 code" belongs to
    the phrase, not to the question)."""
    index = synonyms()
    stems = [_stem(w) for w in ws]
    out_w: list[str] = []
    out_s: list[str] = []
    covered: list[str] = []
    i = 0
    while i < len(ws):
        for phrase, canon, inside in index.get(stems[i], ()):
            n = _span(phrase, stems[i : i + len(phrase) + 2], inside)
            if n:
                out_w.extend(canon)
                out_s.extend(canon)
                covered.extend(ws[i : i + n])
                i += n
                break
        else:
            out_w.append(ws[i])
            out_s.append(stems[i])
            i += 1
    return out_w, tuple(out_s), tuple(covered)


def lexical_words(text: str) -> list[str]:
    """The words of ``text`` as the guard compares them, for an embedder that only sees
    spelling: stemmed, synonyms and the phrases of an opposite's pole as the one phrase they are
    read as ("dialing code" is calling code, "wipe" is delete), without stopwords and the words
    that only reword ("please", "I'd like to"); all the stems when nothing else is left."""
    stems = _read(text)[1]
    index = _pole_index()
    out: list[str] = []
    i = 0
    while i < len(stems):
        longest: tuple[tuple[str, ...], tuple[str, ...]] | None = None
        for phrase, _, _, first in index.get(stems[i], ()):
            if stems[i : i + len(phrase)] == phrase and (
                longest is None or len(phrase) > len(longest[0])
            ):
                longest = (phrase, first)
        if longest is None:
            out.append(stems[i])
            i += 1
        else:
            out.extend(longest[1])
            i += len(longest[0])
    anywhere = _rewording()[0]
    kept = [w for w in out if w not in STOPWORDS and w not in anywhere]
    return kept or out


def _poles(
    stems: tuple[str, ...],
) -> tuple[dict[str, tuple[frozenset[int], str]], frozenset[int], frozenset[str]]:
    """For each axis the text touches: the poles it holds and the first phrase found; the
    positions of the words those phrases cover; and the axes whose two poles the text joins
    with "or" or "and" ("open and close", "before or afterwards"): it asks of both, where "a
    higher dose lower the risk" holds two poles that each say something else."""
    held: dict[str, set[int]] = {}
    said: dict[str, str] = {}
    covered: set[int] = set()
    spans: dict[str, list[tuple[int, int, int]]] = {}  # axis: (start, end, pole) of each phrase
    index = _pole_index()
    for start, st in enumerate(stems):
        for phrase, axis, pole, _ in index.get(st, ()):
            n = len(phrase)
            if n == 1 or stems[start : start + n] == phrase:
                held.setdefault(axis, set()).add(pole)
                said.setdefault(axis, " ".join(phrase))
                covered.update(range(start, start + n))
                spans.setdefault(axis, []).append((start, start + n, pole))
    paired = {
        axis
        for axis, found in spans.items()
        for _, a_end, a_pole in found
        for b_start, _, b_pole in found
        if b_pole != a_pole and 0 < b_start - a_end <= 3 and _JOINING & set(stems[a_end:b_start])
    }
    out = {axis: (frozenset(poles), said[axis]) for axis, poles in held.items()}
    return out, frozenset(covered), frozenset(paired)


_JOINING = frozenset({"or", "and", "n", "nor", "vs", "versus"})


@functools.lru_cache(maxsize=4096)
def _read(
    text: str,
) -> tuple[
    tuple[str, ...],
    tuple[str, ...],
    dict[str, tuple[frozenset[int], str]],
    frozenset[str],
    tuple[str, ...],
    tuple[str, ...],
    frozenset[str],
]:
    """The words of ``text`` with synonyms replaced, their stems, the axes touched, the
    content words, the numbers, the named entities (less those inside a synonym phrase) and
    the axes whose two poles it joins (:func:`_poles`): what :class:`Analysis` and
    :func:`lexical_words` read.
    Cached, as a lookup reads its query three times (terms, embedding, analysis); the result
    is shared, so callers never change it."""
    cws, stems, phrased = _canonical(_words(text))
    poles, covered, paired = _poles(stems)
    nums = numbers(text)
    for w in phrased:  # "3166" in "ISO 3166 code" names the code, it is not asked about
        for n in numbers(w):
            if n in nums:
                nums.remove(n)
    inside = set(phrased)
    names = tuple(e for e in entities(text) if e not in inside)
    return tuple(cws), stems, poles, _content(cws, stems, covered), tuple(nums), names, paired


_ASKS_FOR_A_PART = frozenset({"who", "whom", "what", "which"})
_DO = frozenset({"do", "does", "did"})
_MODALS = frozenset({"will", "shall", "should", "may", "might", "must", "would", "can", "could"})


def _wh_role(ws: list[str]) -> str:
    """Whom the first "who", "what" or "which" asks for: "doer" when a verb follows its phrase
    ("who beat Spain", "which team beat ..."), "done-to" when "do"/"did" does ("who did Spain
    beat", "what do krill eat"), "" otherwise (a form of "be", or no such word)."""
    for i, w in enumerate(ws):
        if w not in _ASKS_FOR_A_PART:
            continue
        j = i + 1
        if j >= len(ws):
            return ""
        if w in ("which", "what") and ws[j] not in STOPWORDS:
            if w == "what" and _verb_like(ws[j]):
                return "doer"  # "what eats krill", "what turns into ..."
            j += 1  # "which team", "what time": the phrase's noun
            if j >= len(ws):
                return ""
        nxt = ws[j]
        if nxt in _DO:
            return "done-to"
        if nxt in STOPWORDS or nxt in _MODALS or nxt in NEGATIONS or nxt.endswith("n't"):
            return ""  # "what time will the tram run": a modal says nothing of who does it
        return "doer" if w in ("who", "whom") or j > i + 1 else ""
    return ""


def _verb_like(w: str) -> bool:
    """Whether ``w``, right after a bare "what", reads as a verb in the present or past
    ("what eats krill", "what caused ..."): a noun there ("what time") is the phrase's own."""
    return len(w) > 3 and (w.endswith(("s", "ed")) and not w.endswith("ss"))


def _mirrored(
    q: tuple[str, ...], s: tuple[str, ...]
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The words that trade places and the words they trade around, when ``s`` is ``q`` with two
    blocks swapped around a middle and the rest alike ("does the dog chase the cat" / "does the
    cat chase the dog", "is an A380 heavier than a 747" / "is a 747 heavier than an A380");
    ``None`` otherwise (a modifier moving, as in "the default port" / "the port by default",
    leaves other words between)."""
    if len(q) != len(s) or len(q) < 3 or set(q) != set(s):
        return None
    lo, hi = 0, len(q)
    while lo < hi and q[lo] == s[lo]:
        lo += 1
    while hi > lo and q[hi - 1] == s[hi - 1]:
        hi -= 1
    a_, b_ = q[lo:hi], s[lo:hi]
    for i in range(1, len(a_) - 1):
        for j in range(i + 1, len(a_)):
            first, middle, last = a_[:i], a_[i:j], a_[j:]
            if b_ == last + middle + first:
                return first + last, middle
    return None


def _swapped_names(q: Analysis, s: Analysis) -> tuple[str, str] | None:
    """Two names that trade places, all else the same in the order said ("when it's noon in
    New York, what time is it in London" / "... in London, ... in New York"); names only, as
    a word moved with nothing between ("the default port" / "the port by default") may be a
    modifier moved."""
    a, b = q.order, s.order
    if len(a) != len(b) or a == b or set(a) != set(b):
        return None
    lo, hi = 0, len(a)
    while lo < hi and a[lo] == b[lo]:
        lo += 1
    while hi > lo and a[hi - 1] == b[hi - 1]:
        hi -= 1
    x, y = a[lo:hi], b[lo:hi]
    names = {w for e in (*q.entity_parts, *s.entity_parts) for p in e for w in (p, _stem(p))}
    for i in range(1, len(x)):
        if y == x[i:] + x[:i] and set(x) <= names:
            return " ".join(x[:i]), " ".join(x[i:])
    return None


def _bound(
    ws: tuple[str, ...], stems: tuple[str, ...], content: frozenset[str]
) -> frozenset[tuple[str, str]]:
    """(number, the content word right after it): what each number counts or measures ("150
    kg", "3 tickets")."""
    return frozenset(
        (w, stems[i + 1])
        for i, w in enumerate(ws[:-1])
        if _NUMBER.fullmatch(w) and stems[i + 1] in content
    )


def _order(stems: tuple[str, ...]) -> tuple[str, ...]:
    """The words that may be a doer, a deed or a done-to, in the order said, each once: every stem
    but stopwords and negations, numbers included ("does numpy *need* pandas", "is an A380
    heavier than a 747")."""
    return tuple(dict.fromkeys(st for st in stems if st not in STOPWORDS and st not in NEGATIONS))


def _names_a_kind(ws: list[str], i: int) -> bool:
    """Whether ``ws[i]``, a word like "city", names the kind of something next to it: after a
    question word or another word ("which city", "capital city"), before a word or "of" ("the
    element Iron", "city of Paris"). Alone between small words it is what is asked about
    ("delete a table in Notion"), and stays."""
    before = ws[i - 1] if i > 0 else ""
    after = ws[i + 1] if i + 1 < len(ws) else ""
    return (
        before in ("what", "which")
        or (before != "" and before not in STOPWORDS)
        or after == "of"
        or (after != "" and after not in STOPWORDS)
    )


def _content(ws: list[str], stems: tuple[str, ...], covered: frozenset[int]) -> frozenset[str]:
    """The words that say what is asked: not stopwords, numbers, rewording words, nor the words
    of an opposite (those are compared by axis)."""
    anywhere, naming, opening = _rewording()
    out = set()
    for i, (w, st) in enumerate(zip(ws, stems, strict=True)):
        if (
            i in covered
            or w in STOPWORDS
            or w in NEGATIONS
            or w.endswith("n't")
            or w.isdigit()
            or w in _SYMBOL_WORDS  # compared as the symbol they spell ("percent" is "%")
            or st in anywhere
            or (st in opening and (i == 0 or ws[i - 1] in ("you", "please")))
            or (st in naming and _names_a_kind(ws, i))
        ):
            continue
        out.add(st)
    return frozenset(out)


def _sides(ws: list[str]) -> tuple[frozenset[str], frozenset[str]] | None:
    """The content words of a transfer's two sides, "from X to Y" in either order; None
    without "from"."""
    if "from" not in ws:
        return None

    def side(start: int) -> frozenset[str]:
        out = []
        for w in ws[start:]:
            if w in _SIDE_END:
                break
            if w not in STOPWORDS:
                out.append(_stem(w))
        return frozenset(out)

    f = ws.index("from")
    source = side(f + 1)
    after = [i for i in range(f + 1, len(ws)) if ws[i] in ("to", "into", "onto")]
    before = [i for i in range(f) if ws[i] in ("to", "into", "onto")]
    target = side(after[0] + 1) if after else side(before[-1] + 1) if before else frozenset()
    return source, target


@functools.cache
def _when_rows() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The lines of ``data/when.tsv``: each kind and its words as written."""
    text = (resources.files(__package__) / "data" / "when.tsv").read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            kind, listed = line.split("\t", 1)
            rows.append((kind, tuple(listed.split())))
    return tuple(rows)


@functools.cache
def when_words() -> tuple[frozenset[str], frozenset[str]]:
    """The stems of ``data/when.tsv`` (words that say when a question is about), and those of
    its ``days`` and ``months`` lines, which are also written clipped ("sat", "sept")."""
    out: set[str] = set()
    clippable: set[str] = set()
    for kind, listed in _when_rows():
        stems = {_stem(w) for w in listed}
        out.update(stems)
        if kind in ("days", "months"):
            clippable.update(stems)
    return frozenset(out), frozenset(clippable)


@functools.cache
def _when_listed() -> frozenset[str]:
    """The words of ``data/when.tsv`` as written: a word that is its own stem counts only
    when listed ("weekend"), not as a listed word's stem ("even" of "evening")."""
    return frozenset(w for _, listed in _when_rows() for w in listed)


# a time of day on the 12-hour clock: "2am", "9 a.m.", "11:45 p.m.", "12 PM"
_CLOCK = re.compile(r"\b(\d{1,2})(?::([0-5]\d))?\s*([AaPp])\.?\s?[Mm]\b\.?")
_HALVES = {"a": "antemeridiem", "p": "postmeridiem"}


def clock_times(text: str) -> frozenset[str]:
    """The times of day ``text`` names on the 12-hour clock ("2am" -> "2:00 am"): "2am" and
    "2pm" are the same number and another time, so they are compared as times (with the words
    of ``data/when.tsv``)."""
    return frozenset(
        f"{int(m.group(1))}:{m.group(2) or '00'} {m.group(3).lower()}m"
        for m in _CLOCK.finditer(text)
    )


def _clock_words(m: re.Match[str]) -> str:
    """A time of day with its half of the day as one word ("2 postmeridiem"): "am" is no
    verb there, nor "a.m." two letters."""
    minutes = f":{m.group(2)}" if m.group(2) else ""
    return f"{m.group(1)}{minutes} {_HALVES[m.group(3).lower()]}"


def _when(ws: list[str]) -> frozenset[str]:
    """The words of ``ws`` that say when (``data/when.tsv``), a clipped one read whole ("sat"
    is saturday; "may" the month only when capitalised, which the caller decides)."""
    known, clippable = when_words()
    out = set()
    for i, w in enumerate(ws):
        st = _stem(w)
        if i and ws[i - 1] == "good":  # "good morning": a greeting
            continue
        if st in known and (st != w or w in _when_listed()):  # "even" is no "evening"
            out.add(st)
        elif 3 <= len(w) <= 4 and w.isalpha():
            whole = [k for k in clippable if k.startswith(w)]
            if len(whole) == 1:
                out.add(whole[0])
    return frozenset(out)


def _own(w: str) -> str:
    """``w`` without a possessive ending: "Algeria's" is Algeria."""
    return w[:-2] if len(w) > 2 and w[-2:] in ("'s", "’s") else w


def _words(text: str) -> list[str]:
    """The normalized words of ``text``, possessive endings dropped, "no." read as number."""
    return [_own(w) for w in words(fold(_NUMBER_SIGN.sub("number", text)))]


@functools.cache
def _irregular() -> dict[str, str]:
    """Each irregular past form of ``data/irregular.tsv`` and its verb ("kept": keep)."""
    out: dict[str, str] = {}
    for verb, forms in _data_rows("irregular.tsv"):
        out.update(dict.fromkeys(forms.split(), verb))
    return out


def _stem(w: str) -> str:
    verb = _irregular().get(w)
    if verb is not None:
        return verb  # "kept" is keep, "paid" pay
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"  # "countries" is country
    for suffix in ("ing", "ed", "es", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            if suffix == "es" and not w.endswith(("ses", "xes", "zes", "ches", "shes")):
                continue  # "hectares" is hectare, "charges" charge; "taxes" is tax
            return w[: -len(suffix)]
    return w


def _directions(ws_all: list[str]) -> frozenset[tuple[str, str, str]]:
    """(word before, directional word, word after) triples: "miles to km" -> (mile, to, km)."""
    ws = [w for w in ws_all if w not in STOPWORDS or w in _DIRECTIONAL]
    out = set()
    for i, w in enumerate(ws[1:-1], 1):
        if w in _DIRECTIONAL:
            out.add((_stem(ws[i - 1]), w, _stem(ws[i + 1])))
            # a two-word side ("troy ounces in a gram" / "grams in a troy ounce")
            if i >= 2 and ws[i - 2] not in _DIRECTIONAL:
                out.add((_stem(ws[i - 2]), w, _stem(ws[i + 1])))
            if i + 2 < len(ws) and ws[i + 2] not in _DIRECTIONAL:
                out.add((_stem(ws[i - 1]), w, _stem(ws[i + 2])))
    return frozenset(out)


def _subsequence(small: tuple[str, ...], big: tuple[str, ...]) -> bool:
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


class Analysis:
    """What :class:`EntityGuard` reads from one text, computed once (see ``prepare``)."""

    __slots__ = (
        "_computes",
        "asked",
        "axes",
        "bound",
        "cased",
        "content",
        "corrected",
        "directions",
        "entities",
        "entity_parts",
        "keys",
        "negated",
        "negated_last",
        "numbers",
        "order",
        "ordinals",
        "paired",
        "poles",
        "possessive",
        "seq",
        "sides",
        "spelled",
        "swapped",
        "symbols",
        "tenses",
        "text",
        "wh",
        "wh_role",
        "wh_set",
        "when",
        "words",
    )

    def __init__(self, text: str) -> None:
        self.text = text
        text = unwrap(text)  # "Hi there! ... Thanks in advance": what is asked is inside
        clock = clock_times(text)  # "2am" is not "2pm": read before the words split "a.m."
        if clock:
            text = _CLOCK.sub(_clock_words, text)
        marks = corrections(text)
        self.corrected = bool(marks)
        read = _read(text)
        self.numbers = read[4]
        self.entities = read[5]
        self.entity_parts = tuple(tuple(e.split()) for e in self.entities)
        said = fold(text)
        raw = words(said)
        ws = [_own(w) for w in raw]
        self.possessive = ws != raw  # "Algeria's code": the owner's name comes first
        self.words = frozenset(ws)
        self.seq = tuple(ws)
        self.keys = keys(ws)  # as the swaps compare them (eoc.stages.swaps)
        cws, stems, self.poles, self.content = read[:4]
        self.paired = read[6]  # "open and close": both poles asked of
        # read after synonyms: "where do I go to" asks how, "how many people live" a population
        self.wh = tuple(w for w in cws if w in ANSWER_TYPE_WORDS)
        self.wh_set = frozenset(self.wh)
        # the content words past a leading statement ("I forgot my password, how do I ...")
        context = _CONTEXT.match(said)
        asked_read = read if context is None else _read(said[context.end() :])
        # a statement that holds all the content words ("I'm trying to get my contacts onto my
        # new phone. How?") is what is asked
        self.asked = asked_read[3] or read[3]
        # the asked words in the order said: who does what to whom ("Does the dog chase the cat")
        self.order = _order(asked_read[1])
        self.symbols = symbols(text)
        # short names whose capitals say what they are: CO is carbon monoxide, Co cobalt (a
        # text in capitals throughout says nothing by its case; nor do small words)
        shouted = text.isupper()
        self.cased = (
            {
                t.lower(): t
                for t in (m.group() for m in _TOKEN.finditer(text))
                if len(t) <= 3 and not t.islower() and t != "I" and t.lower() not in STOPWORDS
            }
            if not shouted
            else {}
        )
        self.bound = _bound(cws, stems, self.content)
        # the tense of what is asked, not of the situation a statement before it tells ("I was
        # charged twice, how do I get a refund?")
        self.tenses = _tenses(
            ws if context is None else [_own(w) for w in words(said[context.end() :])]
        )
        # "may" is the month only as a name ("in May"), not the verb ("may I")
        self.when = (
            _when([w for w in ws if w != "may"])
            | (frozenset({"may"}) if re.search(r"(?<!^)\bMay\b", text) else frozenset())
            | clock
        )
        self.wh_role = _wh_role(ws)
        self._computes: bool | None = None  # found when first asked: only a query's is
        self.axes = frozenset(self.poles)
        self.spelled = dict(zip(stems, cws, strict=True))  # for the reasons: a stem as written
        self.directions = _directions(ws)
        self.negated = _negation(ws)
        # after a correction, what the query says last is what it asks
        self.negated_last = _denial(_words(text[marks[-1].end() :])) if marks else self.negated
        self.ordinals = frozenset(w for w in ws if w in _ORDINALS)
        self.sides = _sides(ws)
        # as a stored prompt: the triples a query must not hold (this prompt's sides swapped)
        self.swapped = frozenset((b, d, a) for (a, d, b) in self.directions) - self.directions

    @property
    def computes(self) -> bool:
        """Whether the text reads as a computation (``eoc.compute``), found once."""
        if self._computes is None:
            self._computes = is_computation(self.text)
        return self._computes


CLOSE_CHANGES = 2
"""At most this many of the stored question's content words not in the query (after spelling,
synonyms and acronyms; an action said by one side only counts as one), and the two texts are one
question frame with a detail changed: the change decides."""


class Frame:
    """How two analysed texts differ in their content words, once misspellings, clipped words
    and acronyms are paired with the words they stand for (:mod:`eoc.stages.spelling`).

    ``close`` when they share a content word and the query lacks at most
    :data:`CLOSE_CHANGES` of the stored question's: the same question with a detail changed ("the set lunch menu" / "the set dinner menu", "the returns policy" / "the returns
    policy for sale items"), where the changed word is what is asked. Otherwise the query says
    the stored question in other words (greetings, slang, a statement, another register), and
    the guard leaves what the words change to similarity.
    """

    __slots__ = ("close", "extra", "missing", "names", "shared")

    def __init__(self, q: Analysis, s: Analysis) -> None:
        missing = set(s.content - q.content)
        extra = set() if q.corrected else set(q.asked - s.content)
        names = {w for e in (*q.entity_parts, *s.entity_parts) for p in e for w in (p, _stem(p))}
        shared = len(q.content & s.content - names)  # the names shared are counted apart
        self.names = len(q.content & s.content & names)
        for u in sorted(extra):  # (a name is never one: the names are compared before)
            v = next(
                (
                    v
                    for v in sorted(missing)
                    if same_word(u, v, (q.spelled.get(u, u), s.spelled.get(v, v)))
                ),
                None,
            )
            if v is not None:
                extra.discard(u)
                missing.discard(v)
                shared += 1
        # a word the other side holds outside its content words, misspelled or clipped
        # ("upgarde": upgrade, "max": maximum), and a price where the other asks "how much"
        for side, own, other in ((extra, q, s), (missing, s, q)):
            lacking = other.words - own.words - STOPWORDS  # a word both hold pairs with nothing
            for u in sorted(side):
                written = own.spelled.get(u, u)
                if (u in _PRICE and "much" in other.words) or any(
                    same_word(u, w, (written, w)) for w in lacking
                ):
                    side.discard(u)
                    shared += 1
        for u in sorted(extra):  # "check-in" / "check-out": one thing, another part of it
            if "-" in u:
                v = next(
                    (v for v in sorted(missing) if set(v.split("-")) & set(u.split("-"))), None
                )
                if v is not None:
                    shared += 1
        for short, long_side, spelled_out in ((extra, s, missing), (missing, q, extra)):
            for u in sorted(short):
                covered = acronym_of(u, long_side.seq)
                if covered:
                    short.discard(u)
                    spelled_out.difference_update(_stem(w) for w in covered)
                    shared += 1
        self.missing = frozenset(missing)
        self.extra = frozenset(extra)
        self.shared = shared
        shared += len(q.axes & s.axes)
        changes = len(missing) + (q.axes != s.axes)
        self.close = shared + self.names > 0 and changes <= CLOSE_CHANGES

    def covers(self, q: Analysis, s: Analysis) -> bool:
        """Whether the words the two share are at least half of the shorter one's content
        words, one of them not a name: a rewording keeps much of what it rewords; two
        questions that share only a topic word ("insurance", "free") or what they are about
        ("the ISO code of Chad" / "the region of Chad") do not."""
        fewer = min(len(q.asked), len(s.content))
        return (self.shared + self.names) * 2 >= fewer and (self.shared > 0 or not fewer)

    def fewer(self, q: Analysis, s: Analysis) -> bool:
        """Whether the query is the stored question in fewer words: it leaves some of the
        stored content words out and puts nothing in their place, no word of its own and no
        action the stored question does not name ("overdraft cost?" / "How much does an
        arranged overdraft cost?", "bike parking?" / "Is there bike parking at the station?"). What
        always decides (names, numbers, times, negation, opposites, the kind of answer) was
        compared before. A noun whose modifier the query keeps is no word left out: what is
        left names another thing ("gift" / "gift card")."""
        if not self.missing or self.extra or q.corrected or q.axes - s.axes:
            return False
        if len(q.asked) >= len(s.content) or not self.missing <= s.asked:
            return False  # what the stored question's own statement says is part of it
        if q.wh_set and q.wh_set != s.wh_set:
            return False  # "Who was the first ..." / "In what year did the first ..."
        asked, own = _asked_noun(s.seq), _asked_noun(q.seq)
        if asked and (asked in self.missing or _stem(asked) in self.missing):
            return False  # "What is a hermaphrodite?" / "What is a trait of ... hermaphrodites?"
        if asked and own and _stem(own) != _stem(asked) and not same_word(own, asked):
            return False  # "What is the immune system?" / "What is the process by which ..."
        # a word of the query's own that the content words do not count ("ask" in "the ask
        # price") is a word put in place of one left out, unless it is only chat or filler
        loose = _loose_words()
        for w in q.words - s.words - STOPWORDS:
            if _stem(w) in loose or (w in _PRICE and "much" in s.words):
                continue
            if not any(same_word(w, v) for v in s.words):
                return False
        # a word the query keeps but no longer puts before another content word: it was the
        # modifier of the word left out, and is now what is named ("gift" / "gift card");
        # "car excess?" / "the excess on my car policy" keeps "car" before a noun
        qs = q.seq
        heads = {
            w
            for i, w in enumerate(qs)
            if w not in STOPWORDS and (i + 1 == len(qs) or qs[i + 1] in STOPWORDS)
        }
        seq = s.seq
        follows = set(itertools.pairwise(qs))  # each of the query's words and the next
        for i, w in enumerate(seq):
            stem = _stem(w)
            if stem not in self.missing and w not in self.missing:
                continue
            if i and seq[i - 1] in heads:
                return False
            # left out from inside a phrase the query keeps around it ("the iPod touch first
            # released" / "the ipod first released"): what is left names another thing
            if 0 < i < len(seq) - 1 and (seq[i - 1], seq[i + 1]) in follows:
                if seq[i - 1] not in STOPWORDS and seq[i + 1] not in STOPWORDS:
                    return False
        return True

    @staticmethod
    def has(a: Analysis, word: str) -> bool:
        """Whether ``a`` holds ``word`` (a name's part), as written, stemmed, clipped ("Sat" /
        Saturday; never a name or word that is one of its own: Niger is no clipping of Nigeria,
        Java none of JavaScript, Oxford none of Oxfordshire) or as an acronym of its words;
        never misspelled (Iran is not Iraq). Stemmed only where the name says when ("Sundays"
        / Sunday): a title in the plural is another title ("Aliens" / "Alien")."""
        if word in a.words:
            return True
        flat = word.replace("-", "")  # "Wi-Fi" / "WiFi" / "wifi", "e-mail" / "email"
        if len(flat) > 3 and any(w.replace("-", "") == flat for w in a.words):
            return True
        if _stem(word) in a.content and (_stem(word) in when_words()[0] or word in a.content):
            return True
        if any(_name_clipped(word, w) for w in a.words if w not in STOPWORDS):
            return True
        return bool(acronym_of(word, a.seq))

    def wording(self, q: Analysis, s: Analysis) -> str:
        """Why the changed words keep the stored question from answering ("" when none did):
        in a close frame, a stored word the query lacks, or says another in place of ("the set
        lunch menu" / "the set dinner menu"); anywhere, words the query adds to all of the
        stored question's (it asks something narrower: "the returns policy for sale items").
        Where the query lacks more than a close frame allows, it says the question in other
        words, and similarity decides."""
        if self.missing and self.close:
            said = ", ".join(sorted(s.spelled.get(w, w) for w in self.missing))
            put = ", ".join(sorted(q.spelled.get(w, w) for w in self.extra))
            instead = f" (it says {put} instead)" if put else ""
            return f"the query lacks {said} of the stored question{instead}"
        if self.extra and not self.missing:
            said = ", ".join(sorted(q.spelled.get(w, w) for w in self.extra))
            return f"the query adds {said}: it may ask something narrower"
        return ""


def _name_clipped(word: str, other: str) -> bool:
    """Whether one of two words is the other clipped, as a name's part may be: a day or a
    month ("Sat" / Saturday, "Sept" / September), or a short form that is no word or name of
    its own ("Univ" / University)."""
    short, long = (word, other) if len(word) < len(other) else (other, word)
    if not clipped(short, long):
        return False
    return _stem(long) in when_words()[1] or not (is_word(short) or is_name(short))


_ASKED_AFTER = frozenset({"is", "was", "are", "were", "the", "a", "an", "s"})


def _asked_noun(seq: tuple[str, ...]) -> str:
    """The word a "what"/"which" question names as its answer ("what percentage", "what is
    the name of", "which year"): the first word after the question word and any "is the";
    "" when the question has no such word."""
    for i, w in enumerate(seq):
        if w in ("what", "which", "whats", "what's"):
            for v in seq[i + 1 :]:
                if v in _ASKED_AFTER or _superlative(v):
                    continue  # "what is the largest sensory feature": feature's phrase
                return "" if v in STOPWORDS else v
            return ""
    return ""


@functools.cache
def _superlatives() -> frozenset[str]:
    """The one-word superlatives among ``data/polarity.tsv``'s poles ("largest", "most"),
    and "best" and "worst"."""
    out = {"best", "worst"}
    for _, sides in polarity_axes():
        for side in sides:
            for phrase in side:
                if len(phrase) == 1 and (
                    phrase[0].endswith("est") or phrase[0] in ("most", "least")
                ):
                    out.add(phrase[0])
    return frozenset(out)


def _superlative(w: str) -> bool:
    """Whether ``w`` is a superlative ("largest", "most"): it ranks what follows it."""
    return w in _superlatives()


_BOTH_SIDES = frozenset({"with", "bound"})
"""Axes that decide only where both texts name a pole: "with" (its opposite "without" is a
negation) and "bound" ("over 21" / "under 21"; "copy my contacts over" names no bound)."""


def _one_sided(q: Analysis, s: Analysis) -> frozenset[str]:
    """The axes of opposites (``data/polarity.tsv``) that one side touches and the other does
    not touch at all, less "with" (only its opposite, "without", decides: a negation) and an
    axis whose word the other side holds misspelled or clipped ("upgarde", "min")."""
    q_axes, s_axes = q.axes - _BOTH_SIDES, s.axes - _BOTH_SIDES
    if q_axes and s_axes and not q_axes & s_axes:
        return frozenset()  # both name an action, and not one: "different actions"
    out = set()
    # one names an action the other lacks, also beside one both name ("How do I order?" /
    # "How do I cancel my order?")
    shared = q_axes & s_axes
    for one, other, axes in ((q, s, q_axes - s_axes), (s, q, s_axes - q_axes)):
        both = {one.poles[a][1] for a in shared}
        for axis in axes:
            said = one.poles[axis][1]
            if said in other.words or said in both:
                continue  # the same word, read on another axis too ("cancel", "end")
            if not any(same_word(said, w) for w in other.words if w not in STOPWORDS):
                out.add(axis)
    return frozenset(out)


def _asks_nothing(a: Analysis) -> bool:
    """Whether ``a`` has no question word at all ("Can I get a late check-out?")."""
    return not a.wh_set and not a.words & {"what", "which", "whats", "what's"}


_PRICE = frozenset({"cost", "price", "pricing"})  # what "how much" asks, said outright
_LIGHT_VERBS = frozenset({"get", "gets", "got", "getting", "have", "has", "had"})


def _light_verb(a: Analysis) -> bool:
    """Whether ``a`` says its action with a light verb ("get", "have"), which may stand for
    the action the other side names ("get a pass" / "buy a pass")."""
    return bool(a.words & _LIGHT_VERBS)


class EntityGuard:
    """Serve a similar stored question only if it asks the same thing (the rules are in the
    module docstring; :meth:`refusal` says which one refused a pair).

    ``allows`` and ``refusal`` take texts or their :meth:`prepare` analyses; the decision is the same.
    """

    name = "entities"

    def __init__(self, *, rewordings: bool = False) -> None:
        self.rewordings = rewordings

    @staticmethod
    def prepare(text: str) -> Analysis:
        """The analysis of ``text`` that :meth:`allows` reads (reuse it across checks)."""
        return Analysis(text)

    @staticmethod
    def fingerprint(text: str) -> Hashable | None:
        """The numbers and the operators in order; ``None`` when the text corrects itself, as a
        corrected query may carry numbers it took back (so fingerprints cannot rule a pair out)."""
        if corrections(text):
            return None
        return _read(text)[4], symbols(text)

    def allows(self, query: str | Analysis, stored: str | Analysis) -> bool:
        return not self.refusal(query, stored)

    def refusal(self, query: str | Analysis, stored: str | Analysis) -> str:
        """Why the stored question may not answer the query ("" when it may)."""
        q = query if isinstance(query, Analysis) else Analysis(query)
        s = stored if isinstance(stored, Analysis) else Analysis(stored)
        # differences that only meaning tells apart (a name or a time one side adds, both
        # poles on one side): each refuses as wording, after every decisive check has run
        soft: list[str] = []
        reason = self._refusal(q, s, soft)
        if reason and not judgeable(reason):
            return reason
        return soft[0] if soft else reason

    def _refusal(self, q: Analysis, s: Analysis, soft: list[str]) -> str:
        if q.computes:  # a stored computation may answer what does not read as one ("No
            return COMPUTATION_REFUSAL  # sorry, what is 2+2"), under every rule below
        corrected = q.corrected
        # what always decides: numbers, operators, names, capitals, ranks, opposite poles, the
        # sides of a transfer, who does what to whom
        if corrected:
            if not _subsequence(s.numbers, q.numbers):
                return f"numbers: {' '.join(s.numbers) or 'none'} are not among the query's"
            if not _subsequence(s.wh, q.wh):
                return f"question words: {' '.join(s.wh)} are not among the query's"
        elif q.numbers != s.numbers:
            return (
                f"numbers differ: {' '.join(q.numbers) or 'none'} / {' '.join(s.numbers) or 'none'}"
            )
        same_symbols = _subsequence(s.symbols, q.symbols) if corrected else q.symbols == s.symbols
        if not same_symbols:
            return (
                f"operators or symbols differ: {' '.join(q.symbols) or 'none'} / "
                f"{' '.join(s.symbols) or 'none'}"
            )
        names = self._names(q, s)
        if names and not judgeable(names):
            return names
        if names:
            soft.append(names)
        for low, written in q.cased.items():
            theirs = s.cased.get(low)
            if theirs is not None and theirs != written and (written.isupper() or theirs.isupper()):
                return f"{written} is not {theirs}: the capitals say which"
        q_ent = q.entities
        shared = tuple(e for e in s.entities if e in q_ent)
        # "X's code", "the code of X" and "X code" name the same things in another order
        turned = q.possessive or s.possessive or ("of" in q.words) != ("of" in s.words)
        if not turned and not _subsequence(shared, q_ent):
            return "the names come in another order"
        # a query that took words back may drop a stored negation with them, not add one last
        if corrected and ((q.negated_last and not s.negated) or (s.negated and not q.negated)):
            return f"negated in one only ({q.negated_last or s.negated!r})"
        if q.ordinals != s.ordinals:
            return f"ranks differ: {' '.join(sorted(q.ordinals)) or 'none'} / {' '.join(sorted(s.ordinals)) or 'none'}"
        for axis, (held, said) in q.poles.items():
            other = s.poles.get(axis)
            if other is not None and held != other[0]:  # "a lower ... lower" / "a higher ... lower"
                if axis in q.paired or axis in s.paired:  # "open and close" / "opening hours"
                    soft.append(
                        Wording(f"one of them names both poles ({axis}): {said!r} / {other[1]!r}")
                    )
                    continue
                if axis == "with":  # "without" denies what "with" says
                    return f"negated in one only ({said if 1 in held else other[1]!r})"
                return f"opposites ({axis}): {said!r} / {other[1]!r}"
        if q.sides is not None and s.sides is not None:
            for i, name in enumerate(("from", "to")):
                if q.sides[i] and s.sides[i] and q.sides[i] != s.sides[i]:
                    return (
                        f"the {name} side differs: {' '.join(sorted(q.sides[i]))} / "
                        f"{' '.join(sorted(s.sides[i]))}"
                    )
        if s.swapped & q.directions:
            return "the sides of a to/from are swapped"
        if q.when != s.when and not (corrected and s.when <= q.when):
            times = " ".join(sorted(q.when)) or "no time", " ".join(sorted(s.when)) or "no time"
            if q.when and s.when:
                return f"they ask about another time: {times[0]} / {times[1]}"
            # a time one side names and the other leaves open: context ("made rice last
            # night, how long does it keep?") or a narrower question ("open on Sundays?")
            soft.append(Wording(f"a time in one only: {times[0]} / {times[1]}"))
        if not corrected:
            roles = self._roles(q, s, turned)
            if roles:
                return roles
        frame = Frame(q, s)  # after the cheap refusals: most checks end before it
        one_sided = _one_sided(q, s)
        # "when", "where", "who", "why" fix the kind of answer: a question that asks one is not
        # answered by one that asks another or none ("What time is check-out?" / "Can I get a
        # late check-out?")
        asks = q.wh_set & _KIND_OF_ANSWER, s.wh_set & _KIND_OF_ANSWER
        if asks[0] != asks[1] and not corrected and (_asks_nothing(q) or _asks_nothing(s)):
            kinds = " ".join(sorted(asks[0])) or "none", " ".join(sorted(asks[1])) or "none"
            return Wording(f"they ask different things: {kinds[0]} / {kinds[1]}")
        if not frame.close and not self.rewordings:
            return Wording(
                frame.wording(q, s)
                or (
                    "another wording: this guard serves only a few words changed"
                    if frame.missing or frame.extra
                    else ""
                )
            )
        if not frame.close:
            # a rewording in other words: what it changes is wording, and similarity decides,
            # unless the query holds all the stored question says and more, they share no
            # content word, or one names an action the other does not
            if not frame.covers(q, s):
                return Wording("too few content words in common: similarity alone is not enough")
            if one_sided and not _light_verb(q if one_sided - q.axes else s):
                axis = min(one_sided)
                said = (q.poles.get(axis) or s.poles[axis])[1]
                return Wording(f"only one of them says {said!r}")
            return Wording(frame.wording(q, s))
        # the same question frame with a few words changed: each change is the point
        if not corrected and q.wh_set and s.wh_set and q.wh_set != s.wh_set:
            return f"they ask different things: {' '.join(q.wh)} / {' '.join(s.wh)}"
        if q.tenses and s.tenses and q.tenses != s.tenses and not corrected:
            return f"asked in another tense: {' '.join(sorted(q.tenses))} / {' '.join(sorted(s.tenses))}"
        if not corrected and bool(q.negated) != bool(s.negated):
            return f"negated in one only ({q.negated or s.negated!r})"
        if q.axes and s.axes and not q.axes & s.axes:
            return (
                f"different actions: {' / '.join(sorted(q.axes))} and {' / '.join(sorted(s.axes))}"
            )
        # an action one side names is the point when the other puts another word in its place
        # ("lock my card" / "replace my card"), not when it leaves the place to a light verb
        # ("get a monthly pass" / "buy a monthly pass")
        if one_sided and (
            (frame.extra if one_sided - q.axes else frame.missing)
            or not _light_verb(q if one_sided - q.axes else s)
        ):
            axis = min(one_sided)
            said = (q.poles.get(axis) or s.poles[axis])[1]
            return Wording(f"only one of them says {said!r}")
        if frame.fewer(q, s):  # "overdraft cost?" / "How much does an arranged overdraft cost?"
            return ""
        return Wording(frame.wording(q, s))

    @staticmethod
    def _names(q: Analysis, s: Analysis) -> str:
        """Why the names keep the stored question from answering: a name of one side that the
        other lacks ("the Unlimited plan" / "the Essentials plan", "the ISO code of Chad" / "the
        region of Chad"). A name written another way ("NYC" / "New York", "Sundays" /
        "Sunday", "Sat" / "Saturday") is the same name."""
        lacking: list[list[str]] = [[], []]
        for side, (a, b) in enumerate(((q, s), (s, q)) if not q.corrected else ((s, q),)):
            for parts in a.entity_parts:
                if not all(Frame.has(b, p) for p in parts):
                    lacking[side].append(" ".join(parts))
        if lacking[0] and lacking[1]:  # a name in place of another: Niger / Nigeria
            return f"the name {lacking[0][0]!r} is not in both"
        if lacking[0] or lacking[1]:
            # names one side adds and the other leaves out, none put in their place ("HMRC self
            # assessment deadline" / "self assessment deadline"): context or a narrower question,
            # which only meaning tells apart
            return Wording(f"the name {(lacking[0] or lacking[1])[0]!r} is in one only")
        return ""

    @staticmethod
    def _roles(q: Analysis, s: Analysis, turned: bool) -> str:
        """Why who does what to whom differs ("" when it does not): the question word is the
        doer in one and the done-to in the other ("Who beat Spain" / "Who did Spain beat"), or two
        words trade places across a third ("Does the dog chase the cat" / "Does the cat chase
        the dog")."""
        for number, unit in q.bound - s.bound:
            other = next((u for n, u in s.bound if n == number and u != unit), None)
            if other is not None and unit in s.content and other in q.content:
                said = q.spelled.get(unit, unit), s.spelled.get(other, other)
                return f"{number} {said[0]} / {number} {said[1]}: the number measures another thing"
        if q.wh_role and s.wh_role and q.wh_role != s.wh_role:
            return (
                f"the question word asks for the {q.wh_role} in one and the {s.wh_role} in the "
                "other: who does what to whom differs"
            )
        swap = traded_words(q.keys, s.keys)
        if swap:  # "can cats eat dog food" / "can dogs eat cat food", "milk chocolate"
            return f"{swap[0]} and {swap[1]} trade places: what is asked of which differs"
        blocks = traded_blocks(q.keys, s.keys)
        if blocks:  # "is every rational number an integer" / "is every integer a rational number"
            return f"{blocks[0]} and {blocks[1]} trade places: what is asked of which differs"
        around = traded_around(q.keys, s.keys)
        if around:  # "exchange cash for a gift card" / "exchange a gift card for cash"
            return (
                f"{around[0]} and {around[2]} trade places around {around[1]!r}: what is asked "
                "of which differs"
            )
        names = _swapped_names(q, s)
        if names:  # "noon in New York, what time in London" / "noon in London, ... New York"
            return f"{names[0]} and {names[1]} trade places: what is asked of which differs"
        if turned:  # "X's code", "the code of X": the order of the words says nothing
            return ""
        traded = _mirrored(q.order, s.order)
        if traded:
            a, m = (" ".join(q.spelled.get(w, w) for w in part) for part in traded)
            return f"{a} trade places around {m}: who does what to whom differs"
        return ""


class NoGuard:
    """Serves any hit above the threshold (what GPTCache and RedisVL do) — for comparison only."""

    name = "none"

    def allows(self, query: str, stored: str) -> bool:
        return True


__all__ = [
    "ANSWER_TYPE_WORDS",
    "COMPUTATION_REFUSAL",
    "Analysis",
    "EntityGuard",
    "ExactWordsGuard",
    "HitGuard",
    "NoGuard",
    "decisive_difference",
    "entities",
    "lexical_words",
    "numbers",
]
