"""The hit guard's rules, one pair each: what decides the answer must agree (numbers, names,
negation, opposites, ranks, the sides of a transfer, the words that narrow a noun), while what
only rewords may differ (politeness, framing, synonyms, a possessive). Every refusal says why."""

from __future__ import annotations

import pytest

from eoc.stages.guard import EntityGuard

GUARD = EntityGuard()

REFUSED = [
    # (query, stored, a word of the reason)
    ("How do I book 3 tickets for Saturday?", "How do I book 2 tickets for Saturday?", "numbers"),
    ("Where was Edison born?", "When was Edison born?", "different things"),
    ("Where do I buy a ticket?", "How do I buy a ticket?", "different things"),
    ("Did Brazil beat Germany?", "Did Germany beat Brazil?", "order"),
    # a self-correction asks what it says last: the question words taken back do not count
    (
        "when did no sorry how do I renew my passport",
        "when do I renew my passport",
        "question words: when",
    ),
    ("when do I renew my passport, I mean how", "When do I renew my passport?", "question words"),
    ("What happens if I don't add a payment method?", "How do I add a payment method?", "negated"),
    ("How do I pay without a credit card?", "How do I pay with a credit card?", "negated"),
    # "no" after a verb of having or being denies; it takes nothing back
    ("Why is there no signal on my phone?", "Why is there a signal on my phone?", "negated"),
    ("I have no access to my account", "I have access to my account", "negated"),
    # a query that takes words back may not add a denial in what it says last
    ("Sorry, I don't want to cancel my order", "I want to cancel my order", "negated"),
    ("Actually, my card was not charged", "My card was charged", "negated"),
    ("How do I, never mind, why can't I pay?", "Why can I pay?", "negated"),
    ("How do I turn off dark mode?", "How do I turn on dark mode?", "opposites"),
    ("How do I disable dark mode?", "How do I turn on dark mode?", "opposites"),
    ("What is the smallest city of France?", "What is the largest city of France?", "opposites"),
    ("Can I get a refund after 30 days?", "Can I get a refund within 30 days?", "opposites"),
    ("How do I import my account?", "How do I delete my account?", "different actions"),
    ("How do I lock my card?", "How do I replace my card?", "only one"),
    ("What is the second largest city of France?", "What is the largest city of France?", "ranks"),
    (
        "How do I transfer money from my current account to my savings account?",
        "How do I transfer money from my savings account to my current account?",
        "side differs",
    ),
    ("How do I buy a gift card?", "How do I buy a gift?", "adds card"),
    # a computation is computed, never matched: "what is 7+8" got the answer of "what is 7*8"
    ("what is 7+8", "what is 7*8", "computation"),
    ("calculate 17 times 3", "what is 17 times 3", "computation"),
    # operators and symbols decide like numbers do
    ("What does x != y return in Go?", "What does x == y return in Go?", "operators or symbols"),
    ("Is 2^10 >= 1000 in JavaScript?", "Is 2^10 <= 1000 in JavaScript?", "operators or symbols"),
    ("When was C# released?", "When was C released?", "operators or symbols"),
    ("Who is the voice of O+ in the show?", "Who is the voice of O- in the show?", "symbols"),
    ("What is 15% of the budget for Lyon?", "What is 15 of the budget for Lyon?", "symbols"),
    ("What is 15 percent of the budget for Lyon?", "What is 15 of the budget for Lyon?", "symbols"),
    # a tense that changes the fact
    ("Who was the mayor of Lyon?", "Who is the mayor of Lyon?", "tense"),
    ("Did the museum open on Mondays?", "Does the museum open on Mondays?", "tense"),
    # who does what to whom: the question word as the doer or the done-to, or words that trade
    # places across a verb
    ("Who did Ghana beat in the final?", "Who beat Ghana in the final?", "question word"),
    ("what do herons eat", "what eats herons", "question word"),
    ("which club did the rovers beat", "which club beat the rovers", "question word"),
    ("does the otter chase the heron", "does the heron chase the otter", "trade places"),
    ("do bees pollinate clover", "does clover pollinate bees", "trade places"),
    ("is the cat in the box", "is the box in the cat", "swapped"),
    ("how many lbs is 150 kg", "how many kg is 150 lbs", "measures another thing"),
    # what the sealed suite's single run missed (read after it): a verb of the rewording list
    # between swapped words, a lone capital letter, a pole said twice, a capital's case, a
    # chess mark standing alone, a music sign
    ("does flask need jinja installed?", "does jinja need flask installed?", "trade places"),
    (
        "can a type A donor give to a type O patient?",
        "can a type O donor give to a type A patient?",
        "order",
    ),
    ("does a lower dose lower the risk?", "does a higher dose lower the risk?", "opposites"),
    ("what is NO in chemistry?", "what is No in chemistry?", "capitals say which"),
    ("what does ?! after a move mean?", "what does !? after a move mean?", "symbols"),
    ("what does a ♭ do to a note?", "what does a ♯ do to a note?", "symbols"),
    ("is a 737 longer than an A320?", "is an A320 longer than a 737?", "swapped"),
    ("How do I delete my business account?", "How do I delete my account?", "adds business"),
    ("How do I buy a gift?", "How do I buy a gift card?", "lacks card"),
    ("How do I cancel part of my booking?", "How do I cancel my booking?", "adds part"),
    ("I bought a gift, how do I buy a gift card?", "How do I buy a gift?", "adds card"),
    ("How do I reset my password?", "I forgot my password, how do I reset it?", "lacks forgot"),
    ("What is the currency of France?", "What is the capital of France?", "lacks capital"),
    # "name" and "number" are what is asked; a word that names a kind ("table", "item") is too
    # when it stands alone, not next to what it names
    ("How do I change my name?", "How do I change my number?", "lacks number"),
    (
        "How do I change my number on Facebook?",
        "How do I change my name on Facebook?",
        "lacks name",
    ),
    ("How do I lock a table in Notion?", "How do I lock an item in Notion?", "lacks item"),
    # "area" alone is a size, not a region: only whole phrases are synonyms
    ("What is the area of France?", "Which region of the world is France in?", "lacks region"),
    ("What is the population of France?", "What is the capital of France?", "lacks capital"),
    # phrases that sound alike but answer otherwise are no synonyms
    ("Which city is the Dutch seat of government?", "What is the Dutch capital?", "lacks capital"),
    ("Which languages are spoken in Peru?", "What is the official language of Peru?", "official"),
]

