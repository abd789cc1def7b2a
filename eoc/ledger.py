"""The savings ledger: what an answer given without the model avoided (docs/figures.md).

One function, :func:`avoided`, computes it for every answer, and everything that shows the
figure reads it from there (:attr:`eoc.response.Response.avoided`: the Python API, ``eoc query``,
``eoc bench run``, ``eoc serve``'s header and ``/metrics``, and the browser page), so the figures
agree everywhere.

* A **replayed model answer** (a cache or kv hit on an answer the model made) avoided what
  making it cost, as recorded when it was made: stored with the entry
  (:class:`eoc.store.entry.MadeCost`, so another process or a restarted server reports the same), or
  in this process's :class:`MadeLedger` for a memo stage that keeps no record. The figure keeps
  the provenance it had then, as ``measured-when-made`` or ``estimated``: the work it stands for
  did not run now, so no counter read it and it is never ``measured``. A record of a measurement
  read back from a store is kept ``measured-when-made`` only on its host with its counter live
  now; elsewhere it is ``estimated`` and the basis says why (:func:`recorded_cost`).
* An answer **no model made** (kv's pack, the graph, a computation), or a replay whose cost when
  made was not recorded (stored before eoc recorded it, or by a stage that keeps nothing),
  avoided an ESTIMATE of what the configured model would have spent on it
  (:meth:`eoc.stages.neural.NeuralStage.would_cost`); the basis says how it was estimated.
* **No model configured** (the no-model notice, the echo), or a neural stage that gives no
  estimate: there is nothing to compare with, so there is **no figure** (``None``), never 0.
* A **neural answer** avoided nothing: the model did the work.

The figure is **gross**: the model's work the answer did not need. ``net_uj`` subtracts what
this answer itself was charged; it is a difference of two figures one of which (a hit's cost)
is never measured, so it is always an estimate, and it may be negative (a flat stage figure
larger than the model's estimate).
"""

from __future__ import annotations

import enum
import hashlib
import platform
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from eoc.cost import CounterKind, JouleCost, Provenance
from eoc.errors import ConfigError
from eoc.query import Stage
from eoc.store.entry import MadeCost


class AvoidedProvenance(enum.StrEnum):
    """How an avoided figure was obtained. Never ``measured``: the avoided work did not run."""

    MEASURED_WHEN_MADE = "measured-when-made"  # a live counter read the model make this answer
    ESTIMATED = "estimated"  # anything else


AVOIDED_PROVENANCES = tuple(p.value for p in AvoidedProvenance)


@dataclass(frozen=True, slots=True, init=False)
class Avoided:
    """What one answer given without the model avoided (see the module).

    Args:
        uj: the model's work avoided, gross, in whole µJ (at least 1: no figure is ``None``).
        provenance: :class:`AvoidedProvenance`.
        basis: one line saying where the figure came from.
        net_uj: ``uj`` less what this answer was charged (always an estimate; may be < 0).
        counter: the counter that read the model's work when it was made (measured-when-made).
        counter_kind: that counter's kind (``fake`` for a simulated one).
    """

    uj: int
    provenance: AvoidedProvenance
    basis: str
    net_uj: int
    counter: str | None
    counter_kind: str | None

    def __init__(
        self,
        uj: int,
        provenance: AvoidedProvenance,
        basis: str,
        net_uj: int,
        *,
        counter: str | None = None,
        counter_kind: str | None = None,
    ) -> None:
        if isinstance(uj, bool) or not isinstance(uj, int) or uj < 1:
            raise ConfigError(f"an avoided figure is whole µJ of at least 1, got {uj!r}")
        if not isinstance(provenance, AvoidedProvenance):
            raise ConfigError("an avoided figure's provenance is an AvoidedProvenance")
        if provenance is AvoidedProvenance.MEASURED_WHEN_MADE and not counter:
            raise ConfigError("a figure measured when the answer was made names its counter")
        _set = object.__setattr__
        _set(self, "uj", uj)
        _set(self, "provenance", provenance)
        _set(self, "basis", basis)
        _set(self, "net_uj", net_uj)
        _set(self, "counter", counter)
        _set(self, "counter_kind", counter_kind)

    def to_dict(self) -> dict[str, Any]:
        return {
            "uj": self.uj,
            "net_uj": self.net_uj,
            "provenance": self.provenance.value,
            "basis": self.basis,
            "counter": self.counter,
            "counter_kind": self.counter_kind,
        }

    def __str__(self) -> str:
        on = f" on {self.counter} ({self.counter_kind} counter)" if self.counter else ""
        return f"{self.uj:,} µJ {self.provenance.value}{on}"


def avoided(
    stage: Stage,
    cost: JouleCost,
    *,
    made: JouleCost | None = None,
    would_cost: JouleCost | None = None,
    made_note: str = "",
) -> Avoided | None:
    """What an answer of ``stage``, charged ``cost``, avoided; ``None`` when nothing honest can
    be said (no model configured) or nothing was avoided (a neural answer).

    ``made``: what the model's answer cost when it was made, when this answer replays one and
    that was recorded. ``made_note``: why a figure recorded as measured is only an estimate
    here (:func:`recorded_cost`); ``made`` is then ESTIMATED. ``would_cost``: the configured
    model's ESTIMATE for this question and answer (``None`` when no model is configured).
    """
    if stage is Stage.NEURAL:
        return None
    if made is not None:
        when_made = made.provenance is Provenance.MEASURED
        kind = None if made.counter_kind is None else made.counter_kind.value
        then = made_note or f"{made.provenance.value} then"
        return Avoided(
            made.uj,
            AvoidedProvenance.MEASURED_WHEN_MADE if when_made else AvoidedProvenance.ESTIMATED,
            f"what the model's answer cost when it was made ({then}: {made.basis})",
            made.uj - cost.uj,
            counter=made.counter if when_made else None,
            counter_kind=kind if when_made else None,
        )
    if would_cost is None:
        return None
    return Avoided(
        would_cost.uj,
        AvoidedProvenance.ESTIMATED,  # what a model would have spent: it never ran
        f"what the model would have spent on it, estimated: {would_cost.basis}",
        would_cost.uj - cost.uj,
    )


