"""Linux RAPL through powercap sysfs (``/sys/class/powercap/intel-rapl*``).

* Zones are found under the powercap root and de-duplicated by name (some CPUs expose an
  ``intel-rapl-mmio`` twin of the same package).
* Nesting: psys contains the packages, which contain core and uncore. The whole-work counter
  is psys where present, otherwise the sum of the package zones over all sockets; core and
  uncore are never added on top. DRAM is separate and reported as a counter of its own.
* Each ``energy_uj`` file is opened once and read with ``os.pread``.
* Wraps at ``max_energy_range_uj`` are corrected one at a time; a read whose distance from the
  previous one is long enough that a second wrap could hide in it (elapsed time × the zone's
  maximum plausible power ≥ its range) is refused.
* Permission denied (root-only since the 2020 fix for CVE-2020-8694) is UNAVAILABLE with the fix.
* Its kind is ``hardware`` only when eoc opened every file itself and each is a powercap
  ``energy_uj`` on the real sysfs (checked on the open file: its device and real location, not
  the path text a caller gave); a tree anywhere else (the fakes of
  :func:`eoc.testing.make_powercap_tree`) or an ordinary file reads as ``fake``, and files a
  caller's ``opener`` reached as ``unverified``.
* It declares ``max_power_uw`` (the sum of the zones' ceilings): a span implying more is refused.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from eoc.cost import CounterKind
from eoc.errors import CounterReadFailed, CounterUnavailable, WrapAmbiguous
from eoc_native.counters.base import ProbedCounter
from eoc_native.counters.provenance import powercap_energy_file

POWERCAP = Path("/sys/class/powercap")
DEFAULT_MAX_POWER_W = 1_000.0  # far above any socket or platform; only bounds wrap ambiguity
PERMISSION_FIX = (
    "RAPL energy files are readable by root only (since the fix for CVE-2020-8694): run as root, "
    "or allow your user once with `sudo chmod o+r /sys/class/powercap/intel-rapl:*/energy_uj`, "
    'or persistently with a udev rule: SUBSYSTEM=="powercap", ACTION=="add", '
    'RUN+="/bin/chmod o+r /sys%p/energy_uj"'
)


@dataclass(frozen=True)
class RaplZone:
    """One powercap zone: its folder, name and wrap range."""

    path: Path
    name: str
    max_range_uj: int
    max_power_w: float = DEFAULT_MAX_POWER_W

    @property
    def energy_file(self) -> Path:
        return self.path / "energy_uj"

    @property
    def is_subzone(self) -> bool:
        return self.path.name.count(":") >= 2

    @property
    def is_mmio(self) -> bool:
        return "mmio" in self.path.name


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def discover_zones(root: Path = POWERCAP) -> list[RaplZone]:
    """Every RAPL zone under ``root``, mmio twins dropped (the first of each name is kept)."""
    zones: list[RaplZone] = []
    seen: set[str] = set()
    if not root.is_dir():
        return zones
    paths = sorted(p for p in root.iterdir() if p.name.startswith("intel-rapl"))
    paths.sort(key=lambda p: ("mmio" in p.name, p.name))  # prefer the MSR tree over mmio twins
    for path in paths:
        name = _read_text(path / "name")
        if not name or name in seen:
            continue
        raw = _read_text(path / "max_energy_range_uj")
        try:
            max_range = int(raw) if raw else 0
        except ValueError:
            max_range = 0
        max_power_w = DEFAULT_MAX_POWER_W
        limit = _read_text(path / "constraint_0_max_power_uw")
        if limit and limit.isdigit() and int(limit) > 0:
            max_power_w = max(int(limit) / 1e6 * 2, 1.0)  # twice the rated maximum: generous
        seen.add(name)
        zones.append(RaplZone(path, name, max_range, max_power_w))
    return zones


@dataclass(frozen=True)
class ZonePlan:
    """Which zones measure the whole work, which measure DRAM, and which were declined, and why."""

    whole: tuple[RaplZone, ...]
    dram: tuple[RaplZone, ...]
    declined: tuple[tuple[RaplZone, str], ...]


def plan_zones(zones: Iterable[RaplZone]) -> ZonePlan:
    """Apply the nesting rule: psys instead of packages, never core/uncore, DRAM apart."""
    zones = list(zones)
    psys = [z for z in zones if z.name == "psys"]
    packages = [z for z in zones if z.name.startswith("package")]
    dram = tuple(z for z in zones if z.name == "dram")
    declined: list[tuple[RaplZone, str]] = []
    for z in zones:
        if z.name in ("core", "uncore"):
            declined.append((z, f"{z.name} lies inside its package: adding it would count twice"))
    if psys:
        whole = tuple(psys[:1])
        declined += [(z, "inside psys, which is used instead") for z in packages]
    else:
        whole = tuple(packages)
    return ZonePlan(whole, dram, tuple(declined))


class RaplCounter(ProbedCounter):
    """The sum of some RAPL zones, wrap-corrected, as one cumulative µJ counter.

    Args:
        zones: the zones to sum (see :func:`plan_zones`).
        name: the counter's name, e.g. ``rapl:package`` or ``rapl:psys``.
        opener: ``os.open``; any other (tests inject one that raises ``PermissionError``) makes
            the kind at most ``unverified``.
    """

    kind = CounterKind.HARDWARE
    resolution_uj = 15.3  # the usual RAPL energy unit (2^-16 J)
    # RAPL publishes about every 1 ms, so each edge of a span can miss up to one update
    # (2 ms of energy over both edges). Keeping that under 20 % of what a span reads needs a
    # window of at least 10 updates: 10 ms, the minimum the reference specification sets.
    min_window_ns = 10_000_000

    def __init__(
        self,
        zones: Sequence[RaplZone],
        name: str,
        *,
        opener: Callable[[str, int], int] = os.open,
        clock: Callable[[], int] = time.perf_counter_ns,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(clock=clock, sleep=sleep)
        if not zones:
            raise CounterUnavailable("no RAPL zone to read")
        self.name = name
        self.zones = tuple(zones)
        self.max_power_uw = sum(z.max_power_w for z in self.zones) * 1e6
        self.kind = CounterKind.UNVERIFIED  # until the files it opened are checked, below
        self.kind_reason = f"{name}: its files were not opened, so not checked"
        self._fds: list[int] | None = None
        self._open_error: str | None = None
        self._last: list[tuple[int, int]] = []  # (raw µJ, t_ns) per zone
        self._total = 0
        self._lock = threading.Lock()
        try:
            self._fds = [opener(str(z.energy_file), os.O_RDONLY) for z in self.zones]
            self._check_files(caller_opened=opener is not os.open)
        except PermissionError:
            self._open_error = f"{name}: permission denied. {PERMISSION_FIX}"
        except OSError as exc:
            self._open_error = (
                f"{name}: cannot open {exc.filename}: {os.strerror(exc.errno or errno.EIO)}"
            )

    def _check_files(self, *, caller_opened: bool) -> None:
        """The kind, from what was opened, never from the zones' path text: ``hardware`` only when
        eoc opened every file and each is a powercap ``energy_uj`` of the real sysfs; ``fake``
        when one is not (a tree written elsewhere, an ordinary file); ``unverified`` when a
        caller's opener reached the real files (what it reads between opens, eoc cannot say)."""
        assert self._fds is not None
        why = next((w for w in map(powercap_energy_file, self._fds) if w), "")
        if why:
            self.kind, self.kind_reason = CounterKind.FAKE, f"{self.name}: {why}"
        elif caller_opened:
            self.kind = CounterKind.UNVERIFIED
            self.kind_reason = f"{self.name}: its files were opened by a caller-supplied opener"
        else:
            self.kind, self.kind_reason = CounterKind.HARDWARE, ""

    def unavailable_reason(self) -> str | None:
        return self._open_error

    def _raw(self, fd: int, zone: RaplZone) -> int:
        try:
            data = os.pread(fd, 32, 0)
        except PermissionError:
            raise CounterUnavailable(f"{self.name}: permission denied. {PERMISSION_FIX}") from None
        except OSError as exc:
            raise CounterReadFailed(
                f"{self.name}: reading {zone.energy_file} failed: {exc}"
            ) from None
        try:
            return int(data.strip())
        except ValueError:
            raise CounterReadFailed(
                f"{self.name}: {zone.energy_file} holds {data[:20]!r}, not µJ"
            ) from None

    def read_uj(self) -> int:
        if self._fds is None:
            raise CounterUnavailable(self._open_error or f"{self.name}: not open")
        with self._lock:
            now = self._clock()
            raws = [self._raw(fd, z) for fd, z in zip(self._fds, self.zones, strict=True)]
            if not self._last:
                self._last = [(r, now) for r in raws]
                return self._total
            added = 0
            for i, (zone, raw) in enumerate(zip(self.zones, raws, strict=True)):
                prev, t_prev = self._last[i]
                elapsed_s = (now - t_prev) / 1e9
                if zone.max_range_uj and elapsed_s * zone.max_power_w * 1e6 >= zone.max_range_uj:
                    self._last = [(r, now) for r in raws]  # start afresh from here
                    raise WrapAmbiguous(
                        f"{self.name}: {elapsed_s:.0f} s since the last read of {zone.name} could "
                        f"hide a second wrap at up to {zone.max_power_w:.0f} W "
                        f"(range {zone.max_range_uj / 1e6:.0f} J); read more often"
                    )
                delta = raw - prev
                if delta < 0:
                    if not zone.max_range_uj:
                        raise CounterReadFailed(
                            f"{self.name}: {zone.name} went backwards and has no max_energy_range_uj"
                        )
                    delta += zone.max_range_uj  # one wrap
                added += delta
            self._last = [(r, now) for r in raws]
            self._total += added
            return self._total

    def close(self) -> None:
        for fd in self._fds or ():
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds = None


def rapl_counters(root: Path = POWERCAP) -> tuple[list[RaplCounter], list[str]]:
    """The whole-work RAPL counter and the DRAM one (if any), and notes on what was declined."""
    zones = discover_zones(root)
    if not zones:
        return [], [f"rapl: no powercap zones under {root} (no RAPL, or the container hides it)"]
    plan = plan_zones(zones)
    counters: list[RaplCounter] = []
    if plan.whole:
        label = "psys" if plan.whole[0].name == "psys" else "package"
        counters.append(RaplCounter(plan.whole, f"rapl:{label}"))
    if plan.dram:
        counters.append(RaplCounter(plan.dram, "rapl:dram"))
    notes = [f"rapl: {z.path.name} ({z.name}) declined: {why}" for z, why in plan.declined]
    return counters, notes


__all__ = [
    "PERMISSION_FIX",
    "POWERCAP",
    "RaplCounter",
    "RaplZone",
    "ZonePlan",
    "discover_zones",
    "plan_zones",
    "rapl_counters",
]
