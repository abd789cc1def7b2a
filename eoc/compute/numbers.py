"""Numbers for computed answers: reading them (digits or words), exact values, and printing.

A value is a :class:`~fractions.Fraction` while it is exact and a :class:`~decimal.Decimal` of
:data:`PRECISION` digits once an operation (a square root of 2, a power of 1/3) leaves the
rationals. Printing says which: an exact value is printed whole, an approximate one rounded to
:data:`SHOWN_DIGITS` significant digits with the rounding stated.
"""

from __future__ import annotations

import re
from decimal import Context, Decimal, localcontext
from fractions import Fraction

Value = Fraction | Decimal

MAX_DIGITS = 1000
"""Largest exact answer, in decimal digits of its numerator or denominator."""

MAX_BITS = int(MAX_DIGITS * 3.3219280948873626) + 1
""":data:`MAX_DIGITS` in bits: the cheap check made after every operation."""

PRECISION = 40
"""Significant digits carried by an approximate (Decimal) value."""

SHOWN_DIGITS = 12
"""Significant digits printed for a value that is not exact or has no finite decimal form."""

MAX_EXPONENT = 400
"""Largest power of ten accepted in a written number ("1e400"): more is refused, not built."""

CONTEXT = Context(prec=PRECISION, Emax=10**6, Emin=-(10**6))


class TooLarge(ArithmeticError):
    """A result over :data:`MAX_DIGITS` digits (``digits`` says about how many, when known)."""

    def __init__(self, digits: int | None = None) -> None:
        super().__init__(digits)
        self.digits = digits


class NotReal(ArithmeticError):
    """A result that is not a real number (the square root of a negative number)."""


_NUMERAL = re.compile(
    r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[+-]?\d{1,4})?|\.\d+(?:e[+-]?\d{1,4})?", re.I
)

_UNITS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {
    w: 10 * i
    for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)
}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
NUMBER_WORDS = frozenset({*_UNITS, *_TENS, "hundred", *_SCALES})


def read_numeral(text: str) -> Fraction | None:
    """The exact value of a written numeral ("17", "1,000", "2.5", "1e3"), or ``None``."""
    if not _NUMERAL.fullmatch(text):
        return None
    mantissa, _, exp = text.lower().partition("e")
    if exp and abs(int(exp)) > MAX_EXPONENT:
        return None
    value = Fraction(mantissa.replace(",", ""))
    return value * Fraction(10) ** int(exp) if exp else value


def read_number_words(words: list[str]) -> int | None:
    """The value of number words in order ("one hundred and five", "twenty-three", "two
    thousand"), or ``None`` when they are not one well-formed number."""
    parts = [p for w in words for p in w.split("-")]
    if parts == ["zero"]:
        return 0
    total = current = 0
    last = ""  # what the previous word was: unit, ten, hundred, scale or and
    last_scale = 0
    for w in parts:
        if w in _UNITS and w != "zero":
            if last == "unit" or (last == "ten" and _UNITS[w] >= 10):
                return None
            current += _UNITS[w]
            last = "unit"
        elif w in _TENS:
            if last in ("unit", "ten"):
                return None
            current += _TENS[w]
            last = "ten"
        elif w == "hundred":
            if last not in ("unit", "ten") or not 0 < current < 100:
                return None
            current *= 100
            last = "hundred"
        elif w in _SCALES:
            scale = _SCALES[w]
            if last not in ("unit", "ten", "hundred") or (last_scale and scale >= last_scale):
                return None
            total += current * scale
            current, last, last_scale = 0, "scale", scale
        elif w == "and" and last in ("hundred", "scale"):
            last = "and"
        else:
            return None
    if last in ("", "and"):
        return None
    return total + current


_ORDINAL_ENDS = {
    "first": "one", "second": "two", "third": "three", "fifth": "five", "eighth": "eight",
    "ninth": "nine", "twelfth": "twelve",
}  # fmt: skip


