"""Dispatching a matmul to the backend the tuning profile chose for its shape.

Two kinds of call:

* :meth:`Dispatcher.matmul` — a tuning shape's ``x @ W`` with ``W`` as bf16 bits (the autotuner's
  own operands); the backend converts ``W`` each call.
* :meth:`Dispatcher.apply` — a model's ``x @ W`` with ``W`` a :class:`~eoc_native.llm.weights.Weight`
  prepared once per backend (:meth:`Dispatcher.weight` wraps it; each backend's copy is made the
  first time that backend runs it and kept).

Which backend: only when ``EOC_ENERGY_AUTOTUNE=1``, the profile's joules-minimal backend for the
shape (m, k, n), if it runs here and takes the weight. Otherwise the default: the one named, or
by default the quantized CPU kernels for a quantized weight and numpy for every other.

Every call is counted per backend and shape (:attr:`Dispatcher.calls`), so a caller can say
what ran where and charge an estimate for it (:func:`eoc_native.llm.energy.estimate`).
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any

from eoc.errors import ConfigError
from eoc_native.autotune.profile import TuningProfile, global_profile
from eoc_native.backends import all_backends
from eoc_native.backends.base import MatmulBackend, Shape

ENV = "EOC_ENERGY_AUTOTUNE"
QUANT = "cpu-quant"
NUMPY = "numpy"


class DispatchedWeight:
    """A model weight and the copies backends prepared of it (one per backend, made once)."""

    __slots__ = ("copies", "weight")

    def __init__(self, weight: Any) -> None:
        self.weight = weight
        self.copies: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"DispatchedWeight({self.weight!r}, on {sorted(self.copies)})"


class Dispatcher:
    """Picks a backend per shape from a profile (the global one by default).

    Args:
        profile: the tuning profile; ``None`` reads the process-wide one when first needed.
        backends: the candidates (default: every backend eoc knows).
        default: the backend for shapes autotuning does not decide; ``None`` is automatic
            (quantized kernels for a quantized weight, else numpy).
    """

    def __init__(
        self,
        profile: TuningProfile | None = None,
        backends: Sequence[MatmulBackend] | None = None,
        default: str | None = None,
    ) -> None:
        self._profile = profile
        self.backends = list(backends) if backends is not None else all_backends()
        self.default = default
        self.calls: Counter[tuple[str, str]] = Counter()  # (backend, shape key) -> calls
        self._usable: dict[str, Any] = {}
        self._choice: dict[str, Any] = {}
        self._lock = threading.Lock()
        if default is not None and self._by_name(default) is None:
            names = ", ".join(b.name for b in self.backends)
            raise ConfigError(f"backend {default!r} cannot run here (backends: {names})")

    @property
    def profile(self) -> TuningProfile | None:
        return self._profile if self._profile is not None else global_profile()

    @property
    def autotuning(self) -> bool:
        """Whether ``EOC_ENERGY_AUTOTUNE=1`` and a profile is there to follow."""
        return os.environ.get(ENV) == "1" and self.profile is not None

    def _by_name(self, name: str) -> Any | None:
        if name in self._usable:
            return self._usable[name]
        found = None
        for b in self.backends:
            if b.name == name or b.name.split("/")[0] == name.split("/")[0]:
                if b.unavailable() is None:
                    found = b
                break
        self._usable[name] = found
        return found

    def choose(self, shape: Shape, weight: Any = None) -> Any:
        """The backend for ``shape`` (and ``weight``, when a model's): see the module doc."""
        if self.autotuning:
            profile = self.profile
            assert profile is not None
            winner = profile.best(shape)
            if winner is not None:
                chosen = self._by_name(winner)
                if chosen is not None and (weight is None or _takes(chosen, weight)):
                    return chosen
        return self._default_for(weight)

    def _default_for(self, weight: Any) -> Any:
        quantized = weight is not None and getattr(weight, "quant", None) is not None
        names = [self.default] if self.default else ([QUANT, NUMPY] if quantized else [NUMPY])
        for name in names:
            b = self._by_name(name)
            if b is not None and (weight is None or _takes(b, weight)):
                return b
        raise ConfigError(f"no backend here can run {weight!r} (tried {', '.join(names)})")

    def weight(self, weight: Any) -> DispatchedWeight:
        """Wrap a model weight for :meth:`apply`."""
        return DispatchedWeight(weight)

    def backend_for(self, dw: DispatchedWeight, m: int) -> Any:
        """The backend :meth:`apply` runs ``W`` on for ``m`` rows of ``x``."""
        if self.autotuning:
            k, n = dw.weight.shape
            return self.choose(Shape(m, k, n), dw.weight)
        # the default depends only on the weight's kind (q4, q8, f32): remember it
        backend = self._choice.get(dw.weight.kind)
        if backend is None:
            backend = self._choice.setdefault(dw.weight.kind, self._default_for(dw.weight))
        return backend

    def count(self, backend: str, m: int, dw: DispatchedWeight, calls: int = 1) -> None:
        """Count ``calls`` products of ``m`` rows with ``W`` that a caller ran on ``backend``
        itself (a fused kernel), as :meth:`apply` counts its own."""
        k, n = dw.weight.shape
        self.calls[(backend, f"{m}x{k}x{n}")] += calls

    def apply(self, x: Any, dw: DispatchedWeight) -> Any:
        """``x @ W`` for a model weight, on the chosen backend; float32 (m, n_out) on the host."""
        k, n = dw.weight.shape
        m = int(x.shape[0])
        key = f"{m}x{k}x{n}"
        backend = self.backend_for(dw, m)
        copy = dw.copies.get(backend.name)
        if copy is None:
            with self._lock:
                copy = dw.copies.get(backend.name)
                if copy is None:
                    copy = dw.copies[backend.name] = backend.load_weight(dw.weight)
        self.calls[(backend.name, key)] += 1
        return backend.apply(x, copy)

    def matmul(self, x: Any, w_bits: Any) -> tuple[Any, str]:
        """``x @ W`` (W as bf16 bits) on the chosen backend; returns the result and its name."""
        shape = Shape(int(x.shape[0]), int(x.shape[1]), int(w_bits.shape[1]))
        backend = self.choose(shape)
        self.calls[(backend.name, shape.key)] += 1
        return backend.compute(x, w_bits), backend.name

    def describe(self) -> str:
        """How this dispatcher decides, in words (for ``eoc meter`` and the model's basis)."""
        if self.autotuning:
            return (
                f"energy autotune ({ENV}=1): the tuning profile's joules-minimal backend per shape"
            )
        why = "" if os.environ.get(ENV) == "1" else f" ({ENV} is not 1)"
        if self.default:
            return f"fixed: {self.default}{why}"
        return f"default{why}: {QUANT} for quantized weights, {NUMPY} for the rest"


def _takes(backend: Any, weight: Any) -> bool:
    takes = getattr(backend, "takes", None)
    return bool(takes(weight)) if takes is not None else False


__all__ = ["ENV", "DispatchedWeight", "Dispatcher"]
