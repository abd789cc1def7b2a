"""Evaluation sets for the semantic kv: stored questions, paraphrases and hard negatives.

Two sets, each generated here, deterministically, and never tuned on whole:

* ``facts`` — questions over real facts from eoc's own knowledge pack (capitals and UN regions of
  countries from ``countryinfo`` 1.0.1, MIT; ISO 3166-1 codes from the same; chemical symbols and
  atomic numbers from the IUPAC periodic table; see ``eoc/knowledge/data/README.md``). The
  store holds half of the countries and elements; paraphrases reword a stored question; hard
  negatives ask about a country or element that is not stored (named like a stored one, or
  its neighbour in the table), another relation of a stored one, or a superlative or comparative
  the store does not answer.
* ``requests`` — user-style requests to a support desk, written for this benchmark (eoc's own
  text, same licence as eoc): the store holds one wording of each request with its answer;
  paraphrases change politeness, filler, word order and synonyms ("turn on" / "enable" /
  "switch on"); hard negatives change what decides the answer: negation, polarity ("turn
  off"), the direction of a transfer and its multi-word sides, a scope word narrowing a noun
  ("gift" / "gift card"), a number or a date, or the product named.

Each set is split **by what generalization needs**: the entities (countries, elements) and the
request topics are split in two by a stable hash, and every paraphrase and negative template
family comes in four groups of wordings. The ``tune`` part uses one half of the entities or
topics with the first group of wordings; ``held-out`` the other half with the second group;
``fresh`` and ``blind`` that same half with the third and the fourth. The held-out run showed
misses that the guard's word lists were then extended for, so fresh was written, and committed,
before that; fresh was run, its misses read and fixed where a general rule fixed them, so blind
was written, and committed, before its single run. Nothing of the other parts' wordings or
entities is seen while tuning.

    python bench/kvsets.py [--set facts|requests] [--part tune|held-out|fresh|blind|sealed|vault] [--dump]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's eoc, if run from it

from eoc import knowledge

DATA = Path(knowledge.__file__).parent / "data"  # the installed pack's (in Pyodide too)
PARTS = ("tune", "held-out", "fresh", "blind", "sealed", "vault")
"""``fresh``, ``blind`` and ``sealed``: the held-out entities and families with a third, fourth
and fifth group of wordings and traps. Fresh was written (and committed) before the guard's word
lists were extended after the first held-out run; blind after fresh had been run and its misses
read, and run once, at the end. ``sealed`` (facts only) was written and committed before the
kv guard read the knowledge pack's relation labels, to measure that change on wordings no one
had tuned on; it was run once after that change (79.3 % / 79.5 % served), then its misses were
read. ``vault`` (facts only) was written and committed before those misses were read, and is run
once after the changes they led to."""

REQUEST_PARTS = PARTS[:4]
"""The parts the requests set has (``sealed`` and ``vault`` are facts only)."""


def parts_of(name: str) -> tuple[str, ...]:
    """The parts set ``name`` has."""
    return PARTS if name == "facts" else REQUEST_PARTS


@dataclass
class Item:
    """A stored question and its answer, with questions that must and must not get it."""

    id: str
    stored: str
    answer: str
    paraphrases: list[str] = field(default_factory=list)
    negatives: list[tuple[str, str]] = field(default_factory=list)  # (question, trap class)


def _half(name: str) -> str:
    """The part an entity or family belongs to: tune or held-out (fresh and blind reuse
    held-out's)."""
    return PARTS[zlib.crc32(name.encode()) % 2]


def _side(part: str) -> str:
    return "held-out" if part in ("fresh", "blind", "sealed", "vault") else part


def _triples(name: str) -> list[tuple[str, str, str]]:
    out = []
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            s, p, o = line.split("\t")
            out.append((s, p, o))
    return out


def _pairs(name: str) -> list[tuple[str, str]]:
    out = []
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            q, a = line.split("\t")
            out.append((q, a))
    return out


# -- facts --------------------------------------------------------------------------------------

# per relation: the stored wording, then paraphrase wordings in two groups (tune, held-out)
FACT_WORDINGS: dict[str, tuple[str, tuple[list[str], list[str]]]] = {
    "capital": (
        "What is the capital of {x}?",
        (
            [
                "what's the capital of {x}",
                "Which city is the capital of {x}?",
                "capital city of {x}?",
                "Tell me the capital of {x}, please.",
                "What is {x}'s capital city?",
            ],
            [
                "{x} capital?",
                "What city serves as the capital of {x}?",
                "Name the capital city of {x}.",
                "could you tell me what the capital of {x} is",
                "Which city is {x}'s seat of government?",
            ],
            [
                "capital of {x}",
                "Do you know the capital of {x}?",
                "I need the name of {x}'s capital.",
                "What is the capital city of {x} called?",
                "{x}: what is its capital?",
            ],
            [
                "What's the capital city of {x}?",
                "Which city is {x}'s capital?",
                "{x}'s capital is which city?",
                "Could you name the capital of {x}?",
                "capital city of {x}, please",
            ],
            [
                "What's {x}'s capital?",
                "capital city for {x}",
                "In {x}, which city is the capital?",
                "Tell me what the capital of {x} is.",
                "What do they call the capital of {x}?",
            ],
            [
                "what is the capital of {x} again?",
                "Which city is the capital of the country {x}?",
                "capital of {x} please",
                "I'd like to know the capital of {x}.",
                "Hey, what's the capital city in {x}?",
            ],
        ),
    ),
    "region": (
        "Which region of the world is {x} in?",
        (
            [
                "In which region is {x}?",
                "what region of the world is {x} located in",
                "Which world region does {x} belong to?",
                "{x} is in which region?",
            ],
            [
                "Where in the world is {x}, by region?",
                "Which part of the world is {x} in?",
                "tell me the world region of {x}",
                "Name the region {x} lies in.",
            ],
            [
                "What region does {x} belong to?",
                "{x} belongs to which world region?",
                "Which region of the globe is {x} part of?",
                "what area of the world is {x} in",
                "Can you tell me which region {x} is located in?",
            ],
            [
                "Which region is {x} part of?",
                "What world region is {x} in?",
                "Where is {x} located, regionally?",
                "{x}: which region?",
                "In what region of the world can you find {x}?",
            ],
            [
                "What part of the world is {x} located in?",
                "{x} is located in which region of the world?",
                "Which world region is {x} found in?",
                "region of {x}?",
                "Tell me which region of the world {x} is in.",
            ],
            [
                "In which part of the world is {x}?",
                "which region is {x} in",
                "What world region is {x} part of?",
                "Tell me the region {x} is in, please.",
                "{x} lies in which region of the world?",
            ],
        ),
    ),
    "iso": (
        "What is the ISO country code of {x}?",
        (
            [
                "what's the ISO code for {x}",
                "ISO country code of {x}?",
                "Which ISO code does {x} have?",
                "Tell me {x}'s ISO country code.",
            ],
            [
                "What is the two-letter country code of {x}?",
                "{x} ISO 3166 code?",
                "Give me the ISO alpha-2 code for {x}.",
                "which country code does {x} use in ISO 3166",
            ],
            [
                "{x} ISO code",
                "What's the ISO 3166 country code for {x}?",
                "Which ISO country code belongs to {x}?",
                "I need the ISO country code for {x}.",
                "what is {x}'s country code according to ISO",
            ],
            [
                "What ISO code does {x} have?",
                "Give me {x}'s ISO country code",
                "ISO code of {x}, please",
                "Which ISO country code is assigned to {x}?",
                "what's the ISO country code of {x}",
            ],
            [
                "What is {x}'s two-letter ISO code?",
                "ISO 3166-1 alpha-2 code for {x}?",
                "{x}: ISO country code?",
                "Which two-letter code does ISO give {x}?",
                "What's the alpha-2 country code of {x}?",
            ],
            [
                "what is the ISO code of {x}?",
                "{x}'s ISO country code, please",
                "Which ISO 3166 code is {x}'s?",
                "Could you give me the ISO country code of {x}?",
                "country code of {x} in ISO 3166-1",
            ],
        ),
    ),
    "symbol": (
        "What is the chemical symbol of {x}?",
        (
            [
                "what's the symbol for {x}",
                "Which chemical symbol does {x} have?",
                "chemical symbol of {x}?",
                "Tell me the element symbol of {x}.",
            ],
            [
                "{x} symbol?",
                "What symbol stands for {x} in the periodic table?",
                "Give me the chemical symbol for {x}, please.",
                "how is {x} written as a chemical symbol",
            ],
            [
                "What's the element symbol for {x}?",
                "Which symbol represents {x}?",
                "{x} chemical symbol",
                "What letters stand for {x} on the periodic table?",
                "Do you know the chemical symbol of {x}?",
            ],
            [
                "What's {x}'s chemical symbol?",
                "Which symbol does {x} have on the periodic table?",
                "chemical symbol for {x}?",
                "Give me the symbol of the element {x}",
                "How is {x} abbreviated on the periodic table?",
            ],
            [
                "What's the atomic symbol for {x}?",
                "{x}'s symbol on the periodic table?",
                "What is the symbol for the element {x}?",
                "Which letters are used as the chemical symbol for {x}?",
                "Chemical symbol, {x}?",
            ],
            [
                "what symbol does {x} have",
                "The chemical symbol of {x} is what?",
                "Could you tell me {x}'s chemical symbol?",
                "symbol for the element {x}?",
                "Which chemical symbol stands for {x}?",
            ],
        ),
    ),
    "number": (
        "What is the atomic number of {x}?",
        (
            [
                "what's the atomic number of {x}",
                "Atomic number of {x}?",
                "Which atomic number does {x} have?",
                "Tell me {x}'s atomic number.",
            ],
            [
                "{x} atomic number?",
                "How many protons does an atom of {x} have?",
                "Give me the atomic number for {x}, please.",
                "what number is {x} in the periodic table",
            ],
            [
                "What's {x}'s atomic number?",
                "Which atomic number belongs to {x}?",
                "{x}: atomic number?",
                "Can you give me the atomic number of {x}?",
                "what is the proton number of {x}",
            ],
            [
                "What atomic number does {x} have?",
                "Give me the atomic number of {x}",
                "atomic number for {x}?",
                "Do you know {x}'s atomic number?",
                "Which number is {x} on the periodic table?",
            ],
            [
                "How many protons are in the nucleus of {x}?",
                "What's the proton number of {x}?",
                "{x} has which atomic number?",
                "What is the element number of {x}?",
                "atomic no. of {x}?",
            ],
            [
                "what atomic number is {x}",
                "The atomic number of {x} is what?",
                "Could you tell me the atomic number of {x}?",
                "How many protons does {x} have?",
                "atomic number, {x}?",
            ],
        ),
    ),
}

# negatives that ask another relation, or a superlative or comparative, of the same entity
FACT_TRAPS: dict[str, tuple[list[tuple[str, str]], list[tuple[str, str]]]] = {
    "capital": (
        [
            ("What is the largest city of {x}?", "superlative"),
            ("What is the currency of {x}?", "relation"),
            ("What was the capital of {x} before its current one?", "scope"),
        ],
        [
            ("Which is the biggest city in {x}?", "superlative"),
            ("What is the official language of {x}?", "relation"),
            ("What is the second largest city of {x}?", "superlative"),
        ],
        [
            ("What is the most populous city of {x}?", "superlative"),
            ("What is the population of {x}?", "relation"),
            ("What was the first capital of {x}?", "scope"),
        ],
        [
            ("What is the oldest city of {x}?", "superlative"),
            ("What is the national dish of {x}?", "relation"),
            ("What was the former capital of {x}?", "scope"),
        ],
        [
            ("What is the largest port city of {x}?", "superlative"),
            ("What is the currency used in {x}?", "relation"),
            ("What was the capital of {x} in 1900?", "scope"),
        ],
        [
            ("What is the second city of {x}?", "superlative"),
            ("What is the currency of {x} called?", "relation"),
            ("What was the capital of {x} before independence?", "scope"),
        ],
    ),
    "region": (
        [
            ("Which countries border {x}?", "relation"),
            ("What is the largest region of {x}?", "superlative"),
        ],
        [
            ("Which sub-region is {x} in?", "scope"),
            ("What is the smallest region of {x}?", "superlative"),
        ],
        [
            ("Which continent is {x} on?", "relation"),
            ("What is the northernmost region of {x}?", "superlative"),
        ],
        [
            ("Which hemisphere is {x} in?", "relation"),
            ("What is the largest region of {x} by area?", "superlative"),
        ],
        [
            ("Which time zone is {x} in?", "relation"),
            ("Which is the most populous region of {x}?", "superlative"),
        ],
        [
            ("Which ocean borders {x}?", "relation"),
            ("What is the poorest region of {x}?", "superlative"),
        ],
    ),
    "iso": (
        [
            ("What is the three-letter ISO code of {x}?", "scope"),
            ("What is the calling code of {x}?", "relation"),
        ],
        [
            ("What is the ISO currency code of {x}?", "scope"),
            ("What is the internet domain of {x}?", "relation"),
        ],
        [
            ("What is the numeric ISO code of {x}?", "scope"),
            ("What is the phone code of {x}?", "relation"),
        ],
        [
            ("What is the three-letter code of {x}?", "scope"),
            ("What is the licence plate code of {x}?", "relation"),
        ],
        [
            ("What is the three-letter country code of {x}?", "scope"),
            ("What is the dialing code of {x}?", "relation"),
        ],
        [
            ("What is the three-letter ISO country code of {x}?", "scope"),
            ("What is the international calling code of {x}?", "relation"),
        ],
    ),
    "symbol": (
        [
            ("What is the atomic mass of {x}?", "relation"),
            ("Which element comes after {x}?", "direction"),
        ],
        [
            ("What is the melting point of {x}?", "relation"),
            ("Which element comes before {x}?", "direction"),
        ],
        [
            ("What is the symbol of the element after {x}?", "direction"),
            ("What is the boiling point of {x}?", "relation"),
        ],
        [
            ("What is the symbol of the element before {x}?", "direction"),
            ("What is the density of {x}?", "relation"),
        ],
        [
            ("What is the atomic number of {x}?", "relation"),
            ("What is the symbol of the element two places after {x}?", "direction"),
        ],
        [
            ("What is the symbol of the element after {x} in the table?", "direction"),
            ("What is the electron configuration of {x}?", "relation"),
        ],
    ),
    "number": (
        [
            ("What is the mass number of {x}?", "relation"),
            ("How many neutrons does {x} have?", "relation"),
        ],
        [
            ("What is the atomic weight of {x}?", "relation"),
            ("How many electrons does {x} lose?", "relation"),
        ],
        [
            ("What is the atomic mass of {x}?", "relation"),
            ("How many isotopes does {x} have?", "relation"),
        ],
        [
            ("What is the atomic radius of {x}?", "relation"),
            ("How many valence electrons does {x} have?", "relation"),
        ],
        [
            ("What is the number of neutrons in {x}?", "relation"),
            ("What is the atomic number of the element after {x}?", "direction"),
        ],
        [
            ("What is the atomic number of the element before {x}?", "direction"),
            ("How many neutrons are in {x}?", "relation"),
        ],
    ),
}


def _entity_swaps(stored: list[str], absent: list[str]) -> dict[str, str]:
    """For each stored name, an absent one that looks like it (a shared prefix, else any)."""
    rng = random.Random(7)
    out = {}
    for name in stored:
        best = max(absent, key=lambda a: (_shared_prefix(a, name), -abs(len(a) - len(name))))
        out[name] = best if _shared_prefix(best, name) >= 2 else rng.choice(absent)
    return out


def _shared_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.lower(), b.lower(), strict=False):
        if x != y:
            break
        n += 1
    return n


