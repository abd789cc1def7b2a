"""How questions name relations, and the matcher that reads a question into store lookups.

A :class:`Vocabulary` holds, for each relation (predicate) of a store, the noun phrases that
name it ("capital", "capital city"), the kind of thing it is about ("country"), extra ways to
ask for it ("what currency is used in {s}"), whether it may be asked in reverse ("which
element has the symbol Au"), and for a numeric relation the words that ask for its extreme
("most populous"). It is data (``relations.tsv`` and ``kinds.tsv`` next to the facts), not
code; a relation with no entry is still asked by its own name.

:class:`QuestionMatcher` turns a normalized question into :class:`Ask` lookups. It reads only
whole questions in the forms it knows, so anything else passes on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from eoc.errors import ConfigError, FactFileError
from eoc.stages.text import normalize

MAX_VOCABULARY_LINES = 100_000
"""Longest relations or kinds file read, in lines."""

_FIELDS = frozenset(
    {"label", "same", "subject", "object", "ask", "reverse", "most", "least", "unit", "note"}
)


@dataclass
class Relation:
    """What a vocabulary says of one predicate (see the module docstring)."""

    predicate: str
    labels: list[str] = field(default_factory=list)
    same: list[str] = field(default_factory=list)
    subjects: list[str] = field(default_factory=list)
    objects: list[str] = field(default_factory=list)
    asks: list[str] = field(default_factory=list)
    reverse_asks: list[str] = field(default_factory=list)
    reverse: bool = False
    most: list[str] = field(default_factory=list)
    least: list[str] = field(default_factory=list)
    unit: str = ""
    note: str = ""

    @property
    def numeric(self) -> bool:
        return bool(self.most or self.least or self.unit)


class Vocabulary:
    """Relations by normalized predicate, and kind nouns by the kind they name."""

    def __init__(
        self, relations: Iterable[Relation] = (), kinds: dict[str, list[str]] | None = None
    ) -> None:
        self.relations: dict[str, Relation] = {normalize(r.predicate): r for r in relations}
        self.kinds: dict[str, str] = {}  # noun -> kind
        for kind, nouns in (kinds or {}).items():
            for noun in (kind, *nouns):
                self.kinds[normalize(noun)] = normalize(kind)

    @classmethod
    def parse(cls, relations: str, kinds: str = "", source: str = "<vocabulary>") -> Vocabulary:
        """Read ``relations.tsv`` and ``kinds.tsv`` texts.

        Raises:
            FactFileError: a line without three fields, an unknown field, a template without
                its slot, or a file over :data:`MAX_VOCABULARY_LINES` lines.
        """
        table: dict[str, Relation] = {}
        for n, fields in _lines(relations, source, 3):
            pred, key, values = fields
            if key not in _FIELDS:
                raise FactFileError(
                    f"unknown field {key!r}: use one of {', '.join(sorted(_FIELDS))}",
                    source=source,
                    line=n,
                )
            rel = table.setdefault(normalize(pred), Relation(pred.strip()))
            items = [normalize(v) for v in values.split("|") if v.strip()]
            if key in ("unit", "note"):
                setattr(rel, key, values.strip())
            elif key == "reverse":
                if values.strip() == "yes":
                    rel.reverse = True
                else:
                    _check_slots(items, "{o", source, n)
                    rel.reverse_asks.extend(items)
            elif key == "same":  # names that always mean the relation: labels too
                rel.same.extend(items)
                rel.labels.extend(items)
            elif key == "ask":
                _check_slots(items, "{s}", source, n)
                rel.asks.extend(items)
            else:
                getattr(rel, key + ("s" if key in ("label", "subject", "object") else "")).extend(
                    items
                )
        kind_map = {
            normalize(k): [v for v in nouns.split("|") if v.strip()]
            for _, (k, nouns) in _lines(kinds, source, 2)
        }
        return cls(table.values(), kind_map)

    def relation(self, predicate: str) -> Relation:
        """The vocabulary's entry for ``predicate``, or a plain one named by the predicate."""
        key = normalize(predicate)
        return self.relations.get(key) or Relation(predicate, reverse=True)


def _lines(text: str, source: str, width: int) -> list[tuple[int, list[str]]]:
    out = []
    lines = text.split("\n")
    if len(lines) > MAX_VOCABULARY_LINES:
        raise FactFileError(
            f"over {MAX_VOCABULARY_LINES:,} lines: split the vocabulary", source=source
        )
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.rstrip("\r").split("\t")
        if len(fields) != width or not all(f.strip() for f in fields):
            raise FactFileError(
                f"expected {width} tab-separated fields, got {len(fields)}", source=source, line=n
            )
        out.append((n, fields))
    return out


