"""Reading a span: two reads of a counter around some work."""

from __future__ import annotations

from eoc.errors import CounterFrozen, WindowTooShort
from eoc.meter.counter import Counter


def span_uj(counter: Counter, e0_uj: int, t0_ns: int, e1_uj: int, t1_ns: int) -> int:
    """Energy in µJ between two reads, or a refusal.

    Refuses (never returns 0) when the window is shorter than the counter's
    ``min_window_ns`` or when the counter did not advance (including a reading
    that went backwards: an uncorrected wrap or a reset).
    """
    elapsed = t1_ns - t0_ns
    if elapsed < counter.min_window_ns:
        raise WindowTooShort(
            f"{counter.name}: a {elapsed / 1e6:.3f} ms span is shorter than the "
            f"{counter.min_window_ns / 1e6:.3f} ms this counter resolves"
        )
    delta = e1_uj - e0_uj
    if delta <= 0:
        raise CounterFrozen(
            f"{counter.name}: the counter did not advance over the work "
            f"({e0_uj} -> {e1_uj} µJ over {elapsed / 1e6:.3f} ms)"
        )
    return delta


__all__ = ["span_uj"]
