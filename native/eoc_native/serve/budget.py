"""Joule budgets: how much energy a caller (or everyone) may spend per time window.

A budget is charged with the figure the cascade charged for each answer, after the answer
(nobody knows the cost before), and refuses the next request once the window's spending has
reached its limit. Before a model is asked, the answer's worst case (its ``max_tokens`` at the
model's estimate: :meth:`eoc.cascade.Cascade.worst_case`) is *reserved*; a request whose
reservation does not fit beside what is spent and reserved is refused, so concurrent requests
cannot all pass a check made before any of them was charged (40 at once spent 24 J of a 5 J
budget). When the answer comes, the reservation is settled: released, and the real figure
charged. It keeps MEASURED and ESTIMATED joules apart, so it can say how much of what it
counted was measured. The window slides: charges older than ``window_s`` fall out.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from eoc.cost import JouleCost
from eoc.errors import ConfigError, Refusal


class OverBudget(Refusal):
    """A joule budget is spent for now; ``retry_after`` says when it has room again."""

    def __init__(self, reason: str, *, retry_after: float, scope: str, state: BudgetState) -> None:
        super().__init__(reason)
        self.retry_after = retry_after
        self.scope = scope
        self.state = state


@dataclass(frozen=True)
class BudgetState:
    """What a budget has counted in its current window."""

    limit_j: float
    window_s: float
    used_uj: int
    measured_uj: int

    @property
    def estimated_uj(self) -> int:
        return self.used_uj - self.measured_uj

    def to_dict(self) -> dict[str, float | int]:
        return {
            "limit_joules": self.limit_j,
            "window_seconds": self.window_s,
            "used_joules": self.used_uj / 1e6,
            "measured_joules": self.measured_uj / 1e6,
            "estimated_joules": self.estimated_uj / 1e6,
        }


class JouleBudget:
    """At most ``limit_j`` joules per sliding window of ``window_s`` seconds."""

    def __init__(
        self, limit_j: float, window_s: float, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        for name, value in (("limit_j", limit_j), ("window_s", window_s)):
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value <= 0
            ):
                raise ConfigError(f"a joule budget's {name} must be a positive number")
        self.limit_uj = int(limit_j * 1e6)
        self.limit_j = float(limit_j)
        self.window_s = float(window_s)
        self._clock = clock
        self._charges: deque[tuple[float, int, int]] = deque()  # (when, µJ, of which measured)
        self._used = 0
        self._measured = 0
        self._reserved = 0  # worst cases held for answers being worked on
        self._lock = threading.Lock()

    def _expire(self, now: float) -> None:
        horizon = now - self.window_s
        charges = self._charges
        while charges and charges[0][0] <= horizon:
            _, uj, measured = charges.popleft()
            self._used -= uj
            self._measured -= measured

    def state(self) -> BudgetState:
        with self._lock:
            self._expire(self._clock())
            return BudgetState(self.limit_j, self.window_s, self._used, self._measured)

    def check(self, scope: str) -> None:
        """Raise :class:`OverBudget` if the window's spending has reached the limit."""
        with self._lock:
            self._check(scope, 0)

    def reserve(self, scope: str, uj: int) -> None:
        """Hold ``uj`` for an answer being worked on, or raise :class:`OverBudget` when it does
        not fit beside what is spent and held."""
        with self._lock:
            self._check(scope, uj)
            self._reserved += uj

    def release(self, uj: int) -> None:
        """Give back a reservation (the answer came and was charged, or never came)."""
        with self._lock:
            self._reserved = max(0, self._reserved - uj)

    def _check(self, scope: str, more_uj: int) -> None:
        """Refuse unless spending, reservations and ``more_uj`` fit; the caller holds the lock."""
        now = self._clock()
        self._expire(now)
        # a plain check asks whether anything is left to spend; a reservation also counts what
        # answers being worked on hold
        held = self._reserved if more_uj else 0
        over = self._used + held + more_uj - self.limit_uj
        if over < 0 or (more_uj and over == 0):
            return
        state = BudgetState(self.limit_j, self.window_s, self._used, self._measured)
        if more_uj > self.limit_uj:
            raise OverBudget(
                f"this answer may cost up to {more_uj / 1e6:.6g} J (its max_tokens at the "
                f"model's estimate), more than the whole {scope} joule budget of "
                f"{self.limit_j:g} J: ask for fewer max_tokens, or raise the budget",
                retry_after=self.window_s,
                scope=scope,
                state=state,
            )
        # room returns when old charges fall out of the window, or held answers settle
        wait = 1.0 if over > self._used else self.window_s
        freed = 0
        for when, uj, _ in self._charges:
            freed += uj
            if freed >= over:
                wait = min(wait, when + self.window_s - now)
                break
        holding = (
            f"; this answer may cost up to {more_uj / 1e6:.6g} J, and {held / 1e6:.6g} J are "
            "held for answers being worked on"
            if more_uj
            else ""
        )
        raise OverBudget(
            f"the {scope} joule budget is spent: {state.used_uj / 1e6:.6g} J of "
            f"{self.limit_j:g} J in the last {self.window_s:g} s "
            f"({state.measured_uj / 1e6:.6g} J measured, {state.estimated_uj / 1e6:.6g} J "
            f"estimated){holding}; retry later",
            retry_after=max(0.001, wait),
            scope=scope,
            state=state,
        )

    def charge(self, cost: JouleCost) -> None:
        """Count one answer's figure (its MEASURED part counted as such)."""
        measured = cost.uj if cost.measured else 0
        with self._lock:
            self._charges.append((self._clock(), cost.uj, measured))
            self._used += cost.uj
            self._measured += measured


