"""The hit guard on people's own wording (issue 24): a greeting, a typo, a clipped word, an
acronym or a rewording in other words may pass; a detail changed in the same question frame, a
time, the kind of answer asked for, or a stored question that shares only a topic word may not.

The pairs are written here for the rules, apart from bench/suites/human (which measures them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eoc import Query
from eoc.stages import KVStage
from eoc.stages.guard import EntityGuard
from eoc.stages.spelling import acronym, clipped, distance, misspelled, same_word

READS_MEANING = EntityGuard(rewordings=True)  # opt-in: rewordings left to similarity
READS_SPELLING = EntityGuard(rewordings=False)  # with the core's hashed n-grams

ALLOWED_BY_BOTH = [
    # greetings, sign-offs and chat spellings wrap the question
    ("hiya, how do I reset my pin? cheers", "How do I reset my PIN?"),
    ("hey guys, do u deliver to Wales? ta", "Do you deliver to Wales?"),
    # one slip of the keys, a swapped pair of letters
    ("how do i cancle my subscription", "How do I cancel my subscription?"),
    ("whats the adress of the shop", "What is the address of the shop?"),
    # a clipped word, an acronym of the other side's words
    ("max upload size?", "What is the maximum upload size?"),
    ("do the flats have AC", "Do the flats have air conditioning?"),
    # British and American words for one thing
    ("is there an elevator in the building?", "Is there a lift in the building?"),
    ("is the apartment furnished?", "Is the flat furnished?"),
    # "what time" asks when; "how much" asks the cost
    ("what time does the gym open?", "When does the gym open?"),
    ("how much is the premium plan?", "How much does the premium plan cost?"),
]

REWORDED = [  # another wording of the same question: similarity decides with a reading embedder
    ("my debit card got nicked, who do i tell", "How do I report a lost or stolen debit card?"),
    (
        "is there somewhere to leave my bike while I'm at the gym",
        "Does the gym have secure bicycle parking?",
    ),
]

REFUSED_BY_BOTH = [
    # a detail changed in the same frame: the changed word is what is asked
    ("How much is the set dinner menu?", "How much is the set lunch menu?", "lacks lunch"),
    ("Does the gym have a sauna?", "Does the gym have a pool?", "lacks pool"),
    ("What is the returns policy for sale items?", "What is the returns policy?", "adds sale"),
    # a time one asks about and the other does not, or another
    ("Is the gym open on Sundays?", "Is the gym open on Saturdays?", "sunday"),
    ("is the gym open on sat", "Is the gym open on Sundays?", "sunday"),
    ("is the gym open in the evening?", "Is the gym open in the morning?", "another time"),
    ("Is the clinic open at night?", "Is the clinic open?", "a time in one only"),
    # a question about when, where, who, why is not answered by a yes/no question
    ("What time is check-out?", "Can I get a late check-out?", "different things"),
    # two slips are not a typo; a name is never a misspelling of another
    (
        "Which way do winds turn in the southern hemisphere?",
        "Which way do winds turn in the northern hemisphere?",
        "northern",
    ),
    ("What is the capital of Iran?", "What is the capital of Iraq?", "name"),
    # an action one side names and the other puts another word in place of
    ("How do I replace my card?", "How do I lock my card?", "lock"),
]

REFUSED_WHEN_REWORDED = [  # rewordings that share only a topic word or only what they are about
    ("how long until my parcel turns up", "How long does standard delivery take?", "too few"),
    (
        "can I bring my own towel to the spa",
        "How much does a deep tissue massage cost at the spa?",
        "too few",
    ),
]


@pytest.mark.parametrize(("query", "stored"), ALLOWED_BY_BOTH)
def test_a_wrapped_misspelled_or_clipped_question_passes(query: str, stored: str) -> None:
    for guard in (READS_MEANING, READS_SPELLING):
        assert guard.refusal(query, stored) == "", (guard.rewordings, query, stored)


@pytest.mark.parametrize(("query", "stored"), REWORDED)
def test_a_rewording_in_other_words_passes_only_where_the_embedder_reads_meaning(
    query: str, stored: str
) -> None:
    assert READS_MEANING.refusal(query, stored) == ""
    assert "another wording" in READS_SPELLING.refusal(query, stored)


@pytest.mark.parametrize(("query", "stored", "why"), REFUSED_BY_BOTH)
def test_a_changed_detail_is_refused_by_both(query: str, stored: str, why: str) -> None:
    for guard in (READS_MEANING, READS_SPELLING):
        reason = guard.refusal(query, stored)
        assert why in reason, (guard.rewordings, query, stored, reason)


@pytest.mark.parametrize(("query", "stored", "why"), REFUSED_WHEN_REWORDED)
def test_a_rewording_that_shares_only_a_topic_is_refused(query: str, stored: str, why: str) -> None:
    assert why in READS_MEANING.refusal(query, stored)


def test_the_spelling_rules_stay_narrow() -> None:
    assert distance("netwroks", "networks") == 1  # a swap of neighbours is one slip
    assert distance("southern", "northern", 2) == 2
    assert misspelled("recieve", "receive") and not misspelled("southern", "northern")
    assert not misspelled("cat", "car")  # under 4 letters: never
    assert clipped("min", "minimum") and clipped("info", "information")
    assert not clipped("no", "north")  # under 3 letters
    assert not clipped("h2o", "h2o2")  # a formula is no word
    assert acronym("ac", ["air", "conditioning"]) and not acronym("ac", ["conditioning", "air"])
    assert same_word("checkout", "check-out")


def test_the_kv_picks_the_guard_by_what_its_embedder_reads() -> None:
    assert KVStage().guard.rewordings is False  # the core's hashed n-grams read spelling

    class Reads:
        name, dim, rewordings = "reads-meaning", 3, True

        def embed(self, text: str) -> dict[int, float]:
            return {0: 1.0}

    assert KVStage(embedder=Reads()).guard.rewordings is True


HUMAN = Path(__file__).resolve().parents[1] / "bench" / "suites" / "human" / "heldout.jsonl"


def test_the_core_kv_on_the_held_out_human_pairs() -> None:
    """bench/human.py's held-out part through the core's default kv: the figure the README
    reports (32 of 131 served, no wrong hit at the time of writing) may not fall back."""
    rows = [json.loads(line) for line in HUMAN.read_text(encoding="utf-8").splitlines() if line]
    kv = KVStage()
    for r in rows:
        kv.put(r["stored"], r["stored_answer"])
    served = wrong = 0
    for r in rows:
        got = kv.lookup(Query(r["asked"]))
        if r["same"] and got is not None and got.payload == r["stored_answer"]:
            served += 1
        elif got is not None:
            wrong += 1
    assert served >= 30 and wrong <= 1, (served, wrong)
