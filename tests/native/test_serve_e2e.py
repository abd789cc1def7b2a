"""`eoc serve` as a user runs it: SmolLM2 in process, or a llama.cpp server upstream.

Kept apart from test_serve.py (the tiny model, in process) because each server here loads the
real model: scripts/falsify.py runs the fast file for every break in native/eoc_native/serve/.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

pytest.importorskip("openai")
pytest.importorskip("uvicorn")

import httpx
import openai

from eoc_native.serve.run import WARN_EXPOSED, exposure_warning
from tests.llama_server import running_llama_server
from tests.native.serving import EocServe
from tests.native.smollm2 import SMOLLM2, needs_smollm2

pytestmark = needs_smollm2


@pytest.fixture(scope="module")
def smol(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EocServe]:
    keys = tmp_path_factory.mktemp("keys") / "keys"
    made = subprocess.run(
        [sys.executable, "-m", "eoc", "serve-key", "alice"],
        capture_output=True,
        text=True,
        check=True,
    )
    keys.write_text(made.stdout)
    secret = made.stderr.rsplit(" ", 1)[-1].strip()
    server = EocServe(
        "--model", str(SMOLLM2), "--max-tokens", "16", "--api-keys", str(keys), model="smol"
    )
    server.secret = secret  # type: ignore[attr-defined]
    try:
        yield server
    finally:
        server.stop()


def test_the_openai_client_talks_to_eoc_serve_running_smollm2(smol: EocServe) -> None:
    assert "secret key" not in (smol.output())  # the key was printed by serve-key, not here
    models = httpx.get(smol.base + "/v1/models", headers={"authorization": f"Bearer {smol.secret}"})  # type: ignore[attr-defined]
    name = models.json()["data"][0]["id"]
    assert name == SMOLLM2.stem  # type: ignore[union-attr]
    c = openai.OpenAI(base_url=smol.base + "/v1", api_key=smol.secret, max_retries=0)  # type: ignore[attr-defined]
    graph = c.chat.completions.create(
        model=name, messages=[{"role": "user", "content": "What is the capital of France?"}]
    )
    assert (
        graph.choices[0].message.content == "Paris" and graph.model_extra["eoc"]["stage"] == "graph"
    )
    model = c.chat.completions.create(
        model=name, messages=[{"role": "user", "content": "Name a colour."}], max_tokens=12
    )
    verdict = model.model_extra["eoc"]
    assert (
        verdict["stage"] == "neural" and model.usage.completion_tokens == verdict["tokens"]["out"]
    )
    assert "multiply-adds" in verdict["cost"]["basis"] and verdict["cost"]["provenance"] in (
        "estimated",
        "measured",
    )
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=smol.base + "/v1", api_key="eoc-wrong", max_retries=0).models.list()


def test_eoc_serve_in_front_of_a_llama_cpp_server() -> None:
    with running_llama_server() as upstream:
        server = EocServe(
            "--upstream", upstream, "--model-id", "smol-upstream", model="smol-upstream"
        )
        try:
            first = server.ask("Write one word about the sea.")
            assert first.status_code == 200, first.text
            verdict = first.json()["eoc"]
            assert verdict["stage"] == "neural" and verdict["cost"]["provenance"] == "estimated"
            assert "remote model at 127.0.0.1" in verdict["cost"]["basis"]
            again = server.ask("Write one word about the sea.")
            assert again.headers["x-eoc-stage"] == "cache"
        finally:
            server.stop()


def test_a_server_exposed_without_keys_says_so_loudly() -> None:
    assert exposure_warning("0.0.0.0", keys=None) == WARN_EXPOSED.format(host="0.0.0.0")
    assert exposure_warning("127.0.0.1", keys=None) is None
    assert exposure_warning("localhost", keys=None) is None
    assert exposure_warning("::1", keys=None) is None
    assert exposure_warning("192.168.1.5", keys=object()) is None


@pytest.mark.parametrize(
    ("flag", "words"),
    [("--max-tokens=0", "--max-tokens"), ("--request-timeout=-1", "--request-timeout")],
)
def test_bad_serve_options_are_refused_before_anything_loads(flag: str, words: str) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "eoc", "serve", flag], capture_output=True, text=True, timeout=60
    )
    assert run.returncode != 0 and words in run.stderr and "Traceback" not in run.stderr
