"""Computed answers: exact arithmetic, unit conversion, clock and calendar arithmetic.

The graph stage asks here before its triple store (see :class:`eoc.stages.graph.GraphStage`),
so the cascade keeps its four stages. A question is answered only when the whole of it, less
a framing such as "what is" or "convert", reads as one computation; anything else gives
``None`` and the question passes on. Nothing is guessed: a numeric date that reads two ways,
a unit symbol that names two units, or a time that depends on today is passed on, not read.
Pure standard library, so the browser build computes the same answers.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from eoc.compute import arith, clock, constants, units
from eoc.compute.numbers import (
    MAX_DIGITS,
    NUMBER_WORDS,
    ROUNDING_NOTE,
    NotReal,
    TooLarge,
    show,
)

MAX_CHARS = 256
"""Longest question read for a computation, in characters; a longer one passes on."""

_NUMBER_START = r"(?=[\d(.+\-−√∛]|(?:" + "|".join(sorted(NUMBER_WORDS)) + r"|the|a|an)\b)"
_LEAD = re.compile(
    r"^(?:(?:please|pls|kindly|hey|hi|hello|ok|okay|so|just|quickly|quick)[,!:]?\s+"
    r"|(?:(?:can|could|would|will) you|i need you to|i want you to|i'd like you to|"
    r"help me(?: to)?|i need to know|i want to know|i'd like to know|do you know|tell me|"
    r"show me|give me|let me know)\s+"
    r"|(?:calculate|compute|evaluate|work out|figure out|find|solve|determine|do|say)\s+"
    r"|(?:what (?:do|would|will) (?:you|i|we) get (?:if|when) (?:you|i|we)|what's|whats|"
    r"what is|what are|what does|what do|how much is|how much are)\s+"
    rf"|what\s+{_NUMBER_START}"
    r"|=\s*)",
    re.I,
)
"""A framing before the computation, taken off one at a time: politeness ("please", "hey"), a
request ("could you", "I need you to", "tell me"), an instruction ("calculate", "work out"), a
question's head ("what is", "what do you get if you") or a bare "what" before a number ("tell
me what 6*7 is")."""

_TAIL = re.compile(
    r"(?:,?\s+(?:please|pls|thanks|thank you|thx|for me|quickly|exactly|step by step|"
    r"in your head|without a calculator|equals|equal to|equal|is|comes to|come to|makes|make|"
    r"gives|give|would be|will be|and (?:show|give|tell|write)(?: me| us)? "
    r"(?:the |your |its )?(?:result|answer|working|workings|work|steps|total))|,)$",
    re.I,
)
"""A framing after the computation: politeness ("please", "for me", "thanks"), the verb of a
question ("equals", "is", "comes to") or a request for the result ("and show the result")."""


def _untailed(t: str) -> str:
    """``t`` less one framing tail: "?", a "!" that is no factorial, a full stop (not the one
    of "in."), "=", or one of :data:`_TAIL`."""
    if t.endswith("?") or t.endswith("="):
        return t[:-1]
    if t.endswith("!") and len(t) > 1 and not (t[-2].isdigit() or t[-2] in ")!"):
        return t[:-1]
    if t.endswith(".") and not (t.endswith(" in.") or t == "in."):
        return t[:-1]
    m = _TAIL.search(t)
    return t[: m.start()] if m else t


@dataclass(frozen=True)
class Computed:
    """A computed answer: ``answer`` as the user sees it, ``kind`` (arithmetic, units, clock or
    calendar) and ``how``, one line saying what was computed and how exact it is."""

    answer: str
    kind: str
    how: str


def framed(text: str) -> str:
    """``text`` less its framing: "Please, what is 17*23?" → "17*23"."""
    t = re.sub(r"\s+", " ", text.strip())
    for _ in range(10):
        before = t
        t = _untailed(_LEAD.sub("", t).rstrip()).strip()
        if t == before:
            break
    return t


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _arithmetic(text: str) -> Computed | None:
    try:
        result = arith.evaluate(text)
    except ZeroDivisionError:
        return Computed("undefined: division by zero", "arithmetic", "computed: it divides by 0")
    except NotReal:
        return Computed(
            "not a real number", "arithmetic", "computed: a negative number under an even root"
        )
    except arith.TooSlow:
        raise _Late(
            Computed(
                f"not computed: it would take longer than {arith.MAX_SECONDS * 1000:g} ms",
                "arithmetic",
                f"computed: refused after {arith.MAX_SECONDS * 1000:g} ms",
            )
        ) from None
    except (TooLarge, OverflowError) as exc:  # OverflowError: a float conversion past its range
        digits = getattr(exc, "digits", None)
        size = (
            f"about {digits:,} digits"
            if digits and digits < 10**15
            else f"over {MAX_DIGITS:,} digits"
        )
        return Computed(
            f"too large to compute exactly: {size} (the limit is {MAX_DIGITS:,})",
            "arithmetic",
            f"computed: the result has over {MAX_DIGITS:,} digits",
        )
    if result is None:
        return None
    shown, exact = show(result.value)
    expression = _clip(result.expression)
    if exact:
        return Computed(shown, "arithmetic", f"computed: exact arithmetic, {expression}")
    return Computed(
        f"{shown} ({ROUNDING_NOTE})",
        "arithmetic",
        f"computed: {expression} "
        + ("exactly as a fraction" if "/" in shown else "to 40 significant digits")
        + f", {ROUNDING_NOTE}",
    )