ALLOWED = [
    ("What is Algeria's capital city?", "What is the capital of Algeria?"),
    ("Tell me Algeria's ISO country code.", "What is the ISO country code of Algeria?"),
    # two names in another order: an "of" on one side only, or a possessive, turns them
    ("Give me the Tesla Model price.", "What is the Model price of Tesla?"),
    ("What is Tesla's Model price?", "What is the Model price for Tesla?"),
    ("how can i enable dark mode", "How do I turn on dark mode?"),
    ("Please help me delete my account.", "How do I delete my account?"),
    ("I want to delete my account, how do I do that?", "How do I delete my account?"),
    ("Please help me reserve 2 tickets for Saturday.", "How do I book 2 tickets for Saturday?"),
    (
        "Please help me move money from my savings account to my current account.",
        "How do I transfer money from my savings account to my current account?",
    ),
    ("Which port does PostgreSQL use by default?", "What is the default port for PostgreSQL?"),
    ("the 2007 I mean 2001 report on Mars", "the 2001 report on Mars"),
    ("No sorry, what is 2+2", "what is 2+2"),
    # a question phrase moves as a whole; "by default" is the default port; symbols spelled out
    ("Aruba lies in which region of the world?", "Which region of the world is Aruba in?"),
    ("Jupiter has how many moons?", "How many moons does Jupiter have?"),
    ("Who wrote Hamlet?", "Who wrote Hamlet, please?"),
    ("Which ISO 3166-1 code does Peru have?", "Which ISO code does Peru have?"),
    ("What is 20 percent of the Lyon budget?", "What is 20% of the Lyon budget?"),
    ("hello! when was C# released?", "When was C# released?"),
    ("WHAT IS THE CAPITAL OF PERU", "What is the capital of Peru?"),  # shouted: case says nothing
    # naming words next to what they name, a framing verb opening the text
    ("Name the capital city of France.", "What is the capital of France?"),
    ("Which chemical symbol does Iron have?", "What is the chemical symbol of Iron?"),
    ("I'd like to know the calling code of Peru.", "What is the calling code of Peru?"),
    # phrase synonyms (data/synonyms.tsv), plural naming words ("countries")
    ("How many people live in France?", "What is the population of France?"),
    ("Which city in France has the most people?", "What is the largest city of France?"),
    ("What is the dialing code for France?", "What is the calling code of France?"),
    ("What are the neighbouring countries of France?", "Which countries border France?"),
    ("Which part of the world is Chad in?", "Which region of the world is Chad in?"),
    ("Where in the world is Chad, by region?", "Which region of the world is Chad in?"),
    ("How many protons does an atom of Iron have?", "What is the atomic number of Iron?"),
    ("I'd like to freeze my card.", "How do I lock my card?"),
    # a possessive, "of" and a headline wording name the same things in another order
    ("Tell me Peru's ISO code.", "Which ISO code does Peru have?"),
    ("British Virgin Islands ISO code", "What is the ISO country code of British Virgin Islands?"),
    ("Which region of the globe is Chad in?", "Which region of the world is Chad in?"),
    ("I need to link up a printer", "How do I connect a printer?"),
    ("how do you pay for a ticket?", "How do I buy a ticket?"),
    # apostrophes inside words are not quotes ("'s Zirconium'" is no quoted name)
    ("What's Zirconium's atomic number?", "What is the atomic number of Zirconium?"),
    # "I'm" is no name, "where do I go to" asks how, "could you name" frames the question
    ("Hey, I'm trying to delete my photos. How?", "How do I delete my photos?"),
    ("So I'm trying to delete my photos. How?", "How do I delete my photos?"),  # no greeting
    ("Where do I go to erase my photos?", "How do I delete my photos?"),
    ("Could you name the capital of Peru?", "What is the capital of Peru?"),
    ("Which ISO country code is assigned to Peru?", "What is the ISO country code of Peru?"),
    # a bare "no" takes back what came before it; after it, "X not Y" sets one thing against
    # another and denies nothing
    ("What is the capital of Spain no Peru?", "What is the capital of Peru?"),
    # what a correction says last names no question word: the one it asked before still asks
    ("when does the museum, no sorry, the library open", "When does the library open?"),
    ("how no sorry when do I renew my passport", "When do I renew my passport?"),
    (
        "How many mammals live in the Amazon no sorry reptiles not mammals?",
        "How many reptiles live in the Amazon?",
    ),
    # a leading statement is the user's situation: its words may be ones the stored one lacks
    ("I forgot my password, how do I reset it?", "Help me reset my password."),
]


