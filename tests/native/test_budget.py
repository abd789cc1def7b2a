"""Joule budgets: charged after each answer, and the worst case of a model answer reserved before
it is asked, so concurrent requests cannot overshoot (40 at once charged 24 J to a 5 J budget)."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

pytest.importorskip("starlette")

from eoc import Cascade
from eoc.chat.request import ChatDefaults
from eoc.cost import JouleCost
from eoc.stages.neural import NeuralStage, Reply
from eoc_native.serve.app import ServeConfig, create_app
from eoc_native.serve.budget import Budgets, JouleBudget, OverBudget
from tests.helpers import small_stages
from tests.native.serving import serving


class SlowUpstream:
    """A remote model that takes 0.3 s and reports 0.6 J (estimated), as a slow server would."""

    name = "slow-upstream"
    runs_model = True
    max_tokens = 8

    def __init__(self) -> None:
        self.asked = 0
        self._lock = threading.Lock()

    def generate(self, prompt: str) -> Reply:
        with self._lock:
            self.asked += 1
        time.sleep(0.3)
        return Reply(f"slow answer to {prompt}", JouleCost.estimated(600_000, "upstream claim"))


def test_a_reservation_must_fit_beside_what_is_spent_and_held() -> None:
    b = JouleBudget(5.0, 60.0)
    b.reserve("global", 2_000_000)
    b.reserve("global", 2_000_000)
    with pytest.raises(OverBudget, match="held for answers being worked on"):
        b.reserve("global", 2_000_000)
    b.check("global")  # nothing is spent yet: a cache hit may still be answered
    b.release(2_000_000)
    b.reserve("global", 2_000_000)
    with pytest.raises(OverBudget, match="more than the whole global joule budget"):
        b.reserve("global", 6_000_000)


def test_settling_releases_the_hold_and_charges_the_real_figure() -> None:
    budgets = Budgets(global_j=1.0, per_key_j=1.0, window_s=60)
    held = budgets.reserve("alice", 900_000)
    with pytest.raises(OverBudget):
        budgets.reserve("alice", 200_000)
    budgets.settle(held, "alice", JouleCost.estimated(300_000, "an answer"))
    held.release()  # a second release gives nothing back twice
    assert budgets.describe("alice")["global"]["used_joules"] == 0.3  # type: ignore[index]
    budgets.reserve("alice", 700_000)  # 0.3 spent + 0.7 held fits exactly
    with pytest.raises(OverBudget):
        budgets.reserve("bob", 1)  # the global budget is full


def test_concurrent_requests_never_spend_more_than_the_budget() -> None:
    """40 concurrent misses against a slow upstream and a 5 J budget: each one's worst case
    (max_tokens 8 at 100 mJ a token, plus its prompt) is reserved before the upstream is asked,
    so only as many as fit are asked; the rest are refused with 429 up front."""
    upstream = SlowUpstream()
    budgets = Budgets(global_j=5.0, window_s=600)
    cascade = Cascade([*small_stages()[:-1], NeuralStage(upstream)])
    config = ServeConfig("m", ChatDefaults("m", max_tokens=8), max_pending=64, workers=40)
    app = create_app(cascade, config, budgets=budgets)

    async def flood(url: str) -> list[httpx.Response]:
        async with httpx.AsyncClient(timeout=30) as client:
            docs = [
                {"model": "m", "messages": [{"role": "user", "content": f"tell me fact {i}"}]}
                for i in range(40)
            ]
            return await asyncio.gather(
                *(client.post(url + "/v1/chat/completions", json=d) for d in docs)
            )

    with serving(app) as url:
        # in a thread of its own: a Playwright page an earlier test opened in this process (the
        # suite's workers take files in any order) keeps an event loop running in this thread
        with ThreadPoolExecutor(1) as pool:
            replies = pool.submit(asyncio.run, flood(url)).result()
        spent = httpx.get(url + "/v1/eoc/budget").json()["budgets"]["global"]
    codes = [r.status_code for r in replies]
    assert set(codes) <= {200, 429} and 200 in codes and 429 in codes
    charged = sum(r.json()["eoc"]["cost"]["uj"] for r in replies if r.status_code == 200)
    assert charged <= 5_000_000 and spent["used_joules"] <= 5.0
    assert upstream.asked == codes.count(200)  # a refused request never reached the upstream
    worst = cascade.worst_case("tell me fact 0").uj  # max_tokens 8 at 100 mJ, and the prompt
    assert 800_000 < worst < 1_000_000
    # every worst case that fits is asked (5 of 0.84 J); once one settles at its 0.6 J, what it
    # did not spend may admit another, but never past what 5 J pays for at 0.6 J an answer
    assert 5_000_000 // worst <= codes.count(200) <= 5_000_000 // 600_000
