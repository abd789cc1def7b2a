"""Tuning profiles: which backend won each shape, with µJ/op and ns/op, and where the figures
came from.

* A :class:`ProfileEntry` never holds a zero (or negative, or non-finite) energy figure.
* A profile file carries provenance: counter, its kind, host, OS, date, eoc version.
* :meth:`TuningProfile.save` refuses, before any write, to persist anything not measured; the
  file is written atomically (a temporary file in the same folder, fsync, rename).
* :func:`load_profile` demotes every figure to ESTIMATED, with the reason, when the counter it
  was measured on is not live on this host now (or the file comes from another host).
* A process-wide profile (:func:`global_profile`) is loaded once, from ``$EOC_TUNING_PROFILE``
  or ``~/.cache/eoc/tuning-profile.json``.
"""

from __future__ import annotations

import json
import math
import os
import platform
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from eoc import __version__
from eoc.cost import CounterKind, Provenance
from eoc.errors import ConfigError, InputError, NotMeasured
from eoc.meter.counter import CounterStatus
from native.autotune.tune import TuneResult
from native.backends.base import Shape

PROFILE_VERSION = 1
DEFAULT_PATH = Path("~/.cache/eoc/tuning-profile.json")


@dataclass(frozen=True)
class ProfileEntry:
    """One backend's figure for one shape."""

    shape: str
    backend: str
    uj_per_op: float
    ns_per_op: float
    provenance: Provenance
    reason: str = ""  # why it is ESTIMATED, when it is

    def __post_init__(self) -> None:
        for name in ("uj_per_op", "ns_per_op"):
            v = getattr(self, name)
            if (
                isinstance(v, bool)
                or not isinstance(v, (int, float))
                or not math.isfinite(v)
                or v <= 0
            ):
                raise ConfigError(f"a profile's {name} must be a positive finite number, got {v!r}")
        Shape.parse(self.shape)


@dataclass(frozen=True)
class ProfileProvenance:
    """Where and how the figures were measured."""

    counter: str
    counter_kind: str
    host: str
    os: str
    date: str
    eoc_version: str

    @classmethod
    def here(cls, counter: str, kind: CounterKind | str) -> ProfileProvenance:
        return cls(
            counter,
            kind.value if isinstance(kind, CounterKind) else kind,
            platform.node(),
            platform.platform(),
            datetime.now(UTC).isoformat(timespec="seconds"),
            __version__,
        )


