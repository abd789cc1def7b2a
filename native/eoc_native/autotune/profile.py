"""Tuning profiles: which backend won each shape, with µJ/op and ns/op, and where the figures
came from.

* A :class:`ProfileEntry` never holds a zero (or negative, or non-finite) energy figure.
* A profile file carries provenance: counter, its kind, host, OS, date, eoc version.
* **Measured here, or imported; never a third kind.** An entry is *measured here* only when
  :meth:`TuningProfile.add` built it from a result ``tune_shape_live`` returned in this process
  (a hand-built ``TuneResult`` is recorded ESTIMATED). An entry read from a file is *imported*:
  it carries ``origin`` ("imported from <host> <date> (file <path>)"), keeps it through every
  later save, and is never relabelled as measured here.
* :meth:`TuningProfile.save` refuses, before any write, unless every figure is MEASURED and
  every entry is measured here or imported with its origin; it writes atomically (a temporary
  file in the same folder, fsync, rename).
* :func:`load_profile` reads at most :data:`MAX_PROFILE_BYTES` of strict JSON, checks the
  signature against the trusted keys (:func:`~eoc_native.autotune.signing.check_signature`), records
  the signer, and demotes every figure to ESTIMATED, with the reason, unless eoc's own liveness
  probe sees the counter live on this host now.
* A process-wide profile (:func:`global_profile`) is loaded once, from ``$EOC_TUNING_PROFILE``
  or ``~/.cache/eoc/tuning-profile.json``, and only when no one but the user or root could have
  written it (:func:`eoc.files.trust.check_file`: owned by the user or root, writable by no one
  else, in folders no one else can write to; issue 35). It steers which backend every matmul
  runs on, unasked, in every process, so a file that fails *raises*
  :class:`~eoc.errors.UntrustedFile` naming the path and why (the user must hear of it, and
  remove the file or point ``$EOC_TUNING_PROFILE`` elsewhere); a profile the user names
  themselves (``eoc verify FILE``, :func:`load_profile`) is read as it is, its signature
  checked, its figures imported.
"""

from __future__ import annotations

import json
import math
import os
import platform
import tempfile
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from eoc import __version__
from eoc.cost import CounterKind, Provenance
from eoc.errors import BadJson, ConfigError, InputError, NotMeasured
from eoc.files.bounded import read_json
from eoc.files.trust import check_file
from eoc.meter.counter import CounterStatus
from eoc.meter.liveness import probe
from eoc_native.autotune.signing import SignatureCheck, check_signature, sign
from eoc_native.autotune.tune import TuneResult, measured_here
from eoc_native.backends.base import Shape

PROFILE_VERSION = 1
DEFAULT_PATH = Path("~/.cache/eoc/tuning-profile.json")
MAX_PROFILE_BYTES = 4 << 20
"""The most a profile file may hold (a profile of thousands of shapes is under 1 MiB)."""


@dataclass(frozen=True)
class ProfileEntry:
    """One backend's figure for one shape.

    ``origin`` is empty for an entry measured in this process, else where it was imported from.
    """

    shape: str
    backend: str
    uj_per_op: float
    ns_per_op: float
    provenance: Provenance
    reason: str = ""  # why it is ESTIMATED, when it is
    origin: str = ""

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
        for name in ("shape", "backend", "reason", "origin"):
            if not isinstance(getattr(self, name), str):
                raise ConfigError(f"a profile entry's {name} must be text")
        if not self.backend or Shape.parse(self.shape).key != self.shape:
            raise ConfigError(f"a profile entry needs a backend and a shape MxKxN: {self.shape!r}")
        if not isinstance(self.provenance, Provenance):
            raise ConfigError("a profile entry's provenance must be measured or estimated")


# Entries add() built from genuine results, by id (weak values: a reused id cannot match, and
# ProfileEntry compares by value, so a set would accept an equal hand-built entry).
_MEASURED_HERE: weakref.WeakValueDictionary[int, ProfileEntry] = weakref.WeakValueDictionary()


