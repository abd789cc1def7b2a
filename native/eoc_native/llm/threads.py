"""How many threads a model's work runs on: set by eoc, not left to each thread pool.

Two pools run a model's products: the kernels' (the 4-bit and 8-bit kernels, C's OpenMP threads
or numba's: every decode step) and the BLAS library numpy loaded (a prompt's products). Left alone, each sizes itself to every core of
the machine, whatever this process may use and whatever else runs there, and their threads spin
while they wait for work. eoc gives both one count, for the length of each forward pass
(:meth:`eoc_native.llm.llama.Llama.forward`), and puts each back afterwards:

* the count: ``threads=`` (:class:`~eoc_native.llm.backend.LocalModel`,
  :class:`~eoc_native.llm.llama.Llama`), else ``$EOC_THREADS``, else the cores this process may
  run on (its CPU affinity, which ``taskset`` and container limits narrow), at most the kernels'
  pool (the cores for C; ``NUMBA_NUM_THREADS``, fixed when numba starts, for numba);
* the kernels' through their ``set_num_threads`` (numba's holds for the calling thread only);
* the BLAS library's through threadpoolctl, for a pass of several tokens (a prompt: the only pass
  that calls BLAS), where threadpoolctl is installed.

The count does not change a decode step's numbers: each task sums its columns in the same order
whatever the number of threads.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from eoc.errors import ConfigError

ENV = "EOC_THREADS"


def cores() -> int:
    """The cores this process may run on (its affinity where the system says, else all)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def model_threads(requested: int | None, pool: int) -> int:
    """The thread count for a model: ``requested``, else ``$EOC_THREADS``, else :func:`cores`;
    the default at most ``pool`` (the kernels' pool), a count asked for above it refused."""
    source = "threads"
    if requested is None:
        text = os.environ.get(ENV, "").strip()
        if not text:
            return max(1, min(cores(), pool))
        source = ENV
        try:
            requested = int(text)
        except ValueError:
            raise ConfigError(f"{ENV} must be a whole number of threads, not {text!r}") from None
    if isinstance(requested, bool) or not isinstance(requested, int) or requested < 1:
        raise ConfigError(f"{source} must be a whole number of at least 1, not {requested!r}")
    if requested > pool:
        raise ConfigError(
            f"{source} asks for {requested} threads; the kernels here run on at most {pool} "
            "(the cores; for numba's kernels, NUMBA_NUM_THREADS set before eoc starts)"
        )
    return requested


class Pools:
    """Sets the kernels' and the BLAS library's thread counts to ``threads`` around a forward
    pass.

    ``kernels`` is the kernels module (:func:`eoc_native.quant.load_kernels`: its
    ``pool_size``, ``get_num_threads`` and ``set_num_threads``), or ``None`` where none runs.
    """

    def __init__(self, kernels: Any, threads: int | None) -> None:
        self._k = kernels
        pool = kernels.pool_size() if kernels is not None else cores()
        self.threads = model_threads(threads, pool)
        self._blas: Any = None  # threadpoolctl's BLAS pools, found on the first prompt

    @contextmanager
    def __call__(self, rows: int) -> Iterator[None]:
        k = self._k
        before = k.get_num_threads() if k is not None else None
        if before is not None and before != self.threads:
            k.set_num_threads(self.threads)
        try:
            with self._blas_limit() if rows > 1 else nullcontext():
                yield
        finally:
            if before is not None and before != self.threads:
                k.set_num_threads(before)

    def _blas_limit(self) -> Any:
        if self._blas is None:
            try:
                from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]
            except ImportError:  # pragma: no cover - the native extra installs it
                self._blas = False
            else:
                self._blas = ThreadpoolController().select(user_api="blas")
        return self._blas.limit(limits=self.threads) if self._blas else nullcontext()


__all__ = ["ENV", "Pools", "cores", "model_threads"]
