"""What a model's answer cost when it was made is stored with its entry (eoc/entry.py MadeCost,
the schema 3 ``meta``), so a replay in another process or after a restart avoided that figure,
with its provenance; a record of a measurement counts as one only on its host with its counter
live; an entry without a record falls back to the estimate and says so; a record eoc would not
have written is damage, never trusted."""

from __future__ import annotations

import math
import sqlite3
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from eoc import Cascade, JouleCost, Stage
from eoc import cascade as cascade_module
from eoc.cost import CounterKind, Provenance
from eoc.errors import InvalidText
from eoc.ledger import AvoidedProvenance, recorded_cost, this_host
from eoc.persist import SqliteCache, SqliteKV
from eoc.query import Query
from eoc.stages import CacheStage, KVStage, NeuralStage
from eoc.stages.base import work_estimate
from eoc.store.entry import (
    MAX_MADE_UJ,
    EntryMeta,
    Generation,
    MadeCost,
    checked_made,
    meta_from_text,
)
from eoc.store.sqlite_db import store_key
from eoc.store.sqlite_schema import row_sum, summed
from eoc.testing import FakeClock, FakeCounter, ScriptedBackend
from eoc.text.tokens import approx_tokens
from tests.helpers import IN_BROWSER, native_only, small_stages

MODEL_ESTIMATE = JouleCost.estimated(2_500_000, "the model's own estimate")
QUESTION = "why is the sky blue"


def _sqlite(db: Path, backend: ScriptedBackend, **kw: object) -> Cascade:
    return Cascade([SqliteCache(db), SqliteKV(db), NeuralStage(backend)], **kw)  # type: ignore[arg-type]


def _would(prompt: str, payload: str) -> int:
    return work_estimate(
        Stage.NEURAL, tokens_in=approx_tokens(prompt), tokens_out=approx_tokens(payload)
    ).uj


