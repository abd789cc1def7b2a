"""Dispatching a matmul to the backend the tuning profile chose for its shape.

Only when ``EOC_ENERGY_AUTOTUNE=1``: otherwise, or when the profile has no winner for the
shape, or the winner cannot run here, the default backend (numpy) runs it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from native.autotune.profile import TuningProfile, global_profile
from native.backends import all_backends
from native.backends.base import MatmulBackend, Shape

ENV = "EOC_ENERGY_AUTOTUNE"


class Dispatcher:
    """Picks a backend per shape from a profile (the global one by default)."""

    def __init__(
        self,
        profile: TuningProfile | None = None,
        backends: Sequence[MatmulBackend] | None = None,
        default: str = "numpy",
    ) -> None:
        self._profile = profile
        self.backends = list(backends) if backends is not None else all_backends()
        self.default = default

    @property
    def profile(self) -> TuningProfile | None:
        return self._profile if self._profile is not None else global_profile()

    def _by_name(self, name: str) -> MatmulBackend | None:
        for b in self.backends:
            if b.unavailable() is None and (b.name == name or b.name.split("/")[0] == name):
                return b
        return None

    def choose(self, shape: Shape) -> MatmulBackend:
        """The backend for ``shape``: the profile's winner when autotuning is on, else the default."""
        if os.environ.get(ENV) == "1" and self.profile is not None:
            winner = self.profile.best(shape)
            if winner is not None:
                chosen = self._by_name(winner)
                if chosen is not None:
                    return chosen
        default = self._by_name(self.default)
        if default is None:
            raise RuntimeError(f"the default backend {self.default!r} cannot run here")
        return default

    def matmul(self, x: Any, w_bits: Any) -> tuple[Any, str]:
        """``x @ W`` (W as bf16 bits) on the chosen backend; returns the result and its name."""
        shape = Shape(int(x.shape[0]), int(x.shape[1]), int(w_bits.shape[1]))
        backend = self.choose(shape)
        return backend.compute(x, w_bits), backend.name


__all__ = ["ENV", "Dispatcher"]
