"""The page pointed at a language model on this machine, or at none.

With ``?llm=none`` the page's neural stage says plainly that no model is connected, and that
notice is never remembered (without ``?llm=`` it runs the model in the page:
tests/web/test_page_model.py). With ``?llm=<base url>`` (or the endpoint field) it asks a real
llama.cpp OpenAI-compatible server (tests/llama_server.py) through a synchronous XHR from
Pyodide; those answers are ESTIMATED, with a basis naming the remote model.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import quote, urlsplit

import pytest

from eoc.stages.browser_remote import BrowserOpenAIBackend
from tests.llama_server import running_llama_server
from tests.web.browser import Session, open_session

PROMPT = "Write one short sentence about the sea."


@pytest.fixture(scope="module")
def llama_url() -> Iterator[str]:
    with running_llama_server() as url:
        yield url


def test_with_llm_the_model_answers_estimated_and_a_repeat_is_a_cache_hit(
    browser,  # type: ignore[no-untyped-def]
    site: str,
    llama_url: str,
) -> None:
    host = urlsplit(llama_url).netloc
    s = open_session(browser, f"{site}?llm={quote(llama_url, safe='')}")
    page = s.page
    line = page.locator("#neural-backend")
    assert line.get_attribute("data-state") == "model"
    assert line.inner_text().startswith("Neural stage: openai:")
    assert f"@{host}" in line.inner_text()
    assert page.input_value("#llm-url") == llama_url
    assert page.evaluate("window.eoc.info.neural.model") is True

    shown = s.ask(PROMPT)
    doc = json.loads(shown["json"])
    assert shown["stage"] == "neural" and shown["prov"] == ["estimated"]
    assert not shown["payload"].startswith("No language model")
    cost = doc["cost"]
    assert (cost["provenance"], cost["counter"]) == ("estimated", None)
    assert doc["receipt"]["provenance"] == "estimated"
    assert cost["basis"].startswith(
        f"remote model at {host}: no counter in the browser sees its work; estimated from "
    )
    assert "(counted by the server)" in cost["basis"]
    # the answer is the model's: the same greedy question asked natively gets the same text
    native = BrowserOpenAIBackend(llama_url).generate(PROMPT)
    assert doc["payload"] == native.text
    assert doc["tokens"]["out"] == native.tokens_out

    again = s.ask(PROMPT)  # a greedy answer is remembered
    assert (again["stage"], again["payload"]) == ("cache", doc["payload"])
    assert s.ask("what is 2+2")["payload"] == "4"  # the cheap tiers still answer first
    assert s.outside == []
    page.close()


def test_without_llm_the_page_says_no_model_is_connected_and_never_remembers_it(
    session: Session,
) -> None:
    line = session.page.locator("#neural-backend")
    assert line.get_attribute("data-state") == "none"
    assert "no language model is connected" in line.inner_text()
    first = session.ask("why does the kettle sing")
    assert first["stage"] == "neural" and first["prov"] == ["estimated"]
    assert first["payload"].startswith("No language model is connected")
    assert "?llm=http://127.0.0.1:PORT/v1" in first["payload"]
    assert "no language model ran" in json.loads(first["json"])["cost"]["basis"]
    again = session.ask("why does the kettle sing")
    assert (again["stage"], again["payload"]) == ("neural", first["payload"])


def connect(session: Session, url: str) -> str:
    """Type ``url`` into the endpoint field, press Connect, and return the backend line."""
    page = session.page
    before = page.locator("#neural-backend").inner_text()
    page.fill("#llm-url", url)
    page.click("#llm-button")
    page.wait_for_function(
        "before => document.getElementById('neural-backend').textContent !== before", arg=before
    )
    return page.locator("#neural-backend").inner_text()


def test_an_endpoint_that_fails_is_shown_clearly_and_the_page_keeps_serving(
    session: Session, llama_url: str
) -> None:
    page = session.page
    refused = connect(session, "ftp://127.0.0.1/v1")
    assert refused.startswith("Not connected — ConfigError: base_url must start with http://")
    assert page.evaluate("window.eoc.info.neural.model") is False  # the cascade is as it was

    # a port nothing listens on: the backend is kept, and says why it cannot answer
    down = connect(session, "http://127.0.0.1:9/v1")
    assert page.locator("#neural-backend").get_attribute("data-state") == "error"
    assert "cannot reach 127.0.0.1:9" in down and "CORS" in down
    assert "llm=http" in page.url
    assert session.ask("what is 2+2")["payload"] == "4"
    failed = session.ask("why does the kettle sing")
    assert failed["error"] == "BackendError" and "cannot reach 127.0.0.1:9" in failed["payload"]
    assert session.ask("What is the capital of Japan?")["payload"] == "Tokyo"

    # the field connects to a working server too (asking it only for its model)
    up = connect(session, llama_url)
    assert page.locator("#neural-backend").get_attribute("data-state") == "model"
    assert f"@{urlsplit(llama_url).netloc}" in up
    assert quote(llama_url, safe="") in page.url or llama_url in page.url

    # an empty field goes back to the model in the page (loaded only when a question needs it)
    back = connect(session, "")
    assert page.locator("#neural-backend").get_attribute("data-state") == "model"
    assert "SmolLM2-135M-Instruct.Q4_1.gguf, which runs in this page" in back
    assert "llm=" not in page.url
    # "none": no model again
    connect(session, "none")
    assert page.locator("#neural-backend").get_attribute("data-state") == "none"
    assert "llm=none" in page.url
    assert session.outside == []
