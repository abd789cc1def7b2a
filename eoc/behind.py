"""Work done after the reply: a cascade that remembers a model's answer in the kv "after the
reply" (``Cascade(kv_after_reply=True)``, what ``eoc serve`` uses) hands the write here, so the
embedding it takes (MiniLM: about 10 ms of a core) is not part of the answer's time.

One worker thread, started on the first write, takes the writes in the order they came. The
queue is bounded (:data:`MAX_BEHIND`): when it is full the caller does the write itself, so a
burst slows down instead of growing memory or dropping a write. :meth:`Behind.flush` waits
until every write handed over so far is done (the cascade calls it before a forget, so a queued
write never brings back what was just forgotten, and at close).

Standard library only. The browser has no threads: a cascade there writes at once.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

MAX_BEHIND = 256
"""Writes waiting at most; a caller that finds the queue full does its write itself."""

_STOP = object()


class Behind:
    """Runs handed-over writes in one worker thread, in order; ``failed(exc)`` is told of each
    write that raised (the write is not retried: the answer it would have remembered was
    already served)."""

    def __init__(self, failed: Callable[[BaseException], None], limit: int = MAX_BEHIND) -> None:
        self._failed = failed
        self._queue: queue.Queue[object] = queue.Queue(maxsize=limit)
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
                self._queue.put_nowait(write)
                return True
            except queue.Full:
                self._ran()
        self._run(write)
        return False

    def flush(self) -> None:
        """Wait until every write queued so far has run (or the worker is gone)."""
        thread = self._thread
        if thread is None:
            return
        with self._done:
            while self._waiting and thread.is_alive():
                self._done.wait(0.5)

    def close(self) -> None:
        """Run what is queued, then stop the worker; later writes run in their caller."""
        self._closed = True
        thread = self._thread
        if thread is None:
            return
        self._queue.put(_STOP)
        thread.join()

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
            write = self._queue.get()
            if write is _STOP:
                return
            try:
                self._run(write)  # type: ignore[arg-type]
            finally:
                self._ran()

    def _ran(self) -> None:
        with self._done:
            self._waiting -= 1
            self._done.notify_all()

    def _run(self, write: Callable[[], object]) -> None:
        try:
            write()
        except Exception as exc:  # a failed write is told, never kills the worker
            self._failed(exc)


__all__ = ["MAX_BEHIND", "Behind"]