def facts_set(part: str) -> list[Item]:
    group = PARTS.index(part)
    countries = _triples("countries.tsv")
    capitals = {s: o for s, p, o in countries if p == "capital"}
    regions = {s: o for s, p, o in countries if p == "region"}
    # The sets were first written from kv prompts "... iso 3166 code of NAME", cut at the last
    # " of "; the same cut keeps them as they were ("the Congo", "Man").
    iso = {
        f"code of {s}".rsplit(" of ", 1)[1]: o for s, p, o in countries if p == "iso alpha-2 code"
    }
    symbols = {s: o for s, p, o in _triples("elements.tsv") if p == "symbol"}
    numbers = {s: o for s, p, o in _triples("elements.tsv") if p == "atomic number"}
    tables = {
        "capital": capitals,
        "region": regions,
        "iso": iso,
        "symbol": symbols,
        "number": numbers,
    }
    items: list[Item] = []
    for relation, table in tables.items():
        names = sorted(table)
        mine = [n for n in names if _half(n) == _side(part)]
        # what is stored: half of this part's entities; the other half are the near misses
        stored = [n for n in mine if zlib.crc32(("s" + n).encode()) % 2 == 0]
        absent = [n for n in mine if n not in stored]
        swaps = _entity_swaps(stored, absent)
        wording, groups = FACT_WORDINGS[relation]
        traps = FACT_TRAPS[relation][group]
        for name in stored:
            item = Item(f"{relation}:{name}", wording.format(x=name), table[name])
            item.paraphrases = [w.format(x=name) for w in groups[group]]
            item.negatives = [(wording.format(x=swaps[name]), "entity")]
            item.negatives += [(t.format(x=name), kind) for t, kind in traps]
            items.append(item)
    return items


