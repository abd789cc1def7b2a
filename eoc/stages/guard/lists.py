"""The guard's word lists, read once: the opposites of ``data/polarity.tsv``, the words that
only reword (``data/rewording.tsv``), the synonyms (``data/synonyms.tsv``) and the knowledge
pack's names for its relations, and the superlatives."""

from __future__ import annotations

import functools
from importlib import resources

from eoc.stages.guard.stems import DATA, _data_rows, _stem, _words

Axis = tuple[str, tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]]]


@functools.cache
def polarity_axes() -> tuple[Axis, ...]:
    """The opposites of ``data/polarity.tsv``: (axis, (pole A phrases, pole B phrases)), each
    phrase a tuple of stemmed words."""
    text = (resources.files(DATA) / "data" / "polarity.tsv").read_text(encoding="utf-8")
    axes = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, a, b = line.split("\t")
        poles = tuple(
            tuple(tuple(_stem(w) for w in phrase.split()) for phrase in side.split("|"))
            for side in (a, b)
        )
        axes.append((name, (poles[0], poles[1])))
    return tuple(axes)


@functools.cache
def _rewording_kinds() -> dict[str, frozenset[str]]:
    """The stems of ``data/rewording.tsv``, by kind (politeness, framing, naming, ...)."""
    kinds: dict[str, set[str]] = {}
    for kind, listed in _data_rows("rewording.tsv"):
        kinds.setdefault(kind, set()).update(_stem(w) for w in listed.split())
    return {kind: frozenset(stems) for kind, stems in kinds.items()}


@functools.cache
def _rewording() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The stems of ``data/rewording.tsv`` by where a rewording may add or drop them: anywhere;
    ``naming`` words next to what they name ("capital city", "which city", "the element
    Iron", "city of Paris"); ``opening`` words at the start of a text ("Name the capital")."""
    kinds = _rewording_kinds()
    anywhere = frozenset().union(*(v for k, v in kinds.items() if k not in ("naming", "opening")))
    return anywhere, kinds.get("naming", frozenset()), kinds.get("opening", frozenset())


@functools.cache
def _loose_words() -> frozenset[str]:
    """The stems of ``data/rewording.tsv``'s chat: politeness, pronouns, contractions, filler
    (not framing or verbs of being, which may stand in a question for what it asks)."""
    kinds = _rewording_kinds()
    chat = ("politeness", "pronoun", "contraction", "filler")
    return frozenset().union(*(kinds.get(k, frozenset()) for k in chat))


def rewording_words() -> frozenset[str]:
    """The stems of ``data/rewording.tsv``: words a rewording may add or drop (the ``naming``
    and ``opening`` ones only where they name a kind or open the text)."""
    anywhere, naming, opening = _rewording()
    return anywhere | naming | opening


@functools.cache
def _pole_index() -> dict[str, list[tuple[tuple[str, ...], str, int, tuple[str, ...]]]]:
    """Every phrase of an axis by its first word: (phrase, axis, pole, the pole's first phrase,
    which :func:`lexical_words` reads it as)."""
    index: dict[str, list[tuple[tuple[str, ...], str, int, tuple[str, ...]]]] = {}
    for name, poles in polarity_axes():
        for i, phrases in enumerate(poles):
            for phrase in phrases:
                index.setdefault(phrase[0], []).append((phrase, name, i, phrases[0]))
    return index


def relation_labels() -> list[tuple[str, list[str], frozenset[str]]]:
    """The knowledge pack's names for its relations that mean the relation wherever they
    appear (the ``same`` lines of ``eoc/knowledge/data/relations.tsv``): "ISO 3166 code",
    "alpha-2 code" and "two-letter country code" are the ISO country code, "proton number" is
    the atomic number. The guard reads each as the line's first name, a number or acronym
    inside it included. A relation's other labels ("size" for an area, "port number" for a
    default port) may mean something else outside the pack and are not read so.

    With each: the nouns (``kinds.tsv``) that name the kind of thing the relation is about,
    which a name may hold inside it ("alpha-2 country code", "chemical element symbol")."""
    from eoc.stages.questions import Vocabulary  # the one reader of relations.tsv

    data = resources.files("eoc.knowledge") / "data"
    vocabulary = Vocabulary.parse(
        (data / "relations.tsv").read_text(encoding="utf-8"),
        (data / "kinds.tsv").read_text(encoding="utf-8"),
        source=str(data),
    )
    nouns: dict[str, set[str]] = {}
    for noun, kind in vocabulary.kinds.items():
        if " " not in noun:
            nouns.setdefault(kind, set()).add(_stem(noun))
    # each compared as its line's first name, the plainest wording
    return [
        (r.same[0], r.same[1:], frozenset(n for k in r.subjects for n in nouns.get(k, ())))
        for r in vocabulary.relations.values()
        if r.same
    ]


Phrase = tuple[tuple[str, ...], tuple[str, ...], frozenset[str]]
"""A synonym phrase's stems, the stems it is compared as, and the words it may hold inside."""


@functools.cache
def synonyms() -> dict[str, list[Phrase]]:
    """``data/synonyms.tsv``, then the pack's relation labels (:func:`relation_labels`), by
    first word: (phrase, the words it is compared as, the kind nouns it may hold inside)."""
    text = (resources.files(DATA) / "data" / "synonyms.tsv").read_text(encoding="utf-8")
    groups: list[tuple[str, list[str], frozenset[str]]] = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            first, rest = line.split("\t")
            groups.append((first, rest.split("|"), frozenset()))
    groups += relation_labels()
    index: dict[str, list[Phrase]] = {}
    seen: set[tuple[str, ...]] = set()
    for head, variants, inside in groups:
        canon = tuple(_stem(w) for w in _words(head))
        for v in (head, *variants):  # the head too, so its words count as one phrase
            phrase = tuple(_stem(w) for w in _words(v))
            if phrase and phrase not in seen:  # the first list to name it wins
                seen.add(phrase)
                index.setdefault(phrase[0], []).append((phrase, canon, inside))
    for phrases in index.values():
        phrases.sort(key=lambda p: -len(p[0]))  # the longest first
    return index


@functools.cache
def _superlatives() -> frozenset[str]:
    """The one-word superlatives among ``data/polarity.tsv``'s poles ("largest", "most"),
    and "best" and "worst"."""
    out = {"best", "worst"}
    for _, sides in polarity_axes():
        for side in sides:
            for phrase in side:
                if len(phrase) == 1 and (
                    phrase[0].endswith("est") or phrase[0] in ("most", "least")
                ):
                    out.add(phrase[0])
    return frozenset(out)


def _superlative(w: str) -> bool:
    """Whether ``w`` is a superlative ("largest", "most"): it ranks what follows it."""
    return w in _superlatives()
