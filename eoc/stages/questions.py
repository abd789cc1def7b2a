"""How questions name relations, and the matcher that reads a question into store lookups.

A :class:`Vocabulary` holds, for each relation (predicate) of a store, the noun phrases that
name it ("capital", "capital city"), the kind of thing it is about ("country"), extra ways to
ask for it ("what currency is used in {s}"), whether it may be asked in reverse ("which
element has the symbol Au"), and for a numeric relation the words that ask for its extreme
("most populous"), the verb that states it ("orbits"), and whether its values may be counted
("how many elements are in group 18"). It is data (``relations.tsv`` and ``kinds.tsv`` next
to the facts), not code; a relation with no entry is still asked by its own name.

:class:`QuestionMatcher` turns a normalized question into :class:`Ask` lookups. It reads only
whole questions in the forms it knows, so anything else passes on.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from eoc.errors import ConfigError, FactFileError
from eoc.text.forms import normalize

MAX_VOCABULARY_LINES = 100_000
"""Longest relations or kinds file read, in lines."""

_FIELDS = frozenset(
    {
        "label", "same", "subject", "object", "ask", "reverse", "most", "least", "unit", "note",
        "count", "verb", "short",
    }
)  # fmt: skip


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
    count: str = ""
    verbs: list[str] = field(default_factory=list)
    short: bool = False

    @property
    def numeric(self) -> bool:
        return bool(self.most or self.least or self.unit)

    @property
    def countable(self) -> bool:
        """Whether the store holds every value of the relation, so its values may be counted
        ("how many elements are in group 18"); :attr:`count` is "yes" or the note a count
        carries."""
        return bool(self.count)


class Vocabulary:
    """Relations by normalized predicate, and kind nouns by the kind they name."""

    def __init__(
        self,
        relations: Iterable[Relation] = (),
        kinds: dict[str, list[str]] | None = None,
        countable: dict[str, list[str]] | None = None,
    ) -> None:
        self.relations: dict[str, Relation] = {normalize(r.predicate): r for r in relations}
        self.kinds: dict[str, str] = {}  # noun -> kind
        for kind, nouns in (kinds or {}).items():
            for noun in (kind, *nouns):
                self.kinds[normalize(noun)] = normalize(kind)
        self.countable: dict[str, list[str]] = {
            normalize(k): [normalize(p) for p in places] for k, places in (countable or {}).items()
        }
        """The kinds the store holds every thing of (so they may be counted: "how many planets
        are there"), each with the places that hold them all ("in the solar system")."""

    @classmethod
    def parse(cls, relations: str, kinds: str = "", source: str = "<vocabulary>") -> Vocabulary:
        """Read ``relations.tsv`` and ``kinds.tsv`` texts.

        Raises:
            FactFileError: a relations line without three fields (a kinds line: two, or three
                with the places of a kind held whole), an unknown field, a template without
                its slot, a verb not in two forms, or a file over
                :data:`MAX_VOCABULARY_LINES` lines.
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
            if key in ("unit", "note", "count"):
                setattr(rel, key, values.strip())
            elif key == "short":
                rel.short = values.strip() == "yes"
            elif key == "verb":
                if len(items) != 2:
                    raise FactFileError(
                        "a verb is two forms: the one after a thing, then the one after "
                        '"does" ("orbits|orbit")',
                        source=source,
                        line=n,
                    )
                rel.verbs = items
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
        kind_map: dict[str, list[str]] = {}
        countable: dict[str, list[str]] = {}
        for _, (k, nouns, *places) in _lines(kinds, source, 2, 3):
            kind_map[normalize(k)] = [v for v in nouns.split("|") if v.strip()]
            if places:
                countable[normalize(k)] = [p for p in places[0].split("|") if p.strip("- ")]
        return cls(table.values(), kind_map, countable)

    def relation(self, predicate: str) -> Relation:
        """The vocabulary's entry for ``predicate``, or a plain one named by the predicate."""
        key = normalize(predicate)
        return self.relations.get(key) or Relation(predicate, reverse=True)


def _lines(text: str, source: str, width: int, most: int = 0) -> list[tuple[int, list[str]]]:
    """The fields of each line that is not blank or a comment: ``width`` of them, or up to
    ``most``."""
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
        if not width <= len(fields) <= max(width, most) or not all(f.strip() for f in fields):
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
    False), or "members" (every thing of kind ``kind``). ``kind`` narrows a "subject" or
    "extreme" ask to things of that kind. ``count``: the answer is how many things were found.
    """

    direction: str
    predicate: str
    name: str = ""
    kind: str = ""
    largest: bool = True
    count: bool = False


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


def _slot(text: str) -> tuple[str, str, str]:
    """A template with one ``{s}``, ``{o}`` or ``{o:ordinal}`` slot: the words before it, the
    words after it, and ``"ordinal"`` where the slot reads an ordinal ("" otherwise)."""
    slot = re.search(r"\{(s|o)(?::ordinal)?\}", text)
    if slot is None:
        raise ConfigError(f"template {text!r} holds no {{s}} or {{o}} slot")
    convert = "ordinal" if ":ordinal" in slot.group() else ""
    return text[: slot.start()], text[slot.end() :], convert


def _template(head: str, tail: str) -> re.Pattern[str]:
    """A template's anchored pattern: ``head``, an optional "the ", the slot, ``tail``."""
    return re.compile(f"^{re.escape(head)}(?:the )?(?P<x>.+?){re.escape(tail)}$")