def entry_measured_here(entry: ProfileEntry) -> bool:
    """True only for an entry :meth:`TuningProfile.add` built from a genuine tuning result."""
    return _MEASURED_HERE.get(id(entry)) is entry


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
    """Winners and figures per shape.

    ``origin`` says where a profile read from a file was imported from ("" for one built here);
    ``signature`` who signed that file.
    """

    provenance: ProfileProvenance | None = None
    entries: dict[str, list[ProfileEntry]] = field(default_factory=dict)
    winners: dict[str, str] = field(default_factory=dict)
    signature: SignatureCheck | None = None
    origin: str = ""

    @property
    def signer(self) -> str | None:
        """The public key (hex) that signed the loaded file, ``None`` if unsigned or not loaded."""
        return None if self.signature is None else self.signature.signer

    def add(self, result: TuneResult) -> None:
        """Record a tuning result; one without a winner (anything unmeasured) is refused.

        Its figures are MEASURED only if ``tune_shape_live`` returned ``result`` in this process;
        a result built by hand is recorded ESTIMATED, with the reason.
        """
        if not isinstance(result, TuneResult) or not isinstance(result.shape, Shape):
            raise ConfigError(f"not a tuning result: {result!r:.80}")
        if result.winner is None:
            raise NotMeasured(f"{result.shape.key}: nothing to record: {result.reason}")
        if result.winner not in {m.backend for m in result.measurements}:
            raise ConfigError(f"{result.shape.key}: the winner {result.winner} has no figure")
        if self.origin:  # its provenance is the import's: new figures would inherit it
            raise ConfigError(f"this profile was {self.origin}; record new results in a new one")
        prov = ProfileProvenance.here(result.counter, result.counter_kind or "")
        if not any(entry_measured_here(e) for es in self.entries.values() for e in es):
            self.provenance = prov  # the first figure measured here sets where and when
        elif self.provenance is not None and self.provenance.counter != prov.counter:
            raise ConfigError(
                f"this profile was measured on {self.provenance.counter}; {prov.counter} is another counter"
            )
        genuine = measured_here(result)
        why = "" if genuine else "a TuneResult that tune_shape_live did not return in this process"
        rows = []
        for m in result.measurements:
            if m.uj_per_op is None or m.ns_per_op is None:
                raise NotMeasured(f"{result.shape.key}: {m.backend} was not measured: {m.reason}")
            kind = Provenance.MEASURED if genuine else Provenance.ESTIMATED
            entry = ProfileEntry(result.shape.key, m.backend, m.uj_per_op, m.ns_per_op, kind, why)
            if genuine:
                _MEASURED_HERE[id(entry)] = entry
            rows.append(entry)
        self.entries[result.shape.key] = rows
        self.winners[result.shape.key] = result.winner

    def best(self, shape: Shape | str) -> str | None:
        return self.winners.get(shape.key if isinstance(shape, Shape) else shape)

    def entry(self, shape: Shape | str, backend: str) -> ProfileEntry | None:
        key = shape.key if isinstance(shape, Shape) else shape
        return next((e for e in self.entries.get(key, []) if e.backend == backend), None)

    @property
    def measured(self) -> bool:
        rows = [e for es in self.entries.values() for e in es]
        return bool(rows) and all(e.provenance is Provenance.MEASURED for e in rows)

    def to_dict(self) -> dict[str, Any]:
        """The file's document (no signature); an entry's origin is written when it has one."""
        rows = []
        for e in (e for es in self.entries.values() for e in es):
            row = {**asdict(e), "provenance": e.provenance.value}
            if not e.origin:  # measured here: the file's provenance says where and when
                del row["origin"]
            rows.append(row)
        return {
            "version": PROFILE_VERSION,
            "provenance": None if self.provenance is None else asdict(self.provenance),
            "winners": dict(self.winners),
            "entries": rows,
        }

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], *, source: str | None = None) -> TuningProfile:
        """Parse a profile document strictly; every entry comes back *imported*, with its origin.

        Liveness is not checked here (:func:`load_profile` does). ``source`` names the file
        in the origin of entries that carry none yet.

        Raises:
            InputError: wrong version, unknown or missing fields, wrong types, non-finite or
                non-positive figures, or a winner that is not the joules-minimal backend.
        """
        version = doc.get("version") if isinstance(doc, Mapping) else None
        if type(version) is not int or version != PROFILE_VERSION:  # True == 1, yet is no version
            raise InputError(
                "not an eoc tuning profile (version 1): run `eoc autotune` to make one"
            )
        _keys(doc, {"version", "provenance", "winners", "entries", "signature"}, "the profile")
        prov = _provenance(doc.get("provenance"))
        where = f"from {prov.host} {prov.date}" if prov else "from a profile that names no host"
        profile = cls(prov, origin=f"imported {where}" + (f" (file {source})" if source else ""))
        entries = doc.get("entries", [])
        if not isinstance(entries, list):
            raise _bad("entries must be a list")
        for raw in entries:
            entry = _entry(raw, profile.origin)
            if profile.entry(entry.shape, entry.backend) is not None:
                raise _bad(f"{entry.shape} {entry.backend} twice")
            profile.entries.setdefault(entry.shape, []).append(entry)
        profile.winners = _winners(doc.get("winners", {}), profile.entries)
        return profile

    def save(self, path: str | Path, *, sign_key: bytes | None = None) -> Path:
        """Write the profile atomically.

        Raises:
            NotMeasured: (nothing written) a figure is not MEASURED, or an entry was neither
                measured in this process nor imported with its origin.
        """
        target = Path(path).expanduser()
        if not self.measured or self.provenance is None:
            raise NotMeasured(
                f"{target}: refusing to write: not every figure in this profile was measured"
            )
        unvouched = [
            f"{e.shape} {e.backend}"
            for es in self.entries.values()
            for e in es
            if not (entry_measured_here(e) or e.origin.strip())
        ]
        if unvouched:
            raise NotMeasured(
                f"{target}: refusing to write: {', '.join(unvouched[:4])} neither measured by "
                "tune_shape_live in this process nor imported with their origin"
            )
        doc = self.to_dict()
        if sign_key is not None:
            doc = sign(doc, sign_key)
        write_atomically(target, json.dumps(doc, indent=2, sort_keys=True) + "\n")
        return target

    def demoted(self, reason: str) -> TuningProfile:
        """A copy with every figure ESTIMATED and the reason attached."""
        out = TuningProfile(self.provenance, {}, dict(self.winners), self.signature, self.origin)
        for key, es in self.entries.items():
            out.entries[key] = [
                replace(e, provenance=Provenance.ESTIMATED, reason=reason) for e in es
            ]
        return out


