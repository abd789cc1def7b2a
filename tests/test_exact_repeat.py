"""The exact-repeat path of ``Cascade.resolve(str)``: a plain question asked again is answered by
its id alone (no Query is built), with the very response the full path gives, and only where the
full path would give it (no TTL, no live counter, an answer this cascade's model may serve)."""

from __future__ import annotations

import pytest

from eoc import Cascade, Query, Stage
from eoc.errors import InputError
from eoc.stages import CacheStage
from eoc.stages.neural import NeuralStage, Reply
from eoc.testing import FakeClock, FakeCounter
from tests.helpers import native_only, small_stages


class Model:
    """A model stand-in whose ``max_tokens`` is part of what makes its answers."""

    name = "stand-in"
    runs_model = True

    def __init__(self) -> None:
        self.max_tokens = 16
        self.asked = 0

    @property
    def origin(self) -> str:
        return f"stand-in max_tokens={self.max_tokens}"

    def generate(self, prompt: str) -> Reply:
        self.asked += 1
        return Reply(f"answer {self.asked} to {prompt}")


def full_path(c: Cascade) -> Cascade:
    c._repeat = None  # what every answer took before the exact-repeat path
    return c


@pytest.mark.parametrize(
    "prompt",
    ["what is 2+2", "What is the capital of Japan?", "why does the kettle sing", "東京 🗼 ?"],
)
def test_a_repeat_gets_the_same_response_as_the_full_path(prompt: str) -> None:
    fast, slow = Cascade(small_stages()), full_path(Cascade(small_stages()))
    for c in (fast, slow):
        c.resolve(prompt)
    assert fast._repeat is not None
    a, b = fast.resolve(prompt), slow.resolve(prompt)
    assert a.stage is b.stage is Stage.CACHE
    assert (a.payload, a.cost, a.query_id) == (b.payload, b.cost, b.query_id)
    assert a.receipt.digest == b.receipt.digest and a.receipt.verify()
    assert fast.resolve(prompt) is a  # the memoized response itself


def test_a_model_answer_made_under_other_parameters_is_not_served() -> None:
    model = Model()
    c = Cascade(small_stages(model))
    first = c.resolve("why does the kettle sing")
    assert c.resolve("why does the kettle sing").payload == first.payload
    model.max_tokens = 32  # another origin: the answer made at 16 is not this model's
    again = c.resolve("why does the kettle sing")
    assert again.stage is Stage.NEURAL and again.payload != first.payload
    assert model.asked == 2


def test_an_entry_kept_under_the_plain_key_with_an_origin_follows_that_origin() -> None:
    """The cascade keeps a model's answers under a key naming what made them; an entry kept
    under the question's own key by another writer (the cache's public remember) names its
    origin too, and is served only while that is this cascade's."""
    model = Model()
    stages = small_stages(model)
    c = Cascade(stages)
    stages[0].remember(Query("why is the sea salty"), "planted", c.origin())
    assert c.resolve("why is the sea salty").payload == "planted"
    assert c.resolve("why is the sea salty").payload == "planted"  # the exact-repeat path
    model.max_tokens = 32
    assert c.resolve("why is the sea salty").payload != "planted"


def test_an_expired_entry_is_not_served() -> None:
    now = [1000.0]
    stages = small_stages()
    cache = stages[0]
    assert isinstance(cache, CacheStage)
    cache.now = lambda: now[0]  # type: ignore[method-assign]
    cache.remember(Query("What is the capital of Japan?"), "Tokyo, for a minute", ttl=60)
    c = Cascade(stages)
    assert c.resolve("What is the capital of Japan?").payload == "Tokyo, for a minute"
    assert c.resolve("What is the capital of Japan?").payload == "Tokyo, for a minute"
    now[0] += 61
    again = c.resolve("What is the capital of Japan?")
    assert (again.stage, again.payload) == (Stage.GRAPH, "Tokyo")


@native_only
def test_a_live_counter_charges_each_hit_so_the_path_is_off(
    clock: FakeClock, live_counter: FakeCounter
) -> None:
    c = Cascade(small_stages(), meter=live_counter, clock=clock, sleep=clock.sleep)
    assert c.live and c._repeat is None
    c.resolve("why does the kettle sing")
    assert c.resolve("why does the kettle sing").stage is Stage.CACHE


def test_a_repeat_keeps_its_entry_in_the_lru() -> None:
    stages = small_stages()
    stages[0] = CacheStage(max_entries=2)
    c = Cascade(stages)
    c.resolve("what is 2+2")
    assert c.resolve("what is 2+2").stage is Stage.CACHE  # its response is kept from now on
    c.resolve("What is the capital of Japan?")  # now the most recent
    assert c.resolve("what is 2+2").stage is Stage.CACHE  # the exact-repeat path: most recent
    c.resolve("what is the default port for ssh")  # evicts the least recent: Japan
    assert c.resolve("what is 2+2").stage is Stage.CACHE
    assert c.resolve("What is the capital of Japan?").stage is Stage.GRAPH


@pytest.mark.parametrize("bad", ["", "   ", "a\x00b", "x" * 20_000])
def test_bad_prompts_get_the_full_paths_errors(bad: str) -> None:
    c = Cascade(small_stages())
    with pytest.raises(InputError):
        c.resolve(bad)


def test_a_cascade_whose_first_stage_is_not_eocs_cache_takes_the_full_path() -> None:
    stages = small_stages()
    c = Cascade([stages[1], stages[2], NeuralStage(Model())])
    assert c._repeat is None
    assert c.resolve("what is 2+2").payload == "4"


def test_an_entry_under_a_bad_prompts_id_is_never_served_for_it() -> None:
    """As a damaged or hostile store could hold: a row under the id of a prompt eoc refuses,
    carrying another question's answer. Only a response made for this very id is served."""
    import hashlib

    stages = small_stages()
    cache = stages[0]
    c = Cascade(stages)
    c.resolve("What is the capital of Japan?")
    c.resolve("What is the capital of Japan?")
    entry = cache._entries[hashlib.sha256(b"What is the capital of Japan?").hexdigest()]  # type: ignore[attr-defined]
    assert entry.built.response is not None
    for bad in ("   ", "a\x00b", "x" * 20_000):
        cache._entries[hashlib.sha256(bad.encode()).hexdigest()] = entry  # type: ignore[attr-defined]
        with pytest.raises(InputError):
            c.resolve(bad)
    with pytest.raises(InputError):
        c.resolve("\ud800 lone surrogate")
