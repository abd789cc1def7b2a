"""The browser demo, end to end, in real Chromium with no outside network."""

from __future__ import annotations

import json

from eoc import Cascade
from eoc.cli.verify import check_document
from tests.web.browser import ARTIFACTS, Session, open_session


def test_the_page_boots_and_says_why_there_is_no_energy_counter(session: Session) -> None:
    page = session.page
    assert page.locator(".badge.estimated").inner_text() == "all figures estimated"
    assert "browser exposes no energy counter" in page.locator("#meter-reason").inner_text()
    assert page.locator("#versions").inner_text().startswith("eoc 0.")
    assert page.locator("#prompt").is_enabled()
    assert page.evaluate("window.eoc.info.live") is False
    assert page.evaluate("window.eoc.info.meter") == "stub"


def test_each_of_the_four_stages_answers_and_a_repeat_is_a_cache_hit(session: Session) -> None:
    assert session.ask("what is 2+2")["stage"] == "kv"
    assert session.ask("What is the capital of Japan?")["payload"] == "Tokyo"
    graph = session.ask("Paris is the capital of which country?")
    assert (graph["stage"], graph["payload"]) == ("graph", "France")
    neural = session.ask("why does the kettle sing")
    assert neural["stage"] == "neural"
    assert neural["payload"].startswith("No language model is connected")
    again = session.ask("what is 2+2")
    assert (again["stage"], again["payload"]) == ("cache", "4")
    # no model runs in the page: its neural stage says so, and that notice is never
    # remembered, so a rewording (or a repeat) is asked again, not served from kv or cache
    assert session.ask("Why does the kettle sing?")["stage"] == "neural"


def test_no_provenance_but_estimated_ever_appears(session: Session) -> None:
    for prompt in ("what is the default port for ssh", "capital of France?", "tell me a joke"):
        session.ask(prompt)
    provs = session.page.locator("#answers .prov").all_inner_texts()
    assert provs and set(provs) == {"estimated"}
    docs = [
        json.loads(j)
        for j in session.page.locator("#answers > li[data-json]").evaluate_all(
            "ns => ns.map(n => n.dataset.json)"
        )
    ]
    assert {d["cost"]["provenance"] for d in docs} == {"estimated"}
    assert {d["receipt"]["provenance"] for d in docs} == {"estimated"}


ADVERSARIAL = r"""
import json, os
from eoc import Cascade
from eoc.cost import CounterKind, JouleCost, Provenance
from eoc.errors import EocError
from eoc.meter import CounterStatus
from eoc.assemble import default_stages
from eoc.testing import FakeCounter

class ClaimsLive:
    name, kind, resolution_uj, min_window_ns = "rapl", CounterKind.HARDWARE, 1.0, 0
    def read_uj(self):
        return 42
    def status(self):
        return CounterStatus.live("trust me")

class ClaimsMeasured:
    name = "claims-measured"
    def generate(self, prompt):
        from eoc.stages.neural import Reply
        return Reply("hi", JouleCost(9, Provenance.MEASURED, "mine", counter="nvml",
                                     counter_kind=CounterKind.HARDWARE))

def attempt(make):
    try:
        r = make()
    except EocError as exc:
        return {"error": type(exc).__name__, "reason": exc.reason}
    return {"provenance": r.cost.provenance.value, "meter": r.cost.counter}

os.environ["EOC_METER"] = "rapl"
os.environ["EOC_MEASURED"] = "1"
json.dumps({
    "fake_counter": attempt(lambda: Cascade(meter=FakeCounter(step_uj=1000)).resolve("why is the sky blue")),
    "claims_live": attempt(lambda: Cascade(meter=ClaimsLive()).resolve("why is the sky blue")),
    "environment": attempt(lambda: Cascade().resolve("why is the sky blue")),
    "measured_cost": attempt(lambda: JouleCost(5, Provenance.MEASURED, "x", counter="rapl",
                                               counter_kind=CounterKind.HARDWARE)),
    "backend_claims_measured": attempt(lambda: Cascade(default_stages(ClaimsMeasured())).resolve("hello")),
})
"""


def test_adversarial_page_scripts_get_an_error_or_the_stub_never_measured(session: Session) -> None:
    out = session.python(ADVERSARIAL)
    assert isinstance(out, dict)
    assert out["fake_counter"]["error"] == "CounterUnavailable"
    assert out["claims_live"]["error"] == "CounterUnavailable"
    assert out["environment"] == {"provenance": "estimated", "meter": None}
    assert out["measured_cost"]["error"] == "ConfigError"
    assert out["backend_claims_measured"]["error"] == "ConfigError"
    assert "measured" not in json.dumps([v.get("provenance") for v in out.values()])
    # and the page's own cascade still answers, estimated
    assert session.ask("what is 3*3")["prov"] == ["estimated"]


def test_a_receipt_shown_in_the_page_verifies_natively_and_equals_the_native_one(
    session: Session,
) -> None:
    shown = session.ask("what is the atomic number of gold")
    doc = json.loads(shown["json"])
    receipt = check_document(doc)  # raises if the digest or any shown field disagrees
    native = Cascade().resolve("what is the atomic number of gold")
    assert (native.stage.value, native.payload, native.cost.uj) == (
        doc["stage"],
        doc["payload"],
        doc["cost"]["uj"],
    )
    assert native.receipt.digest == receipt.digest == doc["receipt"]["digest"]