def _bad(what: str) -> InputError:
    return InputError(f"malformed tuning profile: {what}")


def _keys(doc: Mapping[str, Any], allowed: set[str], what: str) -> None:
    unknown = sorted(str(k) for k in doc if k not in allowed)
    if unknown:
        raise _bad(f"{what} has unknown fields {', '.join(unknown)[:120]}")


def _provenance(raw: object) -> ProfileProvenance | None:
    if raw is None:
        return None
    names = {f.name for f in fields(ProfileProvenance)}
    if not isinstance(raw, Mapping) or set(raw) != names:
        raise _bad(f"provenance must be an object with exactly {', '.join(sorted(names))}")
    if not all(isinstance(raw[n], str) for n in names):
        raise _bad("every provenance field must be text")
    return ProfileProvenance(**{n: raw[n] for n in names})


def _entry(raw: object, default_origin: str) -> ProfileEntry:
    if not isinstance(raw, Mapping):
        raise _bad("an entry must be an object")
    _keys(raw, {f.name for f in fields(ProfileEntry)}, "an entry")
    missing = [
        n for n in ("shape", "backend", "uj_per_op", "ns_per_op", "provenance") if n not in raw
    ]
    if missing:
        raise _bad(f"an entry lacks {', '.join(missing)}")
    prov, origin = raw["provenance"], raw.get("origin", "")
    if prov not in ("measured", "estimated"):  # a str check first: Provenance(42) is no TypeError
        raise _bad(f"an entry's provenance must be measured or estimated, got {prov!r:.40}")
    if not isinstance(origin, str):
        raise _bad("an entry's origin must be text")
    return ProfileEntry(  # validates the remaining types and figures (ConfigError)
        raw["shape"],
        raw["backend"],
        raw["uj_per_op"],
        raw["ns_per_op"],
        Provenance(prov),
        raw.get("reason", ""),
        origin.strip() or default_origin,
    )


