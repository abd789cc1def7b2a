"""How two analysed texts differ in their content words (:class:`Frame`), and what the rules of
the frame read besides: the noun a what-question asks for, the actions one side names alone."""

from __future__ import annotations

import itertools

from eoc.stages.guard.analysis import HELD_WORDS, Analysis
from eoc.stages.guard.lists import _loose_words, _superlative
from eoc.stages.guard.stems import _stem
from eoc.stages.guard.when import when_words
from eoc.stages.lexicon import is_name, is_word
from eoc.stages.spelling import acronym_of, clipped, same_word
from eoc.text.forms import STOPWORDS

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
        held = a.held.get(word)
        if held is None:
            held = Frame._has(a, word)
            if len(a.held) < HELD_WORDS:
                a.held[word] = held
        return held

    @staticmethod
    def _has(a: Analysis, word: str) -> bool:
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
