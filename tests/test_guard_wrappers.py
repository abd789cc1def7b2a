"""A question's greeting and sign-off, its slips of the stored words, and a question asked in
fewer words (issue 24): what the kv embeds and what its guard reads.

Written here for the rules, apart from bench/suites/human (which measures them)."""

from __future__ import annotations

import pytest

from eoc import Query
from eoc.stages import KVStage
from eoc.stages.guard import EntityGuard
from eoc.stages.repair import StoredWords
from eoc.stages.wrappers import unwrap

GUARD = EntityGuard(rewordings=False)  # the core's: what both defaults apply


@pytest.mark.parametrize(
    ("text", "inner"),
    [
        ("Hi there! Can guests park overnight? Thanks in advance", "Can guests park overnight?"),
        ("Good evening, is the spa open late? Many thanks", "is the spa open late?"),
        ("hey, quick one: do you sell stamps? cheers", "do you sell stamps?"),
        ("hiya can i bring my dog? thx", "can i bring my dog?"),
        (
            "hello :) where is the lost property office? thank you so much",
            "where is the lost property office?",
        ),
    ],
)
def test_a_greeting_and_a_sign_off_come_off(text: str, inner: str) -> None:
    assert unwrap(text) == inner


@pytest.mark.parametrize(
    "text",
    [
        "Hey Jude chords",  # a name that opens with a greeting's word
        "Hello Kitty lunch box price?",
        "Thanks for the refund, when will it arrive?",  # thanks for something: said, not a sign-off
        "what is 3 times x",  # a last word that ends the sentence itself
        "What does TA stand for?",
        "Good morning",  # nothing would be left
        "cheers",
    ],
)
def test_what_is_no_wrapper_stays(text: str) -> None:
    assert unwrap(text) == text


def test_the_vocabulary_repairs_one_slip_toward_a_stored_word_only() -> None:
    v = StoredWords()
    for t in (
        "How do I track my order?",
        "Can I pay my bill by direct debit?",
        "long-haul flights",
    ):
        v.add(t)
    assert v.repair("how do i trak my oder") == "how do i track my order"
    assert v.repair("pay my bil by direct debet") == "pay my bill by direct debit"
    assert v.repair("long hual flights") == "long haul flights"  # two letters swapped
    assert v.repair("cat") == "cat" and v.repair("ordre") == "order"
    assert v.repair("trakc my ordeal") == "track my ordeal"  # "ordeal" is two slips from order
    assert v.correction("dat") is None  # three letters: only a doubled one may be missing


def test_a_tie_between_two_stored_words_repairs_nothing() -> None:
    v = StoredWords()
    v.add("cart card")
    assert v.correction("carx") is None
    v.add("card")
    assert v.correction("carx") == "card"  # now the commoner word wins


def test_the_kv_finds_a_stored_question_its_slips_hid() -> None:
    """The core's hashed n-grams score "trak my oder" far from "track my order": repaired
    before it is embedded, the stored question is a candidate, and the guard (which reads the
    query as written and pairs the slips) serves it."""
    kv = KVStage()
    kv.put("How do I track my order?", "Use the link in your confirmation email.")
    kv.put("How do I change my password?", "Settings, then Security.")
    assert kv.embedded_text("hi, how do i trak my oder? thx") == "how do i track my order?"
    got = kv.lookup(Query("hi, how do i trak my oder? thx"))
    assert got is not None and got.payload.startswith("Use the link")


def test_a_name_or_a_word_is_never_repaired_into_a_stored_neighbour() -> None:
    """ "Iran" is a name and "switch" a word: neither is a slip of a stored "Iraq" or "stitch",
    for the search or the guard (a lower-case "oder", no word and a name the pack does not hold,
    may still be "order")."""
    kv = KVStage()
    kv.put("What is the capital of Iraq?", "Baghdad")
    kv.put("How do I stitch off a seam?", "Tie a knot.")
    assert "iraq" not in kv.embedded_text("capital of Iran")
    assert kv.lookup(Query("What is the capital of Iran?")) is None
    assert kv.embedded_text("how do I switch off notifications") == (
        "how do I switch off notifications"
    )
    assert kv.lookup(Query("How do I switch off a seam?")) is None


