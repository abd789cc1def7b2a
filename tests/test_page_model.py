"""PageModelBackend (eoc/stages/page_model.py): the cascade's side of the model in the page.

Pure Python: these run natively and inside Pyodide (the core suite under Node). ``run`` stands for
the page's JavaScript ``generate`` (a function returning the reply's JSON text, as the page's
does); the page itself runs the real model in tests/web/test_page_model.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from eoc import Cascade, Provenance
from eoc.errors import BackendError, ConfigError
from eoc.query import Stage
from eoc.stages.base import work_estimate
from eoc.stages.degenerate import repetition_loop
from eoc.stages.page_model import NJ_PER_MAC, PageModelBackend, page_rates
from eoc.text.tokens import approx_tokens
from tests.helpers import small_stages

MACS = 134_479_872  # SmolLM2-135M: what web/ggufmacs.py reads from its header
PROMPT_MACS = 106_168_320


def reply(text: str = "Steam makes the whistle sing.", **extra: Any) -> str:
    doc: dict[str, Any] = {
        "text": text,
        "finish_reason": "stop",
        "stopped": False,
        "prompt_tokens": 35,
        "completion_tokens": 7,
        "threads": 2,
        **extra,
    }
    return json.dumps(doc)


DEFAULT = object()


def backend(answer: Any = DEFAULT, **kwargs: Any) -> PageModelBackend:
    said = reply() if answer is DEFAULT else answer

    def run(prompt: str, max_tokens: int) -> Any:
        run.asked.append((prompt, max_tokens))  # type: ignore[attr-defined]
        return said() if callable(said) else said

    run.asked = []  # type: ignore[attr-defined]
    options = {
        "model": "SmolLM2-135M-Instruct.Q4_1.gguf",
        "identity": "b179c952",
        "macs_per_token": MACS,
        "macs_per_prompt_token": PROMPT_MACS,
        **kwargs,
    }
    made = PageModelBackend(run, **options)
    made.asked = run.asked  # type: ignore[attr-defined]
    return made


def test_an_answer_is_estimated_from_the_models_token_counts_and_multiply_adds() -> None:
    b = backend(max_tokens=64)
    got = b.generate("why does the kettle sing")
    assert b.asked == [("why does the kettle sing", 64)]  # type: ignore[attr-defined]
    assert got.text == "Steam makes the whistle sing."
    assert (got.tokens_in, got.tokens_out, got.finish_reason) == (35, 7, "stop")
    assert got.memoize is True and got.cost is None
    assert got.estimate is not None and not got.estimate.measured
    want = 35 * PROMPT_MACS * NJ_PER_MAC / 1000 + 7 * MACS * NJ_PER_MAC / 1000
    assert got.estimate.uj == pytest.approx(want, abs=1)
    assert "2 threads" in got.estimate.basis and "no energy counter" in got.estimate.basis
    assert "35 tokens in and 7 out" in got.estimate.basis
    assert b.threads == 2


def test_through_the_cascade_the_answer_is_estimated_remembered_and_replayed() -> None:
    b = backend()
    c = Cascade(small_stages(b))
    first = c.resolve("why does the kettle sing")
    assert first.stage is Stage.NEURAL and first.cost.provenance is Provenance.ESTIMATED
    assert "in this page" in first.cost.basis
    again = c.resolve("why does the kettle sing")
    assert again.stage is Stage.CACHE and again.payload == first.payload
    assert len(b.asked) == 1  # type: ignore[attr-defined]


def test_a_stopped_answer_is_served_but_never_remembered() -> None:
    b = backend(reply("Steam", stopped=True, finish_reason=None, completion_tokens=2))
    c = Cascade(small_stages(b))
    first = c.resolve("why does the kettle sing")
    assert first.payload == "Steam" and "stopped by the visitor" in first.cost.basis
    assert c.resolve("why does the kettle sing").stage is Stage.NEURAL
    assert len(b.asked) == 2  # type: ignore[attr-defined]


def test_an_answer_the_page_stopped_in_a_loop_is_served_but_never_remembered() -> None:
    """The page stops its model by the core's loop rule (web/src/loops.js) and says so: the
    answer so far is served, and the next ask goes to the model again."""
    said = "Rain on the old roof, the garden drinks and the street shines. " * 3
    said += "a silent witness, " * 4  # too short a loop for the rule on the words alone
    assert repetition_loop(said) is None
    b = backend(reply(said, looped=True, completion_tokens=60))
    c = Cascade(small_stages(b))
    first = c.resolve("write a haiku about rain")
    assert first.payload == said
    assert "stopped in a repetition loop" in first.cost.basis
    assert c.resolve("write a haiku about rain").stage is Stage.NEURAL
    assert len(b.asked) == 2  # type: ignore[attr-defined]


def test_a_stop_before_any_text_is_a_clear_error() -> None:
    b = backend(reply("", stopped=True, finish_reason=None, completion_tokens=0))
    with pytest.raises(BackendError, match="stopped before it said anything"):
        b.generate("why")


def test_what_a_cheap_answer_avoided_is_priced_at_the_page_models_rates() -> None:
    c = Cascade(small_stages(backend()))
    got = c.resolve("what is 2+2")
    assert got.stage is not Stage.NEURAL and got.avoided is not None
    want = work_estimate(
        Stage.NEURAL,
        tokens_in=approx_tokens("what is 2+2"),
        tokens_out=approx_tokens(got.payload),
        rates=page_rates(MACS, PROMPT_MACS),
    )
    assert got.avoided.uj == want.uj
    assert "multiply-adds" in got.avoided.basis


@pytest.mark.parametrize(
    ("said", "reason"),
    [
        (None, "not JSON text"),
        (b"{}", "not JSON text"),
        ("", "empty"),
        ("[1]", "not an object"),
        ("{", "JSON|line"),
        (reply(text=None), "not text"),
        (reply(finish_reason="tool_calls"), "not stop or length"),
        (reply(prompt_tokens=-1), "not a token count"),
        (reply(completion_tokens=True), "not a token count"),
        (reply(completion_tokens="7"), "not a token count"),
        (reply(threads=0), "threads"),
        (reply(threads=None), "threads"),
        (reply(stopped="yes"), "'stopped'"),
        (reply(looped=1), "'looped'"),
        ("x" * (2 << 20) + "x", "longer than"),
    ],
)
def test_a_reply_of_the_wrong_shape_is_a_backend_error(said: Any, reason: str) -> None:
    with pytest.raises(BackendError, match=reason):
        backend(said).generate("why")


def test_a_failing_page_is_a_backend_error_that_says_what_to_do() -> None:
    def broken() -> str:
        raise RuntimeError("wasm memory exhausted")

    with pytest.raises(BackendError, match="reload the page"):
        backend(broken).generate("why")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_tokens": 0},
        {"max_tokens": 4097},
        {"max_tokens": True},
        {"model": ""},
        {"identity": " "},
        {"macs_per_token": 0},
        {"macs_per_prompt_token": MACS + 1},
        {"macs_per_token": 1.5},
    ],
)
def test_arguments_it_cannot_use_are_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        backend(**kwargs)


def test_origin_names_the_file_and_max_tokens() -> None:
    a, b = backend(max_tokens=32), backend(max_tokens=64)
    assert a.origin != b.origin
    assert "b179c952" in a.origin and backend(identity="other").origin != a.origin


def test_a_repetition_loop_from_the_page_is_served_and_never_remembered() -> None:
    loop = "A moment of stillness, " * 40
    b = backend(reply(loop, finish_reason="length", completion_tokens=256))
    c = Cascade(small_stages(b))
    assert c.resolve("describe calm").payload == loop
    assert c.resolve("describe calm").stage is Stage.NEURAL
    assert len(b.asked) == 2  # type: ignore[attr-defined]


def test_what_the_page_says_of_energy_never_becomes_the_figure() -> None:
    said = reply(energy_uj=5, provenance="measured", counter="rapl", joules=0.000005)
    got = Cascade(small_stages(backend(said))).resolve("why does the kettle sing")
    assert got.cost.provenance is Provenance.ESTIMATED and got.cost.uj > 1_000_000
    assert got.receipt.verify()
