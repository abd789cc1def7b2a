"""Prometheus metrics of one server (``GET /metrics``), exported by ``prometheus-client``.

The hot path only adds to plain numbers (every answer is counted on the event loop's thread,
so no lock is needed); a collector registered in the server's own registry turns them into
metric families when Prometheus scrapes. Each server has its own registry, so several apps in
one process (the tests) do not mix.

Metrics: ``eoc_answers_total{stage}``, ``eoc_joules_total{stage,provenance}``,
``eoc_joules_avoided_total{stage,provenance}`` (the model's work the answers given without it
avoided: :mod:`eoc.ledger`, provenance ``measured-when-made`` or ``estimated``),
``eoc_answers_without_avoided_figure_total{stage}`` (such answers with no figure: no model to
compare with; counted here, never added as 0 J),
``eoc_hit_ratio`` (answers given before the neural stage / all answers),
``eoc_request_seconds{stage}`` (a histogram), ``eoc_upstream_errors_total``,
``eoc_breaker_refusals_total``, ``eoc_budget_refusals_total{scope}``,
``eoc_request_errors_total{status}``, ``eoc_forgotten_entries_total{stage}`` (entries removed
by ``POST /v1/eoc/forget``), ``eoc_judge_decisions_total{outcome}`` and
``eoc_judge_joules_total{provenance}`` (the kv's judge of meaning, :mod:`eoc.stages.judging`: how
each judgeable pair ended, and the judge's joules over every judgement, served or not).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping
from typing import Any

from eoc.ledger import AVOIDED_PROVENANCES
from eoc.query import Stage
from eoc.response import Response
from eoc.stages.judging import OUTCOMES, Judging
from eoc_native import require

STAGES = tuple(s.value for s in Stage)
CHEAP_STAGES = tuple(s.value for s in Stage if s is not Stage.NEURAL)
PROVENANCES = ("measured", "estimated")
LATENCY_BUCKETS = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
    0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
)  # fmt: skip


class Metrics:
    def __init__(self) -> None:
        prom: Any = require(
            "prometheus_client", package="prometheus-client", why="eoc serve's metrics"
        )
        self._prom = prom
        self.registry = prom.CollectorRegistry(auto_describe=True)
        self.answers = dict.fromkeys(STAGES, 0)
        self.microjoules = {(s, p): 0 for s in STAGES for p in PROVENANCES}
        self.avoided_uj = {(s, p): 0 for s in CHEAP_STAGES for p in AVOIDED_PROVENANCES}
        self.without_avoided = dict.fromkeys(CHEAP_STAGES, 0)
        self.latency_counts = {s: [0] * (len(LATENCY_BUCKETS) + 1) for s in STAGES}
        self.latency_sums = dict.fromkeys(STAGES, 0.0)
        self.upstream_errors = 0
        self.breaker_refusals = 0
        self.budget_refusals: dict[str, int] = {}
        self.errors: dict[str, int] = {}
        self.forgotten = {"cache": 0, "kv": 0}
        self.judging: Judging | None = None  # read at scrape time (its record has its own lock)
        self.registry.register(_Collector(self))

    def answered(self, response: Response, seconds: float) -> None:
        """Count one answer (called on the event loop's thread)."""
        stage = response.stage.value
        cost = response.cost
        self.answers[stage] += 1
        self.microjoules[(stage, cost.provenance.value)] += cost.uj
        if stage in self.without_avoided:  # an answer given without the model
            avoided = response.avoided
            if avoided is None:
                self.without_avoided[stage] += 1
            else:
                self.avoided_uj[(stage, avoided.provenance.value)] += avoided.uj
        self.latency_counts[stage][bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1
        self.latency_sums[stage] += seconds

    def error(self, status: int, code: str, scope: str | None = None) -> None:
        """Count one error answer (called on the event loop's thread)."""
        key = str(status)
        self.errors[key] = self.errors.get(key, 0) + 1
        if status == 429 and scope is not None:
            self.budget_refusals[scope] = self.budget_refusals.get(scope, 0) + 1
        elif code == "upstream_unavailable":
            self.breaker_refusals += 1
        elif code == "backend_error":
            self.upstream_errors += 1

    @property
    def hit_ratio(self) -> float | None:
        total = sum(self.answers.values())
        return None if total == 0 else (total - self.answers["neural"]) / total

    def render(self) -> tuple[bytes, str]:
        return self._prom.generate_latest(self.registry), self._prom.CONTENT_TYPE_LATEST


class _Collector:
    """Turns a :class:`Metrics`' numbers into Prometheus metric families at scrape time."""

    def __init__(self, metrics: Metrics) -> None:
        self.m = metrics
        self.core: Any = require("prometheus_client.core", package="prometheus-client")

    def _counter(
        self, name: str, doc: str, labels: list[str], values: Mapping[Any, float], per: float = 1
    ) -> Any:
        """A labelled counter family of ``values`` (keyed by a label, or a tuple of them),
        each divided by ``per`` (1e6 for µJ in joules)."""
        family = self.core.CounterMetricFamily(name, doc, labels=labels)
        for key, value in values.items():
            family.add_metric(list(key) if isinstance(key, tuple) else [key], value / per)
        return family

    def collect(self) -> Iterator[Any]:
        m, core = self.m, self.core
        yield self._counter(
            "eoc_answers", "Answers served, by the stage that answered", ["stage"], m.answers
        )
        yield self._counter(
            "eoc_joules",
            "Joules charged for answers, by stage and provenance (measured or estimated)",
            ["stage", "provenance"],
            m.microjoules,
            1e6,
        )
        yield self._counter(
            "eoc_joules_avoided",
            "Joules of model work avoided by answers given without the model, by stage and "
            "provenance (measured-when-made: a live counter read the model make the answer "
            "replayed; estimated: anything else)",
            ["stage", "provenance"],
            m.avoided_uj,
            1e6,
        )
        yield self._counter(
            "eoc_answers_without_avoided_figure",
            "Answers given without the model with no figure for what they avoided (no model "
            "configured to compare with)",
            ["stage"],
            m.without_avoided,
        )
        ratio = m.hit_ratio
        yield core.GaugeMetricFamily(
            "eoc_hit_ratio",
            "Share of answers given before the neural stage (cache, kv or graph)",
            value=0.0 if ratio is None else ratio,
        )
        latency = core.HistogramMetricFamily(
            "eoc_request_seconds",
            "Time from request to answer, by the stage that answered",
            labels=["stage"],
        )
        for stage, counts in m.latency_counts.items():
            running, buckets = 0, []
            for bound, n in zip((*LATENCY_BUCKETS, float("inf")), counts, strict=True):
                running += n
                buckets.append(("+Inf" if bound == float("inf") else repr(float(bound)), running))
            latency.add_metric([stage], buckets, m.latency_sums[stage])
        yield latency
        yield core.CounterMetricFamily(
            "eoc_upstream_errors",
            "Failures of the neural backend (model or upstream)",
            value=m.upstream_errors,
        )
        yield core.CounterMetricFamily(
            "eoc_breaker_refusals",
            "Requests refused because the breaker was open",
            value=m.breaker_refusals,
        )
        yield self._counter(
            "eoc_budget_refusals",
            "Requests refused over a joule budget",
            ["scope"],
            m.budget_refusals,
        )
        yield self._counter(
            "eoc_request_errors",
            "Requests answered with an error, by HTTP status",
            ["status"],
            m.errors,
        )
        yield self._counter(
            "eoc_forgotten_entries",
            "Remembered answers removed by POST /v1/eoc/forget, by stage",
            ["stage"],
            m.forgotten,
        )
        judging = m.judging
        record = None if judging is None else judging.record.snapshot()
        decisions: Any = dict.fromkeys(OUTCOMES, 0) if record is None else record["decisions"]
        yield self._counter(
            "eoc_judge_decisions",
            "Pairs the rule guard left to the kv's judge of meaning, by how each ended (served, "
            "refused, student_served, student_refused, skipped_energy: the energy rule did not "
            "run the judge, failed)",
            ["outcome"],
            decisions,
        )
        spent = 0.0 if record is None else float(record["joules"])  # type: ignore[arg-type]
        measured = 0.0 if record is None else float(record["joules_measured"])  # type: ignore[arg-type]
        yield self._counter(
            "eoc_judge_joules",
            "Joules the kv's judge of meaning spent, over every judgement, by provenance",
            ["provenance"],
            {"measured": measured, "estimated": spent - measured},
        )


__all__ = ["LATENCY_BUCKETS", "Metrics"]