@pytest.mark.parametrize(("query", "stored", "why"), REFUSED)
def test_a_pair_that_asks_something_else_is_refused_with_its_reason(
    query: str, stored: str, why: str
) -> None:
    reason = GUARD.refusal(query, stored)
    assert why in reason, (query, stored, reason)
    assert not GUARD.allows(query, stored)


@pytest.mark.parametrize(("query", "stored"), ALLOWED)
def test_a_rewording_is_allowed(query: str, stored: str) -> None:
    assert GUARD.refusal(query, stored) == ""
    assert GUARD.allows(query, stored)


def test_the_rules_come_from_data_files_next_to_the_guard() -> None:
    from eoc.stages.guard import polarity_axes, rewording_words, synonyms

    assert len(polarity_axes()) >= 20 and "unlock" in {
        p[0] for _, poles in polarity_axes() for phrases in poles for p in phrases
    }
    assert "pleas" in rewording_words() or "please" in rewording_words()
    assert "reserv" in synonyms() or "reserve" in synonyms()


def test_kv_explain_lists_the_nearest_stored_questions_with_each_reason() -> None:
    from eoc import Query
    from eoc.stages import KVStage

    kv = KVStage()
    kv.put("How do I turn on dark mode?", "Settings > Display")
    kv.put("How do I turn on notifications?", "Settings > Notifications")
    why = kv.explain(Query("How do I turn off dark mode?"))
    assert why[0]["stored"] == "How do I turn on dark mode?" and not why[0]["served"]
    assert "opposites" in str(why[0]["reason"])
    served = kv.explain(Query("how can i enable dark mode please"))
    assert served[0]["served"] and served[0]["reason"] == ""
    assert all(not c["served"] for c in served[1:])