@dataclass
class TuningProfile:
    """Winners and figures per shape."""

    provenance: ProfileProvenance | None = None
    entries: dict[str, list[ProfileEntry]] = field(default_factory=dict)
    winners: dict[str, str] = field(default_factory=dict)

    def add(self, result: TuneResult) -> None:
        """Record a tuning result; one without a winner (anything unmeasured) is refused."""
        if result.winner is None:
            raise NotMeasured(f"{result.shape.key}: nothing to record: {result.reason}")
        prov = ProfileProvenance.here(result.counter, result.counter_kind or "")
        if self.provenance is not None and self.provenance.counter != prov.counter:
            raise ConfigError(
                f"this profile was measured on {self.provenance.counter}; {prov.counter} is another counter"
            )
        self.provenance = self.provenance or prov
        rows = []
        for m in result.measurements:
            if m.uj_per_op is None or m.ns_per_op is None:
                raise NotMeasured(f"{result.shape.key}: {m.backend} was not measured: {m.reason}")
            rows.append(
                ProfileEntry(
                    result.shape.key, m.backend, m.uj_per_op, m.ns_per_op, Provenance.MEASURED
                )
            )
        self.entries[result.shape.key] = rows
        self.winners[result.shape.key] = result.winner

    def best(self, shape: Shape | str) -> str | None:
        key = shape.key if isinstance(shape, Shape) else shape
        return self.winners.get(key)

    def entry(self, shape: Shape | str, backend: str) -> ProfileEntry | None:
        key = shape.key if isinstance(shape, Shape) else shape
        return next((e for e in self.entries.get(key, []) if e.backend == backend), None)

    @property
    def measured(self) -> bool:
        rows = [e for es in self.entries.values() for e in es]
        return bool(rows) and all(e.provenance is Provenance.MEASURED for e in rows)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": PROFILE_VERSION,
            "provenance": None if self.provenance is None else asdict(self.provenance),
            "winners": dict(self.winners),
            "entries": [
                {**asdict(e), "provenance": e.provenance.value}
                for es in self.entries.values()
                for e in es
            ],
        }

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> TuningProfile:
        if not isinstance(doc, Mapping) or doc.get("version") != PROFILE_VERSION:
            raise InputError(
                "not an eoc tuning profile (version 1): run `eoc autotune` to make one"
            )
        try:
            prov = doc.get("provenance")
            profile = cls(ProfileProvenance(**prov) if prov else None)
            for e in doc.get("entries", []):
                entry = ProfileEntry(**{**e, "provenance": Provenance(e["provenance"])})
                profile.entries.setdefault(entry.shape, []).append(entry)
            profile.winners = {str(k): str(v) for k, v in dict(doc.get("winners", {})).items()}
        except (TypeError, KeyError, ValueError) as exc:
            raise InputError(f"malformed tuning profile: {exc}") from None
        return profile

    def save(self, path: str | Path, *, sign_key: bytes | None = None) -> Path:
        """Write the profile atomically; refuses (writing nothing) unless every figure is measured."""
        target = Path(path).expanduser()
        if not self.measured or self.provenance is None:
            raise NotMeasured(
                f"{target}: refusing to write: not every figure in this profile was measured"
            )
        doc = self.to_dict()
        if sign_key is not None:
            from native.autotune.seal import sign

            doc = sign(doc, sign_key)
        write_atomically(target, json.dumps(doc, indent=2, sort_keys=True) + "\n")
        return target

    def demoted(self, reason: str) -> TuningProfile:
        """A copy with every figure ESTIMATED and the reason attached."""
        out = TuningProfile(self.provenance, {}, dict(self.winners))
        for key, es in self.entries.items():
            out.entries[key] = [
                replace(e, provenance=Provenance.ESTIMATED, reason=reason) for e in es
            ]
        return out


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so a reader sees the old file or the new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _status_here(counter: str) -> CounterStatus:
    from native.counters import survey

    for c in survey(telemetry=False).whole_work:
        if c.name == counter:
            return c.status()
    return CounterStatus.unavailable(f"there is no counter named {counter} on this host")


def load_profile(
    path: str | Path,
    *,
    status_of: Callable[[str], CounterStatus] = _status_here,
    host: str | None = None,
) -> TuningProfile:
    """Read a profile; demote its figures unless their counter is live on this host now."""
    p = Path(path).expanduser()
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read tuning profile {p}: {exc}") from None
    if isinstance(doc, dict) and "signature" in doc:
        from native.autotune.seal import verify

        verify(doc)
    profile = TuningProfile.from_dict(doc)
    prov = profile.provenance
    if prov is None:
        return profile.demoted("the profile names no counter")
    here = host if host is not None else platform.node()
    if prov.host != here:
        return profile.demoted(f"measured on host {prov.host!r}; this is {here!r}")
    status = status_of(prov.counter)
    if not status.is_live:
        return profile.demoted(f"{prov.counter} is not live on this host now: {status}")
    return profile


_GLOBAL: TuningProfile | None = None
_GLOBAL_LOCK = threading.Lock()


def profile_path() -> Path:
    return Path(os.environ.get("EOC_TUNING_PROFILE") or DEFAULT_PATH).expanduser()


def global_profile() -> TuningProfile | None:
    """The process-wide profile, loaded once from :func:`profile_path` (``None`` if absent)."""
    global _GLOBAL
    with _GLOBAL_LOCK:
        if _GLOBAL is None and profile_path().is_file():
            _GLOBAL = load_profile(profile_path())
        return _GLOBAL


def set_global_profile(profile: TuningProfile | None) -> None:
    """Replace (or with ``None`` forget) the process-wide profile."""
    global _GLOBAL
    with _GLOBAL_LOCK:
        _GLOBAL = profile


__all__ = [
    "DEFAULT_PATH",
    "ProfileEntry",
    "ProfileProvenance",
    "TuningProfile",
    "global_profile",
    "load_profile",
    "profile_path",
    "set_global_profile",
    "write_atomically",
]
