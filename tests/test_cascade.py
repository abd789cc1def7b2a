"""The cascade: order, memoizing, bracketing, the combination rules, hit calibration."""

from __future__ import annotations

import threading

import pytest

import eoc.cascade
from eoc import Cascade, JouleCost, Provenance, Query, Stage, StubCounter
from eoc.cost import CounterKind
from eoc.errors import BackendError, ConfigError, EmptyPrompt, InputError, PromptTooLong
from eoc.meter import CounterStatus
from eoc.stages import CacheStage, EchoBackend, KVStage, NeuralStage
from eoc.stages.base import Answer, work_estimate
from eoc.testing import FakeClock, FakeCounter, ScriptedBackend, assume_live
from tests.helpers import IN_BROWSER, native_only, small_stages

MEASURED, ESTIMATED = Provenance.MEASURED, Provenance.ESTIMATED


def measured(uj: int, counter: str = "backend-nvml") -> JouleCost:
    return JouleCost(
        uj, MEASURED, "backend's own meter", counter=counter, counter_kind=CounterKind.HARDWARE
    )


# -- order and memoizing -----------------------------------------------------------


def test_each_stage_answers_in_order_and_repeats_become_cache_hits(plain: Cascade) -> None:
    assert plain.resolve("what is 2+2").stage is Stage.KV
    assert plain.resolve("what is 2+2").stage is Stage.CACHE
    assert plain.resolve("what is the capital of Japan").stage is Stage.GRAPH
    assert plain.resolve("what is the capital of Japan").stage is Stage.CACHE
    r = plain.resolve("why is the sky blue")
    assert r.stage is Stage.NEURAL and r.payload == "echo: why is the sky blue"
    assert plain.resolve("why is the sky blue").stage is Stage.CACHE
    # the echo runs no model: never remembered, so a repeat asks the backend again
    echo = Cascade(small_stages(EchoBackend()))
    assert echo.resolve("why is the sky blue").stage is Stage.NEURAL
    assert echo.resolve("why is the sky blue").stage is Stage.NEURAL
    model = Cascade(small_stages(ScriptedBackend()))
    assert model.resolve("why is the sky blue").stage is Stage.NEURAL
    assert model.resolve("why is the sky blue").stage is Stage.CACHE


def test_a_neural_answer_is_offered_to_kv_so_a_paraphrase_hits_there() -> None:
    cascade = Cascade(small_stages(ScriptedBackend()))
    cascade.resolve("why is the sky blue")
    r = cascade.resolve("Why is the sky blue?")
    assert r.stage is Stage.KV and r.payload == "scripted: why is the sky blue"


@pytest.mark.parametrize(
    "backend",
    [
        ScriptedBackend(runs_model=False),  # like the echo: no model ran
        ScriptedBackend(memoize=False),  # sampled without a seed
    ],
)
def test_answers_no_model_gave_or_that_were_sampled_are_never_remembered(backend) -> None:
    cascade = Cascade(small_stages(backend))
    for _ in range(3):
        assert cascade.resolve("why is the sky blue").stage is Stage.NEURAL
    assert cascade.resolve("Why is the sky blue?").stage is Stage.NEURAL
    assert backend.calls == 4


def test_without_a_live_counter_every_answer_keeps_its_stage_figure(plain: Cascade) -> None:
    for prompt, stage in [
        ("what is 2+2", Stage.KV),
        ("what is 2+2", Stage.CACHE),
        ("capital of France", Stage.GRAPH),
        ("hello", Stage.NEURAL),
    ]:
        r = plain.resolve(prompt)
        assert r.stage is stage
        assert r.cost.provenance is ESTIMATED
        assert r.cost.basis.startswith(f"{stage.value} ") and "estimate" in r.cost.basis
        assert (
            r.receipt.verify() and r.receipt.cost_uj == r.cost.uj and r.receipt.payload == r.payload
        )


def test_estimates_scale_with_the_work_done(plain: Cascade) -> None:
    """A cache hit on a long prompt costs more than one on "hi"; a long neural answer more than
    a short one (docs/design.md §4: estimates scale with bytes hashed, tokens generated)."""
    # (not "very " * 2000: the echo of such a prompt is a repetition loop, never remembered)
    long = "why " + " ".join(f"w{i}" for i in range(1500)) + " blue"
    for p in ("hi", long):
        plain.resolve(p)
    short_hit, long_hit = plain.resolve("hi"), plain.resolve(long)
    assert short_hit.stage is long_hit.stage is Stage.CACHE
    assert long_hit.cost.uj > 5 * short_hit.cost.uj
    assert long_hit.cost.uj == work_estimate(Stage.CACHE, nbytes=len(long)).uj
    words = Cascade(small_stages(ScriptedBackend({"a": "yes", "b": "word " * 500}))).resolve
    assert words("b").cost.uj > 50 * words("a").cost.uj