@pytest.mark.parametrize(
    ("query", "stored"),
    [
        ("overdraft cost?", "How much does an arranged overdraft cost?"),
        ("bike parking?", "Is there bike parking at the station?"),
        # "car" still names a kind of excess: the modifier keeps its noun
        ("car excess?", "What is the excess on my car policy?"),
        ("how do i pay my council tax online", "How do I pay my council tax online by card?"),
    ],
)
def test_a_question_in_fewer_words_passes(query: str, stored: str) -> None:
    assert GUARD.refusal(query, stored) == ""


@pytest.mark.parametrize(
    ("query", "stored", "why"),
    [
        ("How do I buy a gift?", "How do I buy a gift card?", "lacks card"),  # the head noun
        ("What is the calling code of Chad?", "What is the ISO country code of Chad?", "iso"),
        ("How do I cancel a standing order?", "How do I set up a standing order?", ""),
        ("How do I order?", "How do I cancel my order?", "cancel"),
    ],
)
def test_a_drop_that_changes_what_is_asked_is_refused(query: str, stored: str, why: str) -> None:
    reason = GUARD.refusal(query, stored)
    assert reason and why.lower() in reason.lower(), reason


def test_the_tense_asked_is_read_after_the_situation_told() -> None:
    """A statement before the question tells when the situation happened; the question's own
    tense is what is compared ("I was charged twice, how do I get a refund?")."""
    assert (
        GUARD.refusal("I was charged twice, how do I get a refund?", "How do I get a refund?") == ""
    )
    reason = GUARD.refusal("How did I get a refund?", "How do I get a refund?")
    assert "tense" in reason


def test_a_modal_after_what_time_says_nothing_of_who_does_it() -> None:
    stored = "What time does the first tram run on Sundays?"
    assert GUARD.refusal("what time will the first tram be running on Sunday?", stored) == ""
    assert "doer" in GUARD.refusal("Who beat Spain?", "Who did Spain beat?")


@pytest.mark.parametrize(
    ("query", "stored"),
    [
        ("how long are deleted files kept?", "How long do you keep deleted files?"),
        ("I paid twice, how do I get a refund?", "How do I get a refund if I pay twice?"),
        ("when will my parcel be sent?", "When do you send my parcel?"),
    ],
)
def test_an_irregular_past_form_is_its_verb(query: str, stored: str) -> None:
    """data/irregular.tsv: "kept" is keep, "paid" pay, "sent" send (forms that are also
    another word, such as "left" or "sat", are not listed)."""
    assert GUARD.refusal(query, stored) == ""
    assert GUARD.refusal("Which side is left luggage on?", "Which side is leave luggage on?")


@pytest.mark.parametrize(
    ("query", "stored", "why"),
    [
        # another question word: who, against "in what year"
        (
            "Who was the first European to sail the length of the Amazon?",
            "In what year did the first European sail the length of the Amazon?",
            "year",
        ),
        # the word a "what" question asks for is dropped: the query asks what the thing is
        ("What is a hermaphrodite?", "What is a trait of sequential hermaphrodites?", "trait"),
        # a "when" question against a "what" one
        ("When do treaties apply?", "What do the stated treaties apply to?", "stated"),
        # the noun a "what" question asks for, left out of a bare phrase
        ("hermaphrodites?", "What is a trait of sequential hermaphrodites?", "trait"),
        # a framing word ("ask") put where the stored question's word was
        ("How do I ask a price?", "How do I bid a price at auction?", "bid"),
        # a superlative ranks the noun the "what" question asks for ("feature"), left out
        (
            "What is the largest ctenophore?",
            "What is the largest sensory feature of the ctenophora?",
            "feature",
        ),
        # the two "what" questions ask for different things
        (
            "What is the immune system?",
            "What is the process by which the immune system finds tumors?",
            "",
        ),
    ],
)
def test_fewer_words_keep_what_is_asked(query: str, stored: str, why: str) -> None:
    reason = GUARD.refusal(query, stored)
    assert reason and why in reason, reason
