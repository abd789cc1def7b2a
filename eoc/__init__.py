"""eoc — Energy-Optimized Compute.

A memoizing cascade (cache -> kv -> graph -> neural) that charges every answer in
micro-joules and says whether each figure was MEASURED on a live counter or
ESTIMATED. ``import eoc`` loads only the standard library and eoc itself.
"""

from eoc._version import __version__
from eoc.cascade import Cascade
from eoc.cost import CounterKind, JouleCost, Provenance, worst_of
from eoc.errors import EocError, InputError, Refusal
from eoc.meter import Counter, CounterStatus, StubCounter, detect
from eoc.query import Query, Stage
from eoc.receipt import Receipt
from eoc.response import Response

__all__ = [
    "Cascade",
    "Counter",
    "CounterKind",
    "CounterStatus",
    "EocError",
    "InputError",
    "JouleCost",
    "Provenance",
    "Query",
    "Receipt",
    "Refusal",
    "Response",
    "Stage",
    "StubCounter",
    "__version__",
    "detect",
    "worst_of",
]