_FORM_WORDS = (
    "what which who whose whats tell give name show list know used spoken there total exist "
    "stand stands represented does have uses"
).split()
"""The fixed words of the forms below, beside the relations' own."""

_COUNT_WORDS = ("how many", "number", "count")
"""A word every count question holds (one of :data:`_COUNT`'s openings)."""


class QuestionMatcher:
    """Turns a normalized question into :class:`Ask` lookups.

    Forms read, for any relation (``L`` a label of it, ``K`` a kind noun, ``V`` its verb):

    * forward: "what is the L of X", "L of X", "X's L", "X L", "what L does X use", "what L is
      used in X", "which city is the L of X", "X Vs which K", "the K that X Vs", and the
      relation's own ``ask`` templates;
    * reverse (relations marked so): "Y is the L of which K" ("a L", "one of the Ls", "for
      which K"), "which K has Y as its L", "which K's L is Y", "of which K is Y the L", "which
      K has the L Y", "which K is represented by the L Y", "the L Y stands for which K", "which
      K are in L Y" ("in the third L"), "which K does L Y have", each also without a kind
      ("what has the L Y"), "which K Vs Y", and the relation's own reverse templates;
    * extremes (numeric relations): "which K has the largest L", "the most populous K",
      "which K is the most populous", "the largest K by L";
    * counts: "how many", "the number of" or "count" before any of the above that lists the
      values of a relation the store holds whole ("how many elements are in group 18"), or
      before a kind it holds whole ("how many planets are there", "... in the solar system").
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
        # every pattern below names a label, an adjective, a verb or a template's words, each
        # between spaces or at an end: a question holding none of them is read by none, and
        # is passed on before the patterns are compiled (about 0.1 s, most of a first miss)
        self._rels = rels
        self._templates: list[tuple[str, str, str, Relation, str]] = []
        for rel in rels:
            for direction, said in (("object", rel.asks), ("subject", rel.reverse_asks)):
                for t in said:
                    head, tail, conv = _slot(t)
                    self._templates.append((head, tail, direction, rel, conv))
        verbs = [w for rel in rels for w in (rel.verbs or ())]
        heads: dict[str, list[str]] = {}
        for head, tail, *_ in self._templates:
            heads.setdefault(tail, []).append(head)
        # the templates' openings by ending, each group one str.startswith of a tuple
        self._heads_by_tail = {tail: tuple(hs) for tail, hs in heads.items()}
        # the words a pattern reads outside its slots (labels, adjectives, verbs, count words),
        # each under its first word: a text's own words find those it holds (:meth:`_said`)
        self._by_first: dict[str, tuple[str, ...]] = {}
        phrases = (*self._by_label, *self._by_adjective, *verbs, *_COUNT_WORDS)
        for phrase in sorted({w for w in phrases if w}):
            first = phrase.split(" ", 1)[0]
            self._by_first[first] = (*self._by_first.get(first, ()), phrase)
        self._built = False
        self._build_lock = threading.Lock()

    def words(self) -> frozenset[str]:
        """Every word a pattern reads outside its slots: the relations' labels, adjectives,
        verbs, object nouns and templates, the kind nouns and the fixed words of the forms
        ("what", "capital", "population", "largest"), for repairing a question's slips
        (:mod:`eoc.stages.factwords`)."""
        phrases = [
            *self._by_label,
            *self._by_adjective,
            *(w for rel in self._rels for w in (*(rel.verbs or ()), *rel.objects)),
            *(part for head, tail, *_ in self._templates for part in (head, tail)),
            *self.vocabulary.kinds,
            *_GENERIC_KINDS,
            *_COUNT_WORDS,
            *_SUPER_MAX,
            *_SUPER_MIN,
            *_ORDINALS,
            *_FORM_WORDS,
        ]
        return frozenset(w for p in phrases for w in re.findall(r"[a-z]+", p))

    def could_ask(self, text: str) -> bool:
        """Whether a pattern might read normalized ``text``: False when it holds no label,
        adjective or verb of the relations between spaces, no count word and no template's
        opening and ending words, so :meth:`parse` finds nothing without compiling a pattern."""
        return bool(self._said(text)) or self._fits_template(text)

    def _fits_template(self, text: str) -> bool:
        return any(
            text.endswith(tail) and text.startswith(heads)
            for tail, heads in self._heads_by_tail.items()
        )

    def _build(self) -> None:
        """Compile the patterns (once, on the first question that :meth:`could_ask`)."""
        with self._build_lock:
            if not self._built:
                self._compile()
                self._built = True

    def _compile(self) -> None:
        rels = self._rels
        kinds = [*self.vocabulary.kinds, *_GENERIC_KINDS]
        objects = [o for rel in rels for o in rel.objects]
        L, K, OK = _alt(self._by_label), _alt(kinds), _alt(objects)
        A = _alt(self._by_adjective)
        sup = _alt(_SUPER_MAX + _SUPER_MIN)
        # a kind named ("which country") or none ("what", "who"): the K group is then empty
        WK = rf"(?:{_WH} (?P<k>{K})|what|who|which one)"
        ART = r"(?:the |a |an |one of the |one of its |its |their )?"
        self._forward = [
            re.compile(rf"^{_LEAD}(?:the )?(?P<l>{L}) (?:of|for|in) (?:the )?(?P<s>.+)$"),
            re.compile(rf"^{_LEAD}(?:the )?(?P<s>.+?)'s? (?P<l>{L})$"),
            re.compile(rf"^(?:{_WH} {_BE} (?:the )?)?(?P<s>.+?) (?P<l>{L})$"),
            re.compile(
                rf"^{_WH} (?P<l>{L}) (?:does|do|did) (?:the )?(?P<s>.+?) "
                r"(?:use|have|uses|has|listen on|run on)$"
            ),
            re.compile(rf"^{_WH} (?P<l>{L}) {_BE} (?:used|spoken) in (?:the )?(?P<s>.+)$"),
            re.compile(rf"^{_WH} (?P<ok>{OK}) {_BE} the (?P<l>{L}) of (?:the )?(?P<s>.+)$"),
        ]
        self._reverse = [
            re.compile(
                rf"^(?:the )?(?P<o>.+?) (?:is|are) {ART}(?P<l>{L}) (?:of|for) {_WH} (?P<k>{K})$"
            ),
            re.compile(rf"^{WK} (?:has|have) (?:the )?(?P<o>.+?) as {ART}(?P<l>{L})$"),
            re.compile(rf"^(?:{_WH}|whose) (?P<k>{K})'?s? (?P<l>{L}) is (?:the )?(?P<o>.+)$"),
            re.compile(rf"^whose (?P<l>{L}) is (?:the )?(?P<o>.+)$"),
            re.compile(
                rf"^(?:of |for )?{_WH} (?P<k>{K}) is (?:the )?(?P<o>.+?) "
                rf"(?:the|a|an|one of the) (?P<l>{L})(?: of| for)?$"
            ),
            re.compile(
                rf"^(?:what|which) is (?:the )?(?P<o>.+?) (?:the|a|an|one of the) (?P<l>{L}) "
                r"(?:of|for)$"
            ),
            re.compile(rf"^{WK} (?:has|have|uses|use) (?:the |a |an )?(?P<l>{L}) (?P<o>.+)$"),
            re.compile(
                rf"^{WK} (?:is|are) (?:represented|denoted|identified|indicated|symboli[sz]ed|"
                rf"abbreviated|designated|known) (?:by|as|with) (?:the |a |an )?(?P<l>{L}) "
                r"(?P<o>.+)$"
            ),
            re.compile(
                rf"^(?:the )?(?P<l>{L}) (?P<o>.+?) (?:stands for|represents|denotes|belongs to|"
                rf"refers to|is for) {WK}$"
            ),
            re.compile(
                rf"^{_WH} (?P<k>{K}) (?:does|do) (?:the )?(?P<l>{L}) (?P<o>.+?) "
                r"(?:stand for|represent|denote|belong to|refer to)$"
            ),
            # membership: "which elements are in group 18", "which elements does period 2 have"
            re.compile(
                rf"^{_WH} (?P<k>{K}) (?:are|is) (?:there )?in (?:the )?(?P<l>{L}) (?P<o>.+)$"
            ),
            re.compile(
                rf"^{_WH} (?P<k>{K}) (?:does|do) (?:the )?(?P<l>{L}) (?P<o>.+?) "
                r"(?:have|contain|include|hold)$"
            ),
        ]
        self._reverse_ordinal = [  # "which elements are in the third period"
            re.compile(rf"^{_WH} (?P<k>{K}) (?:are|is) (?:there )?in the (?P<o>\S+) (?P<l>{L})$"),
            re.compile(
                rf"^{_WH} (?P<k>{K}) (?:does|do) the (?P<o>\S+) (?P<l>{L}) "
                r"(?:have|contain|include|hold)$"
            ),
        ]
        self._extremes = [
            re.compile(rf"^{_WH} (?P<k>{K}) (?:has|have) the (?P<sup>{sup}) (?P<l>{L})$"),
            re.compile(rf"^{_LEAD}(?:the )?(?P<sup>{sup}) (?P<k>{K}) by (?P<l>{L})$"),
            re.compile(rf"^{_LEAD}(?:the )?(?P<a>{A}) (?P<k>{K})$"),
            re.compile(rf"^{_WH} (?P<k>{K}) {_BE} (?:the )?(?P<a>{A})$"),
            re.compile(rf"^{_LEAD}(?:the )?(?P<k>{K}) (?P<a>{A})$"),
        ]
        self._asks: list[tuple[re.Pattern[str], str, Relation, str]] = [
            (_template(head, tail), direction, rel, conv)
            for head, tail, direction, rel, conv in self._templates
        ]
        # the templates a text may fit, by the first word of their opening (an opening with no
        # space, "" included, is tried on every text): their indices, in order
        by_word: dict[str, list[int]] = {}
        for i, (head, *_) in enumerate(self._templates):
            word, space, _ = head.partition(" ")
            by_word.setdefault(word if space else "", []).append(i)
        every = by_word.pop("", [])
        self._asks_by_word = {w: tuple(sorted({*ix, *every})) for w, ix in by_word.items()}
        self._asks_any = tuple(every)
        # the relation's verb: "titan orbits which planet", "which countries use the yen"
        self._verbs: list[tuple[re.Pattern[str], str, Relation]] = []
        for rel in rels:
            if not rel.verbs:
                continue
            v3, v = (re.escape(w) for w in rel.verbs)
            named = _alt([*kinds, *rel.objects])  # what a value is called: "planet", "currency"
            forms = [
                (rf"^(?:the )?(?P<s>.+?) {v3} {_WH} (?P<k>{named})$", "object"),
                (
                    rf"^{_LEAD}(?:the )?(?P<k>{named}) (?:that|which) (?:the )?(?P<s>.+?) {v3}$",
                    "object",
                ),
                (rf"^{_WH} (?P<k>{named}) (?:does|do|did) (?:the )?(?P<s>.+?) {v}$", "object"),
            ]
            if rel.reverse:
                forms.append((rf"^{_WH} (?P<k>{K}) (?:{v3}|{v}) (?:the )?(?P<o>.+)$", "subject"))
            self._verbs.extend((re.compile(rx), direction, rel) for rx, direction in forms)
        # counts: what may be counted, by the nouns that name it
        count_kinds = [
            n for n, k in self.vocabulary.kinds.items() if k in self.vocabulary.countable
        ]
        self._count_kind = re.compile(rf"^(?P<k>{_alt(count_kinds)})(?: (?P<tail>.+))?$")
        counted = [*self.vocabulary.kinds, *objects, *self._by_label]
        self._count_noun = re.compile(rf"^(?P<n>{_alt(counted)})(?: (?P<tail>.+))?$")

    def _kind(self, noun: str | None) -> str:
        """The kind a noun names ("nations" → "country"); "" for a generic noun."""
        return "" if not noun else self.vocabulary.kinds.get(noun, "")

    def _fits(self, rel: Relation, kind: str) -> bool:
        return not kind or not rel.subjects or kind in rel.subjects

    def parse(self, text: str) -> list[Ask]:
        """Every lookup normalized ``text`` may ask for, most specific first (deduplicated)."""
        said = self._said(text)
        if not said and not self._fits_template(text):
            return []  # no pattern reads it (:meth:`could_ask`)
        if not self._built:
            self._build()
        return list(dict.fromkeys([*self._parse(text, said), *self._counts(text)]))

    def _said(self, text: str) -> set[str]:
        """The labels, adjectives, verbs and count words that normalized ``text`` holds between
        spaces or at an end, the only places a pattern reads them."""
        padded = f" {text} "
        return {
            phrase
            for word in set(text.split(" "))
            for phrase in self._by_first.get(word, ())
            if f" {phrase} " in padded
        }

    def _parse(self, text: str, said: set[str] | None = None) -> list[Ask]:
        # Each pattern is tried only where the text holds what it must read (a template's
        # opening and ending, a label, an adjective, a verb): the same asks as trying every
        # pattern, and after an idle pause far less memory read (a question the graph cannot
        # read, most of what reaches a model, is passed on in a fraction of the time).
        asks: list[Ask] = []
        tried = self._asks_by_word.get(text.partition(" ")[0], self._asks_any)
        for i in tried:
            head, tail = self._templates[i][:2]
            if not (text.startswith(head) and text.endswith(tail)):
                continue
            rx, direction, rel, conv = self._asks[i]
            m = rx.match(text)
            if m:
                value = ordinal(m["x"]) if conv == "ordinal" else m["x"]
                if value:
                    asks.append(Ask(direction, rel.predicate, value))
        said = self._said(text) if said is None else said
        labelled = not said.isdisjoint(self._by_label)
        for rx in self._forward if labelled else ():
            m = rx.match(text)
            if m:
                named = m.groupdict().get("ok")  # "which city is ...": the value's noun
                for rel in self._by_label.get(m["l"], ()):
                    if not named or named in rel.objects:
                        asks.append(Ask("object", rel.predicate, m["s"]))
        for rx in (*self._reverse, *self._reverse_ordinal) if labelled else ():
            m = rx.match(text)
            if m is None:
                continue
            value = ordinal(m["o"]) if rx in self._reverse_ordinal else m["o"]
            kind = self._kind(m.groupdict().get("k"))
            for rel in self._by_label.get(m["l"], ()):
                if value and rel.reverse and self._fits(rel, kind):
                    asks.append(Ask("subject", rel.predicate, value, kind))
        for rx, direction, rel in self._verbs:
            if said.isdisjoint(rel.verbs):
                continue
            m = rx.match(text)
            if m is None:
                continue
            kind = self._kind(m["k"])
            if direction == "subject" and self._fits(rel, kind):
                asks.append(Ask("subject", rel.predicate, m["o"], kind))
            elif direction == "object" and (m["k"] in rel.objects or kind in rel.objects):
                asks.append(Ask("object", rel.predicate, m["s"]))
        extreme = labelled or not said.isdisjoint(self._by_adjective)
        for rx in self._extremes if extreme else ():
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
        return asks

    def _counts(self, text: str) -> list[Ask]:
        """The counts ``text`` asks for: "how many N ..." is read as "which N ...", and counted
        where the relation found is held whole and N names what it lists."""
        m = _COUNT.match(text)
        if m is None:
            return []
        rest = m["rest"]
        asks: list[Ask] = []
        k = self._count_kind.match(rest)
        if k:  # "how many planets are there", "how many planets are in the solar system"
            kind = self._kind(k["k"])
            tail = _THERE.sub("", k["tail"] or "")
            if not tail or tail in self.vocabulary.countable[kind]:
                asks.append(Ask("members", "", kind=kind, count=True))
        # a value's name, in the plural: "how many si base units are there"
        named = _THERE_END.sub("", rest).removesuffix("s")
        if named != rest and re.search("[a-z]", named):
            for rel in self.vocabulary.relations.values():
                if rel.countable and normalize(rel.predicate) in self.predicates:
                    asks.append(Ask("subject", rel.predicate, named, count=True))
        n = self._count_noun.match(rest)
        if n is None:
            return asks
        noun, tail = n["n"], n["tail"] or ""
        said = _THERE_ARE.sub(r"\1", tail)
        questions = [f"{wh} {noun} {said}".strip() for wh in ("which", "what")]
        if re.match(r"(?:in|on|of|at) ", tail):  # "the number of elements in group 2"
            questions.append(f"which {noun} are {tail}")
        for question in questions:
            for ask in self._parse(question):
                rel = self.vocabulary.relation(ask.predicate)
                if not rel.countable:
                    continue
                if ask.direction == "object" and (noun in rel.labels or noun in rel.objects):
                    asks.append(replace(ask, count=True))
                elif ask.direction == "subject" and self._kind(noun) in rel.subjects:
                    # only things of the kind counted: "how many elements ..." counts elements
                    asks.append(replace(ask, kind=self._kind(noun), count=True))
        return asks


_COUNT = re.compile(
    r"^(?:how many|(?:(?:what|which) (?:is|are) |tell me |give me )?(?:the )?(?:total )?"
    r"(?:number|count) of|count(?: up)?(?: the| all the| all)?) (?P<rest>.+)$"
)
_THERE = re.compile(
    r"^(?:(?:are|is) there|there are|there is|exist|are|is)(?: (?=.)|$)|(?: ?(?:in total|in all|"
    r"altogether))$"
)
_THERE_ARE = re.compile(r"^(are|is) there\b")
_THERE_END = re.compile(r"(?: (?:are there|is there|there are|exist|in total|in all|altogether))+$")


__all__ = ["MAX_VOCABULARY_LINES", "Ask", "QuestionMatcher", "Relation", "Vocabulary", "ordinal"]