def test_cache_hit_receipts_are_correct_for_each_query(plain: Cascade) -> None:
    plain.resolve("what is 2+2")
    a = plain.resolve("what is 2+2")
    b = plain.resolve("what is 2+2")
    assert a.receipt.digest == b.receipt.digest and a.receipt.verify()
    assert a.receipt.query_id == Query("what is 2+2").id


def test_a_stage_reporting_a_cost_keeps_it_when_no_counter_is_live() -> None:
    backend = ScriptedBackend(cost=JouleCost.estimated(42_000, "llama.cpp token estimate"))
    r = Cascade(small_stages(backend)).resolve("hello")
    assert r.cost.uj == 42_000 and r.cost.provenance is ESTIMATED


# -- configuration -------------------------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [
        lambda: [],
        lambda: [CacheStage()],
        lambda: [NeuralStage(), CacheStage()],
        lambda: [KVStage(), CacheStage(), NeuralStage()],
        lambda: [CacheStage(), CacheStage(), NeuralStage()],
        lambda: [object(), NeuralStage()],
        lambda: "cache kv",
    ],
)
def test_stages_must_be_in_cascade_order_ending_with_neural(build) -> None:
    with pytest.raises(ConfigError):
        Cascade(build(), meter=StubCounter())


def test_a_meter_must_be_a_counter(stages: list) -> None:
    with pytest.raises(ConfigError):
        Cascade(stages, meter=object())  # type: ignore[arg-type]


def test_bad_input_raises_and_the_cascade_keeps_serving_with_nothing_lost(plain: Cascade) -> None:
    plain.resolve("what is 2+2")
    plain.resolve("why is the sky blue")
    for bad in ["", " ", "x" * 20_000, "a\x00b", None, 12]:
        with pytest.raises(InputError):
            plain.resolve(bad)  # type: ignore[arg-type]
    assert plain.resolve("what is 2+2").stage is Stage.CACHE
    assert plain.resolve("why is the sky blue").stage is Stage.CACHE
    with pytest.raises(EmptyPrompt):
        plain.resolve("")
    with pytest.raises(PromptTooLong):
        plain.resolve("y" * 20_000)


def test_a_failing_backend_raises_backend_error_and_nothing_is_remembered() -> None:
    def boom(prompt: str) -> None:
        raise RuntimeError("connection refused")

    cascade = Cascade(small_stages(ScriptedBackend(on_generate=boom)))
    with pytest.raises(BackendError):
        cascade.resolve("hello")
    assert cascade.resolve("what is 2+2").stage is Stage.KV


# -- bracketing the neural stage ---------------------------------------------------------


@native_only
def test_neural_answer_is_measured_on_a_live_counter(
    clock: FakeClock, live_counter: FakeCounter
) -> None:
    cascade = Cascade(small_stages(), meter=live_counter, clock=clock, sleep=clock.sleep)
    assert cascade.liveness.from_eoc and cascade.live
    r = cascade.resolve("why is the sky blue")
    assert r.stage is Stage.NEURAL and r.cost.provenance is MEASURED
    assert (
        r.cost.counter == "fake-rapl" and r.cost.counter_kind is CounterKind.FAKE and r.cost.uj >= 1
    )
    assert r.receipt.provenance == "measured" and r.receipt.verify()


class _Logged:
    """Wraps a stage and logs each lookup into a shared event list."""

    def __init__(self, inner, events: list[str]) -> None:
        self.inner, self.events = inner, events
        self.stage, self.figure = inner.stage, inner.figure

    def lookup(self, q: Query) -> Answer | None:
        self.events.append(self.stage.value)
        return self.inner.lookup(q)

    def remember(self, q: Query, payload: str, origin: str = "") -> None:
        self.inner.remember(q, payload, origin)