def test_another_cascade_on_the_store_replays_the_recorded_cost(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with _sqlite(db, ScriptedBackend(cost=MODEL_ESTIMATE)) as first:
        made = first.resolve(QUESTION)
    assert made.stage is Stage.NEURAL
    with _sqlite(db, ScriptedBackend(cost=MODEL_ESTIMATE)) as second:
        assert len(second.made) == 0  # nothing in this cascade's own ledger
        for prompt, stage in ((QUESTION, Stage.CACHE), ("Why is the sky blue?", Stage.KV)):
            r = second.resolve(prompt)
            assert r.stage is stage
            a = r.avoided
            assert a is not None and a.uj == made.cost.uj == 2_500_000
            assert a.provenance is AvoidedProvenance.ESTIMATED and a.counter is None
            assert a.basis.startswith("what the model's answer cost when it was made (estimated")
            assert made.cost.basis in a.basis
            assert a.net_uj == made.cost.uj - r.cost.uj


@pytest.mark.skipif(IN_BROWSER, reason="no second process in the browser")
def test_a_second_process_replays_the_first_ones_recorded_cost(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    script = textwrap.dedent(
        f"""
        from eoc import Cascade, JouleCost
        from eoc.persist import SqliteCache, SqliteKV
        from eoc.stages import NeuralStage
        from eoc.testing import ScriptedBackend

        backend = ScriptedBackend(cost=JouleCost.estimated(3_141_592, "made in process one"))
        with Cascade([SqliteCache({str(db)!r}), SqliteKV({str(db)!r}), NeuralStage(backend)]) as c:
            assert c.resolve({QUESTION!r}).stage == "neural"
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    with _sqlite(db, ScriptedBackend(cost=MODEL_ESTIMATE)) as c:
        r = c.resolve(QUESTION)
    assert r.stage is Stage.CACHE and r.avoided is not None
    assert r.avoided.uj == 3_141_592 != MODEL_ESTIMATE.uj
    assert "made in process one" in r.avoided.basis
    assert r.avoided.provenance is AvoidedProvenance.ESTIMATED


def _measured_store(db: Path) -> JouleCost:
    clock = FakeClock(step_ns=5_000_000)
    meter = FakeCounter(step_uj=10, name="fake-rapl")
    with _sqlite(db, ScriptedBackend(), meter=meter, clock=clock, sleep=clock.sleep) as c:
        made = c.resolve(QUESTION)
    assert made.cost.measured
    return made.cost


@native_only
def test_a_measured_record_replays_measured_when_made_on_its_host_with_its_counter_live(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    cost = _measured_store(db)
    clock = FakeClock(step_ns=5_000_000)
    meter = FakeCounter(step_uj=10, name="fake-rapl")
    with _sqlite(db, ScriptedBackend(), meter=meter, clock=clock, sleep=clock.sleep) as c:
        r = c.resolve(QUESTION)
    a = r.avoided
    assert r.stage is Stage.CACHE and not r.cost.measured
    assert a is not None and a.uj == cost.uj
    assert a.provenance is AvoidedProvenance.MEASURED_WHEN_MADE
    assert (a.counter, a.counter_kind) == ("fake-rapl", CounterKind.FAKE.value)


@native_only
def test_a_measured_record_is_estimated_where_its_counter_is_not_live(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    cost = _measured_store(db)
    with _sqlite(db, ScriptedBackend()) as c:  # no live meter here
        r = c.resolve(QUESTION)
    a = r.avoided
    assert a is not None and a.uj == cost.uj  # the figure kept, never 0
    assert a.provenance is AvoidedProvenance.ESTIMATED and a.counter is None
    assert "recorded as measured on fake-rapl (fake); estimated here: fake-rapl is not live" in (
        a.basis
    )


@native_only
def test_a_measured_record_from_another_host_is_estimated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "s.db"
    _measured_store(db)
    monkeypatch.setattr(cascade_module, "this_host", lambda: "another-host")
    clock = FakeClock(step_ns=5_000_000)
    meter = FakeCounter(step_uj=10, name="fake-rapl")  # the same name, live: another machine
    with _sqlite(db, ScriptedBackend(), meter=meter, clock=clock, sleep=clock.sleep) as c:
        r = c.resolve(QUESTION)
    a = r.avoided
    assert a is not None and a.provenance is AvoidedProvenance.ESTIMATED
    assert "this is 'another-host'" in a.basis


def test_an_estimated_record_never_becomes_measured() -> None:
    made = MadeCost(5_000, "estimated", "an estimate", "fake-rapl", "fake", this_host())
    cost, note = recorded_cost(
        made, host=this_host(), counter="fake-rapl", counter_kind=CounterKind.FAKE
    )
    assert cost.provenance is Provenance.ESTIMATED and note == ""


def test_an_entry_without_a_recorded_cost_falls_back_to_the_estimate_and_says_so() -> None:
    kv = KVStage()
    backend = ScriptedBackend(cost=MODEL_ESTIMATE)
    with Cascade([CacheStage(), kv, NeuralStage(backend)]) as c:
        # remembered as a store of before this change would hold it: a generation, no cost
        kv.put(QUESTION, "an old answer", origin=c.origin(), generation=Generation("stop"))
        r = c.resolve(QUESTION)
    assert r.stage is Stage.KV and r.payload == "an old answer"
    a = r.avoided
    assert a is not None and a.provenance is AvoidedProvenance.ESTIMATED
    assert a.uj == _would(QUESTION, "an old answer") > 0
    assert a.basis.startswith("what the model would have spent on it, estimated")


def test_the_record_round_trips_through_meta() -> None:
    made = MadeCost(1_234, "measured", "neural span on x", "rapl:package-0", "hardware", "h1")
    meta = EntryMeta(1700000000.5, None, Generation("stop", (3, 4), 0.25, made))
    assert meta_from_text(meta.to_text()) == meta


def test_a_long_basis_is_cut_and_an_unkeepable_figure_is_not_recorded() -> None:
    made = MadeCost.of(JouleCost.estimated(10, "x" * 1000), "h")
    assert made is not None and len(made.basis) == 240 and made.basis.endswith("…")
    assert MadeCost.of(JouleCost.estimated(MAX_MADE_UJ + 1, "too much"), "h") is None


_GOOD = '{"uj":5,"prov":"estimated","basis":"b","counter":null,"kind":null,"host":"h"}'


def _meta(made: str) -> str:
    return f'{{"at":1,"exp":null,"finish":"stop","tokens":null,"seconds":null,"made":{made}}}'


@pytest.mark.parametrize(
    "made",
    [
        _GOOD.replace('"uj":5', '"uj":-5'),
        _GOOD.replace('"uj":5', '"uj":0'),
        _GOOD.replace('"uj":5', '"uj":NaN'),
        _GOOD.replace('"uj":5', '"uj":Infinity'),
        _GOOD.replace('"uj":5', '"uj":1e400'),
        _GOOD.replace('"uj":5', f'"uj":{10**30}'),
        _GOOD.replace('"uj":5', '"uj":5.5'),
        _GOOD.replace('"uj":5', '"uj":"5"'),
        _GOOD.replace('"uj":5', '"uj":true'),
        _GOOD.replace('"estimated"', '"measured-when-made"'),
        _GOOD.replace('"estimated"', '"MEASURED"'),
        _GOOD.replace('"estimated"', '"hardware"'),
        _GOOD.replace('"estimated"', "null"),
        _GOOD.replace('"estimated"', '"measured"'),  # measured, naming no counter
        _GOOD.replace('"estimated"', '"measured"').replace(
            '"counter":null,"kind":null', '"counter":"c","kind":"none"'
        ),
        _GOOD.replace('"kind":null', '"kind":"made-up"'),
        _GOOD.replace('"basis":"b"', '"basis":["b"]'),
        _GOOD.replace('"host":"h"', '"host":"h\\n2"'),
        _GOOD.replace('"host":"h"', '"host":"h","extra":1'),
        _GOOD.replace(',"host":"h"', ""),
        '"5 µJ"',
        "null",
    ],
)
def test_a_made_cost_eoc_would_not_write_is_refused(made: str) -> None:
    assert meta_from_text(_meta(_GOOD)).generation is not None  # the good one is read
    with pytest.raises(InvalidText):
        meta_from_text(_meta(made))


def test_a_made_cost_without_a_generation_is_refused() -> None:
    with pytest.raises(InvalidText):
        meta_from_text(f'{{"at":1,"exp":null,"made":{_GOOD}}}')


@pytest.mark.parametrize(
    "bad",
    [
        MadeCost(-1, "estimated", "b"),
        MadeCost(True, "estimated", "b"),  # type: ignore[arg-type]
        MadeCost(math.nan, "estimated", "b"),  # type: ignore[arg-type]
        MadeCost(5, "measured", "b"),
        MadeCost(5, "estimated", "b", host="h\x00"),
    ],
)
def test_checked_made_refuses_what_eoc_would_not_record(bad: MadeCost) -> None:
    with pytest.raises(InvalidText):
        checked_made(bad)


def _rewrite_meta(db: Path, change: str) -> None:
    """Change every cache row's made cost and recompute its checksum, as a hostile writer who
    knows the format and holds the user's key would: the checksum holds, the record does not."""
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT rowid, qid, payload, origin, meta FROM cache").fetchall()
    for rowid, qid, payload, origin, meta in rows:
        text = meta.replace('"uj":2500000', change)
        assert text != meta
        conn.execute(
            "UPDATE cache SET meta = ?, checksum = ? WHERE rowid = ?",
            (text, row_sum("cache", summed((qid, payload, origin), text), store_key()), rowid),
        )
    conn.commit()
    conn.close()


@pytest.mark.parametrize("change", ['"uj":-2500000', '"uj":1e999', '"uj":"2500000"'])
def test_a_hostile_made_cost_in_a_store_is_damage_never_served(tmp_path: Path, change: str) -> None:
    db = tmp_path / "s.db"
    with _sqlite(db, ScriptedBackend(cost=MODEL_ESTIMATE)) as c:
        c.resolve(QUESTION)
    _rewrite_meta(db, change)
    cache = SqliteCache(db)
    assert [t for t, _, _ in cache.damaged] == ["cache"] and len(cache) == 0
    with Cascade([cache, KVStage(), NeuralStage(ScriptedBackend())]) as c:
        assert c.resolve(QUESTION).stage is Stage.NEURAL  # the damaged row was not served
    conn = sqlite3.connect(db)  # and it is still in the file: eoc store recover decides
    assert conn.execute("SELECT count(*) FROM cache").fetchone()[0] >= 1
    conn.close()


def test_a_record_a_third_party_stage_hands_on_unchecked_is_ignored_for_the_estimate() -> None:
    class Lax(CacheStage):
        """A memo stage that hands back a generation it never checked."""

        def lookup(self, query: Query):  # type: ignore[no-untyped-def]
            answer = super().lookup(query)
            if answer is not None and answer.generation is not None:
                bad = MadeCost(-7, "measured", "made up")  # what checked_made refuses
                answer = replace(answer, generation=replace(answer.generation, made=bad))
            return answer

    with Cascade([Lax(), KVStage(), NeuralStage(ScriptedBackend(cost=MODEL_ESTIMATE))]) as c:
        c.resolve(QUESTION)
        r = c.resolve(QUESTION)
    assert r.stage is Stage.CACHE and r.avoided is not None
    assert r.avoided.provenance is AvoidedProvenance.ESTIMATED and r.avoided.uj > 0
    assert r.avoided.uj == MODEL_ESTIMATE.uj  # this process's own ledger, not the bad record


def test_a_recorded_cost_past_what_its_tokens_could_cost_is_not_believed() -> None:
    """A record of 8.6 x 10^14 µJ for a two-word answer (eoc would store it: it is under
    MAX_MADE_UJ) is more than the answer's tokens could cost at any of the model's rates: the
    replay's avoided figure is the estimate, and its basis says why."""
    planted = MadeCost(860 * 10**12, "estimated", "planted")
    gen = Generation("stop", (5, 2), 0.1, planted)
    cache = CacheStage()
    model = ScriptedBackend(cost=MODEL_ESTIMATE)
    with Cascade([cache, KVStage(), NeuralStage(model)]) as c:
        cache.remember(
            Query(QUESTION, context=f"made by {c.origin()}"),
            "Rayleigh.",
            c.origin(),
            generation=gen,
        )
        r = c.resolve(QUESTION)
    assert r.stage is Stage.CACHE and r.avoided is not None
    assert r.avoided.uj == _would(QUESTION, "Rayleigh.") < 10**9
    assert r.avoided.provenance is AvoidedProvenance.ESTIMATED
    assert "not believed" in r.avoided.basis


def test_a_believable_record_is_kept() -> None:
    gen = Generation("stop", (5, 2), 0.1, MadeCost(3_000_000, "estimated", "made here"))
    cache = CacheStage()
    with Cascade([cache, KVStage(), NeuralStage(ScriptedBackend(cost=MODEL_ESTIMATE))]) as c:
        cache.remember(
            Query(QUESTION, context=f"made by {c.origin()}"),
            "Rayleigh.",
            c.origin(),
            generation=gen,
        )
        r = c.resolve(QUESTION)
    assert r.stage is Stage.CACHE and r.avoided is not None and r.avoided.uj == 3_000_000


def test_what_a_fact_avoided_counts_the_question_not_padding_or_context() -> None:
    """A client cannot inflate the savings ledger: a fact's avoided figure counts the question
    it answers as the kv folds it, not spaces padded around it, nor a long system prompt or
    conversation the cheap tier did not read."""
    from eoc.chat.request import ChatDefaults, parse_chat

    defaults = ChatDefaults("m", facts_under_system_prompts=True)
    with Cascade(small_stages()) as c:
        plain = c.resolve("what is the capital of France?")
        padded = c.resolve("what is the capital of France?" + " " * 15_000)
        body = {
            "model": "m",
            "messages": [
                {"role": "system", "content": "You are helpful. " * 15_000},
                {"role": "user", "content": "what is the capital of France?"},
            ],
        }
        long_context = c.resolve(parse_chat(body, defaults).query())
    figures = [r.avoided for r in (plain, padded, long_context)]
    assert all(r.stage is Stage.GRAPH for r in (plain, padded, long_context))
    assert all(a is not None for a in figures)
    assert len({a.uj for a in figures if a is not None}) == 1
