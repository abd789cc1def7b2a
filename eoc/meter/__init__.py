"""Energy counters (core part): protocol, status, stub, liveness, marginal arithmetic, detection."""

from eoc.meter.counter import Counter, CounterState, CounterStatus, StubCounter
from eoc.meter.detection import Detection, detect, detect_all
from eoc.meter.liveness import DEFAULT_RULE, LivenessRule, ProbeResult, judge, probe
from eoc.meter.marginal import (
    energy_ratio,
    idle_draw_uw,
    marginal_uj,
    per_op_nj,
    per_op_uj,
    refusal,
)
from eoc.meter.span import span_uj

__all__ = [
    "DEFAULT_RULE",
    "Counter",
    "CounterState",
    "CounterStatus",
    "Detection",
    "LivenessRule",
    "ProbeResult",
    "StubCounter",
    "detect",
    "detect_all",
    "energy_ratio",
    "idle_draw_uw",
    "judge",
    "marginal_uj",
    "per_op_nj",
    "per_op_uj",
    "probe",
    "refusal",
    "span_uj",
]