@native_only
def test_the_bracket_opens_after_every_cheap_stage_missed_and_closes_after_neural() -> None:
    events: list[str] = []

    class LoggedCounter(FakeCounter):
        def read_uj(self) -> int:
            events.append("read")
            return super().read_uj()

    stages = [_Logged(s, events) for s in small_stages()]
    meter = LoggedCounter(step_uj=7)
    clock = FakeClock(step_ns=5_000_000)
    cascade = Cascade(stages, meter=meter, clock=clock, liveness=assume_live(meter))
    cascade.resolve("why is the sky blue")
    # the cache is asked for an answer no model made, then for one this model made
    assert events == ["cache", "cache", "kv", "graph", "read", "neural", "read"]
    r = cascade.resolve("why is the sky blue")  # a cache hit: calibrated once, then never bracketed
    events.clear()
    r = cascade.resolve("why is the sky blue")
    # a model's answer is kept under its own key (what made it), asked for second
    assert events == ["cache", "cache"] and r.cost.provenance is ESTIMATED
    assert r.stage is Stage.CACHE


@native_only
def test_neural_span_is_what_the_counter_read_between_the_two_reads() -> None:
    counter = FakeCounter([1_000, 1_750], status=CounterStatus.live())
    r = _scripted(counter).resolve("hello")
    assert r.cost.uj == 750 and r.cost.provenance is MEASURED
    assert "probe handed in by the test" in r.cost.basis  # not eoc's own probe: it says so


def _scripted(counter: FakeCounter, stages: list | None = None) -> Cascade:
    """A cascade over scripted readings (a real probe would use them up), 5 ms per clock call."""
    return Cascade(
        stages or small_stages(),
        meter=counter,
        clock=FakeClock(step_ns=5_000_000),
        liveness=assume_live(counter),
    )


@pytest.mark.parametrize(
    "own_kind,own_uj,expect_uj,expect_prov,expect_counter",
    [
        ("measured", 900, 900, MEASURED, "fake"),  # backend metered itself here, larger
        ("measured", 100, 750, MEASURED, "fake"),  # backend metered itself here, span larger
        ("elsewhere", 900, 900, ESTIMATED, "fake"),  # a claim on a counter never probed
        ("elsewhere", 100, 750, ESTIMATED, "fake"),
        ("estimated", 5_000, 5_000, ESTIMATED, "fake"),  # backend estimated, larger
        ("estimated", 10, 750, ESTIMATED, "fake"),  # backend estimated, span larger
    ],
)
@native_only
def test_the_three_combination_rules(
    own_kind, own_uj, expect_uj, expect_prov, expect_counter
) -> None:
    own = (
        measured(own_uj, "fake")
        if own_kind == "measured"
        else measured(own_uj)
        if own_kind == "elsewhere"
        else JouleCost.estimated(own_uj, "token estimate")
    )
    counter = FakeCounter([1_000, 1_750])
    r = _scripted(counter, small_stages(ScriptedBackend(cost=own))).resolve("hello")
    assert (r.cost.uj, r.cost.provenance, r.cost.counter) == (
        expect_uj,
        expect_prov,
        expect_counter,
    )


@pytest.mark.parametrize(
    "counter,why",
    [
        (FakeCounter([5_000, 5_000]), "did not advance"),
        (FakeCounter([5_000, 4_000]), "did not advance"),  # went backwards (an uncorrected wrap)
        (FakeCounter([4_000, 5_000], wrap_at=4_500), "did not advance"),  # a wrap: 4000 -> 500
        (FakeCounter(step_uj=10, min_window_ns=10**12), "shorter than"),
        (FakeCounter(step_uj=10, fail_after=0), "scripted read failure"),
        (FakeCounter(step_uj=10, fail_after=1), "scripted read failure"),
        (FakeCounter([0, 10**15]), "above the 2,000 W"),  # a jump: implausible, never charged
        (FakeCounter([0, 10_000], max_power_w=1.0), "above the 1 W"),  # over its declared max
    ],
)
@native_only
def test_a_refused_span_leaves_the_stage_estimate_never_a_measured_zero(counter, why) -> None:
    r = _scripted(counter).resolve("hello")
    assert r.stage is Stage.NEURAL
    assert r.cost.provenance is ESTIMATED
    assert r.cost.uj == NeuralStage().estimate(Query("hello"), Answer("echo: hello")).uj
    assert why in r.cost.basis


@native_only
def test_a_counter_that_is_not_live_is_never_read() -> None:
    counter = FakeCounter([7], status=CounterStatus.live("trust me"))  # claims live, never moves
    clock = FakeClock(step_ns=1_000_000)
    cascade = Cascade(small_stages(), meter=counter, clock=clock, sleep=clock.sleep)
    probed = counter.reads
    r = cascade.resolve("hello")
    assert not cascade.live and "FROZEN" in str(cascade.meter_status)
    assert counter.reads == probed and r.cost.provenance is ESTIMATED