def _conversion(text: str) -> Computed | None:
    conv = units.read_conversion(text)
    if conv is None:
        return None
    try:
        value = conv.value()
        shown, exact = show(value, fraction=False)
    except (TooLarge, OverflowError):
        return None
    amount = f"{conv.written} {conv.source.shown}"
    answer = (
        f"{amount} = {shown} {conv.target.shown}"
        if exact
        else f"{amount} {shown} {conv.target.shown} ({ROUNDING_NOTE})"
    )
    src, dst = conv.source, conv.target
    if src.offset or dst.offset:
        rule = f"{src.describe()}; {dst.describe()}"
    else:
        rule = f"1 {src.shown} = {show(src.factor / dst.factor, fraction=False)[0]} {dst.shown}"
    return Computed(answer, "units", f"computed: unit conversion by exact factors ({rule})")


def _sci(q: Fraction) -> str:
    """An exact value with a finite decimal form: plain, or in scientific notation when it is
    very small or very large ("9.1093837015e-28")."""
    text, _ = show(q)
    if q and not Fraction(10) ** -6 <= abs(q) < Fraction(10) ** 15:
        digits = Decimal(text).normalize()
        mantissa, _, exp = f"{digits:e}".partition("e")
        return f"{mantissa}e{int(exp)}"
    return text


def _constant(text: str) -> Computed | None:
    asked = constants.read_constant(text)
    if asked is None:
        return None
    c, target = asked.constant, asked.target
    try:
        value = asked.value()
        shown, exact = show(value, fraction=False)
    except (TooLarge, OverflowError):
        return None
    if exact:
        shown = _sci(value)
    stored = f"{c.name}: {c.written} {c.unit.shown}, {c.note}"
    if c.known == "about":
        answer = f"about {shown.removeprefix('≈ ')} {target.shown} ({stored})"
    elif exact:
        answer = f"{shown} {target.shown} ({stored})"
    else:
        answer = f"{shown} {target.shown} ({ROUNDING_NOTE}; {stored})"
    src = c.unit
    if src.offset or target.offset:
        rule = "; ".join(u.describe() for u in (src, target) if u.offset or u.factor != 1)
    else:
        rule = (
            f"1 {src.shown} = {show(src.factor / target.factor, fraction=False)[0]} {target.shown}"
        )
    return Computed(
        answer, "units", f"computed: a stored constant converted by exact factors ({rule})"
    )


def compute(text: str) -> Computed | None:
    """The computed answer to ``text``, or ``None`` when it is not wholly a computation."""
    if not isinstance(text, str) or len(text) > MAX_CHARS:
        return None
    try:
        return _computed(text)
    except _Late as late:
        return late.computed


class _Late(Exception):
    """A computation refused for time: the one answer that depends on more than the text (how
    busy the machine was), so it is raised through :func:`_computed`, which remembers none."""

    def __init__(self, computed: Computed) -> None:
        super().__init__(computed.answer)
        self.computed = computed


@functools.lru_cache(maxsize=512)
def _computed(text: str) -> Computed | None:
    """:func:`compute`'s reading, remembered for the last 512 texts: a miss asks it three times
    (the graph stage, the kv before it embeds, the guard), and but for a refusal for time
    (:class:`_Late`, not remembered) it is a function of the text alone (:class:`Computed` is
    frozen)."""
    t = framed(text)
    if not t:
        return None
    solved = clock.solve(t)
    if solved is not None:
        kind = "clock" if solved.how.startswith("clock") else "calendar"
        return Computed(solved.answer, kind, f"computed: {solved.how}")
    return _conversion(t) or _constant(t) or _arithmetic(t)


def is_computation(text: str) -> bool:
    """Whether ``text`` reads as a computation (:func:`compute` answers it). The kv stage never
    serves such a question by similarity: "what is 7+8" is not "what is 7*8", and computing it
    is exact."""
    return compute(text) is not None


__all__ = ["MAX_CHARS", "Computed", "compute", "framed", "is_computation"]
