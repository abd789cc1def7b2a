"""Look-alike classes of issue 34 (item 4), each as a general rule: a name that is a prefix of
another name or of its adjective, comparison words, times of day, two nouns trading places, and
spelling repair that never turns a word into a stored neighbour. The hand-written pairs of these
classes are ``bench/suites/nearmiss.jsonl`` (run by tests/test_lookalikes.py)."""

from __future__ import annotations

import pytest

from eoc import Query
from eoc.stages import KVStage
from eoc.stages.guard import Analysis, EntityGuard, Frame, clock_times
from eoc.stages.lexicon import is_name, is_word, variants
from eoc.stages.repair import StoredWords
from eoc.stages.spelling import clipping, inflected, misspelled, same_word
from eoc.stages.swaps import traded_around, traded_blocks, traded_words
from eoc.text.forms import fold, words

GUARD = EntityGuard()


def refused(query: str, stored: str) -> str:
    return GUARD.refusal(query, stored)


@pytest.mark.parametrize(
    ("query", "stored"),
    [
        ("whats the capital of niger", "What is the capital of Nigeria?"),
        ("who created java", "Who created JavaScript?"),
        ("what do jordan people eat", "what do Jordanian people eat"),
        ("what is the population of oxford", "what is the population of Oxfordshire"),
        ("is a cat allowed", "is a catalogue allowed"),
    ],
)
def test_a_name_or_word_is_no_clipping_of_a_longer_one(query: str, stored: str) -> None:
    assert refused(query, stored)
    kv = KVStage()
    kv.put(stored, "stored answer")
    assert kv.lookup(Query(query)) is None


def test_a_names_part_is_held_clipped_only_where_the_short_form_is_no_name() -> None:
    """The names check reads "Sat" as Saturday and "Univ" as University, never "Niger" as
    Nigeria or "Java" as JavaScript (each also refused by the content words)."""
    assert Frame.has(Analysis("is it open on Sat"), "saturday")
    assert Frame.has(Analysis("the Univ library"), "university")
    assert not Frame.has(Analysis("the capital of Niger"), "nigeria")
    assert not Frame.has(Analysis("who made Java"), "javascript")


def test_clippings_that_are_no_word_or_common_still_count() -> None:
    assert clipping("info", "information") and clipping("min", "minimum")
    assert clipping("sat", "saturday") and not clipping("niger", "nigeria")
    assert not clipping("java", "javascript") and not clipping("cat", "catalogue")
    assert not refused("opening hours on Sat", "opening hours on Saturday")


@pytest.mark.parametrize(
    ("query", "stored"),
    [
        ("can I drink if I'm over 21?", "Can I drink if I am under 21?"),
        ("is the bridge above sea level", "is the bridge below sea level"),
        ("flights over 100 euros", "flights under 100 euros"),
    ],
)
def test_comparison_words_are_opposites(query: str, stored: str) -> None:
    assert "opposites" in refused(query, stored)


@pytest.mark.parametrize(
    ("query", "stored"),
    [
        ("what's 2am in 24 hour time", "What is 2 p.m. in 24-hour time?"),
        (
            "if my alarm is 7 am and i sleep at 11 am",
            "if my alarm is 7 a.m. and I sleep at 11 p.m.",
        ),
        ("is the shop open at midnight", "is the shop open at noon"),
        ("what is 9 PM in Tokyo", "what is 9 AM in Tokyo"),
    ],
)
def test_times_of_day_decide(query: str, stored: str) -> None:
    assert refused(query, stored)


def test_times_on_the_12_hour_clock_are_read_as_times() -> None:
    assert clock_times("meet at 2am or 11:45 p.m.") == frozenset({"2:00 am", "11:45 pm"})
    assert not refused("what is 2 pm in 24 hour time", "What is 2 p.m. in 24-hour time?")