# -- requests -------------------------------------------------------------------------------------

# Action families: the verb stored, the synonyms a user may write instead (two disjoint groups,
# tune and held-out), the opposite verb (a polarity trap), and objects, each with a narrower
# variant (a scope trap) and a sibling (another thing: an entity trap).
ACTIONS: list[tuple[str, tuple[list[str], list[str]], str, list[tuple[str, str, str]]]] = [
    (
        "turn on",
        (
            ["enable", "switch on"],
            ["activate", "turn on"],
            ["power on", "start"],
            ["activate", "enable"],
        ),
        "turn off",
        [
            ("notifications", "push notifications", "sounds"),
            ("dark mode", "dark mode on the web app", "light mode"),
            ("location sharing", "background location sharing", "Bluetooth"),
            ("two-factor authentication", "two-factor authentication for admins", "single sign-on"),
        ],
    ),
    (
        "cancel",
        (["end", "stop"], ["call off", "cancel"], ["terminate", "cancel"], ["stop", "cancel"]),
        "renew",
        [
            ("my subscription", "my family subscription", "my order"),
            ("my booking", "part of my booking", "my flight"),
            ("my membership", "my student membership", "my insurance"),
        ],
    ),
    (
        "add",
        (["put", "include"], ["add", "insert"], ["attach", "add"], ["include", "add"]),
        "remove",
        [
            ("a user to my team", "an admin user to my team", "a user to my project"),
            ("a payment method", "a default payment method", "a shipping method"),
            ("a device to my account", "a shared device to my account", "a device to my network"),
        ],
    ),
    (
        "lock",
        (["lock", "secure"], ["lock down", "lock"], ["freeze", "lock"], ["lock", "secure"]),
        "unlock",
        [
            ("my card", "my virtual card", "my phone"),
            ("my account", "my child's account", "my laptop"),
            ("the app", "the app with a PIN", "the door"),
        ],
    ),
    (
        "upgrade",
        (
            ["move up", "upgrade"],
            ["step up", "upgrade"],
            ["upgrade", "upgrade"],
            ["upgrade", "upgrade"],
        ),
        "downgrade",
        [
            ("my plan", "my family plan", "my phone"),
            ("my storage", "my cloud storage for photos", "my memory"),
        ],
    ),
    (
        "subscribe to",
        (
            ["sign up for", "join"],
            ["register for", "subscribe to"],
            ["sign up to", "subscribe to"],
            ["subscribe to", "sign up for"],
        ),
        "unsubscribe from",
        [
            ("the newsletter", "the weekly newsletter", "the podcast"),
            ("price alerts", "price alerts for flights", "stock alerts"),
        ],
    ),
    (
        "delete",
        (["remove", "erase"], ["get rid of", "delete"], ["wipe", "clear"], ["erase", "delete"]),
        "restore",
        [
            ("my photos", "my shared photos", "my videos"),
            ("a message", "a message for everyone", "a contact"),
            ("my search history", "my search history on mobile", "my bookmarks"),
        ],
    ),
    (
        "buy",
        (["purchase", "get"], ["order", "buy"], ["pay for", "buy"], ["purchase", "buy"]),
        "return",
        [
            ("a gift card", "a digital gift card", "a gift"),
            ("more storage", "more storage for my team", "more seats"),
            ("a ticket", "a group ticket", "a parking pass"),
        ],
    ),
    (
        "download",
        (
            ["save", "get a copy of"],
            ["export", "download"],
            ["grab", "download"],
            ["download", "save a copy of"],
        ),
        "upload",
        [
            ("my invoices", "last year's invoices", "my receipts"),
            ("my data", "my health data", "my contacts"),
        ],
    ),
    (
        "show",
        (["display", "reveal"], ["make visible", "show"], ["unhide", "show"], ["show", "display"]),
        "hide",
        [
            ("my online status", "my online status to friends", "my last name"),
            ("my phone number", "my work phone number", "my email address"),
            ("hidden files", "hidden system files", "file extensions"),
        ],
    ),
    (
        "import",
        (
            ["bring in", "load"],
            ["pull in", "import"],
            ["transfer in", "import"],
            ["import", "bring in"],
        ),
        "export",
        [
            ("my contacts", "my work contacts", "my calendar"),
            ("my bookmarks", "my bookmarks from Chrome", "my passwords"),
        ],
    ),
    (
        "connect",
        (["link", "pair"], ["hook up", "connect"], ["link up", "connect"], ["pair", "connect"]),
        "disconnect",
        [
            ("my bank account", "my business bank account", "my credit card"),
            ("a printer", "a wireless printer", "a scanner"),
            ("my headphones", "my noise-cancelling headphones", "my speaker"),
        ],
    ),
    (
        "mute",
        (["silence", "mute"], ["quiet", "mute"], ["mute", "silence"], ["mute", "silence"]),
        "unmute",
        [
            ("a group chat", "a group chat for a week", "a channel"),
            ("my microphone", "my microphone in meetings", "my camera"),
        ],
    ),
    (
        "increase",
        (["raise", "increase"], ["up", "increase"], ["raise", "boost"], ["increase", "raise"]),
        "decrease",
        [
            ("my credit limit", "my credit limit temporarily", "my overdraft"),
            ("the font size", "the font size in emails", "the screen brightness"),
            ("my daily limit", "my daily cash withdrawal limit", "my weekly limit"),
        ],
    ),
    (
        "share",
        (["send", "share"], ["pass on", "share"], ["share", "send"], ["share", "share"]),
        "stop sharing",
        [
            ("a folder", "a read-only folder", "a file"),
            ("my screen", "my screen with sound", "my camera"),
        ],
    ),
]