class Reservation:
    """What :meth:`Budgets.reserve` holds for one answer; released once, whatever happens."""

    def __init__(self, budgets: tuple[JouleBudget, ...], uj: int) -> None:
        self._budgets = budgets
        self.uj = uj
        self._lock = threading.Lock()

    def release(self) -> None:
        with self._lock:
            budgets, self._budgets = self._budgets, ()
        for budget in budgets:
            budget.release(self.uj)


class Hold:
    """One request's part in the budgets: :meth:`reserve` is the cascade's ``before_model`` (the
    model is about to be asked: hold the answer's worst case), :meth:`settle` charges what the
    answer cost (releasing what was held), :meth:`release` gives it back if no answer came."""

    def __init__(self, budgets: Budgets, key: str | None, worst_uj: Callable[[Any], int]) -> None:
        self._budgets = budgets
        self._key = key
        self._worst_uj = worst_uj
        self.reservation: Reservation | None = None

    def reserve(self, query: Any) -> None:
        self.reservation = self._budgets.reserve(self._key, self._worst_uj(query))

    def settle(self, cost: JouleCost) -> None:
        if self.reservation is None:
            self._budgets.charge(self._key, cost)
        else:
            self._budgets.settle(self.reservation, self._key, cost)

    def release(self) -> None:
        if self.reservation is not None:
            self.reservation.release()


class Budgets:
    """A global budget and one per API key (each optional), checked and charged together."""

    def __init__(
        self,
        *,
        global_j: float | None = None,
        per_key_j: float | None = None,
        window_s: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.window_s = window_s
        self.per_key_j = per_key_j
        self._clock = clock
        self.global_ = None if global_j is None else JouleBudget(global_j, window_s, clock=clock)
        if per_key_j is not None:
            JouleBudget(per_key_j, window_s)  # checks the numbers now, not at the first key
        self._keys: dict[str, JouleBudget] = {}
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        return self.global_ is not None or self.per_key_j is not None

    def _of(self, key: str | None) -> JouleBudget | None:
        if self.per_key_j is None or key is None:
            return None
        with self._lock:
            budget = self._keys.get(key)
            if budget is None:
                budget = self._keys[key] = JouleBudget(
                    self.per_key_j, self.window_s, clock=self._clock
                )
            return budget

    def check(self, key: str | None) -> None:
        if self.global_ is not None:
            self.global_.check("global")
        own = self._of(key)
        if own is not None:
            own.check(f"key {key!r}")

    def charge(self, key: str | None, cost: JouleCost) -> None:
        if self.global_ is not None:
            self.global_.charge(cost)
        own = self._of(key)
        if own is not None:
            own.charge(cost)

    def reserve(self, key: str | None, uj: int) -> Reservation:
        """Hold ``uj`` in the global budget and ``key``'s, or raise :class:`OverBudget` (holding
        nothing) when either cannot hold it."""
        held: list[JouleBudget] = []
        try:
            if self.global_ is not None:
                self.global_.reserve("global", uj)
                held.append(self.global_)
            own = self._of(key)
            if own is not None:
                own.reserve(f"key {key!r}", uj)
                held.append(own)
        except OverBudget:
            for budget in held:
                budget.release(uj)
            raise
        return Reservation(tuple(held), uj)

    def settle(self, reservation: Reservation, key: str | None, cost: JouleCost) -> None:
        """The answer came: release what was held for it and charge what it cost."""
        reservation.release()
        self.charge(key, cost)

    def describe(self, key: str | None) -> dict[str, object]:
        out: dict[str, object] = {}
        if self.global_ is not None:
            out["global"] = self.global_.state().to_dict()
        own = self._of(key)
        if own is not None:
            out["key"] = own.state().to_dict()
        return out


__all__ = ["BudgetState", "Budgets", "Hold", "JouleBudget", "OverBudget", "Reservation"]