def _check_slots(items: list[str], slot: str, source: str, n: int) -> None:
    for item in items:
        if item.count(slot) != 1:
            raise FactFileError(f"template {item!r} must hold {slot} once", source=source, line=n)


@dataclass(frozen=True)
class Ask:
    """One lookup a question asks for.

    ``direction``: "object" (the value of ``predicate`` for the thing named ``name``),
    "subject" (the things whose ``predicate`` is ``name``), or "extreme" (the thing of kind
    ``kind`` with the largest value of ``predicate``, or the smallest when ``largest`` is
    False). ``kind`` narrows a "subject" or "extreme" ask to things of that kind.
    """

    direction: str
    predicate: str
    name: str = ""
    kind: str = ""
    largest: bool = True


_WH = r"(?:what|which)"
_BE = r"(?:is|are|was|were)"
_LEAD = rf"(?:(?:what|which|who) {_BE} |(?:tell me|give me|name|show me|list|do you know) )?"
_SUPER_MAX = ("most", "largest", "biggest", "highest", "greatest", "longest")
_SUPER_MIN = ("fewest", "least", "smallest", "lowest", "shortest")
_ORDINALS = {
    w: i
    for i, w in enumerate(
        "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split(),
        1,
    )
}
_ORDINAL = re.compile(r"^(?:(\d{1,3})(?:st|nd|rd|th)|([a-z]+))$")
_GENERIC_KINDS = (
    "country",
    "nation",
    "state",
    "city",
    "element",
    "planet",
    "place",
    "one",
    "thing",
)


def _alt(words: Iterable[str]) -> str:
    ws = sorted({w for w in words if w}, key=len, reverse=True)
    return "|".join(re.escape(w) for w in ws) or r"(?!x)x"


def ordinal(text: str) -> str | None:
    """ "fourth" or "4th" as "4"; ``None`` otherwise."""
    m = _ORDINAL.match(text)
    if m is None:
        return None
    if m[1]:
        return str(int(m[1]))
    n = _ORDINALS.get(m[2])
    return None if n is None else str(n)


def _template(text: str) -> tuple[re.Pattern[str], str]:
    """A template with one ``{s}``, ``{o}`` or ``{o:ordinal}`` slot as an anchored pattern."""
    slot = re.search(r"\{(s|o)(?::ordinal)?\}", text)
    if slot is None:
        raise ConfigError(f"template {text!r} holds no {{s}} or {{o}} slot")
    head, tail = text[: slot.start()], text[slot.end() :]
    convert = "ordinal" if ":ordinal" in slot.group() else ""
    rx = re.compile(f"^{re.escape(head)}(?:the )?(?P<x>.+?){re.escape(tail)}$")
    return rx, convert