def test_bad_input_is_refused_in_the_page_and_it_keeps_serving(session: Session) -> None:
    refused = session.ask("   ")
    assert refused["error"] == "EmptyPrompt" and "type a question" in refused["payload"]
    assert session.ask("what is 2+2")["payload"] == "4"


def test_the_page_is_usable_by_keyboard(browser, site: str) -> None:  # type: ignore[no-untyped-def]
    s = open_session(browser, site)
    page = s.page
    assert page.evaluate("document.activeElement.id") == "prompt"
    page.keyboard.type("what is 2+2")
    page.keyboard.press("Enter")
    page.wait_for_selector("#answers > li[data-stage=kv]")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "ask-button"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.dataset.prompt") == "what is 2+2"
    page.keyboard.press("Enter")  # the example chip answers from the cache now
    page.wait_for_selector("#answers > li[data-stage=cache]")
    assert s.outside == []
    page.close()


def test_every_request_stays_on_127_0_0_1_and_a_screenshot_is_saved(session: Session) -> None:
    for prompt in ("what is the symbol of iron", "what is the capital of Japan"):
        session.ask(prompt)
    assert session.outside == []
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / "web-demo.png"
    session.page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000


def test_a_paste_past_the_prompt_limit_is_cut_in_bytes_and_said(session: Session) -> None:
    page = session.page
    page.fill("#prompt", "日本の首都" * 4000)  # 20,000 characters, 60,000 bytes of UTF-8
    kept = page.input_value("#prompt").encode("utf-8")
    assert 16384 - 3 < len(kept) <= 16384  # whole characters, as many as fit
    assert "eoc takes prompts of at most 16,384 bytes" in page.locator("#prompt-note").inner_text()
    before = page.locator("#answers > li").count()
    page.press("#prompt", "Enter")
    page.wait_for_function(f"document.querySelectorAll('#answers > li').length > {before}")
    card = page.locator("#answers > li").first
    assert card.get_attribute("data-error") is None  # asked, not refused as too long
    page.fill("#prompt", "what is 2+2")
    assert page.locator("#prompt-note").is_hidden()


def test_a_long_prompt_is_shown_folded_and_unfolds(session: Session) -> None:
    prompt = "why is the sky blue and " * 30  # 720 characters
    session.ask(prompt)
    card = session.page.locator("#answers > li").first
    shown = card.locator(".prompt").inner_text()
    assert len(shown) < 300 and "show all (520 more characters)" in shown
    card.locator(".unfold").click()
    assert prompt.strip() in card.locator(".prompt").inner_text()


def test_cjk_and_emoji_answers_render_as_glyphs_not_empty_boxes(session: Session) -> None:
    """The fonts `make chromium` installs: each character draws differently from a code point
    no font has (which draws the missing-glyph box)."""
    drawn = session.page.evaluate(
        """(chars) => {
          const canvas = document.createElement("canvas");
          canvas.width = canvas.height = 64;
          const g = canvas.getContext("2d");
          const draw = (text) => {
            g.clearRect(0, 0, 64, 64);
            g.font = "40px " + getComputedStyle(document.body).fontFamily;
            g.fillText(text, 4, 48);
            return Array.from(g.getImageData(0, 0, 64, 64).data).join(",");
          };
          const missing = draw("\\u0378");  // unassigned: no font has it
          return chars.map((c) => draw(c) !== missing);
        }""",
        ["日", "本", "한", "😀", "A", "\u0379"],  # the last, unassigned too: the check tells
    )
    assert drawn == [True, True, True, True, True, False]
    prompt = "東京は日本の首都ですか？ 🗼"
    assert session.ask(prompt)["error"] is None
    assert session.page.locator("#answers > li .prompt").first.inner_text() == prompt


def _energy(uj: int) -> str:
    """web/src/chart.js's formatEnergy, for the figures a test expects."""
    for unit, scale in (("J", 1e6), ("mJ", 1e3)):
        if uj >= scale:
            return f"{round(uj / scale, 2):,.2f}".rstrip("0").rstrip(".") + f" {unit}"
    return f"{uj:,} µJ"


def test_the_would_have_cost_line_sums_the_answers_avoided_figures_or_is_not_shown(
    browser,  # type: ignore[no-untyped-def]
    site: str,
) -> None:
    s = open_session(browser, f"{site}?llm=none")
    for prompt in ("what is 2+2", "Paris is the capital of which country?"):
        assert "avoided" not in json.loads(s.ask(prompt)["json"])
    # no model connected: nothing to compare with, so no line (not a guess, not 0)
    totals = s.page.locator("#totals").inner_text()
    assert totals.startswith("2 answers, ") and "would have cost" not in totals
    # a model stand-in (as a connected endpoint would be): each answer says what it avoided
    s.python(
        "from eoc.assemble import default_stages\n"
        "from eoc.testing import ScriptedBackend\n"
        "_cascade = Cascade(default_stages(ScriptedBackend()))\n"
        "json.dumps(True)"
    )
    docs = [json.loads(s.ask(p)["json"]) for p in ("what is 2+2", "capital of Japan?")]
    assert {d["avoided"]["provenance"] for d in docs} == {"estimated"}
    avoided = sum(d["avoided"]["uj"] for d in docs)
    totals = s.page.locator("#totals").inner_text()
    assert (
        f"Sent to the model, the 2 answers given without it would have cost about "
        f"{_energy(avoided)} (estimated) — "
    ) in totals
    ratio = avoided / sum(d["cost"]["uj"] for d in docs)
    assert f"{ratio:,.1f}".rstrip("0").rstrip(".") + "× more." in totals
    assert s.outside == []
    s.page.close()