def test_the_stub_is_never_live(stages: list) -> None:
    cascade = Cascade(stages, meter=StubCounter())
    assert not cascade.live and cascade.resolve("hi").cost.provenance is ESTIMATED


@native_only  # in a real browser the backend cannot even build a MEASURED cost
def test_in_the_browser_a_backend_claiming_measured_is_demoted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(eoc.cascade, "IN_PYODIDE", True)
    cascade = Cascade(small_stages(ScriptedBackend(cost=measured(900))), meter=StubCounter())
    r = cascade.resolve("hello")
    assert r.cost.provenance is ESTIMATED and r.cost.uj == 900


@native_only
def test_without_a_live_meter_a_backend_claiming_measured_is_demoted_with_the_reason() -> None:
    """Issue: a backend reporting MEASURED on rapl:psys came out MEASURED on a stub meter."""
    claim = measured(900, "rapl:psys")
    for meter in (StubCounter(), FakeCounter([5], status=CounterStatus.live())):
        clock = FakeClock(step_ns=1_000_000)
        cascade = Cascade(
            small_stages(ScriptedBackend(cost=claim)), meter=meter, clock=clock, sleep=clock.sleep
        )
        r = cascade.resolve("x")
        assert r.cost.provenance is ESTIMATED and r.cost.uj == 900
        assert "demoted" in r.cost.basis and "rapl:psys" in r.cost.basis
        assert r.cost.counter is None and r.receipt.verify()


# -- cheap tiers and hit calibration ------------------------------------------------------------


class WorkMeter:
    """A fake whole-work counter: every lookup of a wrapped stage adds ``nj_per_lookup``,
    every read adds ``read_nj`` (the meter's own cost)."""

    def __init__(self, nj_per_lookup: int, read_nj: int = 2_000) -> None:
        self.total_nj = 0
        self.nj_per_lookup = nj_per_lookup
        self.read_nj = read_nj
        self.counter = _WorkCounter(self)

    def wrap(self, stage):
        meter = self

        class Wrapped:
            def __init__(self) -> None:
                self.stage, self.figure = stage.stage, stage.figure

            def lookup(self, q):
                meter.total_nj += meter.nj_per_lookup
                return stage.lookup(q)

            def remember(self, q, payload, origin=""):
                return stage.remember(q, payload, origin)

        return Wrapped()


class _WorkCounter(FakeCounter):
    def __init__(self, work: WorkMeter) -> None:
        super().__init__(step_uj=1, name="work", resolution_uj=1.0)
        self.work = work

    def read_uj(self) -> int:
        self.reads += 1
        self.work.total_nj += self.work.read_nj
        return self.work.total_nj // 1000


@native_only
def test_cheap_tiers_are_never_measured_even_on_a_live_counter(clock, live_counter) -> None:
    cascade = Cascade(small_stages(), meter=live_counter, clock=clock, sleep=clock.sleep)
    for prompt in ["what is 2+2", "what is 2+2", "capital of France", "capital of France"]:
        r = cascade.resolve(prompt)
        assert r.stage is not Stage.NEURAL and r.cost.provenance is ESTIMATED


@native_only
def test_a_cheap_stage_claiming_measured_is_demoted(clock, live_counter) -> None:
    class Claims:
        stage = Stage.KV
        figure = JouleCost.estimated(5, "x")

        def lookup(self, q):
            return Answer("yes", measured(77, "kv-meter"))

    for meter in (live_counter, StubCounter()):
        r = Cascade([Claims(), NeuralStage()], meter=meter, clock=clock, sleep=clock.sleep).resolve(
            "anything"
        )
        assert (
            r.stage is Stage.KV
            and r.cost.provenance is ESTIMATED
            and "never measured" in r.cost.basis
        )


