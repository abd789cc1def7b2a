"""The cascade: cache -> kv -> graph -> neural, the first stage that answers wins.

Costs follow DESIGN.md §4:

* Neural answers are bracketed by two reads of the meter, the first taken after
  cache, kv and graph have missed. The span is MEASURED when the backend
  estimated nothing; the larger of the two (MEASURED) when the backend metered
  itself; ESTIMATED (the larger figure) when the backend estimated.
* Cache, kv and graph answers are never bracketed and never MEASURED: they are
  charged the stage's own figure plus the calibrated cost of a hit on this host
  (see :mod:`eoc.calibration`).
* With no live counter there is no span and no calibration: every answer keeps
  the figure its stage reported, ESTIMATED.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from eoc._compat import IN_PYODIDE
from eoc.calibration import (
    DEFAULT_BUDGET_NS,
    DEFAULT_RATIO,
    HitCalibration,
    HitCharger,
    calibrate_hits,
)
from eoc.cost import JouleCost, Provenance
from eoc.errors import BackendError, ConfigError, CounterUnavailable, EocError, InputError
from eoc.meter.counter import Counter, CounterStatus, StubCounter
from eoc.meter.detection import detect
from eoc.meter.span import span_uj
from eoc.query import Query, Stage
from eoc.receipt import Receipt
from eoc.response import Response
from eoc.stages.base import Answer, Memo, StageLike

_ORDER = (Stage.CACHE, Stage.KV, Stage.GRAPH, Stage.NEURAL)
_MEASURED = Provenance.MEASURED
_ESTIMATED = Provenance.ESTIMATED
_CACHE = Stage.CACHE


def _meter_status(meter: Counter) -> CounterStatus:
    try:
        status = meter.status()
    except EocError as exc:
        return CounterStatus.unavailable(exc.reason)
    if not isinstance(status, CounterStatus):
        return CounterStatus.unavailable(f"{meter.name}: status() did not return a CounterStatus")
    return status


class Cascade:
    """Resolves queries through the stages, charging each answer in µJ.

    Args:
        stages: stages in cascade order (cache, kv, graph, neural; any may be left
            out except neural, which must be last). Defaults to the seeded stages of
            :func:`eoc.knowledge.default_stages`.
        meter: the whole-work counter; defaults to :func:`eoc.meter.detect`. In the
            browser only the stub is accepted.
        clock: monotonic nanosecond clock (tests inject a fake one).
        calibration_ratio: a calibration span must read this many times an empty span.
        calibration_budget_ns: or last this long, whichever comes first.
    """

    def __init__(
        self,
        stages: Sequence[StageLike] | None = None,
        meter: Counter | None = None,
        *,
        clock: Callable[[], int] = time.perf_counter_ns,
        calibration_ratio: int = DEFAULT_RATIO,
        calibration_budget_ns: int = DEFAULT_BUDGET_NS,
    ) -> None:
        if stages is None:
            from eoc.knowledge import default_stages

            stages = default_stages()
        self._check_stages(stages)
        if meter is None:
            meter = detect()
        for name in ("read_uj", "status"):
            if not callable(getattr(meter, name, None)):
                raise ConfigError(
                    f"meter must be a counter with {name}(); got {type(meter).__name__}"
                )
        if getattr(meter, "telemetry_only", False):
            raise ConfigError(
                f"{meter.name} is telemetry only (it sees one device, not the whole work): "
                "it cannot meter the cascade"
            )
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
        self.stages: tuple[StageLike, ...] = tuple(stages)
        self.meter = meter
        self.meter_status = _meter_status(meter)
        self.live = self.meter_status.is_live and not isinstance(meter, StubCounter)
        self._clock = clock
        self._ratio = calibration_ratio
        self._budget_ns = calibration_budget_ns
        self._cheap = tuple(s for s in self.stages if s.stage is not Stage.NEURAL)
        self._neural = self.stages[-1]
        self._cache = self._memo(Stage.CACHE)
        self._kv = self._memo(Stage.KV)
        self._bracket_lock = threading.Lock()
        self._cal_lock = threading.Lock()
        self._chargers: dict[Stage, HitCharger] = {}
        self._off: set[Stage] = set()
        self._last_hit: dict[Stage, Query] = {}
        # the hot loop: (stage, its kind, the cost of a hit when nothing is live)
        why = "" if self.live else "no live counter"
        self._plan = tuple((s, s.stage, self._demote(s.figure, why)) for s in self._cheap)

    def _memo(self, kind: Stage) -> Memo | None:
        """The stage of ``kind`` if it can remember answers (see :class:`eoc.stages.Memo`)."""
        for s in self.stages:
            if s.stage is kind and callable(getattr(s, "remember", None)):
                return s  # type: ignore[return-value]
        return None

    @staticmethod
    def _check_stages(stages: Sequence[StageLike]) -> None:
        if isinstance(stages, (str, bytes)) or not isinstance(stages, Sequence) or not stages:
            raise ConfigError("stages must be a non-empty sequence ending with a neural stage")
        kinds = []
        for s in stages:
            kind = getattr(s, "stage", None)
            if not isinstance(kind, Stage) or not callable(getattr(s, "lookup", None)):
                raise ConfigError(f"{s!r} is not a stage (needs .stage and .lookup(query))")
            if not isinstance(getattr(s, "figure", None), JouleCost):
                raise ConfigError(f"{s!r} has no .figure (its own JouleCost per answer)")
            kinds.append(kind)
        if kinds[-1] is not Stage.NEURAL:
            raise ConfigError("the last stage must be neural, so that every query gets an answer")
        positions = [_ORDER.index(k) for k in kinds]
        if positions != sorted(set(positions)):
            raise ConfigError(
                "stages must be in cascade order cache, kv, graph, neural, each at most once"
            )

    @staticmethod
    def _demote(cost: JouleCost, note: str) -> JouleCost:
        basis = cost.basis + (f"; {note}" if note else "")
        if cost.provenance is _MEASURED:
            basis = cost.basis + "; demoted: cache, kv and graph answers are never measured"
        return JouleCost(
            cost.uj, _ESTIMATED, basis, counter=cost.counter, counter_kind=cost.counter_kind
        )

    def close(self) -> None:
        """Close what the stages hold open (the SQLite stores of :mod:`eoc.persist`)."""
        for s in self.stages:
            for obj in (s, getattr(s, "store", None)):
                close = getattr(obj, "close", None)
                if callable(close):
                    close()

    def __enter__(self) -> Cascade:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- resolving -------------------------------------------------------------

    def resolve(self, query: Query | str) -> Response:
        """Answer one query (a :class:`Query` or prompt text).

        Raises:
            InputError: the prompt or embedding is bad; nothing stored changes.
            BackendError: the neural backend failed.
        """
        q = Query(query) if type(query) is str else self._as_query(query)
        live = self.live
        for stage, kind, plain in self._plan:
            answer = stage.lookup(q)
            if answer is not None:
                if live or answer.cost is not None:
                    cost = self._hit_cost(stage, q, answer)
                else:
                    cost = plain
                if kind is not _CACHE:
                    self._memoize(kind, q, answer.payload)
                return self._respond(kind, q, answer, cost)
        return self._resolve_neural(q)

    @staticmethod
    def _as_query(query: object) -> Query:
        if isinstance(query, Query):
            return query
        if isinstance(query, str):
            return Query(query)
        raise InputError(f"resolve() takes a Query or prompt text, not {type(query).__name__}")

    def _respond(self, kind: Stage, q: Query, answer: Answer, cost: JouleCost) -> Response:
        # The same cost object and query id mean the same five receipt fields, so the same
        # (read-only) response. Cost objects are per stage, so the stage is implied.
        if answer.memo_cost is cost and answer.memo_qid == q.id:
            memo = answer.memo_response
            assert memo is not None
            return memo
        receipt = Receipt.issue(q.id, kind, cost.uj, cost.provenance, answer.payload)
        response = Response(kind, answer.payload, cost, receipt, q.id)
        answer.memo_cost, answer.memo_qid, answer.memo_response = cost, q.id, response
        return response

    def _memoize(self, kind: Stage, q: Query, payload: str) -> None:
        try:
            if self._cache is not None:
                self._cache.remember(q, payload)
            if kind is Stage.NEURAL and self._kv is not None and payload.strip():
                self._kv.remember(q, payload)
        except InputError:
            pass  # an answer kv cannot key (a prompt with no words) is still served

    # -- cheap tiers -------------------------------------------------------------

    def _hit_cost(self, stage: StageLike, q: Query, answer: Answer) -> JouleCost:
        kind = stage.stage
        base = answer.cost if answer.cost is not None else stage.figure
        if base.provenance is _MEASURED:
            base = self._demote(base, "")
        if not self.live:
            return self._demote(base, "no live counter")
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
        return JouleCost(
            base.uj + uj,
            _ESTIMATED,
            f"{base.basis} + host hit cost {cal.per_hit_nj / 1000:.3f} µJ/hit calibrated on "
            f"{cal.counter} ({cal.counter_kind.value if cal.counter_kind else '?'})",
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
                    lambda: stage.lookup(q),
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
            cost = self._unbracketed(stage, answer, "no live counter")
        else:
            with self._bracket_lock:  # one bracket at a time: a whole-work span can't be shared
                meter, clock = self.meter, self._clock
                try:
                    t0 = clock()
                    e0 = meter.read_uj()
                except EocError as exc:
                    answer = self._lookup_neural(stage, q)
                    cost = self._unbracketed(stage, answer, f"no span: {exc.reason}")
                else:
                    answer = self._lookup_neural(stage, q)
                    try:
                        e1 = meter.read_uj()
                        t1 = clock()
                        span = span_uj(meter, e0, t0, e1, t1)
                    except EocError as exc:
                        cost = self._unbracketed(stage, answer, f"no span: {exc.reason}")
                    else:
                        cost = self._combine(answer.cost, span, t1 - t0)
        self._memoize(Stage.NEURAL, q, answer.payload)
        return self._respond(Stage.NEURAL, q, answer, cost)

    @staticmethod
    def _lookup_neural(stage: StageLike, q: Query) -> Answer:
        answer = stage.lookup(q)
        if answer is None:
            raise BackendError("the neural stage passed; it must always answer")
        return answer

    def _unbracketed(self, stage: StageLike, answer: Answer, note: str) -> JouleCost:
        own = answer.cost
        if own is None:
            return self._demote(stage.figure, note)
        if own.provenance is _MEASURED and not IN_PYODIDE:
            return own  # the backend metered itself on a live counter and there is nothing to add
        return JouleCost(
            own.uj,
            _ESTIMATED,
            f"{own.basis}; {note}",
            counter=own.counter,
            counter_kind=own.counter_kind,
        )

    def _combine(self, own: JouleCost | None, span: int, span_ns: int) -> JouleCost:
        name, kind = self.meter.name, self.meter.kind
        where = f"neural span on {name} ({kind.value}), {span_ns / 1e6:.1f} ms"
        if own is None:
            return JouleCost(
                span, _MEASURED, f"{where}: {span} µJ", counter=name, counter_kind=kind
            )
        if own.provenance is _MEASURED:
            if own.uj > span:
                return JouleCost(
                    own.uj,
                    _MEASURED,
                    f"backend's own measurement {own.uj} µJ, larger than the {where}: {span} µJ",
                    counter=own.counter,
                    counter_kind=own.counter_kind,
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


__all__ = ["Cascade"]
