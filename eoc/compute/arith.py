"""Exact arithmetic in symbols and words: "17*23", "17 times 23", "2^10", "15% of 80",
"sqrt of 2", "the square root of 16", "7 divided by 3", "5!".

Values stay fractions while they can (so "0.1 + 0.2" is 0.3 and "7/3" is 7/3); a root or a
power that leaves the rationals is carried to 40 digits and printed rounded, saying so. Every
result is bounded (:data:`~eoc.compute.numbers.MAX_DIGITS`): a power is sized from its
logarithm before it is built, so "9^9^9" is refused at once. Text that is not wholly an
expression gives ``None``: nothing is guessed.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction

from eoc.compute.numbers import (
    CONTEXT,
    MAX_DIGITS,
    NUMBER_WORDS,
    NotReal,
    TooLarge,
    Value,
    check_size,
    read_number_words,
    read_numeral,
    read_ordinal_words,
    to_decimal,
)

MAX_TOKENS = 64
"""Longest expression read, in tokens (numbers, operators, brackets)."""

MAX_DEPTH = 16
"""Deepest nesting of brackets, roots and powers read."""

MAX_SECONDS = 0.05
"""Longest a computation may take: checked after every operation, so the worst expression is
answered or refused (:class:`TooSlow`) within tens of milliseconds. Each operation is itself
bounded (operands of at most :data:`~eoc.compute.numbers.MAX_DIGITS` digits, roots by Newton's
method on integers), so no single step can run long. The seconds are this thread's CPU time
(:data:`_clock`), so whether an expression is answered does not hang on the machine's load."""

_clock = getattr(time, "thread_time", time.perf_counter)
"""What :data:`MAX_SECONDS` is read on: this thread's CPU seconds where the platform counts them
(not Pyodide's, which has only the wall clock, and one thread). On the wall clock, a sum that
takes 0.05 ms was refused as too slow when the suite's four workers on two cores held the core
for 50 ms: a refusal that said more about the machine than about the expression."""


def _ordinal_power(m: re.Match[str]) -> str:
    """ "to the fifth (power)" as "^ 5"; anything else after "to the" left as it was."""
    n = read_ordinal_words(m["n"])
    return m[0] if n is None else f" ^ {n} "


def _power_of(m: re.Match[str]) -> str:
    """ "the fourth power of" as the prefix "powof 4"; anything else left as it was."""
    n = read_ordinal_words(m["n"])
    return m[0] if n is None else f" powof {n} "


_ORDINAL = r"(?P<n>\d{1,4}(?:st|nd|rd|th)|[a-z]+(?:-[a-z]+)?)"
_PHRASES: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (re.compile(p), r)
    for p, r in (
        (r"\bmultiplied by\b", " * "),
        (r"\bdivided by\b", " / "),
        (r"\badded to\b", " + "),
        (r"\btake away\b", " - "),
        (rf"\b(?:the )?{_ORDINAL} power of\b", _power_of),
        (r"\b(?:the )?square of\b", " powof 2 "),
        (r"\b(?:the )?cube of\b", " powof 3 "),
        (rf"\b(?:raised )?to the {_ORDINAL}(?: power)?\b", _ordinal_power),
        (r"\b(?:raised )?to the power(?: of)?\b|\braised to(?: the power(?: of)?)?\b", " ^ "),
        (r"\b(?:raised )?to the (?=minus\b)", " ^ "),
        (r"\*\*", " ^ "),
        (r"\b(?:the )?square root of\b|\bsqrt of\b|\bsqrt\b|√", " sqrt "),
        (r"\b(?:the )?cube root of\b|\bcbrt\b|∛", " cbrt "),
        (r"\bsquared\b", " ^ 2 "),
        (r"\bcubed\b", " ^ 3 "),
        (r"\bper ?cent\b", " % "),
        (r"\b(?:the )?factorial of\b", " fact "),
        (r"\bfactorial\b", " ! "),
        (r"\btimes\b|[×·∙]", " * "),
        (r"\bplus\b", " + "),
        (r"\bminus\b|[−–]", " - "),
        (r"\bover\b|÷|∕", " / "),
        (r"\bmodulo\b|\bmod\b", " mod "),
        (r"(?<=[\d)])\s*x\s*(?=[\d(.])", " * "),
    )
]
_TOKEN = re.compile(r"\s*(?:(\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?|\.\d+)|([a-z]+(?:-[a-z]+)*)|(.))")
_OPS = frozenset("+-*/^%!()")
_BINARY = frozenset({"+", "-", "*", "/", "^", "mod"})
_WORD_TOKENS = frozenset({"sqrt", "cbrt", "mod", "fact", "of", "powof"})
_PLAIN = re.compile(r"[\d.]+")
_DATE_LIKE = re.compile(r"\d+[-/.]\d+[-/.]\d+")


