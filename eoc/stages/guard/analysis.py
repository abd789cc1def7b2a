"""What the guard reads from one text, once (:class:`Analysis`): its words with synonyms read
as one, their stems, the content words, the poles of opposites, the sides of a transfer, the
question words and whom they ask for, the time and the tense."""

from __future__ import annotations

import functools
import re

from eoc.compute import is_computation
from eoc.stages.guard.lists import _pole_index, _rewording, synonyms
from eoc.stages.guard.reading import (
    _CONTEXT,
    _DIRECTIONAL,
    _NUMBER,
    _ORDINALS,
    _SIDE_END,
    _SYMBOL_WORDS,
    _TOKEN,
    ANSWER_TYPE_WORDS,
    NEGATIONS,
    _denial,
    _negation,
    _tenses,
    corrections,
    entities,
    numbers,
    symbols,
)
from eoc.stages.guard.stems import _own, _stem, _words
from eoc.stages.guard.when import _CLOCK, _clock_words, _when, clock_times
from eoc.stages.swaps import keys
from eoc.stages.wrappers import unwrap
from eoc.text.forms import STOPWORDS, fold, words


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


HELD_WORDS = 32
"""The most words an :class:`Analysis` remembers :meth:`~eoc.stages.guard.frame.Frame.has`'s
answer for (each a dict entry: a stored question's memory stays bounded)."""


class Said:
    """The words of one text as :class:`Analysis` reads them, without the rest of its reading:
    what the kv's word gate needs (:mod:`eoc.stages.guard.wordkeys`), and where
    :class:`Analysis` starts."""

    __slots__ = (
        "asked",
        "asked_read",
        "clock",
        "content",
        "context",
        "marks",
        "possessive",
        "read",
        "said",
        "seq",
        "spelled",
        "text",
        "words",
    )

    def __init__(self, text: str) -> None:
        text = unwrap(text)  # "Hi there! ... Thanks in advance": what is asked is inside
        clock = clock_times(text)  # "2am" is not "2pm": read before the words split "a.m."
        if clock:
            text = _CLOCK.sub(_clock_words, text)
        self.text, self.clock = text, clock
        self.marks = corrections(text)
        read = self.read = _read(text)
        self.content = read[3]
        said = self.said = fold(text)
        raw = words(said)
        self.seq = tuple(_own(w) for w in raw)
        self.possessive = list(self.seq) != raw  # "Algeria's code": the owner's name comes first
        self.words = frozenset(self.seq)
        # the content words past a leading statement ("I forgot my password, how do I ...");
        # a statement that holds all the content words ("I'm trying to get my contacts onto my
        # new phone. How?") is what is asked
        context = self.context = _CONTEXT.match(said)
        self.asked_read = read if context is None else _read(said[context.end() :])
        self.asked = self.asked_read[3] or read[3]
        self.spelled = dict(zip(read[1], read[0], strict=True))  # a stem as written

    @property
    def corrected(self) -> bool:
        return bool(self.marks)


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
        "held",
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
        "wh_last",
        "wh_role",
        "wh_set",
        "when",
        "words",
    )

    def __init__(self, text: str) -> None:
        self.text = text
        self.held: dict[str, bool] = {}
        """:meth:`eoc.stages.guard.frame.Frame.has`'s answers for this text, by word (at most
        :data:`HELD_WORDS`): a stored question is compared with many queries, and a query
        with many stored questions, that name the same words."""
        lex = Said(text)  # its words (unwrapped, times read, corrections found)
        text, clock, marks, read, said = lex.text, lex.clock, lex.marks, lex.read, lex.said
        self.corrected = bool(marks)
        self.numbers = read[4]
        self.entities = read[5]
        self.entity_parts = tuple(tuple(e.split()) for e in self.entities)
        ws = list(lex.seq)
        self.possessive = lex.possessive
        self.words = lex.words
        self.seq = lex.seq
        self.keys = keys(ws)  # as the swaps compare them (eoc.stages.swaps)
        cws, stems, self.poles, self.content = read[:4]
        self.paired = read[6]  # "open and close": both poles asked of
        # read after synonyms: "where do I go to" asks how, "how many people live" a population
        self.wh = tuple(w for w in cws if w in ANSWER_TYPE_WORDS)
        self.wh_set = frozenset(self.wh)
        context, asked_read = lex.context, lex.asked_read  # past a leading statement
        self.asked = lex.asked
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
        self.spelled = lex.spelled  # for the reasons: a stem as written
        self.directions = _directions(ws)
        self.negated = _negation(ws)
        # after a correction, what the query says last is what it asks
        self.negated_last = _denial(_words(text[marks[-1].end() :])) if marks else self.negated
        # and the question words it asks there ("when did, no sorry, how do I renew": how)
        self.wh_last = (
            tuple(w for w in _read(text[marks[-1].end() :])[0] if w in ANSWER_TYPE_WORDS)
            if marks
            else self.wh
        )
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
