"""Unit conversion by exact factors: "convert 10 miles to km", "100 F in C", "how many grams in
a kilogram", "1 GiB in MB", "1 kWh in joules".

The table is ``data/units.tsv``: each unit's dimension and exact factor to that dimension's
base unit, with SI prefixes (``kilo``/``k`` … ``quetta``/``Q``) and binary ones (``kibi``/``Ki``
…) built from it. Symbols match with their case ("MB" is a megabyte; "mb" is nothing, since it
could be a megabit or a millibyte); names match in any case. A speed may be written as a
length per time ("km/h", "metres per second"). A unit no row names, units of two dimensions,
or a reading with two meanings give ``None``. An acceleration is a length per time squared
("m/s²", "ft/s^2", "metres per second squared").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from importlib import resources

from eoc.compute.numbers import Value, read_number_words, read_numeral, show

BASE = {
    "length": "m",
    "mass": "kg",
    "volume": "m³",
    "temperature": "K",
    "time": "s",
    "speed": "m/s",
    "data": "B",
    "energy": "J",
    "power": "W",
    "acceleration": "m/s²",
    "pressure": "Pa",
    "frequency": "Hz",
}
"""Each dimension's base unit: the one every factor in the table is given in."""

SI_PREFIXES = (
    ("quecto", "q", "1e-30"),
    ("ronto", "r", "1e-27"),
    ("yocto", "y", "1e-24"),
    ("zepto", "z", "1e-21"),
    ("atto", "a", "1e-18"),
    ("femto", "f", "1e-15"),
    ("pico", "p", "1e-12"),
    ("nano", "n", "1e-9"),
    ("micro", "µ", "1e-6"),
    ("milli", "m", "1e-3"),
    ("centi", "c", "1e-2"),
    ("deci", "d", "1e-1"),
    ("deca", "da", "1e1"),
    ("hecto", "h", "1e2"),
    ("kilo", "k", "1e3"),
    ("mega", "M", "1e6"),
    ("giga", "G", "1e9"),
    ("tera", "T", "1e12"),
    ("peta", "P", "1e15"),
    ("exa", "E", "1e18"),
    ("zetta", "Z", "1e21"),
    ("yotta", "Y", "1e24"),
    ("ronna", "R", "1e27"),
    ("quetta", "Q", "1e30"),
)
"""The SI prefixes (SI Brochure, 9th edition): name, symbol, factor."""

BINARY_PREFIXES = tuple(
    (name, sym, str(1024**i))
    for i, (name, sym) in enumerate(
        (("kibi", "Ki"), ("mebi", "Mi"), ("gibi", "Gi"), ("tebi", "Ti")), 1
    )
) + tuple(
    (name, sym, str(1024**i))
    for i, (name, sym) in enumerate(
        (("pebi", "Pi"), ("exbi", "Ei"), ("zebi", "Zi"), ("yobi", "Yi")), 5
    )
)
"""The binary prefixes (IEC 80000-13): name, symbol, factor."""

_EXTRA_SYMBOL = {"µ": ("u", "μ")}  # micro is also typed as u and as the Greek letter mu

NOT_SYMBOLS = frozenset({"am", "pm", "as", "AM", "PM"})
"""Prefixed symbols never read: "10 pm to am" is about a clock, not picometres and attometres,
and "as" is a word before it is an attosecond."""


@dataclass(frozen=True)
class Unit:
    """One unit: how it is shown, its dimension, and its exact place on the base unit's scale
    (``base = (value + offset) × factor``)."""

    shown: str
    dimension: str
    factor: Fraction
    offset: Fraction = Fraction(0)

    def to_base(self, v: Value) -> Value:
        return (v + self.offset) * self.factor  # type: ignore[operator]

    def from_base(self, v: Value) -> Value:
        return v / self.factor - self.offset  # type: ignore[operator]

    def describe(self) -> str:
        """How this unit sits on its base unit, for the basis ("1 mi = 1609.344 m")."""
        base = BASE[self.dimension]
        f = _exact(self.factor)
        if self.offset:
            scale = "" if self.factor == 1 else f" × {f}"
            return f"{base} = ({self.shown} + {_exact(self.offset)}){scale}"
        return f"1 {self.shown} = {f} {base}"


def _exact(q: Fraction) -> str:
    text, exact = show(q)
    return text if exact else f"{q.numerator}/{q.denominator}"


def _rows() -> list[list[str]]:
    text = (resources.files(__package__) / "data" / "units.tsv").read_text(encoding="utf-8")
    return [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]


@cache
def tables() -> tuple[dict[str, Unit | None], dict[str, Unit | None]]:
    """``(symbols, names)``: every spelling to its unit; ``None`` where two units share one."""
    symbols: dict[str, Unit | None] = {}
    names: dict[str, Unit | None] = {}

    def put(table: dict[str, Unit | None], key: str, unit: Unit) -> None:
        if key in table and table[key] != unit:
            table[key] = None  # two meanings: refused, never guessed
        else:
            table[key] = unit

    for shown, dim, factor, offset, prefixes, syms, spellings in _rows():
        unit = Unit(shown, dim, Fraction(factor), Fraction(offset))
        sym_list = [] if syms == "-" else syms.split(",")
        name_list = [] if spellings == "-" else [n.lower() for n in spellings.split(",")]
        for s in sym_list:
            put(symbols, s, unit)
        for n in name_list:
            put(names, n, unit)
        if prefixes == "-":
            continue
        chosen = SI_PREFIXES if prefixes == "si" else SI_PREFIXES[14:] + BINARY_PREFIXES
        for pname, psym, pfactor in chosen:
            scaled = Unit(psym + shown, dim, unit.factor * Fraction(pfactor))
            for alias in (psym, *_EXTRA_SYMBOL.get(psym, ())):
                for s in sym_list:
                    if alias + s not in NOT_SYMBOLS:
                        put(symbols, alias + s, scaled)
            for n in name_list:
                put(names, pname + n, scaled)
    return symbols, names


