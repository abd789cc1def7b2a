"""The marginal-energy arithmetic refuses instead of returning 0 or clamping."""

from __future__ import annotations

import math

import pytest

from eoc.errors import ConfigError, CounterFrozen, NotMetering
from eoc.meter import energy_ratio, idle_draw_uw, marginal_uj, per_op_nj, per_op_uj, refusal


def test_idle_draw_is_delta_over_time() -> None:
    assert idle_draw_uw(1_000, 6_000_000, 1.0) == pytest.approx(5_999_000)


@pytest.mark.parametrize("e1", [1_000, 999])
def test_idle_window_whose_counter_did_not_advance_is_refused(e1: int) -> None:
    with pytest.raises(CounterFrozen):
        idle_draw_uw(1_000, e1, 1.0)


@pytest.mark.parametrize("secs", [0.0, -1.0])
def test_idle_window_of_no_time_is_refused(secs: float) -> None:
    with pytest.raises(NotMetering):
        idle_draw_uw(0, 10, secs)


def test_marginal_subtracts_idle() -> None:
    assert marginal_uj(10_000, 1.0, 4_000) == pytest.approx(6_000)


@pytest.mark.parametrize("busy", [4_000, 3_999, 0])
def test_marginal_at_or_below_idle_is_refused_not_clamped(busy: int) -> None:
    with pytest.raises(NotMetering):
        marginal_uj(busy, 1.0, 4_000)


@pytest.mark.parametrize("bad", [math.nan, math.inf, "1"])
def test_marginal_rejects_non_finite_input(bad: object) -> None:
    with pytest.raises(ConfigError):
        marginal_uj(bad, 1.0, 1.0)  # type: ignore[arg-type]


def test_per_op_refuses_a_figure_that_rounds_to_zero() -> None:
    assert per_op_uj(1_000, 1_000) == 1
    with pytest.raises(NotMetering):
        per_op_uj(499, 1_000)
    assert per_op_nj(1, 1_000) == 1
    with pytest.raises(NotMetering):
        per_op_nj(0.4, 1_000)


@pytest.mark.parametrize("ops", [0, -3, 1.5, True])
def test_per_op_needs_whole_positive_ops(ops: object) -> None:
    with pytest.raises(ConfigError):
        per_op_uj(100, ops)  # type: ignore[arg-type]


def test_per_op_refuses_a_non_positive_marginal() -> None:
    with pytest.raises(NotMetering):
        per_op_uj(0, 10)


@pytest.mark.parametrize(
    "a,b", [(None, 1), (1, None), (0, 1), (1, 0), (-1, 1), (math.nan, 1), (1, math.inf)]
)
def test_energy_ratio_is_none_unless_both_positive_and_finite(a: object, b: object) -> None:
    assert energy_ratio(a, b) is None  # type: ignore[arg-type]


def test_energy_ratio() -> None:
    assert energy_ratio(6.0, 3.0) == 2.0


def test_refusal_names_what_why_and_counter() -> None:
    text = refusal(
        "tuning profile eoc.json",
        "the counter is frozen",
        counter="perf/energy-psys",
        status="FROZEN",
    )
    assert (
        "eoc.json" in text and "frozen" in text and "perf/energy-psys" in text and "FROZEN" in text
    )


def test_marginal_within_the_noise_floor_is_refused() -> None:
    assert marginal_uj(10_000, 1.0, 9_000, min_fraction=0.05) == pytest.approx(1_000)
    with pytest.raises(NotMetering, match="noise"):
        marginal_uj(10_000, 1.0, 9_990, min_fraction=0.005)
