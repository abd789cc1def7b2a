"""The rules read from the question frame (:class:`~eoc.stages.guard.frame.Frame`): the kind of
answer asked, another wording, and, where the two are one frame with a few words changed, the
question words, the tense, a negation, the actions and the words changed. Each is a row of
:data:`eoc.stages.guard.rules.RULES`."""

from __future__ import annotations

from eoc.stages.guard.analysis import Analysis
from eoc.stages.guard.case import Case, Wording
from eoc.stages.guard.frame import _asks_nothing, _light_verb
from eoc.stages.guard.reading import ANSWER_TYPE_WORDS

_KIND_OF_ANSWER = ANSWER_TYPE_WORDS - {"how"}  # "how" asks for a way, an amount, a time...


def kind_of_answer(q: Analysis, s: Analysis, c: Case) -> str | None:
    """The kind of answer: "when", "where", "who" and "why" fix it, and a question that asks one
    is not answered by one that asks another or none ("What time is check-out?" / "Can I get a
    late check-out?")."""
    asks = q.wh_set & _KIND_OF_ANSWER, s.wh_set & _KIND_OF_ANSWER
    if asks[0] != asks[1] and not c.corrected and (_asks_nothing(q) or _asks_nothing(s)):
        kinds = " ".join(sorted(asks[0])) or "none", " ".join(sorted(asks[1])) or "none"
        return Wording(f"they ask different things: {kinds[0]} / {kinds[1]}")
    return None


def _said_alone(q: Analysis, s: Analysis, one_sided: frozenset[str]) -> Wording:
    axis = min(one_sided)
    said = (q.poles.get(axis) or s.poles[axis])[1]
    return Wording(f"only one of them says {said!r}")


def another_wording(q: Analysis, s: Analysis, c: Case) -> str | None:
    """The query says the stored question in other words (not one frame): refused as wording,
    or with ``rewordings=True`` left to similarity unless they share too few content words or
    one names an action the other does not."""
    frame = c.frame
    if frame.close:
        return None
    if not c.rewordings:
        return Wording(
            frame.wording(q, s)
            or (
                "another wording: this guard serves only a few words changed"
                if frame.missing or frame.extra
                else ""
            )
        )
    # a rewording in other words: what it changes is wording, and similarity decides, unless
    # the query holds all the stored question says and more, they share no content word, or
    # one names an action the other does not
    if not frame.covers(q, s):
        return Wording("too few content words in common: similarity alone is not enough")
    one_sided = c.one_sided
    if one_sided and not _light_verb(q if one_sided - q.axes else s):
        return _said_alone(q, s, one_sided)
    return Wording(frame.wording(q, s))


# The rules below read a close frame, the same question with a few words changed: each change
# is the point.


def question_words(q: Analysis, s: Analysis, c: Case) -> str | None:
    """Both ask with question words, and not the same ones."""
    if not c.corrected and q.wh_set and s.wh_set and q.wh_set != s.wh_set:
        return f"they ask different things: {' '.join(q.wh)} / {' '.join(s.wh)}"
    return None


def tense(q: Analysis, s: Analysis, c: Case) -> str | None:
    """They ask in another tense ("Who is the president" / "Who was the president")."""
    if q.tenses and s.tenses and q.tenses != s.tenses and not c.corrected:
        return (
            f"asked in another tense: {' '.join(sorted(q.tenses))} / {' '.join(sorted(s.tenses))}"
        )
    return None


def negation(q: Analysis, s: Analysis, c: Case) -> str | None:
    """One denies and the other does not."""
    if not c.corrected and bool(q.negated) != bool(s.negated):
        return f"negated in one only ({q.negated or s.negated!r})"
    return None


def actions(q: Analysis, s: Analysis, c: Case) -> str | None:
    """Both name an action, and not the same one."""
    if q.axes and s.axes and not q.axes & s.axes:
        return f"different actions: {' / '.join(sorted(q.axes))} and {' / '.join(sorted(s.axes))}"
    return None


def action_said_alone(q: Analysis, s: Analysis, c: Case) -> str | None:
    """An action one side names is the point when the other puts another word in its place
    ("lock my card" / "replace my card"), not when it leaves the place to a light verb ("get a
    monthly pass" / "buy a monthly pass")."""
    one_sided, frame = c.one_sided, c.frame
    if one_sided and (
        (frame.extra if one_sided - q.axes else frame.missing)
        or not _light_verb(q if one_sided - q.axes else s)
    ):
        return _said_alone(q, s, one_sided)
    return None


def fewer_words(q: Analysis, s: Analysis, c: Case) -> str | None:
    """The query is the stored question in fewer words: it may be served ("overdraft cost?" /
    "How much does an arranged overdraft cost?")."""
    frame = c.frame
    if frame.fewer(q, s):
        return ""
    return None


def changed_words(q: Analysis, s: Analysis, c: Case) -> str | None:
    """Whatever else the two differ in: the words the query lacks or adds (wording)."""
    return Wording(c.frame.wording(q, s))
