"""Prometheus metrics of one server (``GET /metrics``), through ``prometheus-client``.

Each server has its own registry, so several apps in one process (the tests) do not mix.
"""

from __future__ import annotations

from typing import Any

from eoc.query import Stage
from eoc.response import Response
from native import require

STAGES = tuple(s.value for s in Stage)
LATENCY_BUCKETS = (
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1,
    2.5,
    5,
    10,
    30,
    60,
)


class Metrics:
    def __init__(self) -> None:
        prom: Any = require("prometheus_client", why="eoc serve's metrics")
        self._prom = prom
        self.registry = prom.CollectorRegistry()
        r = self.registry
        self.answers = prom.Counter(
            "eoc_answers", "Answers served, by the stage that answered", ["stage"], registry=r
        )
        self.joules = prom.Counter(
            "eoc_joules",
            "Joules charged for answers, by stage and provenance (measured or estimated)",
            ["stage", "provenance"],
            registry=r,
        )
        self.latency = prom.Histogram(
            "eoc_request_seconds",
            "Time from request to answer, by the stage that answered",
            ["stage"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.upstream_errors = prom.Counter(
            "eoc_upstream_errors", "Failures of the neural backend (model or upstream)", registry=r
        )
        self.breaker_refusals = prom.Counter(
            "eoc_breaker_refusals", "Requests refused because the breaker was open", registry=r
        )
        self.budget_refusals = prom.Counter(
            "eoc_budget_refusals", "Requests refused over a joule budget", ["scope"], registry=r
        )
        self.errors = prom.Counter(
            "eoc_request_errors",
            "Requests answered with an error, by HTTP status",
            ["status"],
            registry=r,
        )
        self.hit_ratio = prom.Gauge(
            "eoc_hit_ratio",
            "Share of answers given before the neural stage (cache, kv or graph)",
            registry=r,
        )
        # children looked up once: the hot path only increments
        self._answers = {s: self.answers.labels(s) for s in STAGES}
        self._latency = {s: self.latency.labels(s) for s in STAGES}
        self._joules = {
            (s, p): self.joules.labels(s, p) for s in STAGES for p in ("measured", "estimated")
        }
        self._total = 0
        self._hits = 0

    def answered(self, response: Response, seconds: float) -> None:
        stage = response.stage.value
        self._answers[stage].inc()
        self._latency[stage].observe(seconds)
        self._joules[(stage, response.cost.provenance.value)].inc(response.cost.uj / 1e6)
        self._total += 1
        if stage != "neural":
            self._hits += 1
        self.hit_ratio.set(self._hits / self._total)

    def render(self) -> tuple[bytes, str]:
        return self._prom.generate_latest(self.registry), self._prom.CONTENT_TYPE_LATEST


__all__ = ["Metrics"]