@native_only
def test_first_hit_calibrates_until_the_span_reads_fifty_empty_spans() -> None:
    work = WorkMeter(nj_per_lookup=250, read_nj=2_000)
    stages = small_stages()
    stages[1] = work.wrap(stages[1])
    cascade = Cascade(
        stages,
        meter=work.counter,
        clock=FakeClock(step_ns=1_000),
        liveness=assume_live(work.counter),
    )
    r = cascade.resolve("what is 2+2")
    assert r.stage is Stage.KV
    cal = cascade.calibration("kv")
    assert cal.ok and cal.tier is Stage.KV
    assert cal.empty_span_uj in (2, 3)
    assert cal.span_uj >= 50 * cal.empty_span_uj
    assert cal.batch & (cal.batch + 1) == 0  # 1 + 2 + 4 + ... lookups
    # the figure is what the span read per lookup: 250 nJ of work plus the reads inside the span
    assert 250 <= cal.per_hit_nj <= 300
    assert (
        cal.per_hit_nj == (cal.span_uj * 1000) // cal.batch
        or abs(cal.per_hit_nj - cal.span_uj * 1000 / cal.batch) <= 1
    )
    assert r.cost.provenance is ESTIMATED and "calibrated on work" in r.cost.basis


@native_only
def test_calibration_ends_even_when_the_clock_does_not_advance() -> None:
    """A stuck clock and a counter that never reaches the ratio must not hold the cascade."""
    from eoc.calibration import MAX_LOOKUPS

    counter = FakeCounter([0, 1, 2, 3, 4, 5])  # then holds at 5
    clock = FakeClock(step_ns=0)
    cascade = Cascade(small_stages(), meter=counter, clock=clock, liveness=assume_live(counter))
    cascade.resolve("what is 2+2")
    cal = cascade.calibration(Stage.KV)
    assert cal.batch <= MAX_LOOKUPS and not cal.ok  # a 0 ns span: refused, not charged


@native_only
def test_calibration_stops_after_the_time_budget() -> None:
    """A counter too coarse to reach 50 empty spans stops the span at 40 ms."""
    counter = FakeCounter(step_uj=1)  # each read: +1 µJ, so an empty span reads 1 µJ
    clock = FakeClock(step_ns=5_000_000)  # each clock call: 5 ms
    cascade = Cascade(small_stages(), meter=counter, clock=clock, liveness=assume_live(counter))
    cascade.resolve("what is 2+2")
    cal = cascade.calibration(Stage.KV)
    assert cal.ok and cal.empty_span_uj == 1
    assert cal.span_uj < 50  # the ratio was not reached ...
    assert 40_000_000 <= cal.span_ns < 50_000_000  # ... the budget ended it
    assert cal.per_hit_nj == round(cal.span_uj * 1000 / cal.batch)


@native_only
def test_a_counter_that_does_not_advance_over_calibration_gives_no_figure_and_says_why() -> None:
    counter = FakeCounter([100], status=CounterStatus.live())
    r = _scripted(counter).resolve("what is 2+2")
    assert r.stage is Stage.KV and "no hit calibration" in r.cost.basis
    assert "did not advance" in r.cost.basis


