"""Marginal energy: pure arithmetic shared by every energy path.

Every function here either returns an honest figure or raises
:class:`~eoc.errors.NotMetering` (or :class:`~eoc.errors.CounterFrozen`) with the
reason. None of them ever returns 0 or clamps to 0.
"""

from __future__ import annotations

import math

from eoc.errors import ConfigError, CounterFrozen, EocError, NotMetering


def _finite(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def idle_draw_uw(e0_uj: int, e1_uj: int, secs: float) -> float:
    """Idle power in µW from two readings ``secs`` apart.

    Refuses a window whose counter did not advance: a machine draws power doing
    nothing, so a counter that holds still is not metering.
    """
    secs = _finite("secs", secs)
    if secs <= 0:
        raise NotMetering(f"an idle window must last more than 0 s, got {secs} s")
    delta = _finite("e1_uj", e1_uj) - _finite("e0_uj", e0_uj)
    if delta <= 0:
        raise CounterFrozen(
            f"the counter did not advance over a {secs:.3f} s idle window "
            f"({e0_uj} -> {e1_uj} µJ): it is not metering"
        )
    return delta / secs


def marginal_uj(
    busy_uj: float, busy_secs: float, idle_uw: float, *, min_fraction: float = 0.0
) -> float:
    """Energy the work added over idle: ``ΔE_busy − P_idle·Δt``, in µJ.

    Refuses a result at or below 0 (the busy window read no more than idle would
    have); never clamps. With ``min_fraction``, also refuses a result below that
    fraction of the busy reading: a difference that small is within the noise of
    the idle baseline (timing of the reads, drift of the idle draw).
    """
    busy_uj = _finite("busy_uj", busy_uj)
    busy_secs = _finite("busy_secs", busy_secs)
    idle_uw = _finite("idle_uw", idle_uw)
    if busy_secs <= 0:
        raise NotMetering(f"a busy window must last more than 0 s, got {busy_secs} s")
    if idle_uw < 0:
        raise NotMetering(f"idle draw cannot be negative ({idle_uw} µW)")
    result = busy_uj - idle_uw * busy_secs
    if result <= 0:
        raise NotMetering(
            f"the busy window read {busy_uj:.0f} µJ over {busy_secs:.3f} s, no more than idle "
            f"({idle_uw * busy_secs:.0f} µJ at {idle_uw:.0f} µW): the work is below what this "
            "counter can separate from idle; run more of it"
        )
    floor = min_fraction * busy_uj
    if result < floor:
        raise NotMetering(
            f"the work added {result:.0f} µJ over idle, under {min_fraction:.1%} of the "
            f"{busy_uj:.0f} µJ the window read: within the noise of the idle baseline; "
            "run more work per window"
        )
    return result


def per_op_uj(marginal: float, ops: int) -> int:
    """Marginal µJ per operation, rounded to a whole µJ; refuses a figure that rounds to 0."""
    return _per_op(marginal, ops, 1.0, "µJ")


def per_op_nj(marginal_uj_: float, ops: int) -> int:
    """Marginal nJ per operation from a µJ total; refuses a figure that rounds to 0."""
    return _per_op(marginal_uj_, ops, 1000.0, "nJ")


def _per_op(marginal: float, ops: int, scale: float, unit: str) -> int:
    marginal = _finite("marginal", marginal)
    if isinstance(ops, bool) or not isinstance(ops, int) or ops < 1:
        raise ConfigError(f"ops must be a whole number of at least 1, got {ops!r}")
    if marginal <= 0:
        raise NotMetering(f"a marginal energy of {marginal} µJ is not a measurement")
    figure = round(marginal * scale / ops)
    if figure < 1:
        raise NotMetering(
            f"{marginal:.3f} µJ over {ops} operations is under 1 {unit} each, which rounds to 0: "
            "run more operations per window"
        )
    return figure


def energy_ratio(a: float | None, b: float | None) -> float | None:
    """``a / b``, or ``None`` unless both are positive finite numbers."""
    if a is None or b is None:
        return None
    try:
        fa, fb = float(a), float(b)
    except (TypeError, ValueError):
        return None
    if not (math.isfinite(fa) and math.isfinite(fb)) or fa <= 0 or fb <= 0:
        return None
    return fa / fb


def refusal(what: str, reason: str | EocError, *, counter: str = "", status: str = "") -> str:
    """What a command prints before it exits non-zero: what was refused, why, and the counter."""
    why = reason.reason if isinstance(reason, EocError) else reason
    lines = [f"refused: {what}", f"  reason : {why}"]
    if counter:
        lines.append(f"  counter: {counter}" + (f" [{status}]" if status else ""))
    elif status:
        lines.append(f"  status : {status}")
    return "\n".join(lines)


__all__ = ["energy_ratio", "idle_draw_uw", "marginal_uj", "per_op_nj", "per_op_uj", "refusal"]