# paraphrase wordings of "How do I {verb} {obj}?" in two groups; {syn} is a synonym of the verb
REQUEST_WORDINGS = (
    [
        "how can i {syn} {obj}",
        "Please help me {verb} {obj}.",
        "{verb} {obj} - how?",
        "I want to {syn} {obj}, how do I do that?",
    ],
    [
        "What are the steps to {syn} {obj}?",
        "could you tell me how to {verb} {obj}",
        "I'd like to {syn} {obj}.",
        "hi, how do i {verb} {obj} please",
    ],
    [
        "how do you {syn} {obj}?",
        "Can you help me {verb} {obj}?",
        "I need to {syn} {obj}",
        "what's the way to {verb} {obj}",
        "is it possible to {syn} {obj}?",
    ],
    [
        "Could you explain how to {syn} {obj}?",
        "how would I {verb} {obj}",
        "Steps to {syn} {obj}",
        "Hey, I'm trying to {verb} {obj}. How?",
        "Where do I go to {syn} {obj}?",
    ],
)
NEGATION_WORDINGS = (
    "How do I make sure I don't {verb} {obj}?",
    "What happens if I don't {verb} {obj}?",
    "Is there a way to not {verb} {obj}?",
    "How can I avoid having to {verb} {obj}?",
)

# the direction of a transfer: sides of several words, swapped in a negative
SIDES = [
    "my savings account",
    "my current account",
    "my joint account",
    "my credit card",
    "my PayPal balance",
    "my brokerage account",
    "my old phone",
    "my new phone",
]
DIRECTED = [
    (
        "transfer money from {a} to {b}",
        (
            ["move money from {a} to {b}"],
            ["send money from {a} into {b}"],
            ["shift money from {a} to {b}"],
            ["move money over from {a} to {b}"],
        ),
        [
            ("my savings account", "my current account"),
            ("my joint account", "my savings account"),
            ("my PayPal balance", "my current account"),
            ("my current account", "my brokerage account"),
        ],
    ),
    (
        "copy my contacts from {a} to {b}",
        (
            ["move my contacts from {a} to {b}"],
            ["transfer my contacts from {a} onto {b}"],
            ["copy my contacts over from {a} to {b}"],
            ["get my contacts from {a} onto {b}"],
        ),
        [("my old phone", "my new phone"), ("my new phone", "my old phone")],
    ),
]

