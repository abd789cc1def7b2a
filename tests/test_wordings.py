"""Wordings the graph stage and the computed answers used to pass on to the model (issue 24,
item 6), one class each: a computation wrapped in a request, powers in words, a constant asked
in a unit, counts over the graph, and reverse questions.

The phrasings in ``HELD_OUT`` were written before the rules were, and none was used while
writing them: they check that each class is read as a rule, not as a list of phrases. The
rules' own cases are in tests/test_compute.py, tests/test_questions.py and
tests/graph_questions.py. ``NEAR_MISSES`` must not be answered by the graph stage: the words
of a class around something it cannot answer exactly.
"""

from __future__ import annotations

import pytest

from eoc import Cascade
from eoc.compute import compute
from eoc.knowledge import PackStore, seeded_kv, vocabulary
from eoc.query import Query
from eoc.stages.cache import CacheStage
from eoc.stages.graph import GraphStage
from eoc.stages.neural import NeuralStage, NoModelBackend

# class -> (question, what the answer must be): an exact payload for arithmetic and reverse
# questions, the count for counts, "digits|unit" for a constant (its significant digits, so
# that the check does not depend on how the number is printed, and the unit it is given in).
HELD_OUT: dict[str, list[tuple[str, str]]] = {
    "wrapped": [
        ("Can you quickly tell me what 144 divided by 12 is?", "12"),
        ("I need you to compute 7 * 8, thanks", "56"),
        ("Please add 38 and 47.", "85"),
        ("Help me figure out 250 minus 75", "175"),
        ("Would you calculate 12.5 times 4 please", "50"),
        ("Hey, what does 9 times 9 come to?", "81"),
        ("Quickly: 18 + 24", "42"),
        ("Multiply 13 by 7 for me.", "91"),
        ("Kindly evaluate (3 + 4) * 5 and give me the answer", "35"),
        ("Work out 1000 - 1 and tell me the result", "999"),
        ("Solve 6 x 7 and show your working", "42"),
        ("Can you do 81 divided by 9?", "9"),
        ("Just tell me what 15% of 200 is", "30"),
        ("Subtract 17 from 60, please.", "43"),
        ("Divide 100 by 8 for me", "12.5"),
        ("could you find the sum of 120 and 35", "155"),
        ("What do you get if you multiply 6 by 9?", "54"),
    ],
    "powers": [
        ("what is 4 to the power 3", "64"),
        ("three to the fifth power", "243"),
        ("two to the eighth", "256"),
        ("ten to the sixth", "1000000"),
        ("6 to the third", "216"),
        ("what's nine squared", "81"),
        ("eleven cubed", "1331"),
        ("10 raised to the 5th power", "100000"),
        ("2 raised to 16", "65536"),
        ("the square of 15", "225"),
        ("the cube of 4", "64"),
        ("the fourth power of 3", "81"),
        ("7 to the 2nd", "49"),
        ("10 to the power minus 2", "0.01"),
        ("two to the power of twenty", "1048576"),
        ("4 raised to the power 3", "64"),
        ("what is twelve to the second power", "144"),
    ],
    "constants": [
        ("what is the speed of light in km/h", "10792528488|km/h"),
        ("speed of light in miles per second", "186282397|mi/s"),
        ("standard gravity in ft/s²", "3217404855|ft/s²"),
        ("what is the mass of an electron in grams", "91093837015|g"),
        ("proton mass in grams", "167262192369|g"),
        ("absolute zero in fahrenheit", "-45967|°F"),
        ("what is absolute zero in kelvin", "0|K"),
        ("bohr radius in picometres", "529177210903|pm"),
        ("standard atmospheric pressure in kPa", "101325|kPa"),
        ("what's the speed of sound in km/h", "12348|km/h"),
        ("g in ft/s^2", "3217404855|ft/s²"),
        ("neutron mass in grams", "167492749804|g"),
        ("speed of light in mph", "67061662938|mph"),
        ("the speed of light in a vacuum in metres per second", "299792458|m/s"),
    ],
    "counts": [
        ("how many elements are there in period 2", "8"),
        ("how many elements are in group 1", "7"),
        ("number of elements in period 6", "32"),
        ("how many planets are there", "8"),
        ("how many planets are in the solar system", "8"),
        ("count the elements in group 17", "6"),
        ("what is the number of elements in group 2", "6"),
        ("how many chemical elements are there", "118"),
        ("how many si prefixes are there", "24"),
        ("how many elements does period 3 have", "8"),
        ("how many SI base units are there", "7"),
        ("how many elements are in the third period", "8"),
        ("how many elements are in the periodic table", "118"),
        ("how many planets orbit the sun", "8"),  # missed: see KNOWN_MISSES
    ],
    "reverse": [
        ("which planet has the moon Triton", "Neptune"),
        ("which planet has Phobos as a moon", "Mars"),
        ("Oberon orbits which planet", "Uranus"),
        ("which planet is Io a satellite of", "Jupiter"),
        ("what has the atomic number 8", "Oxygen"),
        ("Kr is the symbol for which element", "Krypton"),
        ("which countries use the swiss franc", "Liechtenstein, Switzerland"),
        ("which country has the tld .jp", "Japan"),
        ("what has the symbol Hz", "hertz"),
        ("Rhea is one of the moons of which planet", "Saturn"),
        ("the Japanese yen is the currency of which country", "Japan"),
        ("what is Canberra the capital of", "Australia"),
        ("Tokyo is the capital city of what country", "Japan"),
        ("which element is represented by the symbol Pb", "Lead"),
        ("the symbol Sn stands for which element", "Tin"),
        ("which planet's largest moon is Titania", "Uranus"),
        ("Miranda is a satellite of which planet", "Uranus"),
        ("name the planet that Callisto orbits", "Jupiter"),
        ("which country is Lima the capital of", "Peru"),
    ],
}