@pytest.mark.parametrize(
    ("query", "stored", "served"),
    [
        # a relation's labels in the knowledge pack name one thing, numbers and acronyms included
        ("Zambia ISO 3166 code?", "What is the ISO country code of Zambia?", True),
        (
            "What is the two-letter country code of Zambia?",
            "What is the ISO country code of Zambia?",
            True,
        ),
        ("What's the proton number of Iron?", "What is the atomic number of Iron?", True),
        ("What is the dialling code of Peru?", "What is the calling code of Peru?", True),
        # the noun for the kind of thing asked about may stand inside a label
        (
            "What's the alpha-2 country code of Chile?",
            "What is the ISO country code of Chile?",
            True,
        ),
        (
            "What is the chemical element symbol of Iron?",
            "What is the chemical symbol of Iron?",
            True,
        ),
        # another noun inside it is more than the label
        (
            "What is the alpha-2 region code of Chile?",
            "What is the ISO country code of Chile?",
            False,
        ),
        # "no." before "of" or a number is the abbreviation of number, not a negation
        ("atomic no. of Iron?", "What is the atomic number of Iron?", True),
        ("Where is room no. 12?", "Where is room number 12?", True),
        ("Is there no room 12?", "Is there a room 12?", False),
        # another relation, another number, or a one-word label are still different questions
        (
            "What is the three-letter country code of Zambia?",
            "What is the ISO country code of Zambia?",
            False,
        ),
        ("What is the ISO 9001 code of Zambia?", "What is the ISO country code of Zambia?", False),
        ("What is the dialing code of Zambia?", "What is the ISO country code of Zambia?", False),
        ("What is the size of my mailbox?", "What is the area of my mailbox?", False),
    ],
)
def test_the_packs_relation_labels_read_as_one_relation(
    query: str, stored: str, served: bool
) -> None:
    assert EntityGuard().allows(query, stored) is served, EntityGuard().refusal(query, stored)


def test_a_stored_analysis_reused_across_queries_reads_each_querys_names() -> None:
    # the analysis of a stored question remembers which words it holds (Frame.has): a second
    # query naming another place must not get the first query's answer
    from eoc.stages.guard.frame import Frame

    guard = EntityGuard()
    stored = guard.prepare("What is the capital of Nigeria?")
    for word in ("nigeria", "niger", "capital", "lagos", "nigeria", "niger", "nga"):
        assert Frame.has(stored, word) is Frame.has(guard.prepare(stored.text), word), word
    for _ in range(2):
        assert guard.allows(guard.prepare("what's the capital city of Nigeria"), stored)
        assert not guard.allows(guard.prepare("what's the capital city of Niger"), stored)
        assert not guard.allows(guard.prepare("what is the capital of Chad"), stored)
    crowded = guard.prepare("Which trains run from Leeds to York on Sundays?")
    for i in range(60):  # past what it remembers: still each query's own answer
        assert not guard.allows(
            guard.prepare(f"Which trains run from Leeds to Town{i} on Sundays?"), crowded
        )
    assert len(crowded.held) <= 32
    assert guard.allows(guard.prepare("which trains run from leeds to york on sundays"), crowded)