def _winners(raw: object, entries: Mapping[str, list[ProfileEntry]]) -> dict[str, str]:
    if not isinstance(raw, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in raw.items()
    ):
        raise _bad("winners must map shapes to backend names")
    if set(raw) != set(entries):
        raise _bad("every shape with figures needs exactly one winner, and only those")
    for shape, winner in raw.items():
        least = min(e.uj_per_op for e in entries[shape])
        mine = next((e.uj_per_op for e in entries[shape] if e.backend == winner), None)
        if mine is None or mine > least:
            raise _bad(f"{shape}: the winner {winner} is not its joules-minimal backend")
    return dict(raw)


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
    """What eoc's own liveness probe sees of ``counter`` here (its ``status()`` is a claim)."""
    from eoc_native.counters import survey

    for c in survey(telemetry=False).whole_work:
        if c.name == counter:
            return probe(c).status  # a counter it cannot read comes back UNAVAILABLE, with why
    return CounterStatus.unavailable(f"there is no counter named {counter} on this host")


def load_profile(
    path: str | Path,
    *,
    status_of: Callable[[str], CounterStatus] = _status_here,
    host: str | None = None,
    trusted_keys: Sequence[str] | None = None,
) -> TuningProfile:
    """Read a profile; demote its figures unless their counter is live on this host now.

    Args:
        trusted_keys: Ed25519 public keys (hex) a signer must match; ``None`` reads
            ``$EOC_TRUSTED_KEYS``. With any configured, an unsigned profile is refused.

    Raises:
        InputError: unreadable, too large, not strict JSON, or not a well-formed profile.
        ReceiptMismatch: altered, or refused by the trusted keys (naming the signer).
    """
    p = Path(path).expanduser()
    try:
        doc = read_json(p, MAX_PROFILE_BYTES, what="tuning profile", stdin_ok=False)
    except BadJson as exc:
        raise BadJson(f"{p}: {exc.reason}") from None
    if not isinstance(doc, Mapping):
        raise InputError(f"{p} is not an eoc tuning profile: run `eoc autotune` to make one")
    check = check_signature(doc, trusted_keys)
    profile = TuningProfile.from_dict(doc, source=str(p))
    profile.signature = check
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
    """The process-wide profile, loaded once from :func:`profile_path` (``None`` if absent).

    Raises:
        UntrustedFile: someone else could have written the file (:mod:`eoc.files.trust`).
    """
    global _GLOBAL
    with _GLOBAL_LOCK:
        path = profile_path()
        if _GLOBAL is None and path.is_file():
            check_file(
                path,
                what="the tuning profile",
                fix="remove it, or set EOC_TUNING_PROFILE to a file only you can write",
            )
            _GLOBAL = load_profile(path)
        return _GLOBAL


def set_global_profile(profile: TuningProfile | None) -> None:
    """Replace (or with ``None`` forget) the process-wide profile."""
    global _GLOBAL
    with _GLOBAL_LOCK:
        _GLOBAL = profile


__all__ = [
    "DEFAULT_PATH",
    "MAX_PROFILE_BYTES",
    "ProfileEntry",
    "ProfileProvenance",
    "TuningProfile",
    "entry_measured_here",
    "global_profile",
    "load_profile",
    "profile_path",
    "set_global_profile",
    "write_atomically",
]
