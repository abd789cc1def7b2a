"""The levers over a model's remembered answers (issue 34, item 6): a cut answer is never reused
for a paraphrase; one answer is forgotten everywhere by its name (the receipt it was made with,
or any receipt or response id that gave it: an app's thumbs-down); and a policy says how model
answers are reused (paraphrase, exact, never), per store and per request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from eoc import Cascade, Query, Stage
from eoc.assemble import open_stages
from eoc.errors import ConfigError, InputError, InvalidText
from eoc.stages import Reply
from eoc.stages.kv import finished
from eoc.store.entry import EntryMeta, Generation, meta_from_text
from eoc.store.forget import (
    answer_in_id,
    checked_answer_name,
    forget_from_json,
    forget_of,
    id_naming,
)
from tests.helpers import IN_BROWSER, small_stages

_KEY = {"EOC_KEY_FILE": os.environ["EOC_KEY_FILE"]}  # the same user: the same key

WRONG = "Hamlet was written by Christopher Marlowe."


class Model:
    """A stand-in model that says it stopped (or ``finish``), counting its calls."""

    name = "stand-in"
    runs_model = True
    max_tokens = 256

    def __init__(self, finish: str | None = "stop") -> None:
        self.finish = finish
        self.calls = 0

    @property
    def origin(self) -> str:
        return '{"model":"stand-in"}'

    def generate(self, prompt: str) -> Reply:
        self.calls += 1
        text = WRONG if "hamlet" in prompt.lower() else f"made for: {prompt}"
        return Reply(text, tokens_in=4, tokens_out=9, finish_reason=self.finish)


def cascade(model: Model | None = None, **kw: Any) -> Cascade:
    return Cascade(small_stages(model or Model()), **kw)


def test_an_answer_cut_at_max_tokens_is_never_served_to_a_paraphrase() -> None:
    model = Model(finish="length")
    c = cascade(model)
    c.resolve("Who wrote Hamlet?")
    assert c.resolve("who wrote hamlet").stage is Stage.KV  # the same question, other case
    assert c.resolve("who was the author of hamlet").stage is Stage.NEURAL
    assert c.resolve("Who wrote Hamlet ?").stage in (Stage.KV, Stage.CACHE)
    assert model.calls == 2
    assert not finished(EntryMeta(1.0, None, Generation("length", (4, 9))))
    assert not finished(EntryMeta(1.0, None, Generation(None)))
    assert finished(EntryMeta(1.0, None, Generation("stop", (4, 9))))


def test_a_model_answer_is_named_by_the_receipt_it_was_made_with() -> None:
    c = cascade()
    made = c.resolve("Who wrote Hamlet?")
    again = c.resolve("Who wrote Hamlet?")
    reworded = c.resolve("who wrote hamlet")
    assert made.generation is not None and made.generation.receipt == made.receipt.digest
    for r in (again, reworded):
        assert r.generation is not None and r.generation.receipt == made.receipt.digest
        assert r.receipt.digest != made.receipt.digest
        assert r.to_dict()["generation"]["receipt"] == made.receipt.digest
    assert c.made_receipt(again) == made.receipt.digest
    assert c.made_receipt(reworded.receipt.digest) == made.receipt.digest  # a replay's


@pytest.mark.parametrize("name_by", ["response", "made receipt", "replay receipt", "id"])
def test_a_thumbs_down_forgets_the_answer_everywhere(name_by: str) -> None:
    model = Model()
    c = cascade(model)
    made = c.resolve("Who wrote Hamlet?")
    replay = c.resolve("who wrote hamlet")  # kv, then cached under its own question too
    assert replay.stage is Stage.KV
    name: Any = {
        "response": replay,
        "made receipt": made.receipt.digest,
        "replay receipt": replay.receipt.digest,
        "id": id_naming("chatcmpl-x1", made.receipt.digest),
    }[name_by]
    forgot = c.forget_answer(name)
    assert forgot["kv"] == 1 and forgot["cache"] == 2  # made, and cached for the rewording
    kv = next(s for s in c.stages if s.stage is Stage.KV)
    assert len(kv) == 2  # the two facts of small_stages are all that is left
    calls = model.calls
    assert c.resolve("who wrote hamlet").stage is Stage.NEURAL
    assert model.calls == calls + 1


def test_only_a_remembered_model_answer_has_a_name() -> None:
    c = cascade()
    fact = c.resolve("what is 2+2")
    with pytest.raises(InputError, match="no remembered model answer"):
        c.made_receipt(fact)
    for bad in ("", "xyz", "a" * 31, "chatcmpl-123", 42):
        with pytest.raises(InputError):
            checked_answer_name(bad)
    assert answer_in_id("chatcmpl-abc-a" + "f" * 32) == "f" * 32
    assert answer_in_id("chatcmpl-abc") is None


def test_a_forget_request_names_one_answer_by_receipt_or_response_id() -> None:
    d = "ab" * 32
    assert forget_from_json({"receipt": d}).answer == d
    assert forget_from_json({"response_id": f"chatcmpl-7-a{d[:32]}"}).answer == d[:32]
    for bad in ({"receipt": d, "response_id": "x"}, {"receipt": 5}, {"response_id": "chatcmpl-7"}):
        with pytest.raises(InputError):
            forget_from_json(bad)
    with pytest.raises(ConfigError):
        forget_of()


def test_the_made_receipt_is_kept_with_the_entry_and_checked() -> None:
    gen = Generation("stop", (1, 2), 0.1, receipt="c" * 64)
    meta = EntryMeta(5.0, None, gen)
    assert meta_from_text(meta.to_text()).generation == gen
    for bad in ('"c"', '"' + "C" * 64 + '"', "5"):
        text = meta.to_text().replace('"' + "c" * 64 + '"', bad)
        with pytest.raises(InvalidText):
            meta_from_text(text)
    with pytest.raises(InvalidText):
        meta_from_text('{"at":1,"exp":null,"receipt":"' + "c" * 64 + '"}')  # no generation


@pytest.mark.skipif(IN_BROWSER, reason="the browser runs no processes")
def test_a_store_forgets_an_answer_named_in_another_process(tmp_path: Path) -> None:
    """eoc query prints the made receipt; eoc store forget --receipt forgets it from the file."""
    store = str(tmp_path / "store.db")
    first = open_stages(store, {})
    stages = [first.cache, first.kv, *small_stages(Model())[2:]]
    try:
        made = Cascade(stages).resolve("Who wrote Hamlet?")
    finally:
        first.close()
    digest = made.receipt.digest
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "EOC_MODEL": "none", **_KEY}
    run = [sys.executable, "-m", "eoc", "store", "forget", "--store", store, "--json"]
    out = subprocess.run([*run, "--receipt", digest], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["forgot"] == {"cache": 1, "kv": 1}
    again = subprocess.run([*run, "--receipt", digest], capture_output=True, text=True, env=env)
    assert json.loads(again.stdout)["forgot"] == {"cache": 0, "kv": 0}
    bad = subprocess.run([*run, "--receipt", "nope"], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and "receipt" in bad.stdout + bad.stderr


@pytest.mark.parametrize(
    ("store", "asked", "same", "reworded"),
    [
        ("paraphrase", None, Stage.CACHE, Stage.KV),
        ("paraphrase", "exact", Stage.CACHE, Stage.NEURAL),
        ("paraphrase", "never", Stage.NEURAL, Stage.NEURAL),
        ("exact", None, Stage.CACHE, Stage.NEURAL),
        ("exact", "paraphrase", Stage.CACHE, Stage.NEURAL),  # the stricter holds
        ("never", None, Stage.NEURAL, Stage.NEURAL),
    ],
)
def test_the_reuse_policy_of_the_store_and_of_the_request(
    store: str, asked: str | None, same: Stage, reworded: Stage
) -> None:
    model = Model()
    c = cascade(model, reuse=store)
    c.resolve("Who wrote Hamlet?")
    assert c.resolve(Query("Who wrote Hamlet?", reuse=asked)).stage is same
    assert c.resolve(Query("who was it that wrote hamlet", reuse=asked)).stage is reworded
    assert c.resolve(Query("what is 2+2", reuse=asked)).stage is Stage.KV  # facts: always
    if asked is None:  # the fast path for an exact repeat follows the store's policy too
        assert c.resolve("Who wrote Hamlet?").stage is same


def test_a_store_that_never_reuses_keeps_nothing_and_exact_keeps_no_kv_entry() -> None:
    never, exact = cascade(reuse="never"), cascade(reuse="exact")
    assert never.resolve("Who wrote Hamlet?").stored == ""
    assert exact.resolve("Who wrote Hamlet?").stored == "yes"
    kv = next(s for s in exact.stages if s.stage is Stage.KV)
    assert len(kv) == 2  # the two facts of small_stages, no model answer
    with pytest.raises(ConfigError):
        cascade(reuse="sometimes")
    with pytest.raises(InputError):
        Query("x", reuse="sometimes")


@pytest.mark.skipif(IN_BROWSER, reason="the browser runs no processes")
def test_eoc_query_takes_the_questions_policy(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "EOC_MODEL": "none", **_KEY}
    cmd = [sys.executable, "-m", "eoc", "query", "--no-store", "--reuse", "never", "what is 2+2"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert out.returncode == 0 and "payload : 4" in out.stdout
    bad = subprocess.run([*cmd[:-3], "--reuse", "rarely", "x"], capture_output=True, env=env)
    assert bad.returncode == 2
