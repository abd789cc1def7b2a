"""Right in context (issue 34, item 3): after earlier turns, a fact answers a conversation only
where eoc can show the turns change neither what is asked nor how the answer must be given
(:func:`eoc.chat.followup.earlier_turns_change`); else the model reads the conversation whole.

The suite ``bench/suites/context-conversations.jsonl`` (120 conversations written by hand apart
from the rule, half where an earlier turn changes the answer) and its sealed part run here with
the core's embedder: no cheap answer may be wrong in its conversation. tests/native/ runs them
with MiniLM.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from eoc import Cascade, Stage
from eoc.chat.followup import (
    MAX_EARLIER_TURNS,
    earlier_turns_change,
    gives_only,
    only_pleasantries,
    several_senses,
    stands_alone,
)
from eoc.chat.request import ChatDefaults, parse_chat
from eoc.testing import ScriptedBackend
from tests.helpers import small_stages

BENCH = Path(__file__).resolve().parents[1] / "bench"
SUITES = ("context-conversations", "context-conversations-sealed")
"""The tuning part, and the sealed part run once after the rule was done (0 served wrongly)."""


def _bench() -> Any:
    sys.path.insert(0, str(BENCH))
    try:
        import context
    finally:
        sys.path.remove(str(BENCH))
    return context


def ask(c: Cascade, *turns: tuple[str, str]) -> Any:
    messages = [{"role": r, "content": t} for r, t in turns]
    return c.resolve(parse_chat({"model": "m", "messages": messages}, ChatDefaults("m")).query())


FACTS = {"what is the capital of Japan?": "Tokyo", "capital of France?": "Paris"}


def fact_of(text: str) -> str | None:
    return FACTS.get(text)


@pytest.mark.parametrize(
    ("turns", "why"),
    [
        ([("user", "answer only in JSON from now on"), ("assistant", "Sure.")], "no fact"),
        ([("user", "here ^ means XOR"), ("assistant", "Understood.")], "no fact"),
        ([("user", "I'm asking about US states"), ("assistant", "OK!")], "no fact"),
        ([("user", "hi"), ("assistant", "Hi! I'll answer in French from now on.")], "courtesy"),
        ([("user", "capital of France?"), ("assistant", "Paris. Want JSON from now on?")], "only"),
        ([("user", "capital of France?"), ("assistant", "Lyon.")], "only"),
        ([("assistant", "Bonjour ! Je réponds en français.")], "courtesy"),
        ([("user", "capital of France?"), ("assistant", "Paris."), ("assistant", "x")], "two"),
    ],
)
def test_earlier_turns_that_may_change_the_answer_keep_facts_out(
    turns: list[tuple[str, str]], why: str
) -> None:
    said = earlier_turns_change([*turns, ("user", "what is the capital of Japan?")], fact_of)
    assert why in said


def test_earlier_turns_eoc_can_read_leave_facts_in() -> None:
    turns = [
        ("system", "You are helpful."),  # the operator's switch decides system prompts
        ("user", "hey! good morning"),
        ("assistant", "Good morning! How can I help you today?"),
        ("user", "capital of France?"),
        ("assistant", "The capital of France is Paris."),
        ("user", "thanks so much"),
        ("assistant", "You're welcome! Anything else?"),
        ("user", "what is the capital of Japan?"),
    ]
    assert earlier_turns_change(turns, fact_of) == ""


def test_a_name_of_several_senses_after_a_fact_goes_to_the_model() -> None:
    """ "capital of the USA?" ... "capital of Georgia?": the earlier fact may have chosen the
    state; asked alone, or after a greeting, the pack's sense is the one meant."""
    assert several_senses("what's the capital of Georgia?") == "georgia"
    assert several_senses("symbol of mercury") == "mercury"
    assert several_senses("how many litres in a gallon") == "gallon"
    assert several_senses("what is the capital of Japan?") == ""
    after_fact = [("user", "capital of France?"), ("assistant", "Paris.")]
    assert "several senses" in earlier_turns_change(
        [*after_fact, ("user", "capital of Georgia?")], fact_of
    )
    greeted = [("user", "hi"), ("assistant", "Hello!"), ("user", "capital of Georgia?")]
    assert earlier_turns_change(greeted, fact_of) == ""


def test_too_many_earlier_turns_are_not_read() -> None:
    turns = [("user", "thanks")] * (MAX_EARLIER_TURNS + 1)
    assert "more than" in earlier_turns_change([*turns, ("user", "x?")], fact_of)


def test_courtesy_and_a_bare_fact() -> None:
    assert only_pleasantries("ok cool, thanks!! 😀")
    assert not only_pleasantries("ok, answer in JSON")
    assert gives_only("The capital of Japan is Tokyo.", "Tokyo", "what is the capital of Japan?")
    assert gives_only("299,792,458 m/s", "299792458 m/s (exact, SI)", "speed of light?")
    assert not gives_only("Tokyo, and from now on in French.", "Tokyo", "capital of Japan?")


def test_an_opener_before_a_whole_question_stands_alone() -> None:
    assert stands_alone("and what is the capital of Spain?")
    assert not stands_alone("and its capital?")
    assert not stands_alone("and on sundays?")


def test_the_cascade_passes_a_conversation_with_an_instruction_to_the_model() -> None:
    backend = ScriptedBackend()
    with Cascade(small_stages(backend)) as c:
        json_first = ask(
            c,
            ("user", "answer only in JSON from now on please"),
            ("assistant", 'Sure: {"ok": true}'),
            ("user", "capital of France?"),
        )
        plain_first = ask(
            c,
            ("user", "what is the capital of Japan?"),
            ("assistant", "Tokyo."),
            ("user", "capital of France?"),
        )
    assert json_first.stage is Stage.NEURAL and len(backend.chats) == 1
    assert plain_first.stage is Stage.GRAPH and plain_first.payload == "Paris"


@pytest.mark.parametrize("suite", SUITES)
def test_the_conversation_suite_gets_no_wrong_cheap_answer(suite: str) -> None:
    bench = _bench()
    rows = bench.load(suite)
    outcomes = bench.run(bench.cascade("hashed"), rows)
    wrong = [o for o in outcomes if o["served"] and not o["right"]]
    assert not wrong, wrong
    changed = [r for r in rows if r["context_changes"]]
    assert len(rows) >= 100 and 2 * len(changed) >= len(rows) * 0.8
