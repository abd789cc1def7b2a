"""Clock and calendar arithmetic: "09:15 plus 2 hours 50 minutes", "45 minutes before 9 am",
"days between 2024-01-01 and 2024-03-01", "what day of the week was 1969-07-20",
"100 days after 2024-01-01".

Dates are ISO (``1969-07-20``) or written with the month's name ("20 July 1969", "July 20,
1969"); a numeric date such as 01/02/2024 reads one way in the US and another in Europe, so it
is not read. Dates are on the proleptic Gregorian calendar (Python's :mod:`datetime`), years 1
to 9999. Anything that depends on today ("tomorrow", "in 3 hours") is not answered: a cache
would keep the answer after it stopped being true.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from fractions import Fraction

from eoc.compute.numbers import read_number_words, read_numeral

_MONTHS = {
    name: i
    for i, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        1,
    )
    for name in names
}
_MONTH = "(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{1,4})"
_DATES = (
    re.compile(r"^(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})$"),
    re.compile(rf"^(?:the )?{_DAY} (?:of )?{_MONTH},? {_YEAR}$"),
    re.compile(rf"^{_MONTH} (?:the )?{_DAY},? {_YEAR}$"),
)
_TIME = re.compile(
    r"^(?P<h>\d{1,2})(?::(?P<m>\d{2})(?::(?P<s>\d{2}))?)?\s*(?P<ampm>[ap]\.?m\.?)?$|^(?P<noon>noon|midday|midnight)$"
)
_DURATION_PART = re.compile(
    r"(?P<n>\d+(?:\.\d+)?|an?|one|half an?|[a-z]+(?:[- ][a-z]+)?)\s*"
    r"(?P<unit>hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)(?![a-z])"
)
_UNIT_SECONDS = {"h": 3600, "m": 60, "s": 1}
_DAYS_UNIT = {"day": 1, "days": 1, "week": 7, "weeks": 7}


@dataclass(frozen=True)
class Solved:
    """A clock or calendar answer and one line saying how it was reached."""

    answer: str
    how: str


def read_date(text: str) -> date | None:
    """The date ``text`` names (ISO, or with the month's name), or ``None``."""
    t = text.strip().lower()
    for rx in _DATES:
        m = rx.match(t)
        if m:
            month = m["month"]
            mon = int(month) if month.isdigit() else _MONTHS[month]
            try:
                return date(int(m["year"]), mon, int(m["day"]))
            except ValueError:
                return None
    return None


def read_time(text: str) -> tuple[int, bool] | None:
    """``(seconds after midnight, written with am/pm)`` for "09:15", "9:15 pm", "noon"."""
    m = _TIME.match(text.strip().lower())
    if m is None:
        return None
    if m["noon"]:
        return (0 if m["noon"] == "midnight" else 12 * 3600), True
    h, mins, secs = int(m["h"]), int(m["m"] or 0), int(m["s"] or 0)
    if mins > 59 or secs > 59:
        return None
    ampm = m["ampm"]
    if ampm:
        if not 1 <= h <= 12:
            return None
        h = h % 12 + (12 if ampm.startswith("p") else 0)
    elif m["m"] is None or h > 23:
        return None  # a bare "9" is not a time; "24:00" is not a time of day
    return h * 3600 + mins * 60 + secs, ampm is not None


def read_duration(text: str) -> Fraction | None:
    """Seconds in "2 hours 50 minutes", "2h50m", "1.5 hours", "half an hour"; ``None`` unless
    the whole text is a duration."""
    t = text.strip().lower().replace(",", " ")
    t = re.sub(r"\band\b", " ", t)
    pos, total, parts = 0, Fraction(0), 0
    for m in _DURATION_PART.finditer(t):
        if t[pos : m.start()].strip():
            return None
        n = m["n"]
        if n in ("a", "an", "one"):
            value = Fraction(1)
        elif n.startswith("half"):
            value = Fraction(1, 2)
        elif n[0].isdigit():
            value = read_numeral(n) or Fraction(0)
        else:
            w = read_number_words(n.replace("-", " ").split())
            if w is None:
                return None
            value = Fraction(w)
        total += value * _UNIT_SECONDS[m["unit"][0]]
        pos = m.end()
        parts += 1
    if parts == 0 or t[pos:].strip():
        return None
    return total


def _clock(seconds: int, ampm: bool) -> str:
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    tail = f":{s:02d}" if s else ""
    if ampm:
        return f"{(h % 12) or 12}:{m:02d}{tail} {'pm' if h >= 12 else 'am'}"
    return f"{h:02d}:{m:02d}{tail}"


def _day_note(days: int) -> str:
    if days == 0:
        return ""
    if days == 1:
        return " (the next day)"
    if days == -1:
        return " (the day before)"
    return f" ({abs(days)} days {'later' if days > 0 else 'earlier'})"


def _shift_time(start: str, duration: str, sign: int) -> Solved | None:
    t = read_time(start)
    d = read_duration(duration)
    if t is None or d is None or d.denominator != 1:
        return None
    total = t[0] + sign * int(d)
    days, secs = divmod(total, 86400)
    answer = _clock(secs, t[1]) + _day_note(days)
    op = "+" if sign > 0 else "−"
    return Solved(answer, f"clock arithmetic: {_clock(t[0], t[1])} {op} {_span(int(d))}")


def _span(seconds: int) -> str:
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    parts = [f"{h} h" if h else "", f"{m} min" if m else "", f"{s} s" if s else ""]
    return " ".join(p for p in parts if p) or "0 s"


_CLOCK_FORMS = (
    (re.compile(r"^(?P<a>.+?)\s+(?:plus|\+|and|add|after adding)\s+(?P<b>.+)$"), 1),
    (re.compile(r"^(?P<a>.+?)\s+(?:minus|-|−|less)\s+(?P<b>.+)$"), -1),
    (re.compile(r"^(?P<b>.+?)\s+(?:after|from|past)\s+(?P<a>.+)$"), 1),
    (re.compile(r"^(?P<b>.+?)\s+(?:before|until|to)\s+(?P<a>.+)$"), -1),
    (
        re.compile(
            r"^(?:what time is it|what time will it be|what is the time)\s+(?P<b>.+?)\s+after\s+(?P<a>.+)$"
        ),
        1,
    ),
)
_BETWEEN = re.compile(
    r"^(?:how many |the number of |number of )?(?P<unit>days|weeks)\s+(?:are there\s+|is it\s+)?"
    r"(?:between|from)\s+(?P<a>.+?)\s+(?:and|to|until|till)\s+(?P<b>.+)$"
)
_WEEKDAY = re.compile(
    r"^(?:what|which) day(?: of the week)? (?:was|is|will be|falls on|fell on|is it on|was it on)"
    r"\s+(?P<d>.+)$|^(?:the )?day of the week (?:of|for|on)\s+(?P<e>.+)$"
    r"|^(?P<f>.+?) (?:was|is|will be|falls on|fell on) (?:a |on )?(?:what|which) day(?: of the week)?$"
)
_DATE_SHIFT = (
    (re.compile(r"^(?P<a>.+?)\s+(?:plus|\+)\s+(?P<n>\S+)\s+(?P<u>days?|weeks?)$"), 1),
    (re.compile(r"^(?P<a>.+?)\s+(?:minus|-|−)\s+(?P<n>\S+)\s+(?P<u>days?|weeks?)$"), -1),
    (re.compile(r"^(?:the date\s+)?(?P<n>\S+)\s+(?P<u>days?|weeks?)\s+after\s+(?P<a>.+)$"), 1),
    (re.compile(r"^(?:the date\s+)?(?P<n>\S+)\s+(?P<u>days?|weeks?)\s+before\s+(?P<a>.+)$"), -1),
)
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_GREGORIAN = "on the proleptic Gregorian calendar"


def _calendar_note(*days: date) -> str:
    if any(d < date(1582, 10, 15) for d in days):
        return f" {_GREGORIAN} (the Julian calendar was in use then)"
    return ""


def _count(n: str) -> int | None:
    if n.isdigit():
        return int(n)
    if n in ("a", "an", "one"):
        return 1
    return read_number_words([n])


_ANY_CLOCK = re.compile(
    r"\d:\d|\d{4}-\d|\b(?:hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s|days?|weeks?|noon|"
    r"midday|midnight|[ap]\.?m\.?|" + "|".join(_MONTHS) + r")\b"
)


def solve(text: str) -> Solved | None:
    """The answer to a clock or calendar question, or ``None`` when ``text`` is not wholly one."""
    t = re.sub(r"\s+", " ", text.strip().lower())
    if _ANY_CLOCK.search(t) is None:
        return None  # no time, date, duration or month: no clock question (one search, not 11)
    m = _BETWEEN.match(t)
    if m:
        a, b = read_date(m["a"]), read_date(m["b"])
        if a is None or b is None:
            return None
        days = (b - a).days
        if m["unit"] == "weeks":
            weeks, rest = divmod(abs(days), 7)
            answer = f"{weeks} weeks" + (f" and {rest} days" if rest else "")
        else:
            answer = f"{abs(days)} days"
        if days < 0:
            answer += f" ({b.isoformat()} is before {a.isoformat()})"
        return Solved(
            answer,
            f"calendar arithmetic: {b.isoformat()} − {a.isoformat()} = {days} days"
            + _calendar_note(a, b),
        )
    m = _WEEKDAY.match(t)
    if m:
        d = read_date(m["d"] or m["e"] or m["f"])
        if d is None:
            return None
        return Solved(
            _WEEKDAYS[d.weekday()],
            f"calendar: {d.isoformat()} is day {d.isoweekday()} of its ISO week"
            + _calendar_note(d),
        )
    for rx, sign in _DATE_SHIFT:
        m = rx.match(t)
        if m:
            d, n = read_date(m["a"]), _count(m["n"])
            if d is None or n is None:
                continue
            days = n * _DAYS_UNIT[m["u"]] * sign
            try:
                out = d + timedelta(days=days)
            except OverflowError:
                return None
            return Solved(
                f"{out.isoformat()} ({_WEEKDAYS[out.weekday()]})",
                f"calendar arithmetic: {d.isoformat()} {'+' if sign > 0 else '−'} {abs(days)} days"
                + _calendar_note(d, out),
            )
    found = set()
    for rx, sign in _CLOCK_FORMS:
        m = rx.match(t)
        if m:
            solved = _shift_time(m["a"], m["b"], sign)
            if solved is not None:
                found.add(solved)
    return found.pop() if len(found) == 1 else None


__all__ = ["Solved", "read_date", "read_duration", "read_time", "solve"]
