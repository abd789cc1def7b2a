"""The rules on what always decides an answer: a computation, numbers, operators and symbols,
names and their capitals and order, a negation taken back, ranks, opposite poles, the sides of
a transfer, and the time asked about. Each is a row of :data:`eoc.stages.guard.rules.RULES`."""

from __future__ import annotations

from eoc.stages.guard.analysis import Analysis
from eoc.stages.guard.case import Case, Wording, _subsequence
from eoc.stages.guard.frame import Frame

COMPUTATION_REFUSAL = "a computation is answered by computing it, never by a similar question"


def computation(q: Analysis, s: Analysis, c: Case) -> str | None:
    """A computation is answered by computing it, never by a similar stored question."""
    if q.computes:  # a stored computation may answer what does not read as one ("No
        return COMPUTATION_REFUSAL  # sorry, what is 2+2"), under every rule below
    return None


def numbers(q: Analysis, s: Analysis, c: Case) -> str | None:
    """The numbers differ; after a correction, the stored ones are not among the query's."""
    if c.corrected:
        if not _subsequence(s.numbers, q.numbers):
            return f"numbers: {' '.join(s.numbers) or 'none'} are not among the query's"
    elif q.numbers != s.numbers:
        return f"numbers differ: {' '.join(q.numbers) or 'none'} / {' '.join(s.numbers) or 'none'}"
    return None


def taken_back_question_words(q: Analysis, s: Analysis, c: Case) -> str | None:
    """After a correction, the stored question words are not among those the query asks last
    ("when did, no sorry, how do I renew my passport" asks how), or, where what it says last
    names none ("when does the museum, no sorry, the library open"), among the query's."""
    if c.corrected and not _subsequence(s.wh, q.wh_last or q.wh):
        return f"question words: {' '.join(s.wh)} are not among the query's"
    return None


def symbols(q: Analysis, s: Analysis, c: Case) -> str | None:
    """The operators and symbols differ ("7+8" / "7*8", "2³" / "23", C++ / C#)."""
    same_symbols = _subsequence(s.symbols, q.symbols) if c.corrected else q.symbols == s.symbols
    if not same_symbols:
        return (
            f"operators or symbols differ: {' '.join(q.symbols) or 'none'} / "
            f"{' '.join(s.symbols) or 'none'}"
        )
    return None


def names(q: Analysis, s: Analysis, c: Case) -> str | None:
    """A name of one side that the other lacks ("the Unlimited plan" / "the Essentials plan",
    "the ISO code of Chad" / "the region of Chad"): decisive when each side has a name the
    other lacks (Niger / Nigeria), wording when one side only adds one. A name written another
    way ("NYC" / "New York", "Sundays" / "Sunday", "Sat" / "Saturday") is the same name."""
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
    return None


def capitals(q: Analysis, s: Analysis, c: Case) -> str | None:
    """A short name whose capitals say what it is: CO is carbon monoxide, Co cobalt."""
    for low, written in q.cased.items():
        theirs = s.cased.get(low)
        if theirs is not None and theirs != written and (written.isupper() or theirs.isupper()):
            return f"{written} is not {theirs}: the capitals say which"
    return None


def order_of_names(q: Analysis, s: Analysis, c: Case) -> str | None:
    """The names both share come in another order, unless a possessive or "of" moved them."""
    q_ent = q.entities
    shared = tuple(e for e in s.entities if e in q_ent)
    if not c.turned and not _subsequence(shared, q_ent):
        return "the names come in another order"
    return None


def taken_back_negation(q: Analysis, s: Analysis, c: Case) -> str | None:
    """A query that took words back may drop a stored negation with them, not add one last."""
    if c.corrected and ((q.negated_last and not s.negated) or (s.negated and not q.negated)):
        return f"negated in one only ({q.negated_last or s.negated!r})"
    return None


def ranks(q: Analysis, s: Analysis, c: Case) -> str | None:
    """The ranks differ ("second largest" / "largest")."""
    if q.ordinals != s.ordinals:
        return f"ranks differ: {' '.join(sorted(q.ordinals)) or 'none'} / {' '.join(sorted(s.ordinals)) or 'none'}"
    return None


def opposites(q: Analysis, s: Analysis, c: Case) -> str | None:
    """Opposite poles of an axis ("turn on" / "disable", "within" / "after"); "without"
    denies what "with" says. Both poles joined on one side ("open and close") is wording."""
    both: str | None = None
    for axis, (held, said) in q.poles.items():
        other = s.poles.get(axis)
        if other is not None and held != other[0]:  # "a lower ... lower" / "a higher ... lower"
            if axis in q.paired or axis in s.paired:  # "open and close" / "opening hours"
                both = both or Wording(
                    f"one of them names both poles ({axis}): {said!r} / {other[1]!r}"
                )
                continue
            if axis == "with":  # "without" denies what "with" says
                return f"negated in one only ({said if 1 in held else other[1]!r})"
            return f"opposites ({axis}): {said!r} / {other[1]!r}"
    return both


def transfer_sides(q: Analysis, s: Analysis, c: Case) -> str | None:
    """The sides of a transfer differ ("from savings to current" / "from current to ...")."""
    if q.sides is not None and s.sides is not None:
        for i, name in enumerate(("from", "to")):
            if q.sides[i] and s.sides[i] and q.sides[i] != s.sides[i]:
                return (
                    f"the {name} side differs: {' '.join(sorted(q.sides[i]))} / "
                    f"{' '.join(sorted(s.sides[i]))}"
                )
    return None


def swapped_sides(q: Analysis, s: Analysis, c: Case) -> str | None:
    """The sides of a to/from trade places ("miles to km" / "km to miles")."""
    if s.swapped & q.directions:
        return "the sides of a to/from are swapped"
    return None


def time(q: Analysis, s: Analysis, c: Case) -> str | None:
    """They ask about two different times; a time one side names and the other leaves open is
    wording: context ("made rice last night, how long does it keep?") or a narrower question
    ("open on Sundays?")."""
    if q.when != s.when and not (c.corrected and s.when <= q.when):
        times = " ".join(sorted(q.when)) or "no time", " ".join(sorted(s.when)) or "no time"
        if q.when and s.when:
            return f"they ask about another time: {times[0]} / {times[1]}"
        return Wording(f"a time in one only: {times[0]} / {times[1]}")
    return None