MADE_SLACK = 100
"""How many times the model's work rates a recorded cost may come to for its tokens
(:func:`made_ceiling`): the rates are orders of magnitude, not measurements, so the slack is
wide; a record past it (a store row edited outside eoc, a counter that misread) is not believed."""


def made_ceiling(tokens_in: int, tokens_out: int, rates: Any) -> int:
    """The most, in µJ, that making an answer could have cost: ``tokens_in`` read and
    ``tokens_out`` written (bounds, not guesses: :func:`eoc.text.tokens.token_bound` of each
    text, whatever counts a record holds), at :data:`MADE_SLACK` times the model's work
    ``rates`` (:class:`eoc.stages.base.WorkRates`). A replay's avoided figure is never more."""
    uj = rates.base_uj + rates.per_token_in_uj * tokens_in + rates.per_token_out_uj * tokens_out
    return max(1, int(MADE_SLACK * uj))


def this_host() -> str:
    """This machine's name as a made cost records it (``platform.node()``; "" when unknown)."""
    return platform.node()


def recorded_cost(
    made: MadeCost,
    *,
    host: str,
    counter: str | None,
    counter_kind: CounterKind | None,
) -> tuple[JouleCost, str]:
    """The figure a made cost read back from a store stands for here, and ``""``, or the
    ESTIMATED figure and why a record of a measurement is not kept measured.

    A record is a claim read from a file, not a reading (docs/design.md §3 rule 5): a measured
    one stays measured (so its replay ``measured-when-made``) only on the host that made it,
    with the same counter, of the same kind, live on this cascade now (``counter`` and
    ``counter_kind``: this cascade's live meter, ``None`` when none is live). An estimated record
    stays estimated: nothing here can turn it into a measurement.
    """
    if made.provenance != Provenance.MEASURED.value:
        return JouleCost(made.uj, Provenance.ESTIMATED, made.basis), ""
    why = ""
    if not made.host or made.host != host:
        why = f"it was measured on host {made.host or 'unknown'!r}; this is {host or 'unknown'!r}"
    elif counter is None or counter != made.counter:
        why = f"{made.counter} is not live on this cascade now"
    elif counter_kind is None or counter_kind.value != made.counter_kind:
        why = f"{made.counter} is {counter_kind} here, not {made.counter_kind} as recorded"
    if why:
        note = (
            f"recorded as measured on {made.counter} ({made.counter_kind}); estimated here: {why}"
        )
        return JouleCost(made.uj, Provenance.ESTIMATED, made.basis), note
    return JouleCost(
        made.uj,
        Provenance.MEASURED,
        made.basis,
        counter=made.counter,
        counter_kind=counter_kind,
    ), ""


class MadeLedger:
    """What the model's remembered answers cost when they were made, in this process.

    The figure a replay reports is the one stored with the entry (:class:`eoc.store.entry.MadeCost`,
    so it holds across processes and restarts); this ledger is for memo stages that keep no
    generation record (a third party's). Keyed by what made an answer and its text (a SHA-256
    of both), so a cache hit and a kv hit on the same remembered answer find the same figure;
    bounded to ``max_entries``, the oldest dropped first. An answer found in neither was made
    before eoc recorded its cost (or by a stage that keeps nothing), and :func:`avoided` then
    estimates (and says so).
    """

    def __init__(self, max_entries: int = 65_536) -> None:
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
            raise ConfigError("max_entries must be a whole number of at least 1")
        self.max_entries = max_entries
        self._costs: OrderedDict[bytes, JouleCost] = OrderedDict()
        self._lock = threading.Lock()
        self.most_uj = 0
        """The largest cost ever recorded here (not lowered when a record is dropped): a bound
        on what :meth:`cost_of` can say."""

    @staticmethod
    def _key(origin: str, payload: str) -> bytes:
        return hashlib.sha256(f"{origin}\0{payload}".encode()).digest()

    def record(self, origin: str, payload: str, cost: JouleCost) -> None:
        """The model (``origin``) made ``payload`` at ``cost``."""
        key = self._key(origin, payload)
        with self._lock:
            self._costs[key] = cost
            self.most_uj = max(self.most_uj, cost.uj)
            self._costs.move_to_end(key)
            while len(self._costs) > self.max_entries:
                self._costs.popitem(last=False)

    def cost_of(self, origin: str, payload: str) -> JouleCost | None:
        """What making ``payload`` cost, if this ledger recorded it."""
        with self._lock:
            return self._costs.get(self._key(origin, payload))

    def __len__(self) -> int:
        return len(self._costs)


__all__ = [
    "AVOIDED_PROVENANCES",
    "MADE_SLACK",
    "Avoided",
    "AvoidedProvenance",
    "MadeLedger",
    "avoided",
    "made_ceiling",
    "recorded_cost",
    "this_host",
]