class QuestionMatcher:
    """Turns a normalized question into :class:`Ask` lookups.

    Forms read, for any relation (``L`` a label of it, ``K`` a kind noun):

    * forward: "what is the L of X", "L of X", "X's L", "X L", "what L does X use", "what L is
      used in X", "which city is the L of X", and the relation's own ``ask`` templates;
    * reverse (relations marked so): "Y is the L of which K", "which K has Y as its L",
      "which K's L is Y", "of which K is Y the L", "which K has the L Y", and the relation's
      own reverse templates;
    * extremes (numeric relations): "which K has the largest L", "the most populous K",
      "which K is the most populous", "the largest K by L".
    """

    def __init__(self, predicates: Iterable[str], vocabulary: Vocabulary | None = None) -> None:
        self.vocabulary = vocabulary or Vocabulary()
        preds = sorted({p for p in predicates if p and p.strip()}, key=len, reverse=True)
        self.predicates = [normalize(p) for p in preds]
        rels = [self.vocabulary.relation(p) for p in preds]
        self._by_label: dict[str, list[Relation]] = {}
        self._by_adjective: dict[str, list[tuple[Relation, bool]]] = {}
        for rel in rels:
            for label in {normalize(rel.predicate), *rel.labels}:
                self._by_label.setdefault(label, []).append(rel)
            for words, largest in ((rel.most, True), (rel.least, False)):
                for w in words:
                    self._by_adjective.setdefault(w, []).append((rel, largest))
        kinds = [*self.vocabulary.kinds, *_GENERIC_KINDS]
        objects = [o for rel in rels for o in rel.objects]
        L, K, OK = _alt(self._by_label), _alt(kinds), _alt(objects)
        A = _alt(self._by_adjective)
        sup = _alt(_SUPER_MAX + _SUPER_MIN)
        self._forward = [
            re.compile(rf"^{_LEAD}(?:the )?(?P<l>{L}) (?:of|for|in) (?:the )?(?P<s>.+)$"),
            re.compile(rf"^{_LEAD}(?:the )?(?P<s>.+?)'s? (?P<l>{L})$"),
            re.compile(rf"^(?:{_WH} {_BE} (?:the )?)?(?P<s>.+?) (?P<l>{L})$"),
            re.compile(
                rf"^{_WH} (?P<l>{L}) (?:does|do|did) (?:the )?(?P<s>.+?) "
                r"(?:use|have|uses|has|listen on|run on)$"
            ),
            re.compile(rf"^{_WH} (?P<l>{L}) {_BE} (?:used|spoken) in (?:the )?(?P<s>.+)$"),
            re.compile(rf"^{_WH} (?:{OK}) {_BE} the (?P<l>{L}) of (?:the )?(?P<s>.+)$"),
        ]
        self._reverse = [
            re.compile(rf"^(?:the )?(?P<o>.+?) is (?:the )?(?P<l>{L}) of {_WH} (?P<k>{K})$"),
            re.compile(
                rf"^{_WH} (?P<k>{K}) (?:has|have) (?:the )?(?P<o>.+?) as (?:its |the |their )?"
                rf"(?P<l>{L})$"
            ),
            re.compile(rf"^(?:{_WH}|whose) (?P<k>{K})'?s? (?P<l>{L}) is (?:the )?(?P<o>.+)$"),
            re.compile(rf"^whose (?P<l>{L}) is (?:the )?(?P<o>.+)$"),
            re.compile(
                rf"^(?:of )?{_WH} (?P<k>{K}) is (?:the )?(?P<o>.+?) the (?P<l>{L})(?: of)?$"
            ),
            re.compile(
                rf"^{_WH} (?P<k>{K}) (?:has|have|uses|use) (?:the |a |an )?(?P<l>{L}) (?P<o>.+)$"
            ),
        ]
        self._extremes = [
            re.compile(rf"^{_WH} (?P<k>{K}) (?:has|have) the (?P<sup>{sup}) (?P<l>{L})$"),
            re.compile(rf"^{_LEAD}(?:the )?(?P<sup>{sup}) (?P<k>{K}) by (?P<l>{L})$"),
            re.compile(rf"^{_LEAD}(?:the )?(?P<a>{A}) (?P<k>{K})$"),
            re.compile(rf"^{_WH} (?P<k>{K}) {_BE} (?:the )?(?P<a>{A})$"),
            re.compile(rf"^{_LEAD}(?:the )?(?P<k>{K}) (?P<a>{A})$"),
        ]
        self._asks: list[tuple[re.Pattern[str], str, Relation, str]] = []
        for rel in rels:
            for t in rel.asks:
                rx, conv = _template(t)
                self._asks.append((rx, "object", rel, conv))
            for t in rel.reverse_asks:
                rx, conv = _template(t)
                self._asks.append((rx, "subject", rel, conv))

    def _kind(self, noun: str | None) -> str:
        """The kind a noun names ("nations" → "country"); "" for a generic noun."""
        return "" if not noun else self.vocabulary.kinds.get(noun, "")

    def _fits(self, rel: Relation, kind: str) -> bool:
        return not kind or not rel.subjects or kind in rel.subjects

    def parse(self, text: str) -> list[Ask]:
        """Every lookup normalized ``text`` may ask for, most specific first (deduplicated)."""
        asks: list[Ask] = []
        for rx, direction, rel, conv in self._asks:
            m = rx.match(text)
            if m:
                value = ordinal(m["x"]) if conv == "ordinal" else m["x"]
                if value:
                    asks.append(Ask(direction, rel.predicate, value))
        for rx in self._forward:
            m = rx.match(text)
            if m:
                for rel in self._by_label.get(m["l"], ()):
                    asks.append(Ask("object", rel.predicate, m["s"]))
        for rx in self._reverse:
            m = rx.match(text)
            if m:
                kind = self._kind(m.groupdict().get("k"))
                for rel in self._by_label.get(m["l"], ()):
                    if rel.reverse and self._fits(rel, kind):
                        asks.append(Ask("subject", rel.predicate, m["o"], kind))
        for rx in self._extremes:
            m = rx.match(text)
            if m:
                kind = self._kind(m["k"])
                if not kind:
                    continue
                groups = m.groupdict()
                if groups.get("a"):
                    for rel, largest in self._by_adjective.get(m["a"], ()):
                        if self._fits(rel, kind):
                            asks.append(Ask("extreme", rel.predicate, kind=kind, largest=largest))
                else:
                    largest = m["sup"] in _SUPER_MAX
                    for rel in self._by_label.get(m["l"], ()):
                        if rel.numeric and self._fits(rel, kind):
                            asks.append(Ask("extreme", rel.predicate, kind=kind, largest=largest))
        return list(dict.fromkeys(asks))


__all__ = ["MAX_VOCABULARY_LINES", "Ask", "QuestionMatcher", "Relation", "Vocabulary", "ordinal"]