@native_only
def test_hits_are_charged_in_whole_microjoules_with_the_remainder_carried() -> None:
    work = WorkMeter(nj_per_lookup=250, read_nj=2_000)
    stages = small_stages()
    stages[0] = work.wrap(stages[0])
    cascade = Cascade(
        stages,
        meter=work.counter,
        clock=FakeClock(step_ns=5_000_000),
        liveness=assume_live(work.counter),
    )
    cascade.resolve("what is 2+2")  # kv, memoized into the cache
    figure = work_estimate(Stage.CACHE, nbytes=len("what is 2+2")).uj
    charged = [cascade.resolve("what is 2+2").cost.uj - figure for _ in range(97)]
    nj = cascade.calibration("cache").per_hit_nj
    assert sum(charged) == 97 * nj // 1000
    assert set(charged) <= {nj // 1000, nj // 1000 + 1}


@native_only
def test_calibration_reasons_and_switches(plain: Cascade, clock, live_counter) -> None:
    assert "no live counter" in plain.calibration("cache").reason
    with pytest.raises(ConfigError):
        plain.calibration("neural")
    with pytest.raises(ConfigError):
        plain.calibration("disk")
    cascade = Cascade(small_stages(), meter=live_counter, clock=clock, sleep=clock.sleep)
    assert "no graph hit yet" in cascade.calibration("graph").reason
    cascade.resolve("capital of France")
    assert cascade.calibration("graph").ok
    cascade.without_hit_calibration("graph")
    assert "switched off" in cascade.calibration("graph").reason
    cascade.resolve("capital of Japan")
    r = cascade.resolve("Tokyo is the capital of which country")
    assert r.cost.basis.startswith("graph estimate") and "switched off" in r.cost.basis
    again = cascade.calibrate("graph")
    assert again[Stage.GRAPH].ok and cascade.calibration("graph").ok


@native_only
def test_calibrate_again_runs_now_for_tiers_that_have_had_a_hit(clock, live_counter) -> None:
    cascade = Cascade(small_stages(), meter=live_counter, clock=clock, sleep=clock.sleep)
    cascade.resolve("what is 2+2")
    first = cascade.calibration("kv")
    out = cascade.calibrate()
    assert out[Stage.KV].ok and out[Stage.KV] is not first
    assert "no cache hit yet" in out[Stage.CACHE].reason


# -- threads ----------------------------------------------------------------------------------


@pytest.mark.skipif(
    __import__("sys").platform == "emscripten", reason="threads cannot start in Pyodide"
)
def test_concurrent_resolves_are_safe_and_the_sum_law_holds() -> None:
    work = WorkMeter(nj_per_lookup=300, read_nj=1_000)
    stages = small_stages()
    stages[0] = work.wrap(stages[0])
    cascade = Cascade(stages, meter=work.counter, liveness=assume_live(work.counter))
    prompts = [
        "what is 2+2",
        "capital of France",
        "hello there",
        "what is the default port for ssh",
    ]
    for p in prompts:
        cascade.resolve(p)
    errors: list[BaseException] = []
    extra: list[int] = []
    lock = threading.Lock()

    def worker(n: int) -> None:
        try:
            for i in range(300):
                for prompt in (prompts[(n + i) % len(prompts)], f"thread {n} question {i % 7}"):
                    r = cascade.resolve(prompt)
                    assert r.receipt.verify()
                    if r.stage is Stage.CACHE:
                        base = work_estimate(Stage.CACHE, nbytes=len(prompt)).uj
                        with lock:
                            extra.append(r.cost.uj - base)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    nj = cascade.calibration("cache").per_hit_nj
    assert nj is not None and len(extra) > 1_800
    assert sum(extra) == len(extra) * nj // 1000


@native_only
def test_a_probe_handed_in_must_be_of_the_meter() -> None:
    meter, other = FakeCounter(step_uj=1, name="mine"), FakeCounter(step_uj=1, name="other")
    with pytest.raises(ConfigError, match="not of the meter"):
        Cascade(small_stages(), meter=meter, liveness=assume_live(other))


@native_only
def test_a_backend_figure_above_what_the_meter_can_see_is_not_measured() -> None:
    claim = measured(10**12, "fake")  # on this very meter, but 10^6 J inside a 5 ms span
    r = _scripted(FakeCounter([1_000, 1_750]), small_stages(ScriptedBackend(cost=claim))).resolve(
        "hello"
    )
    assert r.cost.provenance is ESTIMATED and "more than fake can see" in r.cost.basis


@pytest.mark.parametrize("reply", ["a\x00b", "bad \ud800 text", "", "   ", "\x1b[31mred"])
def test_a_backend_reply_that_is_not_clean_text_is_a_backend_error_and_nothing_is_kept(
    reply: str,
) -> None:
    cascade = Cascade(small_stages(ScriptedBackend({"hello": reply})))
    with pytest.raises(BackendError):
        cascade.resolve("hello")
    assert cascade.resolve("what is 2+2").stage is Stage.KV  # still serving
    assert cascade.resolve("hello there").receipt.verify()  # later answers encode fine


@pytest.mark.parametrize(
    "after_reply",
    [
        False,
        pytest.param(
            True, marks=pytest.mark.skipif(IN_BROWSER, reason="the browser has no threads")
        ),
    ],
)
def test_the_model_is_asked_only_after_kv_is_told_it_will_remember_the_answer(
    after_reply: bool,
) -> None:
    """Told so that it may embed the question while the model works, where its write is on the
    caller's way; not where the write comes after the reply (``kv_after_reply``), where that
    embedding would only take the CPU of a model on the same cores."""
    stages = small_stages()
    told: list[str] = []
    stages[1].will_remember = lambda q: told.append(q.prompt)  # type: ignore[attr-defined]
    c = Cascade(stages, kv_after_reply=after_reply)
    r = c.resolve("write a haiku about autumn leaves")
    c.resolve("what is the capital of France")  # graph answers: nothing to remember
    c.resolve(Query("a sampled question", cacheable=False))
    c.resolve(Query("a follow-up", context="earlier turns"))
    c.flush()
    assert told == ([] if after_reply else ["write a haiku about autumn leaves"])
    assert r.stage is Stage.NEURAL
    assert c.resolve("write a haiku about autumn leaves, please").stage is Stage.KV  # kept
    c.close()