_DEGREES = re.compile(r"^(?:degrees?|deg)\s+", re.I)
_PER = re.compile(r"\s*(?:/|\bper\b|\ba\b|\ban\b)\s*", re.I)
_SPACE = re.compile(r"\s+")
_SQUARED = re.compile(r"\s*(?:²|\^2|2|squared)$")


def find_unit(text: str) -> Unit | None:
    """The unit ``text`` names, or ``None`` (unknown, or two meanings)."""
    t = _SPACE.sub(" ", text.strip())
    if not t:
        return None
    symbols, names = tables()
    degrees = _DEGREES.match(t)
    if degrees:
        unit = find_unit(t[degrees.end() :])
        return unit if unit is not None and unit.dimension == "temperature" else None
    if t in symbols:
        return symbols[t]
    if t.lower() in names:
        return names[t.lower()]
    parts = _PER.split(t)
    if len(parts) == 2 and all(parts):
        squared = _SQUARED.search(parts[1])
        top = find_unit(parts[0])
        bottom = find_unit(parts[1][: squared.start()] if squared else parts[1])
        if top and bottom and top.dimension == "length" and bottom.dimension == "time":
            if squared:
                factor = top.factor / bottom.factor**2
                return Unit(f"{top.shown}/{bottom.shown}²", "acceleration", factor)
            return Unit(f"{top.shown}/{bottom.shown}", "speed", top.factor / bottom.factor)
    return None


_QUANTITY = re.compile(
    r"^(?P<sign>[-+−]?)\s*(?P<num>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[+-]?\d{1,4})?"
    r"|\.\d+)\s*(?P<unit>\S.*)$",
    re.I,
)
_ONE = re.compile(r"^(?:a|an|one|1)\s+(?P<unit>.+)$", re.I)


def read_quantity(text: str) -> tuple[Fraction, str, Unit] | None:
    """``(number, number as written, unit)`` for "10 miles", "-40 °F", "a kilogram",
    "ten miles"; ``None`` otherwise."""
    t = text.strip()
    m = _QUANTITY.match(t)
    if m:
        value = read_numeral(m["num"])
        unit = find_unit(m["unit"])
        if value is None or unit is None:
            return None
        if m["sign"] in ("-", "−"):
            value = -value
        return value, f"{'-' if value < 0 else ''}{m['num']}", unit
    m = _ONE.match(t)
    if m:
        unit = find_unit(m["unit"])
        return (Fraction(1), "1", unit) if unit is not None else None
    words = t.split()
    for cut in range(len(words) - 1, 0, -1):
        n = read_number_words([w.lower() for w in words[:cut]])
        if n is not None:
            unit = find_unit(" ".join(words[cut:]))
            return (Fraction(n), str(n), unit) if unit is not None else None
    return None


@dataclass(frozen=True)
class Conversion:
    """A conversion read from a question: ``amount`` of ``source`` in ``target``."""

    amount: Fraction
    written: str
    source: Unit
    target: Unit

    def value(self) -> Value:
        return self.target.from_base(self.source.to_base(self.amount))


_INTO = re.compile(
    r"\s+(?:to|in|into|as|in terms of|=|equals?|equal to|is how many|are how many|"
    r"is equal to how many|is what in)\s+",
    re.I,
)
_HOW_MANY = re.compile(r"^how (?:many|much)\s+(?P<rest>.+)$", re.I)
_HOW_MANY_LINK = re.compile(
    r"\s+(?:are there in|are there per|are in|is in|is there in|in|per|make up|make|"
    r"equal|equals|go into|fit in|to)\s+",
    re.I,
)
_CONVERT = re.compile(r"^(?:convert|change|turn)\s+(?:from\s+)?", re.I)


def _splits(text: str, link: re.Pattern[str]) -> list[tuple[str, str]]:
    return [(text[: m.start()], text[m.end() :]) for m in link.finditer(text)]


def read_conversion(text: str) -> Conversion | None:
    """The one conversion ``text`` asks for, or ``None`` (none, or more than one reading)."""
    t = _CONVERT.sub("", text.strip())
    found: set[Conversion] = set()
    how = _HOW_MANY.match(t)
    if how:
        for target, source in _splits(how["rest"], _HOW_MANY_LINK):
            unit = find_unit(target)
            q = read_quantity(source)
            if unit is not None and q is not None:
                found.add(Conversion(q[0], q[1], q[2], unit))
    else:
        for source, target in _splits(t, _INTO):
            unit = find_unit(target)
            q = read_quantity(source)
            if unit is not None and q is not None:
                found.add(Conversion(q[0], q[1], q[2], unit))
    found = {c for c in found if c.source.dimension == c.target.dimension}
    return found.pop() if len(found) == 1 else None


__all__ = [
    "BASE",
    "BINARY_PREFIXES",
    "NOT_SYMBOLS",
    "SI_PREFIXES",
    "Conversion",
    "Unit",
    "find_unit",
    "read_conversion",
    "read_quantity",
    "tables",
]
