"""An app with one fixed system prompt, through `eoc serve` running SmolLM2 on a SQLite store,
with the official OpenAI client: its users' paraphrases of earlier questions get the model's
answers from kv (their partition, eoc/partition.py), its facts come from the graph with
--facts-under-system-prompts, a different system prompt gets none of them, and the partition
survives a restart of the server.

Kept apart from test_serve.py (the tiny model, in process) because the server here loads the
real model, as test_serve_e2e.py does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")
pytest.importorskip("uvicorn")

import openai

from tests.native.serving import EocServe
from tests.native.smollm2 import SMOLLM2, needs_smollm2

pytestmark = needs_smollm2

APP = "You are the assistant of a home internet provider. Answer in one or two sentences."
OTHER = "You are a pirate. Answer every question like a pirate would."
MAX_TOKENS = 64


def ask(server: EocServe, question: str, system: str = APP) -> tuple[str, str]:
    client = openai.OpenAI(base_url=server.base + "/v1", api_key="none", max_retries=0)
    answer = client.chat.completions.create(
        model=server.model,
        messages=[{"role": "system", "content": system}, {"role": "user", "content": question}],
        max_tokens=MAX_TOKENS,
        timeout=120,
    )
    verdict: dict[str, Any] = answer.model_extra["eoc"]  # type: ignore[index]
    return verdict["stage"], answer.choices[0].message.content or ""


def start(store: Path) -> EocServe:
    assert SMOLLM2 is not None
    return EocServe(
        "--model",
        str(SMOLLM2),
        "--store",
        str(store),
        "--facts-under-system-prompts",
        model=SMOLLM2.stem,
    )


def test_one_system_prompt_gets_kv_and_graph_hits_and_another_gets_none(tmp_path: Path) -> None:
    store = tmp_path / "answers.db"
    server = start(store)
    try:
        # SmolLM2 stops by itself on this one (49 tokens): its answer serves rewordings
        stage, made = ask(server, "What does the red light on my router mean?")
        assert stage == "neural" and made
        assert ask(server, "what does the red light on my router mean please") == ("kv", made)
        assert ask(server, "Hi! What does the red light on my router mean? Thanks") == ("kv", made)
        assert ask(server, "What is the capital of France?") == ("graph", "Paris")
        assert ask(server, "what is 23 times 19")[0] == "graph"
        # another system prompt: another partition, and facts only where it allows them
        assert ask(server, "what does the red light on my router mean please", OTHER)[0] == (
            "neural"
        )
        # it is cut at max_tokens on this one: its answer serves its own question only
        assert ask(server, "How do I restart my router?")[0] == "neural"
        assert ask(server, "how do i restart my router")[0] == "kv"
        assert ask(server, "how can I restart my router please")[0] == "neural"
    finally:
        server.stop()
    server = start(store)  # the partition is kept in the store's key: it survives a restart
    try:
        assert ask(server, "What does the red light on my router mean, please?") == ("kv", made)
        again = ask(server, "what does the red light on my router mean please", OTHER)[0]
        assert again in ("cache", "kv")
        plain = server.ask("what does the red light on my router mean please", timeout=120)
        assert plain.json()["eoc"]["stage"] == "neural"  # a plain question: the shared partition
    finally:
        server.stop()
