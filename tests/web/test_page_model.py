"""The model that runs in the page: SmolLM2-135M on llama.cpp in WebAssembly, in real Chromium.

A question no cheap tier answers gets the model's answer, streamed into its card, with nothing
fetched from off 127.0.0.1; the repeat is a cache hit; every figure is ESTIMATED; the page stays
responsive while the model works (a timer keeps ticking); stop, or a next question, ends an answer
within a second, which is then never remembered and says so on its card; a looping answer is
stopped by eoc's loop rule; without cross-origin isolation the model runs on one thread and the
page says so.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.web.browser import Session, open_session

ROOT = Path(__file__).resolve().parents[2]
MODEL_TIMEOUT_MS = 180_000  # load (98 MB from this machine) and answer, on a loaded 2-core VM
QUESTION = "why does the kettle sing"

# Installed before a question: a 50 ms timer, the pending card's text as it grows, and the
# model's load progress, so a test can tell what happened while the model worked.
WATCH = """() => {
  const w = (window.watch = { ticks: 0, seen: [], progress: [] });
  w.timer = setInterval(() => { w.ticks += 1; }, 50);
  new MutationObserver(() => {
    const p = document.querySelector("#answers > li.pending .payload");
    if (p && p.textContent !== w.seen[w.seen.length - 1]) w.seen.push(p.textContent);
  }).observe(document.getElementById("answers"), { subtree: true, childList: true, characterData: true });
  const model = window.eocPageModel;
  const shown = model.listeners.progress;
  model.on("progress", (loaded, total) => { w.progress.push([loaded, total]); shown(loaded, total); });
}"""


@pytest.fixture(scope="module")
def model_session(browser, site: str) -> Iterator[Session]:  # type: ignore[no-untyped-def]
    s = open_session(browser, f"{site}?max_tokens=24")
    yield s
    s.page.close()


def fetched(session: Session) -> list[str]:
    return session.page.evaluate(
        "performance.getEntriesByType('resource').map(e => new URL(e.name).pathname)"
    )


def test_the_model_loads_only_when_a_question_reaches_it(model_session: Session) -> None:
    page = model_session.page
    line = page.locator("#neural-backend").inner_text()
    assert line.startswith("Neural stage: SmolLM2-135M-Instruct.Q4_1.gguf, which runs in this page")
    assert "98.4 MB" in line
    assert model_session.ask("what is 2+2")["payload"] == "4"
    assert not [p for p in fetched(model_session) if "/models/" in p or "/wllama/" in p]
    assert page.evaluate("window.eocPageModel.state") == "not loaded"


def test_the_models_answer_streams_in_estimated_and_the_page_stays_responsive(
    model_session: Session,
) -> None:
    page = model_session.page
    page.evaluate(WATCH)
    started = page.evaluate("performance.now()")
    shown = model_session.ask(QUESTION, timeout_ms=MODEL_TIMEOUT_MS)
    elapsed_ms = page.evaluate("performance.now()") - started
    watch = page.evaluate("(() => { clearInterval(window.watch.timer); return window.watch; })()")
    doc = json.loads(shown["json"])

    assert shown["stage"] == "neural" and shown["prov"] == ["estimated"]
    assert doc["payload"].strip() and not doc["payload"].startswith("No language model")
    assert (doc["cost"]["provenance"], doc["cost"]["counter"]) == ("estimated", None)
    assert doc["receipt"]["provenance"] == "estimated"
    basis = doc["cost"]["basis"]
    assert "SmolLM2-135M-Instruct.Q4_1.gguf run in this page (llama.cpp in WebAssembly" in basis
    assert "a browser has no energy counter" in basis and "counted by the model" in basis
    assert 0 < doc["tokens"]["out"] <= 24

    # streamed: the card showed the answer growing, each time a start of the final text
    grown = [t for t in watch["seen"] if t and t != "…"]
    assert len(grown) >= 3, watch["seen"]
    assert all(doc["payload"].startswith(t) for t in grown)
    assert len({len(t) for t in grown}) == len(grown)
    # loaded with a progress report in bytes, up to the whole file
    total = json.loads((ROOT / "web" / "dist" / "manifest.json").read_text())["model"]["bytes"]
    assert watch["progress"] and watch["progress"][-1] == [total, total]
    assert page.locator("#model-progress-text").inner_text().startswith("Model loaded in ")
    # responsive: the 50 ms timer kept ticking while the model loaded and answered
    assert elapsed_ms > 1000 and watch["ticks"] >= 0.5 * elapsed_ms / 50, (
        watch["ticks"],
        elapsed_ms,
    )

    line = page.locator("#neural-backend").inner_text()
    assert "running in this page (llama.cpp in WebAssembly) on 2 threads" in line
    assert "(this page is cross-origin isolated)" in line

    again = model_session.ask(QUESTION)
    assert (again["stage"], again["payload"]) == ("cache", doc["payload"])
    assert model_session.outside == []


def test_cheap_answers_say_what_the_page_model_would_have_spent(model_session: Session) -> None:
    shown = model_session.ask("What is the capital of Japan?")
    avoided = json.loads(shown["json"])["avoided"]
    assert avoided["provenance"] == "estimated"
    assert "the model in this page" in avoided["basis"] and "multiply-adds" in avoided["basis"]
    totals = model_session.page.locator("#totals").inner_text()
    assert "given without it would have cost about" in totals
    provs = model_session.page.locator("#answers .prov").all_inner_texts()
    assert provs and set(provs) == {"estimated"}
    assert model_session.page.locator(".prov.measured").count() == 0


def _wait_for_streaming(page, chars: int = 20) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_function(
        "n => (document.querySelector('#answers > li.pending .payload') || {}).textContent"
        "?.length > n",
        arg=chars,
        timeout=MODEL_TIMEOUT_MS,
    )


def test_stop_ends_an_answer_within_a_second_which_is_served_and_never_remembered(
    browser,  # type: ignore[no-untyped-def]
    site: str,
) -> None:
    s = open_session(browser, f"{site}?max_tokens=400")
    page = s.page
    prompt = "Write a long story about a lighthouse keeper and a storm."
    for attempt in range(2):
        done = "#answers > li:not(.pending)"
        before = page.locator(done).count()
        page.fill("#prompt", prompt)
        page.press("#prompt", "Enter")
        _wait_for_streaming(page)
        assert page.locator("#prompt").is_enabled()  # a next question may be asked meanwhile
        assert page.locator("#llm-button").is_disabled()  # not another endpoint: it is busy
        clicked = page.evaluate("performance.now()")
        page.click("#answers > li.pending .stop")
        page.wait_for_function(f"document.querySelectorAll('{done}').length > {before}")
        took_ms = page.evaluate("performance.now()") - clicked
        assert took_ms < 1000, took_ms
        card = page.locator(done).first
        assert card.get_attribute("data-stage") == "neural", attempt  # asked again: not kept
        assert card.get_attribute("data-cut") == "stopped"
        assert "never remembered" in card.locator(".cut-note").inner_text()  # said on the card
        doc = json.loads(card.get_attribute("data-json") or "{}")
        assert "stopped by the visitor, so never remembered" in doc["cost"]["basis"]
        assert doc["payload"].strip() and doc["tokens"]["out"] < 400
    assert s.outside == []
    page.close()


def test_a_next_question_asked_while_an_answer_streams_stops_it_and_is_answered(
    browser,  # type: ignore[no-untyped-def]
    site: str,
) -> None:
    s = open_session(browser, f"{site}?max_tokens=400")
    page = s.page
    page.fill("#prompt", "Write a long story about a lighthouse keeper and a storm.")
    page.press("#prompt", "Enter")
    _wait_for_streaming(page)
    asked = page.evaluate("performance.now()")
    page.fill("#prompt", "what is 2+2")
    page.press("#prompt", "Enter")
    page.wait_for_function(
        "() => document.querySelectorAll('#answers > li:not(.pending)').length >= 2",
        timeout=10_000,
    )
    took_ms = page.evaluate("performance.now()") - asked
    cards = page.locator("#answers > li:not(.pending)")
    newest, stopped = cards.nth(0), cards.nth(1)
    assert newest.get_attribute("data-stage") in ("kv", "graph")  # the pack's answer
    assert newest.locator(".payload").inner_text() == "4"
    assert stopped.get_attribute("data-stage") == "neural"
    assert stopped.get_attribute("data-cut") == "stopped"
    assert took_ms < 2000, took_ms
    assert page.locator("#answers > li.pending").count() == 0
    assert s.outside == []
    page.close()


def test_a_looping_answer_is_stopped_by_the_loop_rule_within_the_default_length(
    browser,  # type: ignore[no-untyped-def]
    site: str,
) -> None:
    """SmolLM2-135M at greedy decoding writes "a silent witness, a silent witness, ..." for
    this prompt: the page stops it as eoc's runner would, well within the default 128 tokens,
    says so on the card, and does not remember it."""
    s = open_session(browser, site)  # the page's defaults
    shown = s.ask("Write a haiku about rain", timeout_ms=MODEL_TIMEOUT_MS)
    page = s.page
    card = page.locator("#answers > li:not(.pending)").first
    doc = json.loads(shown["json"])
    assert card.get_attribute("data-cut") == "loop", doc["payload"]
    assert "repetition loop" in card.locator(".cut-note").inner_text()
    assert "stopped in a repetition loop, so never remembered" in doc["cost"]["basis"]
    assert doc["tokens"]["out"] < 128
    assert s.ask("Write a haiku about rain", timeout_ms=MODEL_TIMEOUT_MS)["stage"] == "neural"
    assert s.outside == []
    page.close()


@pytest.fixture(scope="module")
def plain_site() -> Iterator[str]:
    """web/dist served without the cross-origin isolation headers."""
    import sys

    sys.path.insert(0, str(ROOT / "web"))
    from serve import make_server

    server = make_server(ROOT / "web" / "dist", port=0, isolation=False)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_without_cross_origin_isolation_the_model_runs_on_one_thread_and_says_so(
    browser,  # type: ignore[no-untyped-def]
    plain_site: str,
) -> None:
    s = open_session(browser, f"{plain_site}?max_tokens=6")
    assert s.page.evaluate("crossOriginIsolated") is False
    shown = s.ask("tell me about kettles", timeout_ms=MODEL_TIMEOUT_MS)
    doc = json.loads(shown["json"])
    assert (
        shown["stage"] == "neural"
        and "(llama.cpp in WebAssembly, 1 thread)" in doc["cost"]["basis"]
    )
    line = s.page.locator("#neural-backend").inner_text()
    assert "on 1 thread (this page is not cross-origin isolated" in line
    assert s.outside == []
    s.page.close()


def test_a_model_file_the_page_cannot_fetch_is_a_clear_error_and_the_page_keeps_serving(
    browser,  # type: ignore[no-untyped-def]
    site: str,
) -> None:
    s = open_session(browser, f"{site}?max_tokens=8")
    s.page.route("**/models/*", lambda route: route.fulfill(status=404, body="gone"))
    failed = s.ask("why does the kettle sing", timeout_ms=MODEL_TIMEOUT_MS)
    assert failed["error"] == "BackendError"
    assert "could not answer" in failed["payload"] and "reload the page" in failed["payload"]
    assert "it could not load" in s.page.locator("#neural-backend").inner_text()
    assert s.ask("what is 2+2")["payload"] == "4"
    s.page.unroute("**/models/*")  # the file is back: the next question loads it
    again = s.ask("why does the kettle sing", timeout_ms=MODEL_TIMEOUT_MS)
    assert again["stage"] == "neural" and again["error"] is None
    assert s.outside == []
    s.page.close()
