"""bench/serve.py's verdict on the miss target: a median with an interval that holds it, and a
row that says it cannot tell where its rounds are too few."""

from __future__ import annotations

import random
import statistics

from tests.native.benches import bench_module


def _bench_module():
    return bench_module("serve")


def test_the_median_interval_holds_the_median_at_least_as_often_as_it_says() -> None:
    median_interval = _bench_module().median_interval
    rng = random.Random(7)
    true_median = statistics.median([rng.expovariate(1.0) for _ in range(200_001)])
    for n in (12, 40, 120):
        held = 0
        for _ in range(600):
            lo, hi = median_interval([rng.expovariate(1.0) for _ in range(n)])
            held += lo <= true_median <= hi
        assert held / 600 >= 0.93, (n, held)  # 0.95 or more, less the sampling of 600 tries


def test_the_median_interval_is_the_sign_tests_order_statistics() -> None:
    median_interval = _bench_module().median_interval
    # n = 120: P(Binomial(120, 1/2) <= 48) = 0.0177 <= 0.025 < P(<= 49) = 0.0274, so the
    # 49th and the 72nd smallest, 1-based
    assert median_interval([float(x) for x in range(120)]) == (48.0, 71.0)
    assert median_interval([3.0, 1.0, 2.0]) == (1.0, 3.0)  # too few: the whole range
    assert median_interval([5.0] * 40) == (5.0, 5.0)


def test_a_row_is_met_not_met_or_cannot_tell_by_its_interval() -> None:
    verdict = _bench_module().target_verdict
    assert verdict(1.1, (0.9, 1.4), 2.0) == "met"
    assert verdict(3.9, (3.5, 4.2), 2.0) == "NOT met"
    assert verdict(1.7, (1.1, 2.6), 2.0).startswith("cannot tell")
    assert "within" in verdict(1.7, (1.1, 2.6), 2.0)
    assert "over" in verdict(2.2, (1.1, 2.6), 2.0)
    assert verdict(2.0, (1.5, 2.0), 2.0) == "met"  # the target itself is within it