@dataclass(frozen=True)
class Result:
    """A computed value and the expression it came from, written out."""

    value: Value
    expression: str


_KNOWN_WORDS = NUMBER_WORDS | {
    "and", "by", "cent", "cube", "cubed", "divided", "factorial", "mod", "modulo", "multiplied",
    "of", "over", "per", "percent", "plus", "power", "raised", "root", "sqrt", "square",
    "squared", "st", "nd", "rd", "th", "the", "times", "to", "x", "minus", "cbrt", "added",
    "take", "away",
}  # fmt: skip
_LETTERS = re.compile(r"[a-z]+")
_NUMERALS = re.compile(r"\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?")


def _tokens(text: str) -> list[str | Fraction] | None:
    """Numbers as Fractions, the rest as operator strings; ``None`` for anything unknown."""
    t = text.lower()
    if _DATE_LIKE.search(t):
        return None  # "2024-01-01" and "1/2/2024" are dates, not subtractions
    seen = _LETTERS.findall(_NUMERALS.sub(" ", t))
    if not all(w in _KNOWN_WORDS or read_ordinal_words(w) is not None for w in seen):
        return None  # a word no expression holds: not one (checked before the rewriting)
    for rx, repl in _PHRASES:
        t = rx.sub(repl, t)
    out: list[str | Fraction] = []
    words: list[str] = []

    def flush() -> bool:
        if words:
            n = read_number_words(words)
            if n is None:
                return False
            out.append(Fraction(n))
            words.clear()
        return True

    pos = 0
    t = t.strip()
    while pos < len(t):
        m = _TOKEN.match(t, pos)
        if m is None:
            return None
        pos = m.end()
        num, word, sym = m.groups()
        if word is not None and (word in NUMBER_WORDS or word == "and" or "-" in word):
            words.append(word)
            continue
        if not flush():
            return None
        if num is not None:
            value = read_numeral(num)
            if value is None:
                return None
            out.append(value)
        elif word is not None:
            if word == "the":
                continue
            if word not in _WORD_TOKENS:
                return None
            out.append(word)
        elif sym is not None and sym.strip():
            if sym not in _OPS:
                return None
            out.append(sym)
        if len(out) > MAX_TOKENS:
            return None
    if not flush():
        return None
    return out


class TooSlow(ArithmeticError):
    """A computation that ran past :data:`MAX_SECONDS` (refused, never left running)."""