@pytest.mark.parametrize(
    ("query", "stored"),
    [
        ("exchange a gift card for cash", "exchange cash for a gift card"),
        ("can dogs eat cat food?", "Can cats eat dog food?"),
        ("what is chocolate milk made of", "What is milk chocolate made of?"),
        ("is a rectangle a square?", "Is a square a rectangle?"),
        ("can I replace oil with butter", "can I replace butter with oil"),
        (
            "when its noon in new york what time is it in london",
            "When it's noon in London, what time is it in New York?",
        ),
    ],
)
def test_nouns_that_trade_places_ask_something_else(query: str, stored: str) -> None:
    assert "trade places" in refused(query, stored)


def test_runs_of_words_that_trade_places_ask_something_else() -> None:
    """The sealed suite's misses on its one run: two runs side by side traded, a word left out
    inside a product's name, a title in the plural."""
    assert "trade places" in refused(
        "is every rational number an integer?", "Is every integer a rational number?"
    )
    assert refused("when was the ipod first released?", "When was the iPod touch first released?")
    assert refused("who directed alien", "Who directed Aliens?")
    assert not refused("overdraft cost?", "How much does an arranged overdraft cost?")
    assert not refused("opening hours on Sundays", "What are the opening hours on Sunday?")
    w = lambda t: words(fold(t))  # noqa: E731
    assert traded_blocks(w("the price per night"), w("the per night price")) is None


def test_what_may_trade_places_and_ask_the_same() -> None:
    w = lambda t: words(fold(t))  # noqa: E731
    assert traded_words(w("salt and pepper"), w("pepper and salt")) is None
    assert traded_words(w("python vs java"), w("java vs python")) is None
    assert traded_around(w("the default port for ssh"), w("the port by default for ssh")) is None
    assert traded_around(w("exchange cash for a gift card"), w("exchange a gift card for cash"))
    assert not refused("What's the capital of France?", "what is the capital of france")


@pytest.mark.parametrize(
    ("query", "stored"),
    [
        ("how do I switch off notifications", "how do I stitch off a seam"),
        ("what is a diary", "what is a dairy"),
        ("what is desert wine", "what is dessert wine"),
        ("what is the capital of Iran", "what is the capital of Iraq"),
        ("where is bali", "where is mali"),
    ],
)
def test_a_word_is_never_read_as_a_slip_of_another(query: str, stored: str) -> None:
    assert refused(query, stored)
    kv = KVStage()
    kv.put(stored, "stored answer")
    assert kv.lookup(Query(query)) is None
    assert is_word(query.split()[-1]) or is_name(query.split()[-1])


def test_a_slip_that_is_no_word_is_still_repaired_and_paired() -> None:
    assert misspelled("stich", "stitch") and misspelled("recieve", "receive")
    assert not misspelled("switch", "stitch") and not misspelled("iran", "iraq")
    assert misspelled("oder", "order")  # a river's name typed in lower case: a slip
    assert same_word("colour", "color") and variants("centre", "center")
    assert same_word("runn", "run", ("running", "run")) and inflected("stopped", "stop")
    v = StoredWords()
    v.add("How do I stitch a hem?")
    assert v.repair("how do i stich a hem") == "how do i stitch a hem"
    assert v.repair("how do i switch a hem") == "how do i switch a hem"
    assert v.correction("iran", "Iran") is None
    kv = KVStage()
    kv.put("How do I stitch a hem?", "By hand or machine.")
    assert kv.lookup(Query("how do i stich a hem?")) is not None


def test_the_older_spelling_bounds_still_hold_for_what_is_no_word() -> None:
    """Slips of letters that make no word: never two of them, never in a word under 4 letters,
    a three-letter word repaired only by doubling a letter ("bil" / "bill")."""
    assert misspelled("netwroks", "networks") and not misspelled("ntewroks", "networks")
    assert not misspelled("teh", "tea")  # three letters: never a slip
    v = StoredWords()
    v.add("what is the tax rate")
    v.add("pay my bill")
    assert v.correction("txa") is None and v.correction("bil") == "bill"


def test_an_irregular_past_is_read_as_its_verb_so_a_swap_around_before_shows() -> None:
    """ "sank" is sink: the two events trade places around "before" (issue 22's sealed miss)."""
    why = refused(
        "did the titanic sink before the wright brothers flew?",
        "did the wright brothers fly before the titanic sank?",
    )
    assert "trade places around before" in why
