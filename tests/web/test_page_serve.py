"""The page's neural stage through ``eoc serve``: the demo asks eoc's own server for what it cannot
answer itself.

The server runs in this process (uvicorn on 127.0.0.1, tests/native/serving.py) with eoc's model
runner on a tiny random model: its answers are gibberish, but real text from a real model, and
fast. The page is served from another port, so every request it makes to the server is
cross-origin: the server must allow the page's origin (``ServeConfig.cors_origins``), and
allows no other.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

import httpx

from tests.native.serving import serving
from tests.native.test_llm_tiny import BLOCKS, write_tiny_model
from tests.native.test_serve import MODEL, make_app
from tests.web.browser import open_session

QUESTION = "why does the kettle sing"
"""A question neither the page's cascade nor the server's cheap stages can answer."""
STRANGER = "http://elsewhere.example"


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@pytest.fixture(scope="module")
def eoc_server(tmp_path_factory: pytest.TempPathFactory, site: str) -> Iterator[str]:
    """``eoc serve``'s app on a free port, allowing the page's origin (and only it)."""
    tiny = write_tiny_model(tmp_path_factory.mktemp("llm") / "tiny.gguf", tensor_types=BLOCKS)
    with serving(make_app(tiny, config={"cors_origins": (origin_of(site),)})) as url:
        yield url


def neural_answers(server: str) -> float:
    """The server's ``eoc_answers_total{stage="neural"}`` (answers its model gave)."""
    text = httpx.get(f"{server}/metrics", timeout=30).text
    found = [
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith('eoc_answers_total{stage="neural"} ')
    ]
    return found[0] if found else 0.0


def test_the_page_asks_eoc_serve_for_what_it_cannot_answer(
    browser,  # type: ignore[no-untyped-def]
    site: str,
    eoc_server: str,
) -> None:
    endpoint = f"{eoc_server}/v1"
    host = urlsplit(eoc_server).netloc
    assert neural_answers(eoc_server) == 0.0  # nothing asked yet
    s = open_session(browser, f"{site}?llm={quote(endpoint, safe='')}")
    page = s.page
    line = page.locator("#neural-backend")
    assert line.get_attribute("data-state") == "model", line.inner_text()
    assert line.inner_text().startswith(f"Neural stage: openai:{MODEL}@{host} — ")

    shown = s.ask(QUESTION)
    assert shown["error"] is None, shown["payload"]
    doc = json.loads(shown["json"])
    assert shown["stage"] == "neural" and shown["prov"] == ["estimated"]
    assert doc["cost"]["provenance"] == "estimated" and doc["cost"]["counter"] is None
    assert doc["cost"]["basis"].startswith(f"remote model at {host}: ")
    assert "(counted by the server)" in doc["cost"]["basis"]
    assert doc["payload"] and not doc["payload"].startswith("No language model")
    assert 'eoc_answers_total{stage="neural"} 1.0' in httpx.get(f"{eoc_server}/metrics").text

    # the page remembers the greedy answer: asked again, the server is not asked
    again = s.ask(QUESTION)
    assert (again["stage"], again["payload"]) == ("cache", shown["payload"])
    assert s.ask("what is 2+2")["payload"] == "4"  # the page's own tiers still answer first
    assert neural_answers(eoc_server) == 1.0
    assert s.outside == []
    page.close()

    # the page's answer is the server's: the same request again is the server's cache hit
    r = httpx.post(
        f"{endpoint}/chat/completions",
        json={
            "model": MODEL,
            "messages": [{"role": "user", "content": QUESTION}],
            "max_tokens": 256,
            "temperature": 0.0,
            "stream": False,
        },
        timeout=60,
    )
    assert r.status_code == 200, r.text
    assert r.headers["x-eoc-stage"] == "cache"
    assert r.json()["choices"][0]["message"]["content"] == doc["payload"]
    assert r.json()["eoc"]["receipt"]["payload"] == doc["payload"]


def test_the_server_allows_the_pages_origin_and_no_other(site: str, eoc_server: str) -> None:
    page_origin = origin_of(site)
    preflight = {
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
    }
    ok = httpx.options(
        f"{eoc_server}/v1/chat/completions", headers={"origin": page_origin, **preflight}
    )
    assert ok.status_code == 200
    assert ok.headers["access-control-allow-origin"] == page_origin
    models = httpx.get(f"{eoc_server}/v1/models", headers={"origin": page_origin})
    assert models.headers["access-control-allow-origin"] == page_origin

    refused = httpx.options(
        f"{eoc_server}/v1/chat/completions", headers={"origin": STRANGER, **preflight}
    )
    assert refused.status_code >= 400
    assert "access-control-allow-origin" not in refused.headers
    for r in (
        httpx.get(f"{eoc_server}/v1/models", headers={"origin": STRANGER}),
        httpx.post(
            f"{eoc_server}/v1/chat/completions",
            headers={"origin": STRANGER},
            json={"model": MODEL, "messages": [{"role": "user", "content": "what is 2+2"}]},
        ),
    ):
        assert r.status_code == 200  # answered (CORS is the browser's rule), but not shared
        assert "access-control-allow-origin" not in r.headers
        assert "access-control-allow-credentials" not in r.headers


def test_a_page_from_an_origin_not_allowed_fails_clearly(
    browser,  # type: ignore[no-untyped-def]
    site: str,
    tmp_path: Path,
) -> None:
    tiny = write_tiny_model(tmp_path / "tiny.gguf", tensor_types=BLOCKS)
    with serving(make_app(tiny, config={"cors_origins": (STRANGER,)})) as server:
        s = open_session(browser, f"{site}?llm={quote(server + '/v1', safe='')}")
        line = s.page.locator("#neural-backend")
        assert line.get_attribute("data-state") == "error"
        text = line.inner_text()
        assert f"cannot reach {urlsplit(server).netloc}" in text and "CORS" in text
        failed = s.ask(QUESTION)
        assert failed["error"] == "BackendError" and "CORS" in failed["payload"]
        assert s.ask("what is 2+2")["payload"] == "4"
        s.page.close()
        assert neural_answers(server) == 0.0  # the browser never let a question through
