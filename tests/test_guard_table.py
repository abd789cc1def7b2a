"""The entity guard's one table of rules (eoc/stages/guard/rules.py): every row decides some
pair, the pair it is shown with here, and a rule added to the table comes with its example."""

from __future__ import annotations

import pytest

from eoc.stages.guard import RULES, Analysis, EntityGuard
from eoc.stages.guard.case import Case
from eoc.stages.guard.rules import decide

# rule name: (query, stored question, rewordings), a pair that rule decides
DECIDED_BY = {
    "computation": ("what is 7*8", "what is 7+8", False),
    "numbers": ("population of France in 2001", "population of France in 2002", False),
    "question words taken back": (
        "how did no sorry when do I renew my passport",
        "where do I renew my passport",
        False,
    ),
    "operators and symbols": ("is C++ hard to learn", "is C# hard to learn", False),
    "names": ("capital of Niger", "capital of Nigeria", False),
    "capitals": ("what is CO", "what is Co", False),
    "order of names": ("is Paris bigger than London", "is London bigger than Paris", False),
    "negation taken back": (
        "can I pay by card no wait can't I pay by card",
        "can I pay by card",
        False,
    ),
    "ranks": ("second largest city in France", "largest city in France", False),
    "opposites": ("how do I turn on wifi", "how do I disable wifi", False),
    "sides of a transfer": (
        "transfer from savings to current",
        "transfer from checking to current",
        False,
    ),
    "swapped sides": ("convert miles to km", "convert km to miles", False),
    "time": ("is the shop open last night", "is the shop open", False),
    "who does what to whom": ("who beat Spain", "who did Spain beat", False),
    "kind of answer": ("what time is check-out", "can I get a late check-out", False),
    "another wording": (
        "is there somewhere to leave my bike while I'm at the gym",
        "Does the gym have secure bicycle parking?",
        False,
    ),
    "question words": ("where is the museum", "when is the museum open", False),
    "tense": ("who is the president", "who was the president", False),
    "negation": ("can I pay by card", "can't I pay by card", False),
    "actions": ("how do I delete my account", "how do I upgrade my account", False),
    "an action said by one side alone": (
        "how do I lock my card",
        "how do I replace my card",
        False,
    ),
    "fewer words": ("overdraft cost?", "How much does an arranged overdraft cost?", False),
    "changed words": ("the set lunch menu", "the set dinner menu", False),
}


def test_every_rule_has_a_name_of_its_own_and_says_what_it_checks() -> None:
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names))
    assert all(rule.check.__doc__ for rule in RULES)


def test_every_rule_of_the_table_is_shown_deciding_a_pair() -> None:
    assert set(DECIDED_BY) == {rule.name for rule in RULES}


@pytest.mark.parametrize("name", [rule.name for rule in RULES])
def test_each_rule_decides_its_pair_and_the_guard_says_the_same(name: str) -> None:
    query, stored, rewordings = DECIDED_BY[name]
    reason, by = decide(Case(Analysis(query), Analysis(stored), rewordings=rewordings))
    assert by == name, reason
    assert EntityGuard(rewordings=rewordings).refusal(query, stored) == reason


def test_the_table_is_asked_in_order_a_decisive_rule_after_a_noted_wording_wins() -> None:
    # "HMRC" is a name in one only (noted as wording), the tense decides after it
    query, stored = "when was the HMRC deadline", "when is the deadline"
    reason, by = decide(Case(Analysis(query), Analysis(stored)))
    assert by == "tense", reason
    # without the decisive rule the noted wording is the reason
    rules = tuple(r for r in RULES if r.name != "tense")
    reason, by = decide(Case(Analysis(query), Analysis(stored)), rules)
    assert by == "names", reason
