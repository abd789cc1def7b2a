"""The rule on who does what to whom: the question word asks for the doer in one and the
done-to in the other, two words or blocks trade places, a number measures another thing."""

from __future__ import annotations

from eoc.stages.guard.analysis import Analysis
from eoc.stages.guard.case import Case
from eoc.stages.guard.stems import _stem
from eoc.stages.swaps import differing_middle, traded_around, traded_blocks, traded_words


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
    lo, hi = differing_middle(q, s)
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
    lo, hi = differing_middle(a, b)
    x, y = a[lo:hi], b[lo:hi]
    names = {w for e in (*q.entity_parts, *s.entity_parts) for p in e for w in (p, _stem(p))}
    for i in range(1, len(x)):
        if y == x[i:] + x[:i] and set(x) <= names:
            return " ".join(x[:i]), " ".join(x[i:])
    return None


def who_does_what(q: Analysis, s: Analysis, c: Case) -> str | None:
    """Who does what to whom differs: the question word is the doer in one and the done-to in
    the other ("Who beat Spain" / "Who did Spain beat"), two words trade places across a third
    ("Does the dog chase the cat" / "Does the cat chase the dog"), or a number measures another
    thing. Not read after a correction: what a query took back may stand in any order."""
    if c.corrected:
        return None
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
    if c.turned:  # "X's code", "the code of X": the order of the words says nothing
        return None
    traded = _mirrored(q.order, s.order)
    if traded:
        a, m = (" ".join(q.spelled.get(w, w) for w in part) for part in traded)
        return f"{a} trade places around {m}: who does what to whom differs"
    return None