KNOWN_MISSES = {
    # held-out wordings the rules do not read, kept here so that the count above stays honest:
    # a kind is counted with "are there" or a place that holds all of it ("in the solar
    # system"), not with a verb that happens to be true of all of it ("orbit the sun")
    "how many planets orbit the sun",
}

NEAR_MISSES: dict[str, list[str]] = {
    "wrapped": [
        "please calculate my taxes",
        "can you work out why 2 plus 2 is 4",
        "show me the 5 times table",
        "add 5 and 3 to my shopping list",
        "tell me a joke about 7 times 8",
        "what is 2 plus 2 in binary",
        "multiply the recipe by 3",
        "add salt and pepper",
        "subtract 5 from my score",
        "please calculate 2 apples plus 3 apples for me",
        "could you work out 10 plus 5 and then email it to Bob",
    ],
    "powers": [
        "what is the power of 3 branches of government",
        "the square of the hypotenuse",
        "who came to power in 1933",
        "what is 2 to the moon",
        "power to the people",
        "what is the fifth power",
        "two to the tenth of may",
        "3 to the",
        "squared circle",
        "the cube of a number",
    ],
    "constants": [
        "speed of light in kg",
        "planck constant in joules",
        "speed of light in water",
        "speed of sound in water in m/s",
        "the speed of light in a fibre in km/s",
        "gravitational constant in m/s²",
        "G in m/s^2",
        "speed of light in furlongs per fortnight",
        "speed of a cheetah in km/h",
        "electron mass in kelvin",
        "speed of sound in helium in m/s",
    ],
    "counts": [
        "how many people like Jupiter",
        "how many moons does Saturn have",  # the pack lists the major moons only
        "how many moons does Jupiter have",
        "how many moons orbit Jupiter",
        "how many languages are spoken in India",  # official languages only
        "how many countries are there",  # the pack holds territories too
        "how many countries are in South America",
        "how many countries use the euro",
        "how many countries border China",  # the pack's borders are not all listed both ways
        "how many elements are in water",
        "how many calories in an apple",
        "how many elements are in group 19",  # none: never "0"
        "how many planets does France have",
    ],
    "reverse": [
        "which planet has the moon landing",
        "what has the symbol of peace",
        "which country uses the dollar",  # many dollars: not one answer
        "which planet orbits Titan",
        "Titan is a moon of which country",
        "what has the atomic number of gold",
        "which element has the symbol of a star",
        "what has a capital",
    ],
}

REFUSED = [
    # still answered, as before, with a refusal or an exact statement, never a number made up
    ("please work out 9^9^9 for me", "too large to compute exactly"),
    ("could you divide 5 by 0", "undefined: division by zero"),
    ("nine to the ninth to the ninth", "too large to compute exactly"),
    ("10 to the power 5000", "too large to compute exactly"),
]


def _cascade() -> Cascade:
    graph = GraphStage(PackStore(), vocabulary=vocabulary())
    return Cascade([CacheStage(), seeded_kv(), graph, NeuralStage(NoModelBackend())])


CASCADE = _cascade()
GRAPH = GraphStage(PackStore(), vocabulary=vocabulary())


def _meets(kind: str, payload: str, expected: str) -> bool:
    if kind == "counts":
        return payload.split(" ", 1)[0] == expected
    if kind == "constants":
        digits, unit = expected.split("|")
        shown = payload.split(" = ")[-1].split(" (")[0]
        plain = "".join(c for c in shown if c.isdigit()).lstrip("0") or "0"
        sign = shown.lstrip("≈ ").startswith("-") == digits.startswith("-")
        return sign and plain.startswith(digits.lstrip("-")) and shown.endswith(f" {unit}")
    return payload == expected


@pytest.mark.parametrize(
    ("kind", "question", "expected"),
    [
        pytest.param(
            k,
            q,
            a,
            marks=[pytest.mark.xfail(strict=True, reason="a known miss")]
            if q in KNOWN_MISSES
            else [],
        )
        for k, rows in HELD_OUT.items()
        for q, a in rows
    ],
)
def test_each_held_out_wording_is_answered_by_the_graph_stage(
    kind: str, question: str, expected: str
) -> None:
    done = CASCADE.resolve(question)
    assert done.stage == "graph", (question, done.stage, done.payload)
    assert _meets(kind, done.payload, expected), (question, done.payload)


@pytest.mark.parametrize("question", [q for rows in NEAR_MISSES.values() for q in rows])
def test_a_near_miss_is_not_answered_by_the_new_rules(question: str) -> None:
    assert compute(question) is None, question
    assert GRAPH.lookup(Query(question)) is None, question


@pytest.mark.parametrize(("question", "start"), REFUSED)
def test_an_unsafe_computation_in_any_wording_is_still_refused(question: str, start: str) -> None:
    done = compute(question)
    assert done is not None and done.answer.startswith(start), question
