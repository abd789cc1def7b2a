"""A constant asked for in a unit: "speed of light in km/h", "electron mass in grams",
"standard atmospheric pressure in kPa", "g in ft/s²".

The constants are ``data/constants.tsv``: each with its names, value and unit. A question
names one constant (by a name in any case, or a symbol in its own case) and one unit of the
same dimension; the stored value is converted by the unit table's exact factors. A unit of
another dimension ("speed of light in kg"), a unit no row names, or a name not in the table
("speed of sound in water") gives ``None``: the question passes on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from importlib import resources

from eoc.compute.numbers import read_numeral
from eoc.compute.units import Unit, find_unit


@dataclass(frozen=True)
class Constant:
    """One constant: ``name`` (its first name), ``value`` in ``unit`` (``written`` as the table
    gives it), ``known`` ("exact", "measured" or "about") and the ``note`` its answer carries."""

    name: str
    value: Fraction
    written: str
    unit: Unit
    known: str
    note: str


def _rows() -> list[list[str]]:
    text = (resources.files(__package__) / "data" / "constants.tsv").read_text(encoding="utf-8")
    return [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]


@cache
def table() -> tuple[dict[str, Constant], dict[str, Constant]]:
    """``(names, symbols)``: every name (lower case) and symbol to its constant.

    Raises:
        ValueError: a row whose value or unit cannot be read (a broken table, found by tests).
    """
    names: dict[str, Constant] = {}
    symbols: dict[str, Constant] = {}
    for spellings, syms, value, unit_text, known, note in _rows():
        unit = find_unit(unit_text)
        number = read_numeral(value)
        if unit is None or number is None:
            raise ValueError(f"constants.tsv: cannot read {value!r} {unit_text!r}")
        spelled = spellings.split("|")
        const = Constant(spelled[0], number, value, unit, known, note)
        for n in spelled:
            names[n.lower()] = const
        for s in [] if syms == "-" else syms.split("|"):
            symbols[s] = const
    return names, symbols


def find_constant(text: str) -> Constant | None:
    """The constant ``text`` names ("the speed of light", "g"), or ``None``."""
    t = re.sub(r"\s+", " ", text.strip())
    names, symbols = table()
    if t in symbols:
        return symbols[t]
    low = re.sub(r"^(?:the )?(?:value of )?(?:the )?", "", t.lower())
    return names.get(low)


_LINK = re.compile(
    r"\s+(?:in|into|to|as|in terms of|in units of|expressed in|measured in|converted to)\s+",
    re.I,
)
_CONVERT = re.compile(r"^(?:convert|express|give)\s+", re.I)
_HOW_MANY = re.compile(
    r"^how (?:many|much)\s+(?P<unit>.+?)\s+(?:is|are|is there in|are there in|in)\s+(?P<c>.+)$",
    re.I,
)


@dataclass(frozen=True)
class Asked:
    """A constant asked for in ``target``, a unit of its dimension."""

    constant: Constant
    target: Unit

    def value(self) -> Fraction:
        c, t = self.constant, self.target
        return t.from_base(c.unit.to_base(c.value))  # type: ignore[return-value]


def read_constant(text: str) -> Asked | None:
    """The one constant-in-a-unit ``text`` asks for, or ``None`` (none, another dimension, or
    two readings)."""
    t = _CONVERT.sub("", text.strip())
    pairs: list[tuple[str, str]] = []
    how = _HOW_MANY.match(t)
    if how:
        pairs.append((how["c"], how["unit"]))
    else:
        pairs.extend((t[: m.start()], t[m.end() :]) for m in _LINK.finditer(t))
    found = set()
    for name, unit_text in pairs:
        const, unit = find_constant(name), find_unit(unit_text)
        if const is not None and unit is not None and unit.dimension == const.unit.dimension:
            found.add(Asked(const, unit))
    return found.pop() if len(found) == 1 else None


__all__ = ["Asked", "Constant", "find_constant", "read_constant", "table"]