def read_ordinal_words(text: str) -> int | None:
    """The value of an ordinal in words or digits ("fifth", "twenty-first", "hundredth", "4th",
    "2nd"), or ``None``. The last word is made cardinal ("fifth" → "five", "twentieth" →
    "twenty") and the whole read as a number, so "fifth" is 5 and "fifthy" nothing."""
    t = text.strip().lower()
    m = re.fullmatch(r"(\d{1,4})(st|nd|rd|th)", t)
    if m:
        n = int(m[1])
        digit = n % 100 if n % 100 in (11, 12, 13) else n % 10
        right = {1: "st", 2: "nd", 3: "rd"}.get(digit, "th")
        return n if m[2] == right else None
    words = t.replace("-", " ").split()
    if not words:
        return None
    last = words[-1]
    if last in _ORDINAL_ENDS:
        cardinal = _ORDINAL_ENDS[last]
    elif last.endswith("ieth"):
        cardinal = last[:-4] + "y"
    elif last.endswith("th") and last[:-2] in NUMBER_WORDS:
        cardinal = last[:-2]
    else:
        return None
    if cardinal in ("one", "two", "three") and last not in _ORDINAL_ENDS:
        return None
    return read_number_words([*words[:-1], cardinal])


def to_decimal(v: Value) -> Decimal:
    """``v`` as a Decimal of :data:`PRECISION` digits."""
    if isinstance(v, Decimal):
        return v
    with localcontext(CONTEXT):
        return Decimal(v.numerator) / Decimal(v.denominator)


def check_size(v: Value) -> Value:
    """``v`` itself, or :class:`TooLarge` when it is over the stated bound."""
    if isinstance(v, Fraction):
        for part in (abs(v.numerator), v.denominator):
            bits = part.bit_length()
            if bits > MAX_BITS or (bits > MAX_BITS - 8 and len(str(part)) > MAX_DIGITS):
                raise TooLarge()
    elif not v.is_finite() or (v and abs(v.adjusted()) > MAX_DIGITS):
        raise TooLarge()
    return v


def _terminating(q: Fraction) -> str | None:
    """The exact decimal form of ``q``, or ``None`` when it does not end."""
    d = q.denominator
    twos = fives = 0
    while d % 2 == 0:
        d //= 2
        twos += 1
    while d % 5 == 0:
        d //= 5
        fives += 1
    if d != 1:
        return None
    places = max(twos, fives)
    if places > MAX_DIGITS:
        return None
    scaled = abs(q.numerator) * 10**places // q.denominator
    digits = str(scaled).rjust(places + 1, "0")
    whole, frac = digits[: len(digits) - places], digits[len(digits) - places :]
    sign = "-" if q < 0 else ""
    return f"{sign}{whole}.{frac}".rstrip("0").rstrip(".") if places else f"{sign}{whole}"


def rounded(v: Value) -> str:
    """``v`` to :data:`SHOWN_DIGITS` significant digits, in plain or scientific notation."""
    d = to_decimal(v)
    if d == 0:
        return "0"
    with localcontext(CONTEXT):
        text = f"{d:.{SHOWN_DIGITS}g}"
    mantissa, _, exp = text.partition("e")
    return f"{mantissa}e{int(exp)}" if exp else mantissa


ROUNDING_NOTE = f"rounded to {SHOWN_DIGITS} significant digits"


def show(v: Value, *, fraction: bool = True) -> tuple[str, bool]:
    """``(text, exact)``: how ``v`` is printed and whether that text is its exact value.

    An exact value with a finite decimal form prints whole ("391", "0.3"); one without prints
    as ``7/3 ≈ 2.33333333333`` (``fraction``) or ``≈ 2.33333333333``; an approximate value
    prints ``≈ 1.41421356237``.
    """
    if isinstance(v, Fraction):
        exact = _terminating(v)
        if exact is not None:
            return exact, True
        near = rounded(v)
        return (f"{v.numerator}/{v.denominator} ≈ {near}" if fraction else f"≈ {near}"), False
    return f"≈ {rounded(v)}", False


__all__ = [
    "MAX_DIGITS",
    "NUMBER_WORDS",
    "PRECISION",
    "ROUNDING_NOTE",
    "SHOWN_DIGITS",
    "NotReal",
    "TooLarge",
    "Value",
    "check_size",
    "read_number_words",
    "read_numeral",
    "read_ordinal_words",
    "rounded",
    "show",
    "to_decimal",
]
