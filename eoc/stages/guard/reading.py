"""What the guard reads straight from a text: its numbers, names, operators and symbols, where it
takes words back, what it denies and in which tense it asks."""

from __future__ import annotations

import functools
import re
import unicodedata

from eoc.stages.guard.stems import _own
from eoc.text.forms import STOPWORDS, fold

_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?")
_TOKEN = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)
# a quote opens after no letter and closes before none: the apostrophes of "What's Iron's" are
# not quotes


_QUOTED = re.compile(r"(?<!\w)[\"“”']([^\"“”']{2,})[\"“”'](?!\w)")
# A token opens a sentence when the text before it is empty (or a lone newline, which ``$``
# also matches before) or ends in ".", "!" or "?" and whitespace. The ends of these matches are
# exactly such positions: found in one pass instead of searching each token's prefix again.
_SENTENCE_BREAK = re.compile(r"[.!?]\s+")
# question words that fix the kind of answer; "what" and "which" do not, so they are left out
ANSWER_TYPE_WORDS = frozenset({"when", "where", "who", "whom", "whose", "why", "how"})
_KIND_OF_ANSWER = ANSWER_TYPE_WORDS - {"how"}  # "how" asks for a way, an amount, a time...


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
