"""What the compute backends share: the shape, bf16 helpers, the protocol, the correctness check.

The operation is a bf16-weight matmul ``y = x @ W`` with ``x`` of shape (m, k) in float32 and
``W`` of shape (k, n) stored as bfloat16. Every backend is checked against a float64 reference
on a small shape before it may be timed or metered: one that cannot run, or runs wrong, says
so and never wins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from eoc.errors import ConfigError
from eoc_native import require

CHECK_SHAPE = (4, 64, 48)
CHECK_RTOL = 2e-2  # bf16 inputs carry 8 bits of mantissa


@dataclass(frozen=True)
class Shape:
    """A matmul shape (m, k) x (k, n)."""

    m: int
    k: int
    n: int

    def __post_init__(self) -> None:
        for name in ("m", "k", "n"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 1 << 20:
                raise ConfigError(f"shape {name} must be a whole number from 1 to 2^20, got {v!r}")

    @property
    def key(self) -> str:
        return f"{self.m}x{self.k}x{self.n}"

    @property
    def flops(self) -> int:
        return 2 * self.m * self.k * self.n

    @classmethod
    def parse(cls, key: str) -> Shape:
        try:
            m, k, n = (int(p) for p in key.lower().split("x"))
        except ValueError:
            raise ConfigError(f"a shape is written MxKxN, e.g. 1x4096x4096; got {key!r}") from None
        return cls(m, k, n)


def to_bf16_bits(values: Any) -> Any:
    """float32 array -> bfloat16 bit patterns (uint16), rounding to nearest even."""
    np = require("numpy")
    f = np.ascontiguousarray(values, dtype=np.float32)
    bits = f.view(np.uint32)
    rounding = ((bits >> 16) & 1) + np.uint32(0x7FFF)
    return ((bits + rounding) >> 16).astype(np.uint16)


def from_bf16_bits(bits: Any) -> Any:
    """bfloat16 bit patterns (uint16) -> float32 values."""
    np = require("numpy")
    return (bits.astype(np.uint32) << 16).view(np.float32)


def operands(shape: Shape, seed: int = 0) -> tuple[Any, Any]:
    """Deterministic inputs: x float32 (m, k) and W as bf16 bits (k, n)."""
    np = require("numpy")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((shape.m, shape.k), dtype=np.float32)
    w = rng.standard_normal((shape.k, shape.n), dtype=np.float32) / np.float32(shape.k**0.5)
    return x, to_bf16_bits(w)


@runtime_checkable
class MatmulBackend(Protocol):
    """Runs ``x @ W`` (W in bf16) on some device."""

    name: str

    def unavailable(self) -> str | None:
        """Why this backend cannot run here, or ``None``."""
        ...

    def prepare(self, shape: Shape, seed: int = 0) -> Any:
        """Operands on the device, ready to run; raises a Refusal if the shape cannot run."""
        ...

    def run(self, prepared: Any) -> None:
        """One matmul, finished (synchronized) before returning."""
        ...

    def result(self, prepared: Any) -> Any:
        """The last result as a float32 numpy array."""
        ...

    def compute(self, x: Any, w_bits: Any) -> Any:
        """``x @ W`` for caller's operands (float32 x, bf16-bit W) as a float32 numpy array."""
        ...


@runtime_checkable
class WeightBackend(Protocol):
    """Runs a model's ``x @ W`` with ``W`` prepared once (:class:`eoc_native.llm.weights.Weight`).

    ``load_weight`` makes the backend's own copy (dense float32 on a device, or the quantized
    blocks as they are) and raises a :class:`~eoc.errors.Refusal` for a weight it cannot take;
    ``apply`` multiplies float32 ``x`` (m, n_in) by it and returns float32 (m, n_out) on the host.
    """

    name: str

    def unavailable(self) -> str | None: ...

    def takes(self, weight: Any) -> bool:
        """Whether :meth:`load_weight` accepts this weight."""
        ...

    def load_weight(self, weight: Any) -> Any: ...

    def apply(self, x: Any, prepared: Any) -> Any: ...


def check(backend: MatmulBackend) -> str | None:
    """Run a small shape and compare with a float64 reference: ``None`` if right, else why not.

    The reference multiplies by the backend's own rounding of the weights when it declares one
    (``reference_weights``: a quantizing backend is checked against the matrix it was given,
    quantized, so a wrong kernel still fails and a 4-bit rounding does not).
    """
    np = require("numpy")
    why = backend.unavailable()
    if why:
        return why
    shape = Shape(*CHECK_SHAPE)
    x, w_bits = operands(shape, seed=1)
    reference = getattr(backend, "reference_weights", None)
    w = reference(w_bits) if reference is not None else from_bf16_bits(w_bits)
    want = x.astype(np.float64) @ np.asarray(w, dtype=np.float64)
    try:
        prepared = backend.prepare(shape, seed=1)
        backend.run(prepared)
        got = np.asarray(backend.result(prepared), dtype=np.float64)
    except Exception as exc:  # a backend's own failure, reported as the reason it cannot win
        return f"{backend.name}: failed on a {shape.key} check: {exc}"
    if got.shape != want.shape:
        return f"{backend.name}: returned shape {got.shape}, expected {want.shape}"
    err = float(np.max(np.abs(got - want)) / (np.max(np.abs(want)) or 1.0))
    if not np.isfinite(err) or err > CHECK_RTOL:
        return f"{backend.name}: wrong result on a {shape.key} check (relative error {err:.3g})"
    return None


__all__ = [
    "CHECK_SHAPE",
    "MatmulBackend",
    "Shape",
    "WeightBackend",
    "check",
    "from_bf16_bits",
    "operands",
    "to_bf16_bits",
]
