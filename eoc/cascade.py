"""The cascade: cache -> kv -> graph -> neural, the first stage that answers wins.

Costs follow the design document (docs/design.md §3 and §4):

* The cascade believes no counter's word: it runs the liveness probe itself on the meter
  it is given (or takes the result of a probe the caller ran, and says so in every figure).
  The kind shown with a figure is the effective one (:func:`eoc.meter.trust.effective_kind`).
* Neural answers are bracketed by two reads of the meter, the first taken after
  cache, kv and graph have missed. The span is MEASURED when the backend
  estimated nothing; the larger of the two (MEASURED) when the backend metered
  itself on this same meter; ESTIMATED (the larger figure) when the backend estimated,
  or claimed a measurement on a counter this cascade did not probe (a claim, not evidence).
  A span that is too short, did not advance, or implies more power than the counter can
  see is refused, never charged.
* Cache, kv and graph answers are never bracketed and never MEASURED: they are
  charged the stage's own figure plus the calibrated cost of a hit on this host
  (see :mod:`eoc.calibration`).
* With no live meter nothing is MEASURED, whatever a stage or backend claims: each
  answer keeps its stage's estimate, and a claim of MEASURED is demoted with the reason.

A query with a context (a question inside a conversation, or with its own system prompt or
sampling parameters: :mod:`eoc.chat.request`) is answered by the cache, by kv from its own partition
(:mod:`eoc.store.partition`: the model's answers to paraphrases under the same model, system prompt
and parameters; its model answer is offered to kv there), by a fact where it allows one, or by
the model; one in no partition (a follow-up) never offers its answer to kv. An uncacheable one
(sampled without a seed) is answered by a fact or the model only, remembered nowhere.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace

from eoc._compat import IN_PYODIDE
from eoc.behind import Behind
from eoc.calibration import (
    DEFAULT_BUDGET_NS,
    DEFAULT_RATIO,
    HitCalibration,
    HitCharger,
    calibrate_hits,
)
from eoc.chat.followup import earlier_turns_change, fits
from eoc.cost import JouleCost, Provenance
from eoc.errors import (
    BackendError,
    ConfigError,
    CounterUnavailable,
    EocError,
    InputError,
    StoreError,
)
from eoc.ledger import Avoided, MadeLedger, avoided, made_ceiling, recorded_cost, this_host
from eoc.meter.counter import Counter, CounterStatus, StubCounter, checked_meter, max_power_uw
from eoc.meter.detection import detect_all
from eoc.meter.liveness import ProbeResult, probe
from eoc.meter.span import span_uj
from eoc.meter.trust import effective_kind
from eoc.query import Query, Stage, checked_reuse, stricter
from eoc.receipt import Receipt, Signer, checked_signer
from eoc.response import Response
from eoc.stages.base import WORK_RATES, Answer, WorkRates
from eoc.stages.cache import CacheStage
from eoc.stages.contract import PENDING, BoundsSaving, Remembering, StageLike, steps, wire
from eoc.stages.judging import Judging
from eoc.stages.neural import origin_of
from eoc.store.entry import Generation, MadeCost, checked_made
from eoc.store.forget import Forget, checked_answer_name, forget_in, forget_of
from eoc.text.tokens import token_bound

_MEASURED = Provenance.MEASURED
_ESTIMATED = Provenance.ESTIMATED
_sha256 = hashlib.sha256
_CACHE = Stage.CACHE
_MEMOS = (Stage.CACHE, Stage.KV)
_UNKNOWN = object()
_FACTS_KEPT = 4096  # earlier turns' facts remembered per cascade
_REPLAYS_KEPT = 65_536
"""Replays whose receipts a cascade keeps, to name the answer each served (about 10 MB)."""


class Cascade:
    """Resolves queries through the stages, charging each answer in µJ.

    Args:
        stages: stages in cascade order (cache, kv, graph, neural; any may be left
            out except neural, which must be last). Defaults to the seeded stages of
            :func:`eoc.assemble.default_stages`.
        meter: the whole-work counter; defaults to the first live one that
            :func:`eoc.meter.detect_all` finds. In the browser only the stub is accepted.
            Whatever its ``status()`` says, the cascade probes it (see ``liveness``).
        clock: monotonic nanosecond clock (tests inject a fake one).
        sleep: the probe's sleep, in seconds (tests pass ``FakeClock.sleep``).
        liveness: the result of a probe the caller ran on ``meter`` (it must name that
            counter); then the cascade does not probe, and every figure says whose probe
            it relied on. Without it the cascade probes ``meter`` itself (about 0.3 s).
        signer: signs every receipt (a host key: ``eoc_native.receipts.HostSigner``; optional).
        calibration_ratio: a calibration span must read this many times an empty span.
        calibration_budget_ns: or last this long, whichever comes first.
        reuse: how the model's remembered answers are reused (:data:`eoc.query.REUSE`):
            "paraphrase" (the default: the same request from the cache, a rewording from the
            kv), "exact" (the same request only: nothing is offered to the kv) or "never"
            (nothing is remembered, nothing remembered before is served). A request may ask
            for stricter (:attr:`eoc.query.Query.reuse`); facts are served under any.
        kv_after_reply: offer the model's answers to the kv in a worker thread once
            :meth:`resolve` has returned (:mod:`eoc.behind`; ``eoc serve`` does), so the
            embedding the kv takes is not part of the answer's time, nor made while the model
            works (a model on the same cores would wait for it). The cache keeps the answer
            before ``resolve`` returns, as always; a rewording asked within milliseconds may
            miss the kv. :meth:`flush` waits for those writes; a forget and :meth:`close` do too
            (call it before writing the kv yourself: a queued write of the same question would
            land after yours). Not in the browser, which has no threads.
    """

    def __init__(
        self,
        stages: Sequence[StageLike] | None = None,
        meter: Counter | None = None,
        *,
        clock: Callable[[], int] = time.perf_counter_ns,
        sleep: Callable[[float], None] = time.sleep,
        liveness: ProbeResult | None = None,
        signer: Signer | None = None,
        calibration_ratio: int = DEFAULT_RATIO,
        calibration_budget_ns: int = DEFAULT_BUDGET_NS,
        reuse: str = "paraphrase",
        kv_after_reply: bool = False,
    ) -> None:
        if stages is None:
            from eoc.assemble import default_stages

            stages = default_stages()
        wiring = wire(stages)
        if meter is None:
            found = detect_all()
            meter = found.counter
            if liveness is None:
                liveness = found.probe_of(meter)
        checked_meter(meter)
        if IN_PYODIDE and not isinstance(meter, StubCounter):
            raise CounterUnavailable(
                "the browser has no energy counter: a Cascade in Pyodide meters with the stub only"
            )
        if (
            isinstance(calibration_ratio, bool)
            or not isinstance(calibration_ratio, int)
            or calibration_ratio < 1
        ):
            raise ConfigError("calibration_ratio must be a whole number of at least 1")
        if not isinstance(calibration_budget_ns, int) or calibration_budget_ns < 1:
            raise ConfigError("calibration_budget_ns must be a positive whole number of ns")
        if signer is not None:
            checked_signer(signer)
        try:
            self.reuse: str = checked_reuse(reuse, "reuse") or "paraphrase"
        except InputError as exc:
            raise ConfigError(exc.reason) from None
        self.stages: tuple[StageLike, ...] = wiring.stages
        self._wiring = wiring
        self.meter = meter
        self.signer = signer
        self.liveness = self._liveness(meter, liveness, clock, sleep)
        self.meter_status: CounterStatus = self.liveness.status
        self.live = self.meter_status.is_live and not isinstance(meter, StubCounter)
        self.meter_kind = effective_kind(meter)[0]
        self.store_errors = 0
        self.last_store_error = ""
        self._errors_lock = threading.Lock()
        if kv_after_reply and IN_PYODIDE:
            raise ConfigError("kv_after_reply needs a thread: the browser has none")
        self._behind = Behind(self._behind_failed) if kv_after_reply else None
        self._clock = clock
        self._ratio = calibration_ratio
        self._budget_ns = calibration_budget_ns
        self._cheap = tuple(s for s in self.stages if s.stage is not Stage.NEURAL)
        self._neural = wiring.neural
        # the model's own tokenizer, where it has one at hand (a fact must fit max_tokens)
        self._count_tokens = wiring.count_tokens
        self._cache: Remembering | None = wiring.cache
        self._kv: Remembering | None = wiring.kv
        # a kv that keeps partitions (eoc.store.partition) is asked for, and offered, the model's
        # answers to requests in one; another kv would mix them with the shared partition's
        self._parts = wiring.partitions
        # told before the model is asked, so it can embed the question meanwhile (optional)
        self._will_remember = wiring.will_remember
        # the savings ledger (eoc.ledger): what the model's answers cost when made, here, and
        # what it would have spent on an answer it never made (None: no model to compare with)
        self.made = MadeLedger()
        self._host = this_host()
        self._would_cost = wiring.would_cost
        # a kv with a judge of meaning (eoc.stages.judging) weighs its joules against this
        self._longest_answer = ""  # an answer as long as the kv's longest: _saving_bound
        if wiring.judged is not None:
            wiring.judged.saving = self._saving
            if isinstance(wiring.judged, BoundsSaving):
                wiring.judged.saving_bound = self._saving_bound
        self._facts_of: dict[str, str | None] = {}  # an earlier turn's text -> its fact
        self._replays: dict[str, str] = {}  # a replay's receipt -> the receipt it was made with
        self._replays_lock = threading.Lock()
        self._bracket_lock = threading.Lock()
        self._cal_lock = threading.Lock()
        self._chargers: dict[Stage, HitCharger] = {}
        self._off: set[Stage] = set()
        self._last_hit: dict[Stage, Query] = {}
        # the hot loop: (stage, its kind, the cost of a hit when nothing is live)
        why = "" if self.live else "no live counter"
        # (a kv's similar half after the graph: eoc.stages.contract.steps)
        self._plan = tuple((s, s.stage, self._demote(s.figure, why)) for s in steps(self.stages))
        # by (plain question?, cacheable?, facts may answer?, in a partition?): the steps that
        # may answer such a query, built once
        self._plans = {
            (plain, cacheable, facts, parted): self._narrowed(
                self._plan, plain, cacheable, facts, parted
            )
            for plain in (True, False)
            for cacheable in (True, False)
            for facts in (True, False)
            for parted in (True, False)
        }

        # an exact repeat of a plain question, answered by its id alone (_exact_repeat): where
        # the cache comes first for such a question, is eoc's own, and no counter is live (a
        # live one charges each hit afresh)
        first = self._plans[True, True, False, False][:1]
        self._repeat: CacheStage | None = (
            first[0][0]
            if first and first[0][1] is _CACHE and type(first[0][0]) is CacheStage and not self.live
            else None
        )

    @staticmethod
    def _liveness(
        meter: Counter,
        given: ProbeResult | None,
        clock: Callable[[], int],
        sleep: Callable[[float], None],
    ) -> ProbeResult:
        """The probe this cascade relies on: the caller's (checked to name ``meter``) or its own."""
        if isinstance(meter, StubCounter):
            return ProbeResult(CounterStatus.unavailable(meter.reason), 0, 0, 0, 0, "stub", "eoc")
        if given is None:
            return probe(meter, clock=clock, sleep=sleep)
        if not isinstance(given, ProbeResult):
            raise ConfigError("liveness must be the ProbeResult of eoc.meter.probe(meter)")
        if given.counter != meter.name:
            raise ConfigError(
                f"liveness is a probe of {given.counter or 'an unnamed counter'!r}, "
                f"not of the meter {meter.name!r}"
            )
        return given

    @property
    def liveness_note(self) -> str:
        """Whose probe found the meter live: "" when eoc's own, else a note for every figure."""
        if self.liveness.from_eoc:
            return ""
        return f"liveness from {self.liveness.describe()}, not checked by eoc"

    @staticmethod
    def _demote(cost: JouleCost, note: str) -> JouleCost:
        """``cost`` as ESTIMATED. A MEASURED claim keeps no counter: nothing here checked it."""
        if cost.provenance is _MEASURED:
            basis = (
                f"{cost.basis}; demoted: {note or 'cache, kv and graph answers are never measured'}"
                f" (it claimed measured on {cost.counter})"
            )
            return JouleCost(cost.uj, _ESTIMATED, basis)
        basis = cost.basis + (f"; {note}" if note else "")
        return JouleCost(
            cost.uj, _ESTIMATED, basis, counter=cost.counter, counter_kind=cost.counter_kind
        )

    def close(self) -> None:
        """Write what waits to be remembered (``kv_after_reply``), then close what the stages
        hold open (the stores of :mod:`eoc.store`: a file, a pool)."""
        if self._behind is not None:
            self._behind.close()
        for close in self._wiring.closes:
            close()

    def flush(self) -> None:
        """Wait until every answer handed to the kv after its reply (``kv_after_reply``) is
        remembered (or has failed: :attr:`store_errors`)."""
        if self._behind is not None:
            self._behind.flush()

    def replying(self) -> AbstractContextManager[None]:
        """Mark a reply in flight (a server holds it from a request's arrival until its reply is
        sent): answers handed to the kv after their reply (``kv_after_reply``) are written once
        no reply is in flight, or at most :data:`eoc.behind.MAX_DEFER_S` later, so a write does
        not hold the interpreter while a reply is being sent. Nothing to mark without
        ``kv_after_reply``."""
        if self._behind is None:
            return nullcontext()
        return self._behind.replying()

    def __enter__(self) -> Cascade:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- resolving -------------------------------------------------------------

    def resolve(
        self,
        query: Query | str,
        *,
        before_model: Callable[[Query], None] | None = None,
        cache_missed: bool = False,
    ) -> Response:
        """Answer one query (a :class:`Query` or prompt text).

        ``cache_missed``: the caller has just asked the cache (:meth:`cached`) and it missed;
        it is not asked again.

        ``before_model`` is called with the query once cache, kv and graph have missed, before
        the model is asked; it may refuse by raising (a server's joule budget reserves the
        answer's worst case there: :meth:`worst_case`).

        Raises:
            InputError: the prompt or embedding is bad; nothing stored changes.
            BackendError: the neural backend failed.
            EocError: what ``before_model`` raised; the model was not asked.
        """
        repeat = self._repeat
        if repeat is not None and type(query) is str and not cache_missed:
            # An exact repeat of a plain question, found by its id alone (no Query built): the
            # response the full path made for this very id (so for this very prompt, which it
            # checked), served where the full path would serve it again: the same cost object,
            # an answer no model made or this cascade's model made. Anything else, and every bad
            # prompt, takes the full path (tests/test_exact_repeat.py).
            try:
                qid = _sha256(query.encode()).hexdigest()
            except UnicodeEncodeError:  # a lone surrogate: the full path says what is wrong
                qid = ""
            answer = repeat.peek(qid)
            if answer is not None:
                built = answer.built
                memo = built.response
                if (
                    memo is not None
                    and built.qid == qid
                    and built.cost is answer.cost
                    and (
                        not answer.origin
                        or (answer.origin == self.origin() and self.reuse != "never")
                    )
                ):
                    return memo
        q = Query(query) if type(query) is str else self._as_query(query)
        parted = q.partition is not None and self._parts
        facts = q.facts_ok and not self.earlier_turns_change(q)
        plan = self._plans[q.context is None, q.cacheable, facts, parted]
        if cache_missed and plan and plan[0][1] is _CACHE:
            plan = plan[1:]
        policy = self.reuse if q.reuse is None else stricter(self.reuse, q.reuse)
        for stage, kind, plain in plan:
            answer = stage.lookup(q)
            if q.context is not None and kind is not _CACHE:
                answer = self._scoped(kind, q, answer, facts)
            elif answer is None or answer.origin:  # not one no model made: is it this model's?
                answer = self._own(stage, kind, q, answer)
            if answer is not None and answer.origin and not _reuses(policy, kind):
                answer = None  # a model's remembered answer the store or request won't reuse
            if answer is not None:
                cost = self._cheap_cost(stage, q, answer, plain)
                if kind is _CACHE:
                    return self._respond(kind, q, answer, cost)
                stored = self._memoize(kind, q, answer.payload, answer.origin, answer.generation)
                return self._respond(kind, q, answer, cost, stored)
        if before_model is not None:
            before_model(q)
        if self._will_remember is not None and self._behind is None and self._kept_in_kv(q):
            # the kv embeds the question for its write while the model works, where the write
            # is on the caller's way; where it comes after the reply (kv_after_reply), that
            # embedding would only take the CPU of a model on these cores (bench/serve.py in
            # front of llama.cpp on the same two cores: a miss +4.9 and +4.6 ms with it, +0.8
            # and -0.2 without, the forwarding floor -0.5 and +1.0)
            self._will_remember(q)
        return self._resolve_neural(q)

    def earlier_turns_change(self, q: Query) -> str:
        """Why the turns before ``q``'s question may change its answer, "" when this cascade can
        show they do not (:func:`eoc.chat.followup.earlier_turns_change`: each earlier question one it
        answers with a fact, each answer that fact and nothing else, or greetings; no name of
        several senses asked after a fact). A fact answers a conversation only where this is "".
        """
        chat = q.conversation
        messages = chat.messages if chat is not None else None
        if not messages or len(messages) < 2:
            return ""
        return earlier_turns_change(messages, self._fact_of)

    def _fact_of(self, text: str) -> str | None:
        """The fact this cascade's kv or graph answers ``text`` with, asked alone (``None``: no
        answer no model made). Remembered per text (a conversation's turns come back with every
        request of it)."""
        known = self._facts_of.get(text, _UNKNOWN)
        if known is not _UNKNOWN:
            return known  # type: ignore[return-value]
        found: str | None = None
        try:
            q = Query(text)
        except InputError:
            q = None
        if q is not None:
            for stage, kind, _ in self._plan:
                if kind is _CACHE:
                    continue
                answer = stage.lookup(q)
                if answer is not None and not answer.origin:
                    found = answer.payload
                    break
        if len(self._facts_of) >= _FACTS_KEPT:
            self._facts_of.clear()
        self._facts_of[text] = found
        return found

    def worst_case(self, query: Query | str) -> JouleCost:
        """The most an answer from the model to ``query`` is expected to cost (ESTIMATED): its
        tokens in and its ``max_tokens`` out at the neural stage's rates
        (:meth:`eoc.stages.neural.NeuralStage.worst_case`)."""
        q = Query(query) if type(query) is str else self._as_query(query)
        worst = self._wiring.worst_case
        if worst is not None:
            cost = worst(q)
            if isinstance(cost, JouleCost):
                return cost
        return self._neural.figure

    def cached(self, query: Query | str) -> Response | None:
        """The cache stage's answer to ``query``, charged as :meth:`resolve` would; else ``None``.

        Only the cache is asked (no kv, graph or model work), so a server can answer repeats
        without leaving its event loop and hand the rest to :meth:`resolve`.
        """
        q = Query(query) if type(query) is str else self._as_query(query)
        if not q.cacheable or not self._plan or self._plan[0][1] is not _CACHE:
            return None
        stage, kind, plain = self._plan[0]
        answer = self._ask(stage, q)
        if answer is None:
            return None
        if answer.origin and not _reuses(stricter(self.reuse, q.reuse), kind):
            return None
        return self._respond(kind, q, answer, self._cheap_cost(stage, q, answer, plain))

    def _ask(self, stage: StageLike, q: Query) -> Answer | None:
        """What :meth:`resolve` asks of a cheap stage for ``q`` (a hit calibration repeats it)."""
        answer = stage.lookup(q)
        if answer is None or answer.origin:
            answer = self._own(stage, stage.stage, q, answer)
        return answer

    def _kept_in_kv(self, q: Query) -> bool:
        """Whether a model's answer to ``q`` is offered to kv: a plain question's (the shared
        partition) or one in a partition (:mod:`eoc.store.partition`) where kv keeps partitions;
        never a follow-up's, nor any where the store reuses answers only exactly (or never)."""
        return (
            q.cacheable
            and self.reuse == "paraphrase"
            and (q.context is None or (q.partition is not None and self._parts))
        )

    def _scoped(self, kind: Stage, q: Query, answer: Answer | None, facts: bool) -> Answer | None:
        """kv's or graph's answer to a query with a context: a fact where facts may answer it
        (``facts``: the request allows one and its earlier turns change nothing eoc can see)
        and it fits (:meth:`_fact`); a model's answer only from kv, kept in the query's own
        partition (kv reads no other) and made by this cascade's model and parameters."""
        if answer is None:
            return None
        if not answer.origin:
            return self._fact(q, answer) if facts else None
        if (
            kind is Stage.KV
            and self._parts
            and q.partition is not None
            and answer.origin == self.origin()
        ):
            return answer
        return None

    def _fact(self, q: Query, answer: Answer | None) -> Answer | None:
        """For a request more than a plain question (``q.facts_ok``): ``answer`` only if no
        model made it and it fits the request's ``max_tokens`` (:mod:`eoc.chat.followup`: counted by
        the model's tokenizer where one is loaded, else bounded from above)."""
        if answer is None or answer.origin:
            return None
        limit = q.conversation.max_tokens if q.conversation is not None else None
        if limit is None:
            return answer
        counted = self._count_tokens(answer.payload) if self._count_tokens is not None else None
        return answer if fits(answer.payload, limit, counted) else None

    def _own(self, stage: StageLike, kind: Stage, q: Query, answer: Answer | None) -> Answer | None:
        """``answer`` if this cascade's model and parameters made it; for the cache, else the
        answer they made, remembered under its own key (:meth:`_made_by`); else ``None``."""
        origin = self.origin()
        if answer is not None and answer.origin == origin:
            return answer
        if kind is not _CACHE:
            return None
        mine = stage.lookup(self._made_by(q, origin))
        return mine if mine is not None and mine.origin == origin else None

    @staticmethod
    def _made_by(q: Query, origin: str) -> Query:
        """The key under which the cache keeps a model's answer to ``q``: the question, its
        context and what made the answer (``origin``), so two models' or two settings' answers
        to one question are kept side by side, and neither is served for the other."""
        context = f"made by {origin}" + ("" if q.context is None else f"\n{q.context}")
        return Query(q.prompt, context=context, cacheable=q.cacheable)

    @staticmethod
    def _narrowed(
        plan: tuple[tuple[StageLike, Stage, JouleCost], ...],
        plain: bool,
        cacheable: bool,
        facts: bool = False,
        parted: bool = False,
    ) -> tuple[tuple[StageLike, Stage, JouleCost], ...]:
        """The steps of ``plan`` that may answer a query (see :class:`eoc.query.Query`).

        A query with a context (``plain`` False) is answered by the cache alone (kv and graph
        match a question without its conversation), unless facts may answer it (``facts``:
        kv and graph too, for answers no model made, at any sampling) or it is in a partition
        (``parted``: kv too, from that partition); an uncacheable one by none of the memoizing
        stages but such a fact.
        """
        return tuple(
            step
            for step in plan
            if (plain or step[1] is _CACHE or facts or (parted and step[1] is Stage.KV))
            and (cacheable or step[1] not in _MEMOS or (facts and step[1] is not _CACHE))
        )

    def _cheap_cost(
        self, stage: StageLike, q: Query, answer: Answer, plain: JouleCost
    ) -> JouleCost:
        own = answer.cost
        if self.live:
            return self._hit_cost(stage, q, answer)
        if own is None:
            return plain
        if own.provenance is _ESTIMATED:
            return own  # the stage's own work-scaled estimate: the same object each hit
        return self._demote(own, "")

    @staticmethod
    def _as_query(query: object) -> Query:
        if isinstance(query, Query):
            return query
        if isinstance(query, str):
            return Query(query)
        raise InputError(f"resolve() takes a Query or prompt text, not {type(query).__name__}")

    def _respond(
        self,
        kind: Stage,
        q: Query,
        answer: Answer,
        cost: JouleCost,
        stored: str = "",
        receipt: Receipt | None = None,
    ) -> Response:
        # The same cost object and query id mean the same five receipt fields, so the same
        # (read-only) response. Cost objects are per stage, so the stage is implied.
        built = answer.built
        if built.cost is cost and built.qid == q.id and not stored:
            memo = built.response
            assert memo is not None
            return memo
        if receipt is None:
            receipt = Receipt.issue(q.id, kind, cost, answer.payload)
        if self.signer is not None:
            receipt = receipt.signed(self.signer)
        made = None if answer.generation is None else answer.generation.receipt
        if made is not None and made != receipt.digest:
            self._remember_replay(receipt.digest, made)
        saved = self._avoided(kind, q, answer, cost)
        response = Response(
            kind,
            answer.payload,
            cost,
            receipt,
            q.id,
            answer.tokens,
            stored,
            answer.generation,
            kind is not Stage.NEURAL,
            avoided=saved,
        )
        built.cost, built.qid, built.response = cost, q.id, response
        return response

    def _remember_replay(self, digest: str, made: str) -> None:
        """Keep which made answer a replay's receipt served (the newest :data:`_REPLAYS_KEPT`),
        so the receipt of any answer this cascade gave names the answer to forget."""
        with self._replays_lock:
            replays = self._replays
            if len(replays) >= _REPLAYS_KEPT:
                del replays[next(iter(replays))]
            replays[digest] = made

    def made_receipt(self, answer: Response | str) -> str:
        """The name of a remembered model answer: the receipt it was made with.

        ``answer`` is a :class:`Response` (a fresh model answer's, or a replay's), the digest of
        any receipt this cascade gave with it (a replay's receipts are looked up among the
        newest :data:`_REPLAYS_KEPT`), or a response id of ``eoc serve``, which carries the
        made receipt's first 32 hex digits (:func:`eoc.store.forget.answer_in_id`).

        Raises:
            InputError: an answer no model made or no store kept, or text that is neither a
                receipt digest nor such an id.
        """
        if isinstance(answer, Response):
            gen = answer.generation
            if gen is None or gen.receipt is None:
                raise InputError(
                    "this answer is no remembered model answer (a fact, or one made before eoc "
                    "named answers by their receipt): forget it by its question instead"
                )
            return gen.receipt
        digest = checked_answer_name(answer)
        with self._replays_lock:
            return self._replays.get(digest, digest)

    def forget_answer(self, answer: Response | str) -> dict[str, int]:
        """Forget one remembered model answer everywhere this cascade keeps it (the cache and
        the kv, in memory and in their store), named by ``answer`` as :meth:`made_receipt`
        reads it: an app's thumbs-down. Returns how many entries each stage forgot.

        Raises:
            InputError: as :meth:`made_receipt`.
        """
        return self.forget(forget_of(answer=self.made_receipt(answer)))

    def forget(self, what: Forget) -> dict[str, int]:
        """Forget what ``what`` says (:func:`eoc.store.forget.forget_of`) from this cascade's cache
        and kv, in memory and in their stores; how many entries each stage forgot. Answers
        still on their way to the kv (``kv_after_reply``) are written first, so none of them
        comes back after the forget."""
        self.flush()
        return forget_in(
            None if self._cache is None else self._cache.stage,
            None if self._kv is None else self._kv.stage,
            what,
        )

    def _avoided(self, kind: Stage, q: Query, answer: Answer, cost: JouleCost) -> Avoided | None:
        """What an answer given without the model avoided (:func:`eoc.ledger.avoided`): a
        replayed model answer what making it cost, as this cascade recorded then; else what the
        model would have spent on it, estimated (``None``: no model to compare with, or a
        neural answer, which avoided nothing)."""
        if kind is Stage.NEURAL:
            return None
        memo = answer.built.avoided
        if memo is not None and memo[0] == q.id:
            made, would, note = memo[1], memo[2], memo[3]
        else:
            made, note = self._made_cost(answer)
            doubt = ""
            if made is not None:
                ceiling = self._made_ceiling(q, answer)
                if made.uj > ceiling:  # a record past what its tokens could cost: not believed
                    doubt = (
                        f"; the recorded {made.uj:,} µJ is more than the answer's tokens could "
                        f"cost ({ceiling:,} µJ at most), so it is not believed"
                    )
                    made, note = None, ""
            would = None
            if made is None and self._would_cost is not None:
                found = self._would_cost(q, answer.payload)
                if isinstance(found, JouleCost) and found.provenance is _ESTIMATED:
                    would = replace(found, basis=found.basis + doubt) if doubt else found
            answer.built.avoided = (q.id, made, would, note)
        return avoided(kind, cost, made=made, would_cost=would, made_note=note)

    def _made_ceiling(self, q: Query, answer: Answer) -> int:
        """The most making ``answer`` could have cost (:func:`eoc.ledger.made_ceiling`): as many
        tokens as the text the model read (the conversation's, for a request) and the answer
        have UTF-8 bytes, at the model's work rates (eoc's default for a model where the
        backend states none)."""
        chat = q.conversation
        rates = self._wiring.rates
        found = rates() if rates is not None else None
        return made_ceiling(
            token_bound(q.prompt if chat is None else chat.texts()),
            token_bound(answer.payload),
            found if isinstance(found, WorkRates) else WORK_RATES[Stage.NEURAL],
        )

    @property
    def judging(self) -> Judging | None:
        """The kv's judge of meaning (:mod:`eoc.stages.judging`), ``None`` when it has none."""
        judged = self._wiring.judged
        return None if judged is None else judged.judging

    def _saving(self, q: Query, answer: Answer) -> JouleCost | None:
        """What serving ``answer`` to ``q`` would save, for the kv's judge (its energy rule):
        what making it cost, as recorded and believed (:meth:`_avoided`'s rule), else what the
        model would spend on it (``None``: no model to compare with)."""
        made, _ = self._made_cost(answer)
        if made is not None and made.uj <= self._made_ceiling(q, answer):
            return made
        if self._would_cost is None:
            return None
        found = self._would_cost(q, answer.payload)
        return found if isinstance(found, JouleCost) else None

    def _saving_bound(self, q: Query, longest: int, made_uj: int) -> int | None:
        """The most :meth:`_saving` can say for ``q`` beside any stored answer of at most
        ``longest`` characters whose recorded making cost at most ``made_uj`` µJ: the larger of
        that, the ledger's largest record, and what the model would spend answering ``q`` with
        that many characters (its estimate grows with the answer's length); ``None`` where none
        of them is a figure (no model to compare with, nothing recorded), as :meth:`_saving`
        says. The kv's judge reads it before embedding a question (:mod:`eoc.stages.kv`)."""
        bounds = [b for b in (made_uj, self.made.most_uj) if b > 0]
        if self._would_cost is not None:
            longest = max(0, longest)
            answer = self._longest_answer  # read once: another thread may set it meanwhile
            if len(answer) != longest:  # made again only when the length changes
                answer = self._longest_answer = "x" * longest
            found = self._would_cost(q, answer)
            if isinstance(found, JouleCost):
                bounds.append(found.uj)
        return max(bounds) if bounds else None

    def _made_cost(self, answer: Answer) -> tuple[JouleCost | None, str]:
        """What making a replayed model answer cost: the record stored with its entry (a
        measured one checked against this host and meter: :func:`eoc.ledger.recorded_cost`),
        else this process's ledger; ``None`` when neither has it (an answer no model made, or
        one stored before eoc recorded the cost)."""
        if not answer.origin:
            return None, ""
        gen = answer.generation
        made = gen.made if gen is not None else None
        if isinstance(made, MadeCost):
            try:
                checked_made(made)
            except InputError:
                made = None  # a third party's stage handed on a record eoc would refuse
        if isinstance(made, MadeCost):
            live = self.live
            return recorded_cost(
                made,
                host=self._host,
                counter=self.meter.name if live else None,
                counter_kind=self.meter_kind if live else None,
            )
        return self.made.cost_of(answer.origin, answer.payload), ""

    def origin(self) -> str:
        """What makes this cascade's model answers now (the neural stage's
        :meth:`~eoc.stages.neural.NeuralStage.origin`): a remembered answer that another model,
        or other parameters, made is not served here. A neural stage without ``origin()`` is
        known by its class."""
        origin_of_model = self._wiring.origin
        found = origin_of_model() if origin_of_model is not None else None
        if isinstance(found, str) and found:
            return found
        stage = type(self._neural)  # a neural stage that says nothing: known by its class
        return origin_of(f"stage:{stage.__module__}.{stage.__qualname__}")

    def _memoize(
        self, kind: Stage, q: Query, payload: str, origin: str, generation: Generation | None
    ) -> str:
        """Remember an answer and how a model generated it; returns what became of it
        (:attr:`Response.stored`)."""
        if not q.cacheable or (origin and self.reuse == "never"):
            return ""  # a store that never reuses a model's answer does not keep one
        done: list[str] = []
        try:
            if self._cache is not None:
                key = self._made_by(q, origin) if origin else q
                done.append(self._remember(self._cache, key, payload, origin, generation))
            if (
                kind is Stage.NEURAL
                and self._kv is not None
                and self._kept_in_kv(q)
                and payload.strip()
            ):
                if self._behind is None:
                    done.append(self._remember(self._kv, q, payload, origin, generation))
                else:
                    kv = self._kv
                    self._behind.submit(lambda: self._remember(kv, q, payload, origin, generation))
                    if not done:  # no cache: not written yet, lost if this process stops first
                        done.append(PENDING)
        except InputError:
            pass  # an answer kv cannot key (a prompt with no words) is still served
        except StoreError as exc:
            # the store refused the write (disk full, made read-only): the answer is still
            # served, nothing half-written was kept, and the failure is counted for the caller
            self._store_failed(exc.reason)
            return "no"
        return PENDING if PENDING in done else "yes" if "yes" in done else ""

    def _store_failed(self, reason: str) -> None:
        with self._errors_lock:
            self.store_errors += 1
            self.last_store_error = reason

    def _behind_failed(self, exc: BaseException) -> None:
        """A write after the reply failed: counted as a refused write (an answer kv cannot key,
        a prompt with no words, is not a failure, as in :meth:`_memoize`)."""
        if isinstance(exc, InputError):
            return
        reason = exc.reason if isinstance(exc, StoreError) else f"{type(exc).__name__}: {exc}"
        self._store_failed(f"remembering in kv after the reply: {reason}")

    @staticmethod
    def _remember(
        memo: Remembering, q: Query, payload: str, origin: str, generation: Generation | None
    ) -> str:
        """Hand an answer to a memo stage with what made it: "yes", :data:`PENDING` (a shared
        store is down: written when it is back) or "" (not handed on). A stage whose
        ``remember`` takes no ``origin`` (written before eoc recorded it) gets only answers no
        model made: it could not say later which model made one."""
        if origin and not memo.origins:
            return ""
        said = memo.call(q, payload, origin, generation)
        return PENDING if said == PENDING else "yes"

    # -- cheap tiers -------------------------------------------------------------

    def _hit_cost(self, stage: StageLike, q: Query, answer: Answer) -> JouleCost:
        kind = stage.stage
        base = answer.cost if answer.cost is not None else stage.figure
        if base.provenance is _MEASURED:
            base = self._demote(base, "")
        if not self.live:
            return base
        self._last_hit[kind] = q
        if kind in self._off:
            return self._demote(base, "hit calibration switched off")
        charger = self._chargers.get(kind)
        if charger is None:
            charger = self._calibrate_tier(stage, q)
        cal = charger.calibration
        if cal.per_hit_nj is None:
            return self._demote(base, f"no hit calibration: {cal.reason}")
        uj = charger.charge()
        note = self.liveness_note
        return JouleCost(
            base.uj + uj,
            _ESTIMATED,
            f"{base.basis} + host hit cost {cal.per_hit_nj / 1000:.3f} µJ/hit calibrated on "
            f"{cal.counter} ({cal.counter_kind.value if cal.counter_kind else '?'})"
            + (f"; {note}" if note else ""),
            counter=cal.counter,
            counter_kind=cal.counter_kind,
        )

    def _calibrate_tier(self, stage: StageLike, q: Query) -> HitCharger:
        with self._cal_lock:
            charger = self._chargers.get(stage.stage)
            if charger is None:
                cal = calibrate_hits(
                    stage.stage,
                    self.meter,
                    lambda: self._ask(stage, q),
                    counter_kind=self.meter_kind,
                    clock=self._clock,
                    ratio=self._ratio,
                    budget_ns=self._budget_ns,
                )
                charger = self._chargers[stage.stage] = HitCharger(cal)
            return charger

    def calibration(self, tier: Stage | str) -> HitCalibration:
        """The per-hit figure of ``tier`` (cache, kv or graph), or why there is none."""
        kind = self._tier(tier)
        if not self.live:
            return HitCalibration(kind, None, reason=f"no live counter: {self.meter_status}")
        if kind in self._off:
            return HitCalibration(kind, None, reason="hit calibration switched off for this tier")
        charger = self._chargers.get(kind)
        if charger is None:
            return HitCalibration(kind, None, reason=f"no {kind.value} hit yet on this cascade")
        return charger.calibration

    def calibrate(self, tier: Stage | str | None = None) -> dict[Stage, HitCalibration]:
        """Calibrate again now, repeating the last query that hit each tier (or ``tier`` only).

        A tier switched off with :meth:`without_hit_calibration` is switched back on.
        A tier that has had no hit yet calibrates on its next hit.
        """
        tiers = [self._tier(tier)] if tier is not None else [s.stage for s in self._cheap]
        out: dict[Stage, HitCalibration] = {}
        for kind in tiers:
            self._off.discard(kind)
            with self._cal_lock:
                self._chargers.pop(kind, None)
            q = self._last_hit.get(kind)
            stage = next((s for s in self._cheap if s.stage is kind), None)
            if self.live and q is not None and stage is not None:
                self._calibrate_tier(stage, q)
            out[kind] = self.calibration(kind)
        return out

    def without_hit_calibration(self, tier: Stage | str) -> None:
        """Stop charging a calibrated hit cost on ``tier``; its hits keep the stage figure."""
        kind = self._tier(tier)
        self._off.add(kind)
        with self._cal_lock:
            self._chargers.pop(kind, None)

    def _tier(self, tier: Stage | str) -> Stage:
        try:
            kind = Stage(tier)
        except ValueError:
            raise ConfigError(f"unknown tier {tier!r}: use cache, kv or graph") from None
        if kind is Stage.NEURAL:
            raise ConfigError(
                "the neural stage is bracketed, not calibrated: use cache, kv or graph"
            )
        return kind

    # -- neural ------------------------------------------------------------------

    def _resolve_neural(self, q: Query) -> Response:
        stage = self._neural
        if not self.live:
            answer = self._lookup_neural(stage, q)
            cost = self._unbracketed(
                stage,
                q,
                answer,
                f"no live meter ({self.meter.name}: {self.meter_status.state.value})",
            )
        else:
            with self._bracket_lock:  # one bracket at a time: a whole-work span can't be shared
                meter, clock = self.meter, self._clock
                try:
                    t0 = clock()
                    e0 = meter.read_uj()
                except EocError as exc:
                    answer = self._lookup_neural(stage, q)
                    cost = self._unbracketed(stage, q, answer, f"no span: {exc.reason}")
                else:
                    answer = self._lookup_neural(stage, q)
                    try:
                        e1 = meter.read_uj()
                        t1 = clock()
                        span = span_uj(meter, e0, t0, e1, t1)
                    except EocError as exc:
                        cost = self._unbracketed(stage, q, answer, f"no span: {exc.reason}")
                    else:
                        cost = self._combine(answer.cost, span, t1 - t0)
        stored = ""
        receipt = None
        if answer.memo:  # never the echo (no model ran) nor a sampled answer without a seed
            origin = self.origin()
            receipt = Receipt.issue(q.id, Stage.NEURAL, cost, answer.payload)
            if answer.generation is not None:  # kept with the entry: what a replay avoided,
                made = MadeCost.of(cost, self._host)  # and the answer's name (its receipt)
                generation = replace(
                    answer.generation,
                    made=made if made is not None else answer.generation.made,
                    receipt=receipt.digest,
                )
                answer = replace(answer, generation=generation)
            stored = self._memoize(Stage.NEURAL, q, answer.payload, origin, answer.generation)
            if stored in ("yes", PENDING):  # what a replay of it will have avoided
                self.made.record(origin, answer.payload, cost)
        elif answer.unkept:  # a broken answer: served once, never again, and it says why
            cost = cost.with_basis(f"{cost.basis}; not remembered: {answer.unkept}")
        return self._respond(Stage.NEURAL, q, answer, cost, stored, receipt)

    @staticmethod
    def _lookup_neural(stage: StageLike, q: Query) -> Answer:
        answer = stage.lookup(q)
        if answer is None:
            raise BackendError("the neural stage passed; it must always answer")
        return answer

    def _fallback(self, stage: StageLike, q: Query, answer: Answer) -> JouleCost:
        """The stage's own estimate for an answer whose backend reported none."""
        estimate = self._wiring.estimate_of(stage)
        if estimate is not None:
            cost = estimate(q, answer)
            if isinstance(cost, JouleCost) and cost.provenance is _ESTIMATED:
                return cost
        return stage.figure

    def _unbracketed(self, stage: StageLike, q: Query, answer: Answer, note: str) -> JouleCost:
        """No span: the answer keeps an ESTIMATED figure, whatever the backend claimed."""
        own = answer.cost
        if own is None:
            return self._demote(self._fallback(stage, q, answer), note)
        if own.provenance is _MEASURED:
            return self._demote(own, f"{note}, so this cascade cannot check the backend's claim")
        return self._demote(own, note)

    def _combine(self, own: JouleCost | None, span: int, span_ns: int) -> JouleCost:
        name, kind = self.meter.name, self.meter_kind
        note = self.liveness_note
        where = f"neural span on {name} ({kind.value}), {span_ns / 1e6:.1f} ms"
        if note:
            where += f" [{note}]"
        if own is None:
            return JouleCost(
                span, _MEASURED, f"{where}: {span} µJ", counter=name, counter_kind=kind
            )
        if own.provenance is _MEASURED:
            why = self._unchecked_claim(own, span_ns)
            if why:
                return JouleCost(
                    max(own.uj, span),
                    _ESTIMATED,
                    f"larger of the backend's claim {own.uj} µJ and the {where}: {span} µJ "
                    f"(estimated: {why})",
                    counter=name,
                    counter_kind=kind,
                )
            if own.uj > span:
                return JouleCost(
                    own.uj,
                    _MEASURED,
                    f"backend's own measurement on {name} {own.uj} µJ, larger than the {where}: "
                    f"{span} µJ",
                    counter=name,
                    counter_kind=kind,
                )
            return JouleCost(
                span,
                _MEASURED,
                f"{where}: {span} µJ, larger than the backend's own {own.uj} µJ",
                counter=name,
                counter_kind=kind,
            )
        return JouleCost(
            max(own.uj, span),
            _ESTIMATED,
            f"larger of the backend's estimate {own.uj} µJ and the {where}: {span} µJ "
            "(estimated, because the backend estimated)",
            counter=name,
            counter_kind=kind,
        )

    def _unchecked_claim(self, own: JouleCost, span_ns: int) -> str:
        """Why a backend's MEASURED figure cannot stand as measured here ("" when it can)."""
        if own.counter != self.meter.name:
            return (
                f"the backend claims it was measured on {own.counter}, a counter this cascade "
                "did not probe: a claim, not evidence"
            )
        if own.uj * 1e9 > max_power_uw(self.meter) * span_ns:
            return (
                f"the backend's {own.uj} µJ inside a {span_ns / 1e6:.1f} ms span is more than "
                f"{self.meter.name} can see in that time"
            )
        return ""


def _reuses(policy: str, kind: Stage) -> bool:
    """Whether a model's remembered answer from ``kind`` may be served under ``policy``."""
    return policy == "paraphrase" or (policy == "exact" and kind is _CACHE)


__all__ = ["Cascade"]