class _Parser:
    """Recursive descent over the tokens; values are built as they are read."""

    def __init__(self, tokens: list[str | Fraction]) -> None:
        self.toks = tokens
        self.i = 0
        self.depth = 0
        self.ops = 0
        self._deadline = _clock() + MAX_SECONDS

    def step(self) -> None:
        """Count an operation, refusing once the computation has run past its time."""
        self.ops += 1
        if _clock() > self._deadline:
            raise TooSlow

    def peek(self) -> str | Fraction | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, tok: str) -> bool:
        if self.peek() == tok and isinstance(self.peek(), str):
            self.i += 1
            return True
        return False

    def nest(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _NoParse

    def expr(self) -> tuple[Value, str]:
        v, s = self.term()
        while True:
            if self.take("+"):
                w, t = self.term()
                v, s = check_size(_add(v, w)), f"{s} + {t}"
            elif self.take("-"):
                w, t = self.term()
                v, s = check_size(_add(v, -w)), f"{s} − {t}"
            else:
                return v, s
            self.step()

    def term(self) -> tuple[Value, str]:
        v, s = self.unary()
        while True:
            if self.take("*") or (self.peek() == "of" and s.endswith("%") and self.take("of")):
                w, t = self.unary()
                v, s = check_size(_mul(v, w)), f"{s} × {t}"
            elif self.take("/"):
                w, t = self.unary()
                if w == 0:
                    raise ZeroDivisionError
                v, s = check_size(_div(v, w)), f"{s} ÷ {t}"
            elif self.take("mod"):
                w, t = self.unary()
                if not (_is_int(v) and _is_int(w)):
                    raise _NoParse
                if w == 0:
                    raise ZeroDivisionError
                v, s = Fraction(int(v) % int(w)), f"{s} mod {t}"
            else:
                return v, s
            self.step()

    def unary(self) -> tuple[Value, str]:
        if self.take("-"):
            self.nest()
            v, s = self.unary()
            self.depth -= 1
            return -v, f"−{s}"
        if self.take("+"):
            return self.unary()
        return self.power()

    def power(self) -> tuple[Value, str]:
        v, s = self.postfix()
        if self.take("^"):
            self.nest()
            w, t = self.unary()  # right-associative: 9^9^9 is 9^(9^9)
            self.depth -= 1
            self.step()
            return _pow(v, w), f"{s}^{t}"
        return v, s

    def postfix(self) -> tuple[Value, str]:
        v, s = self.primary()
        while True:
            if self.take("%"):
                v, s = v / 100, f"{s}%"
            elif self.take("!"):
                v, s = _factorial(v), f"{s}!"
            else:
                return v, s
            self.step()

    def primary(self) -> tuple[Value, str]:
        tok = self.peek()
        if isinstance(tok, Fraction):
            self.i += 1
            return tok, _show_operand(tok)
        for name, fn, mark in (("sqrt", _sqrt, "√"), ("cbrt", _cbrt, "∛"), ("fact", None, "")):
            if self.take(name):
                self.nest()
                v, s = self.power()
                self.depth -= 1
                self.step()
                if fn is None:
                    return _factorial(v), f"{s}!"
                plain = s.startswith("(") or _PLAIN.fullmatch(s) is not None
                return fn(v), f"{mark}{s}" if plain else f"{mark}({s})"
        if self.take("powof"):  # "the fourth power of 3", "the square of 15"
            exp = self.peek()
            if not isinstance(exp, Fraction):
                raise _NoParse
            self.i += 1
            self.nest()
            v, s = self.postfix()
            self.depth -= 1
            if self.peek() in _BINARY:
                raise _NoParse  # "the square of 3 plus 4": (3 + 4)² or 3² + 4, not guessed
            self.step()
            plain = s.startswith("(") or _PLAIN.fullmatch(s) is not None
            return _pow(v, exp), f"{s}^{exp}" if plain else f"({s})^{exp}"
        if self.take("("):
            self.nest()
            v, s = self.expr()
            self.depth -= 1
            if not self.take(")"):
                raise _NoParse
            return v, f"({s})"
        raise _NoParse


class _NoParse(Exception):
    """The text is not wholly an expression."""


def _show_operand(q: Fraction) -> str:
    if q.denominator == 1:
        return str(q.numerator)
    return str(to_decimal(q).normalize()) if len(str(q)) < 40 else str(q)


def _is_int(v: Value) -> bool:
    return isinstance(v, Fraction) and v.denominator == 1


def _add(a: Value, b: Value) -> Value:
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a + b
    with localcontext(CONTEXT):
        return to_decimal(a) + to_decimal(b)


def _mul(a: Value, b: Value) -> Value:
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a * b
    with localcontext(CONTEXT):
        return to_decimal(a) * to_decimal(b)


def _div(a: Value, b: Value) -> Value:
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a / b
    with localcontext(CONTEXT):
        return to_decimal(a) / to_decimal(b)


def _digits_of_power(base: Value, exp: Value) -> int:
    """About how many digits ``base ** exp`` has (numerator or denominator, the larger)."""
    if isinstance(base, Fraction):
        size = max(_log10_int(abs(base.numerator)), _log10_int(base.denominator))
    else:
        size = abs(float(abs(base).log10()))
    try:
        digits = size * abs(float(exp))  # an exponent past float's range overflows or is inf
        return math.floor(digits) + 1 if math.isfinite(digits) else _HUGE
    except OverflowError:
        return _HUGE


_HUGE = 10**18
"""The size given to a power whose exponent alone is past float's range: far over any bound."""


def _log10_int(n: int) -> float:
    if n == 0:
        return 0.0
    bits = n.bit_length()
    if bits < 1000:
        return math.log10(n)
    return math.log10(n >> (bits - 64)) + (bits - 64) * math.log10(2)


def _pow(base: Value, exp: Value) -> Value:
    if base == 0:
        if exp < 0:
            raise ZeroDivisionError
        return Fraction(1) if exp == 0 else Fraction(0)
    if abs(base) == 1 and _is_int(exp):
        one = Fraction(1) if base > 0 else Fraction(-1)
        return one if int(exp) % 2 else abs(one)
    digits = _digits_of_power(base, exp)
    if digits > MAX_DIGITS:
        raise TooLarge(digits)
    if _is_int(exp) and isinstance(base, Fraction):
        return check_size(base ** int(exp))
    if isinstance(base, Fraction) and isinstance(exp, Fraction) and exp.denominator <= 64:
        root = _exact_root(abs(base), exp.denominator)
        if root is not None:
            if base < 0 and exp.denominator % 2 == 0:
                raise NotReal
            signed = -root if base < 0 else root
            return check_size(signed**exp.numerator)
    if base < 0:
        if isinstance(exp, Fraction) and exp.denominator % 2 == 1:
            mag = _pow(-base, exp)
            return -mag if exp.numerator % 2 else mag
        raise NotReal
    with localcontext(CONTEXT):
        return check_size(to_decimal(base) ** to_decimal(exp))


def _exact_root(q: Fraction, n: int) -> Fraction | None:
    """The exact ``n``-th root of ``q`` ≥ 0 when it is rational, else ``None``."""
    out = []
    for part in (q.numerator, q.denominator):
        r = _iroot(part, n)
        if r**n != part:
            return None
        out.append(r)
    return Fraction(out[0], out[1])


def _iroot(x: int, n: int) -> int:
    """The integer ``n``-th root of ``x`` ≥ 0 (the largest r with r**n <= x): Newton's method on
    integers from above, which falls monotonically to it in about log2(bits) steps."""
    if x < 2:
        return x
    if n == 2:
        return math.isqrt(x)
    r = 1 << -(-x.bit_length() // n)  # 2**ceil(bits/n) > the root
    while True:
        smaller = ((n - 1) * r + x // r ** (n - 1)) // n
        if smaller >= r:
            return r
        r = smaller


def _sqrt(v: Value) -> Value:
    if v < 0:
        raise NotReal
    if isinstance(v, Fraction):
        root = _exact_root(v, 2)
        if root is not None:
            return root
    with localcontext(CONTEXT):
        return to_decimal(v).sqrt()


def _cbrt(v: Value) -> Value:
    if v < 0:
        return -_cbrt(-v)
    if isinstance(v, Fraction):
        root = _exact_root(v, 3)
        if root is not None:
            return root
    with localcontext(CONTEXT):
        return check_size(to_decimal(v) ** (Decimal(1) / Decimal(3)))


def _factorial(v: Value) -> Value:
    if not _is_int(v) or v < 0:
        raise _NoParse
    n = int(v)
    digits = math.floor(math.lgamma(n + 1) / math.log(10)) + 1
    if digits > MAX_DIGITS:
        raise TooLarge(digits)
    return Fraction(math.factorial(n))


_VERB_FORMS: tuple[tuple[re.Pattern[str], re.Pattern[str], str, bool], ...] = tuple(
    (re.compile(head), re.compile(rf"\s+(?:{link})\s+"), op, swap)
    for head, link, op, swap in (
        (r"^(?:add|sum)(?: together| up)?\s+", "and|to|plus|with", "+", False),
        (r"^(?:the )?(?:sum|total) of\s+", "and|plus", "+", False),
        (r"^subtract\s+", "from", "-", True),
        (r"^take(?: away)?\s+", "away from|from", "-", True),
        (r"^multiply(?: together)?\s+", "by|and|times|with", "*", False),
        (r"^(?:the )?product of\s+", "and|times", "*", False),
        (r"^divide\s+", "by", "/", False),
        (r"^(?=.+\s+subtracted from\s+)", "subtracted from", "-", True),
    )
)
"""Arithmetic asked as an instruction: (how it starts, the word between its two operands, the
operation, whether the second operand comes first). "add 38 and 47", "the sum of 3 and 4",
"subtract 17 from 60", "multiply 13 by 7", "divide 100 by 8", "5 subtracted from 9"."""


def _operand(text: str) -> str | None:
    """``text`` as one operand of an expression: a number as it is, anything else in brackets;
    ``None`` when it is not wholly an expression or a number."""
    tokens = _tokens(text)
    if not tokens:
        return None
    return text if len(tokens) == 1 and isinstance(tokens[0], Fraction) else f"({text})"


def _instructed(text: str) -> Result | None:
    """The value of an instruction such as "add 38 and 47", read at every place its link word
    occurs ("add one hundred and five and six"): one value, or ``None`` when no reading is an
    expression or two readings differ."""
    t = text.strip().lower()
    outcomes: dict[object, Result | ArithmeticError] = {}
    for head, link, op, swap in _VERB_FORMS:
        m = head.match(t)
        if m is None:
            continue
        rest = t[m.end() :]
        for cut in link.finditer(rest):
            a, b = _operand(rest[: cut.start()]), _operand(rest[cut.end() :])
            if a is None or b is None:
                continue
            expression = f"{b} {op} {a}" if swap else f"{a} {op} {b}"
            try:
                tokens = _tokens(expression)
                done = _parse(tokens) if tokens else None
            except ArithmeticError as exc:
                outcomes[type(exc)] = exc
                continue
            if done is not None:
                outcomes[done.value] = done
    if len(outcomes) != 1:
        return None
    (only,) = outcomes.values()
    if isinstance(only, ArithmeticError):
        raise only
    return only


def evaluate(text: str) -> Result | None:
    """The value of ``text`` when it is wholly an expression with at least one operation;
    ``None`` when it is not (a bare number is not a computation).

    Raises:
        ZeroDivisionError: it divides by zero.
        NotReal: the result is not a real number.
        TooLarge: the result is over the stated bound.
    """
    tokens = _tokens(text)
    if not tokens:
        return _instructed(text)
    shouted_digit = len(tokens) > 1 and tokens[-1] == "!" and isinstance(tokens[-2], Fraction)
    if shouted_digit and any(t in ("+", "-", "*", "/", "^", "mod") for t in tokens):
        # "what is 3 + 3!" may be a factorial or an exclamation: read it only if both agree
        plain = evaluate(text.rstrip()[:-1]) if text.rstrip().endswith("!") else None
        shouted = _parse(tokens)
        agree = plain is not None and shouted is not None and plain.value == shouted.value
        return shouted if agree else None
    return _parse(tokens)


def _parse(tokens: list[str | Fraction]) -> Result | None:
    p = _Parser(tokens)
    try:
        value, shown = p.expr()
    except _NoParse:
        return None
    if p.i != len(tokens) or p.ops == 0:
        return None
    return Result(value, shown)


__all__ = ["MAX_DEPTH", "MAX_SECONDS", "MAX_TOKENS", "Result", "TooSlow", "evaluate"]
