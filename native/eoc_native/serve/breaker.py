"""A circuit breaker in front of the neural backend.

After ``threshold`` failures in a row the breaker opens: requests that reach the neural stage
fail at once with :class:`Unavailable` (HTTP 503 with ``Retry-After``) instead of waiting on a
backend that keeps failing, while cache, kv and graph, which come before it, keep answering.
After the backoff one request is let through (half-open): success closes the breaker, failure
opens it again for twice as long, up to ``max_backoff_s``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from eoc.errors import BackendError, ConfigError, InputError
from eoc.stages.neural import Reply, origin_of


class Unavailable(BackendError):
    """The neural backend is not being asked now (the breaker is open); retry after a while."""

    def __init__(self, reason: str, *, retry_after: float) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class CircuitBreaker:
    def __init__(
        self,
        threshold: int = 5,
        backoff_s: float = 1.0,
        max_backoff_s: float = 60.0,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1:
            raise ConfigError("the breaker's threshold must be a whole number of at least 1")
        if not 0 < backoff_s <= max_backoff_s:
            raise ConfigError("the breaker needs 0 < backoff_s <= max_backoff_s")
        self.threshold = threshold
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self._clock = clock
        self._failures = 0
        self._open_until = 0.0
        self._backoff = backoff_s
        self._trial = False  # a half-open trial request is in flight
        self._lock = threading.Lock()
        self.opened = 0  # times the breaker opened (for the metrics)

    @property
    def state(self) -> str:
        with self._lock:
            if self._failures < self.threshold:
                return "closed"
            return "open" if self._clock() < self._open_until or self._trial else "half-open"

    def before(self) -> None:
        """Raise :class:`Unavailable` unless a request may go to the backend now."""
        with self._lock:
            if self._failures < self.threshold:
                return
            now = self._clock()
            if now < self._open_until or self._trial:
                wait = max(self._open_until - now, 0.5)
                raise Unavailable(
                    f"the neural backend failed {self._failures} times in a row; not asking it "
                    f"again for {wait:.1f} s (cache, kv and graph still answer)",
                    retry_after=wait,
                )
            self._trial = True  # half-open: this one request is the trial

    def success(self) -> None:
        with self._lock:
            self._failures = 0
            self._trial = False
            self._backoff = self.backoff_s

    def neutral(self) -> None:
        """A request refused for its own fault: says nothing of the backend (ends a trial)."""
        with self._lock:
            self._trial = False

    def failure(self) -> None:
        with self._lock:
            self._failures += 1
            if self._failures >= self.threshold:
                if self._trial:  # the trial failed: back off longer
                    self._backoff = min(self._backoff * 2, self.max_backoff_s)
                self._open_until = self._clock() + self._backoff
                self._trial = False
                self.opened += 1


class GuardedBackend:
    """A neural backend behind a :class:`CircuitBreaker` (the same protocol as the backend)."""

    def __init__(self, backend: Any, breaker: CircuitBreaker) -> None:
        self.backend = backend
        self.breaker = breaker
        self.name = backend.name
        self.runs_model = getattr(backend, "runs_model", True)

    def _call(self, fn: Callable[[], Reply]) -> Reply:
        self.breaker.before()
        try:
            reply = fn()
        except InputError:
            self.breaker.neutral()  # the request was at fault, not the backend
            raise
        except Exception:
            self.breaker.failure()
            raise
        self.breaker.success()
        return reply

    @property
    def origin(self) -> str:
        """The guarded backend's (what makes its answers)."""
        found = getattr(self.backend, "origin", None)
        return found if isinstance(found, str) and found else origin_of(f"backend:{self.name}")

    @property
    def streams(self) -> bool:
        """The guarded backend's (whether ``generate`` takes ``on_piece``)."""
        return getattr(self.backend, "streams", False) is True

    def generate(self, prompt: str, on_piece: Callable[[str], None] | None = None) -> Reply:
        if on_piece is None or not self.streams:
            return self._call(lambda: self.backend.generate(prompt))
        return self._call(lambda: self.backend.generate(prompt, on_piece=on_piece))

    def chat(self, request: Any, on_piece: Callable[[str], None] | None = None) -> Reply:
        ask = getattr(self.backend, "chat", None)
        if not callable(ask):
            raise BackendError(f"neural backend {self.name!r} cannot take a conversation")
        return self._call(lambda: ask(request, on_piece))


__all__ = ["CircuitBreaker", "GuardedBackend", "Unavailable"]
