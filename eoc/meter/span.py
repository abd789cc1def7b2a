"""Reading a span: two reads of a counter around some work."""

from __future__ import annotations

from eoc.errors import CounterFrozen, Implausible, WindowTooShort
from eoc.meter.counter import Counter, max_power_uw


def span_uj(counter: Counter, e0_uj: int, t0_ns: int, e1_uj: int, t1_ns: int) -> int:
    """Energy in µJ between two reads, or a refusal.

    Refuses (never returns 0) when the window is shorter than the counter's
    ``min_window_ns`` (or not longer than 0), when the counter did not advance (including
    a reading that went backwards: an uncorrected wrap or a reset), and when the energy
    implies more power than the counter can see (:func:`~eoc.meter.counter.max_power_uw`).
    """
    elapsed = t1_ns - t0_ns
    if elapsed <= 0 or elapsed < counter.min_window_ns:
        raise WindowTooShort(
            f"{counter.name}: a {elapsed / 1e6:.3f} ms span is shorter than the "
            f"{max(counter.min_window_ns, 1) / 1e6:.3f} ms this counter resolves"
        )
    delta = e1_uj - e0_uj
    if delta <= 0:
        raise CounterFrozen(
            f"{counter.name}: the counter did not advance over the work "
            f"({e0_uj} -> {e1_uj} µJ over {elapsed / 1e6:.3f} ms)"
        )
    check_plausible(counter, delta, elapsed)
    return delta


def check_plausible(counter: Counter, delta_uj: int, elapsed_ns: int) -> None:
    """Refuse ``delta_uj`` over ``elapsed_ns`` if it implies more than the counter's maximum power."""
    ceiling_uw = max_power_uw(counter)
    # delta / (elapsed / 1e9) > ceiling, in integers where possible
    if elapsed_ns <= 0 or delta_uj * 1e9 > ceiling_uw * elapsed_ns:
        watts = float("inf") if elapsed_ns <= 0 else delta_uj / elapsed_ns * 1e3
        raise Implausible(
            f"{counter.name}: {delta_uj:,} µJ over {elapsed_ns / 1e6:.3f} ms is {watts:,.0f} W, "
            f"above the {ceiling_uw / 1e6:,.0f} W this counter can see: refused, not charged"
        )


__all__ = ["check_plausible", "span_uj"]
