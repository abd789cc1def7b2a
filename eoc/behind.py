"""Work done after the reply: a cascade that remembers a model's answer in the kv "after the
reply" (``Cascade(kv_after_reply=True)``, what ``eoc serve`` uses) hands the write here, so the
embedding it takes (MiniLM: about 10 ms of a core) is not part of the answer's time.

One worker thread, started on the first write, takes the writes in the order they came. The
queue is bounded (:data:`MAX_BEHIND`): when it is full the caller does the write itself, so a
burst slows down instead of growing memory or dropping a write. :meth:`Behind.flush` waits
until every write handed over so far is done (the cascade calls it before a forget, so a queued
write never brings back what was just forgotten, and at close).

"After the reply" means after it: a server marks each reply it is making
(:meth:`Behind.replying`), and a write waits until none is in flight, or at most
:data:`MAX_DEFER_S` after it was handed over. A write is Python work (the guard's analysis of
the question, the index): run at once, it holds the interpreter's lock while the reply it
belongs to is still being sent (about half a millisecond of a miss, measured in process on
``eoc serve``'s app).
A flush or close does not wait for replies.

Standard library only. The browser has no threads: a cascade there writes at once.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import cast

MAX_BEHIND = 256
"""Writes waiting at most; a caller that finds the queue full does its write itself."""

MAX_DEFER_S = 0.05
"""How long a write waits at most, from when it was handed over, for the replies in flight to
be sent (:meth:`Behind.replying`): under steady load writes still run, at most this late."""

_STOP = object()


class Behind:
    """Runs handed-over writes in one worker thread, in order; ``failed(exc)`` is told of each
    write that raised (the write is not retried: the answer it would have remembered was
    already served)."""

    def __init__(
        self,
        failed: Callable[[BaseException], None],
        limit: int = MAX_BEHIND,
        max_defer_s: float | None = None,
    ) -> None:
        self._failed = failed
        self._max_defer = MAX_DEFER_S if max_defer_s is None else max_defer_s
        self._queue: queue.Queue[object] = queue.Queue(maxsize=limit)
        self._quiet = threading.Condition()  # replies in flight, and flushes that will not wait
        self._replies = 0
        self._hurried = 0
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()
        self._closed = False
        self._done = threading.Condition()
        self._waiting = 0  # queued and not yet run

    def submit(self, write: Callable[[], object]) -> bool:
        """Queue ``write``; run it here and now instead when the queue is full or closed.
        True when it was queued."""
        if not self._closed:
            self._started()
            with self._done:
                self._waiting += 1
            try:
                self._queue.put_nowait((write, time.monotonic()))
                return True
            except queue.Full:
                self._ran()
        self._run(write)
        return False

    @contextmanager
    def replying(self) -> Iterator[None]:
        """Mark a reply in flight: queued writes wait until it is sent (at most
        :data:`MAX_DEFER_S` each), so they do not compete with it for the interpreter."""
        with self._quiet:
            self._replies += 1
        try:
            yield
        finally:
            with self._quiet:
                self._replies -= 1
                if not self._replies:
                    self._quiet.notify_all()

    def flush(self) -> None:
        """Wait until every write queued so far has run (or the worker is gone); queued writes
        stop waiting for replies in flight."""
        thread = self._thread
        if thread is None:
            return
        with self._hurry():
            with self._done:
                while self._waiting and thread.is_alive():
                    self._done.wait(0.5)

    def close(self) -> None:
        """Run what is queued, then stop the worker; later writes run in their caller."""
        self._closed = True
        thread = self._thread
        if thread is None:
            return
        with self._hurry():
            self._queue.put(_STOP)
            thread.join()

    @contextmanager
    def _hurry(self) -> Iterator[None]:
        with self._quiet:
            self._hurried += 1
            self._quiet.notify_all()
        try:
            yield
        finally:
            with self._quiet:
                self._hurried -= 1

    def _started(self) -> None:
        if self._thread is not None:
            return
        with self._start:
            if self._thread is None:
                thread = threading.Thread(target=self._work, name="eoc-kv-after-reply", daemon=True)
                thread.start()
                self._thread = thread

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            write, queued = cast(tuple[Callable[[], object], float], item)
            try:
                self._after_replies(queued + self._max_defer)
                self._run(write)
            finally:
                self._ran()

    def _after_replies(self, deadline: float) -> None:
        """Wait until no reply is in flight, a flush or close hurries, or ``deadline``."""
        with self._quiet:
            while self._replies and not self._hurried:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._quiet.wait(left)

    def _ran(self) -> None:
        with self._done:
            self._waiting -= 1
            self._done.notify_all()

    def _run(self, write: Callable[[], object]) -> None:
        try:
            write()
        except Exception as exc:  # a failed write is told, never kills the worker
            self._failed(exc)


__all__ = ["MAX_BEHIND", "MAX_DEFER_S", "Behind"]
