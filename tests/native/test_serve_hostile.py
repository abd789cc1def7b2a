"""eoc serve and issue 35, over a real socket: clients cannot inflate the savings ledger (a
padded question, a long context, requests without a key), and a running server stops serving
what ``eoc store forget`` deleted from its store in another process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("starlette")

from eoc.cascade import Cascade
from eoc.chat.request import ChatDefaults
from eoc.persist import SqliteCache, SqliteKV
from eoc.stages import NeuralStage
from eoc.store.sqlite import LISTEN_EVERY_S
from eoc_native.serve.app import ServeConfig, create_app
from eoc_native.serve.keys import ApiKeys, new_key
from tests.helpers import small_stages
from tests.native.serving import serving
from tests.native.test_serve_incontext import MODEL, Scripted, app_over, ask

AVOIDED = 'eoc_joules_avoided_total{provenance="estimated",stage="graph"}'
ANSWERS = 'eoc_answers_total{stage="graph"}'


def _metric(text: str, needle: str) -> float:
    return float(next(line for line in text.splitlines() if line.startswith(needle)).split()[-1])


def test_padding_and_long_contexts_do_not_inflate_what_metrics_say_was_avoided() -> None:
    """200 requests of a fact padded to 15 KB or behind a 60 KB system prompt move the avoided
    counter by what the fact's question avoids, 200 times: not by what reading the padding
    would have cost (the attack added 126,036 J in 1.8 s)."""
    question = "what is the capital of France?"
    defaults = ChatDefaults(MODEL, max_tokens=256, facts_under_system_prompts=True)
    stages = [*small_stages()[:-1], NeuralStage(Scripted())]
    app = create_app(Cascade(stages), ServeConfig(MODEL, defaults))
    with serving(app) as url:
        one = httpx.post(url + "/v1/chat/completions", json=ask(question)).json()
        each = one["eoc"]["avoided"]["uj"]
        for i in range(100):
            padded = question + " " * (15_000 + i)  # each request unique
            r = httpx.post(url + "/v1/chat/completions", json=ask(padded))
            assert r.json()["eoc"]["stage"] == "graph"
        for i in range(99):
            system = {"role": "system", "content": f"Context {i}. " + "You are helpful. " * 3500}
            body = {"model": MODEL, "messages": [system, {"role": "user", "content": question}]}
            r = httpx.post(url + "/v1/chat/completions", json=body)
            assert r.json()["eoc"]["stage"] == "graph", r.text[:300]
        text = httpx.get(url + "/metrics").text
    assert _metric(text, ANSWERS) == 200
    assert _metric(text, AVOIDED) == pytest.approx(200 * each / 1e6)
    assert 200 * each / 1e6 < 100  # joules: a fact's question, not the padding


def test_requests_without_a_key_move_no_answer_and_no_avoided_figure(tmp_path: Path) -> None:
    admin_key, admin_line = new_key("root", admin=True)
    keys = tmp_path / "keys"
    keys.write_text(admin_line + "\n")
    with serving(app_over(Scripted(), keys=ApiKeys.load(keys))) as url:
        for i in range(50):
            r = httpx.post(url + "/v1/chat/completions", json=ask(f"what is 7*8 {'!' * i}"))
            assert r.status_code == 401
        text = httpx.get(url + "/metrics", headers={"authorization": f"Bearer {admin_key}"}).text
    assert 'eoc_request_errors_total{status="401"} 50.0' in text
    assert all(
        float(line.split()[-1]) == 0
        for line in text.splitlines()
        if line.startswith(("eoc_answers_total{", "eoc_joules_avoided_total{"))
    )


class CardModel:
    """Answers every question with a card number (what a user wants forgotten)."""

    name = "card-model"
    runs_model = True
    max_tokens = 256

    def __init__(self) -> None:
        self.calls = 0

    def generate(self, prompt: str) -> Any:
        from eoc.stages import Reply

        self.calls += 1
        return Reply("Your card ending 4242 expires 09/29.", tokens_in=5, tokens_out=9)

    def chat(self, request: Any, on_piece: Any = None) -> Any:
        return self.generate(request.question)


def test_a_running_server_stops_serving_what_the_cli_forgot_in_its_store(tmp_path: Path) -> None:
    """The CLI, another process, deletes a question's answers from the file the server serves
    from; within LISTEN_EVERY_S the server goes to its model again, for the question asked
    alone, under a system prompt and with another max_tokens."""
    db = tmp_path / "store.db"
    model = CardModel()
    graph = small_stages()[2]
    cascade = Cascade([SqliteCache(db), SqliteKV(db), graph, NeuralStage(model)])
    app = create_app(cascade, ServeConfig(MODEL, ChatDefaults(MODEL, max_tokens=256)))
    q = "which card do I have on file?"
    asks = [
        ask(q),
        {
            "model": MODEL,
            "messages": [
                {"role": "system", "content": "You are the billing desk."},
                {"role": "user", "content": q},
            ],
        },
        ask(q, max_tokens=77),
    ]
    with serving(app) as url:

        def stage(body: dict[str, Any]) -> str:
            return str(httpx.post(url + "/v1/chat/completions", json=body).json()["eoc"]["stage"])

        assert [stage(b) for b in asks] == ["neural"] * 3
        assert [stage(b) for b in asks] == ["cache"] * 3
        forgot = subprocess.run(
            [sys.executable, "-m", "eoc", "store", "forget", "--store", str(db), "--question", q],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ},
            check=False,
        )
        assert forgot.returncode == 0, forgot.stderr
        assert "every process sharing the file drops them" in forgot.stdout
        time.sleep(LISTEN_EVERY_S + 0.1)
        calls = model.calls
        assert [stage(b) for b in asks] == ["neural"] * 3
        assert model.calls == calls + 3
    cascade.close()