# numbers and dates that decide the answer
COUNTED = [
    (
        "book {n} tickets for {d}",
        (
            ["reserve {n} tickets for {d}"],
            ["get {n} tickets for {d}"],
            ["get me {n} tickets for {d}"],
            ["grab {n} tickets for {d}"],
        ),
        [(2, "Saturday"), (4, "Friday"), (3, "Sunday"), (6, "Monday")],
    ),
    (
        "get a refund within {n} days",
        (
            ["get my money back within {n} days"],
            ["be refunded within {n} days"],
            ["get refunded within {n} days"],
            ["receive a refund within {n} days"],
        ),
        [(30, ""), (14, ""), (60, "")],
    ),
]


# the frames of a directed or counted request's paraphrases: {0} the stored words, {1} a rewording
FRAMES = (
    ("how can i {0}", "Please help me {1}.", "I want to {1}, how?"),
    ("how can i {0}", "Please help me {1}.", "I want to {1}, how?"),
    ("how do you {0}?", "Can you help me {1}?", "I need to {1}"),
    ("how would i {0}", "Could you help me {1}?", "I'm trying to {1}. How?"),
)


def _answer(text: str) -> str:
    return f"[answer to: {text}]"


def requests_set(part: str) -> list[Item]:
    """Requests generated from the families above: a family (and so its verbs and synonyms)
    belongs to one part only."""
    group = PARTS.index(part)
    items: list[Item] = []
    for verb, synonyms, opposite, objects in ACTIONS:
        if _half(verb) != _side(part):
            continue
        for obj, narrower, sibling in objects:
            stored = f"How do I {verb} {obj}?"
            item = Item(f"request:{stored}", stored, _answer(stored))
            for i, wording in enumerate(REQUEST_WORDINGS[group]):
                syn = synonyms[group][i % len(synonyms[group])]
                item.paraphrases.append(wording.format(verb=verb, syn=syn, obj=obj))
            # the opposite verb takes the opposite preposition: add to / remove from
            undo = obj.replace(" to ", " from ") if opposite == "remove" else obj
            item.negatives = [
                (f"How do I {opposite} {undo}?", "polarity"),
                (f"How do I {verb} {narrower}?", "scope"),
                (f"How do I {verb} {sibling}?", "entity"),
                (NEGATION_WORDINGS[group].format(verb=verb, obj=obj), "negation"),
            ]
            items.append(item)
    for template, wordings, pairs in DIRECTED:
        if _half(template) != _side(part):
            continue
        for a, b in pairs:
            stored = "How do I " + template.format(a=a, b=b) + "?"
            item = Item(f"request:{stored}", stored, _answer(stored))
            item.paraphrases = [
                f.format(template.format(a=a, b=b), wordings[group][0].format(a=a, b=b))
                for f in FRAMES[group]
            ]
            other = next(s for s in SIDES if s not in (a, b))
            item.negatives = [("How do I " + template.format(a=a, b=other) + "?", "direction")]
            if (b, a) not in pairs:  # else the swapped request is stored: its own answer is right
                item.negatives += [
                    ("How do I " + template.format(a=b, b=a) + "?", "direction"),
                    ("How do I " + wordings[group][0].format(a=b, b=a) + "?", "direction"),
                ]
            items.append(item)
    for template, wordings, values in COUNTED:
        if _half(template) != _side(part):
            continue
        for n, d in values:

            def fill(t: str, n: int = n, d: str = d) -> str:
                return t.format(n=n, d=d).replace(" for .", ".").strip()

            stored = "How do I " + fill(template) + "?"
            item = Item(f"request:{stored}", stored, _answer(stored))
            item.paraphrases = [
                f.format(fill(template), fill(wordings[group][0])) for f in FRAMES[group]
            ]
            item.negatives = [("How do I " + fill(template, n + 1) + "?", "number")]
            if d:
                later = "Tuesday" if d != "Tuesday" else "Wednesday"
                item.negatives.append(("How do I " + fill(template, n, later) + "?", "date"))
            items.append(item)
    return items


SETS = {"facts": facts_set, "requests": requests_set}


def load(name: str, part: str) -> list[Item]:
    parts = parts_of(name)
    if part not in parts:
        raise SystemExit(f"the {name} set's part must be one of {parts}")
    return SETS[name](part)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=sorted(SETS), action="append")
    parser.add_argument("--part", choices=PARTS, action="append")
    parser.add_argument("--dump", action="store_true", help="print every item as JSON lines")
    args = parser.parse_args()
    for name in args.set or sorted(SETS):
        for part in args.part or parts_of(name):
            if part not in parts_of(name):
                continue
            items = load(name, part)
            if args.dump:
                try:
                    for it in items:
                        print(json.dumps(it.__dict__, ensure_ascii=False))
                except BrokenPipeError:
                    return
                continue
            n_p = sum(len(i.paraphrases) for i in items)
            n_n = sum(len(i.negatives) for i in items)
            print(
                f"{name:<9} {part:<9} {len(items):4d} stored  {n_p:5d} paraphrases  {n_n:5d} negatives"
            )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
