"""A model's broken answer (a repetition loop) is served once, never remembered, and its basis
says why; ordinary answers, lists and emphasis are not loops."""

from __future__ import annotations

import pytest

from eoc import Cascade
from eoc.query import Stage
from eoc.stages.degenerate import repetition_loop
from eoc.testing import ScriptedBackend
from tests.helpers import small_stages

LOOP = "A moment of stillness, " * 35


@pytest.mark.parametrize(
    "text",
    [
        LOOP,
        "Sure! " + "I can help with that. " * 6,
        "The answer is: yes yes yes yes yes yes yes yes",
        "The answer is: no no no no no.",
        "Paris is the capital. " + "Paris Paris Paris Paris " * 5,
    ],
)
def test_a_loop_is_found(text: str) -> None:
    reason = repetition_loop(text)
    assert reason is not None and "repetition loop" in reason


@pytest.mark.parametrize(
    "text",
    [
        "The capital of France is Paris.",
        "1. Apples 2. Pears 3. Plums 4. Cherries 5. Grapes",
        "It is very very good.",
        "Step one: open the lid. Step two: pour the water. Step three: close the lid.",
        "No, no, no. That is not how it works; the lid opens the other way.",
        "Ha, ha! Very funny. Now, the train leaves at 9, at 10 and at 11 on weekdays.",
    ],
)
def test_ordinary_text_is_no_loop(text: str) -> None:
    assert repetition_loop(text) is None


def test_a_looping_answer_is_served_once_never_remembered_and_says_why() -> None:
    backend = ScriptedBackend({"say something calm": LOOP.strip()})
    with Cascade(small_stages(backend)) as c:
        first = c.resolve("say something calm")
        assert first.stage is Stage.NEURAL and first.stored == ""
        assert "not remembered: a repetition loop" in first.cost.basis
        assert first.receipt.verify()  # the basis is bound like any other
        again = c.resolve("say something calm")
    assert again.stage is Stage.NEURAL and backend.calls == 2


def test_a_sound_answer_is_remembered_as_before() -> None:
    backend = ScriptedBackend({"say something calm": "Breathe in, and out."})
    with Cascade(small_stages(backend)) as c:
        assert c.resolve("say something calm").stored == "yes"
        assert c.resolve("say something calm").stage is Stage.CACHE
