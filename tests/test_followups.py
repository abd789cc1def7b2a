"""A fact (an answer no model made) may answer a request that is more than a plain question:
a follow-up whose last message stands alone, at any sampling, within max_tokens, and under a
system prompt only where the operator says its system prompts leave facts alone
(eoc/followup.py). A model's remembered answer is never served that way."""

from __future__ import annotations

import pytest

from eoc import Cascade
from eoc.chat.followup import stands_alone
from eoc.chat.request import ChatDefaults, parse_chat
from eoc.query import Stage
from eoc.testing import ScriptedBackend
from tests.helpers import small_stages

M = "m"


def request(*messages: tuple[str, str], defaults: ChatDefaults | None = None, **params: object):
    body = {"model": M, "messages": [{"role": r, "content": c} for r, c in messages], **params}
    return parse_chat(body, defaults or ChatDefaults(M))


def ask(cascade: Cascade, *messages: tuple[str, str], **kw: object):
    return cascade.resolve(request(*messages, **kw).query())


EARLIER = (
    ("user", "hi!"),
    ("assistant", "Hello! How can I help?"),
    ("user", "what is the capital of Japan?"),
    ("assistant", "The capital of Japan is Tokyo."),
)
"""Earlier turns that change nothing eoc can show (a greeting, a fact and only that fact)."""


@pytest.mark.parametrize(
    "text",
    [
        "what is the capital of France?",
        "Which cards do you accept?",
        "is there a pool at the hotel",
    ],
)
def test_questions_that_stand_alone(text: str) -> None:
    assert stands_alone(text)


@pytest.mark.parametrize(
    "text",
    [
        "and its population?",
        "what about Spain?",
        "how much does it cost?",
        "the second one",
        "yes please",
        "No thanks",
        "same for Paris?",
        "Is that one cheaper?",
        "And the capital of Japan?",
        "what did you say the capital was",
    ],
)
def test_follow_ups_that_point_back(text: str) -> None:
    assert not stands_alone(text)


def test_a_standalone_follow_up_gets_the_graph_fact_at_any_sampling() -> None:
    backend = ScriptedBackend()
    with Cascade(small_stages(backend)) as c:
        r = ask(c, *EARLIER, ("user", "what is the capital of France?"))
        assert r.stage is Stage.GRAPH and r.payload == "Paris"
        hot = ask(c, ("user", "capital of Japan?"), temperature=0.9, seed=None)
        assert hot.stage is Stage.GRAPH and hot.payload == "Tokyo"
        kv = ask(c, *EARLIER, ("user", "what is the default port for ssh"))
        assert kv.stage is Stage.KV and kv.payload == "22"
    assert backend.calls == 0 and not backend.chats


def test_a_follow_up_that_points_back_goes_to_the_model() -> None:
    backend = ScriptedBackend()
    with Cascade(small_stages(backend)) as c:
        r = ask(
            c,
            ("user", "tell me about France"),
            ("assistant", "France..."),
            ("user", "and its capital?"),
        )
    assert r.stage is Stage.NEURAL and len(backend.chats) == 1


def test_a_system_prompt_keeps_facts_from_the_cheap_tiers_unless_the_operator_allows() -> None:
    system = ("system", "You are a helpful travel assistant. Reply in French.")
    backend = ScriptedBackend()
    with Cascade(small_stages(backend)) as c:
        r = ask(c, system, ("user", "capital of France?"))
        assert r.stage is Stage.NEURAL  # "Reply in French": the model says it
        allowed = ChatDefaults(M, facts_under_system_prompts=True)
        app = ("system", "You are the help desk of Example Air. Be brief.")
        for wording in ("capital of France?", "what's the capital of France"):
            q = request(app, ("user", wording), defaults=allowed).query()
            assert c.resolve(q).stage in (Stage.GRAPH, Stage.CACHE)


def test_stop_strings_and_a_short_max_tokens_keep_a_fact_out() -> None:
    """Without the model's tokenizer, a fact's tokens are bounded from above (one a byte, and
    one for a word marker): "Paris" needs max_tokens 6, "22" 3, never fewer."""
    with Cascade(small_stages(ScriptedBackend())) as c:
        assert ask(c, ("user", "capital of France?"), stop=["."]).stage is Stage.NEURAL
        assert ask(c, ("user", "capital of France?"), max_tokens=1).stage is Stage.NEURAL
        assert ask(c, ("user", "capital of France?"), max_tokens=5).stage is Stage.NEURAL
        assert ask(c, ("user", "capital of France?"), max_tokens=6).stage is Stage.GRAPH
        long = "what is the default port for ssh"
        assert ask(c, ("user", long), max_tokens=2).stage is Stage.NEURAL
        assert ask(c, ("user", long), max_tokens=3).stage is Stage.KV


def test_a_fact_longer_than_max_tokens_is_never_served_as_finished() -> None:
    """The issue's case: "the square root of 2" is 1.41421356..., 11 tokens and more; at
    max_tokens 4 a guess of 4 characters a token let it through as finished."""
    with Cascade(small_stages(ScriptedBackend())) as c:
        got = ask(c, ("user", "what is the square root of 2"), max_tokens=4)
        assert got.stage is Stage.NEURAL


def test_the_models_tokenizer_counts_a_fact_where_the_backend_has_one() -> None:
    """A backend that counts tokens (a loaded local model) is asked, not bounded."""

    class Counting(ScriptedBackend):
        def count_tokens(self, text: str) -> int:
            return 1  # "Paris" is one token of this model's

    with Cascade(small_stages(Counting())) as c:
        assert ask(c, ("user", "capital of France?"), max_tokens=1).stage is Stage.GRAPH


def test_a_models_remembered_answer_is_never_served_to_another_conversation() -> None:
    backend = ScriptedBackend({"tell me a joke": "Why did the chicken cross the road?"})
    with Cascade(small_stages(backend)) as c:
        assert c.resolve("tell me a joke").stage is Stage.NEURAL  # remembered in cache and kv
        r = ask(c, *EARLIER, ("user", "tell me a joke"))
    assert r.stage is Stage.NEURAL and len(backend.chats) == 1
