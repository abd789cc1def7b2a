"""Joule budgets: how much energy a caller (or everyone) may spend per time window.

A budget is charged with the figure the cascade charged for each answer, after the answer
(nobody knows the cost before), and refuses the next request once the window's spending has
reached its limit. It keeps MEASURED and ESTIMATED joules apart, so it can say how much of
what it counted was measured. The window slides: charges older than ``window_s`` fall out.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

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
            now = self._clock()
            self._expire(now)
            if self._used < self.limit_uj:
                return
            # room returns when enough old charges fall out of the window
            excess = self._used - self.limit_uj
            freed = 0
            wait = self.window_s
            for when, uj, _ in self._charges:
                freed += uj
                if freed > excess:
                    wait = when + self.window_s - now
                    break
            state = BudgetState(self.limit_j, self.window_s, self._used, self._measured)
        raise OverBudget(
            f"the {scope} joule budget is spent: {state.used_uj / 1e6:.6g} J of "
            f"{self.limit_j:g} J in the last {self.window_s:g} s "
            f"({state.measured_uj / 1e6:.6g} J measured, {state.estimated_uj / 1e6:.6g} J "
            "estimated); retry later",
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

    def describe(self, key: str | None) -> dict[str, object]:
        out: dict[str, object] = {}
        if self.global_ is not None:
            out["global"] = self.global_.state().to_dict()
        own = self._of(key)
        if own is not None:
            out["key"] = own.state().to_dict()
        return out


__all__ = ["BudgetState", "Budgets", "JouleBudget", "OverBudget"]
