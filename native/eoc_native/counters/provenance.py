"""Where a native counter's readings really come from, checked by eoc, never taken from a name.

A counter may say ``hardware`` only when eoc has checked the source itself: a RAPL file must be
a regular file on the sysfs mounted at ``/sys`` whose real location is a powercap ``energy_uj``;
a perf event must be the power PMU's, with the type, config, scale and unit that
``/sys/bus/event_source/devices/power`` gives; NVML must be the ``pynvml`` file its distribution
installed, with the NVIDIA library really loaded in this process. A path string, an event or a
module handed in by a caller is a claim. Each check returns ``""`` when the source is what it
says, else the reason it is not; the counters turn that into the kind ``fake`` (eoc can tell it
is not the device) or ``unverified`` (a caller's opener reached a real file).
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import stat
from pathlib import Path
from types import ModuleType
from typing import Any

SYS = Path("/sys")
MOUNTINFO = Path("/proc/self/mountinfo")
MAPS = Path("/proc/self/maps")
POWER_PMU = Path("/sys/bus/event_source/devices/power")
"""Where sysfs describes the perf power PMU (:mod:`eoc_native.counters.perf` reads it too)."""


@functools.cache
def sysfs_device() -> int | None:
    """The device number of the sysfs mounted at /sys, or ``None`` when /sys is not sysfs."""
    try:
        lines = MOUNTINFO.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) > 4 and fields[4] == str(SYS) and "-" in fields:
            fstype = fields[fields.index("-") + 1 : fields.index("-") + 2]
            if fstype == ["sysfs"]:
                try:
                    return os.stat(SYS).st_dev
                except OSError:
                    return None
    return None


def powercap_energy_file(fd: int) -> str:
    """``""`` when ``fd`` is open on a powercap ``energy_uj`` file of the real sysfs, else why not."""
    try:
        st = os.fstat(fd)
    except OSError as exc:
        return f"descriptor {fd} cannot be checked: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        return f"descriptor {fd} is not a file (a pipe, a device or a socket)"
    sysfs = sysfs_device()
    if sysfs is None:
        return "no sysfs is mounted at /sys here"
    if st.st_dev != sysfs:
        return f"descriptor {fd} is open on a file outside sysfs"
    try:
        real = Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return f"descriptor {fd}'s file cannot be located"
    if real.name != "energy_uj" or "powercap" not in real.parts:
        return f"{real} is not a powercap energy file"
    return ""


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return None


def parse_config(text: str) -> int:
    """``"event=0x02"`` (the power PMU's format) -> the config value."""
    m = re.search(r"event=(0x[0-9a-fA-F]+|\d+)", text)
    if m is None:
        raise ValueError(f"unknown perf event format {text!r}")
    return int(m.group(1), 0)


def power_pmu_event(
    pmu_type: int, config: int, name: str, scale_j: float, unit: str, *, root: Path | None = None
) -> str:
    """``""`` when the event is the power PMU's own, as sysfs describes it, else why not."""
    pmu = POWER_PMU if root is None else root
    real_type = _read(pmu / "type")
    if real_type is None:
        return f"this host has no perf power PMU ({pmu} is absent)"
    if str(pmu_type) != real_type:
        return f"type {pmu_type} is not the power PMU's (type {real_type})"
    described = _read(pmu / "events" / name)
    if described is None or "/" in name:
        return f"the power PMU has no event {name!r}"
    try:
        if parse_config(described) != config:
            return f"config {config:#x} is not {name}'s ({described})"
    except ValueError:
        return f"{name}'s description {described!r} cannot be read"
    real_scale = _read(pmu / "events" / f"{name}.scale")
    real_unit = _read(pmu / "events" / f"{name}.unit")
    try:
        scale_ok = real_scale is not None and float(real_scale) == scale_j
    except ValueError:
        scale_ok = False
    if not scale_ok or real_unit != unit:
        return f"scale {scale_j:g} {unit} is not {name}'s ({real_scale} {real_unit})"
    return ""


def nvml_module(module: ModuleType | Any) -> str:
    """``""`` when ``module`` is the ``pynvml`` file its installed distribution put there, else
    why not (a stand-in object, a module of that name from elsewhere on the path)."""
    from importlib import metadata

    try:
        installed = importlib.import_module("pynvml")
    except ImportError:
        return "no pynvml is installed (nvidia-ml-py)"
    if module is not installed:
        return f"{type(module).__name__} is not the installed pynvml module"
    file = getattr(module, "__file__", None)
    if not file:
        return "the pynvml module in use has no file: a stand-in"
    here = Path(file).resolve()
    for dist_name in metadata.packages_distributions().get("pynvml", []):
        try:
            dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError:
            continue
        for f in dist.files or ():
            if f.name == "pynvml.py" and Path(str(dist.locate_file(f))).resolve() == here:
                return ""
    return f"{here} is not the pynvml.py a distribution installed"


def nvml_library_loaded() -> str:
    """``""`` when the NVIDIA management library is mapped into this process, else why not."""
    try:
        maps = MAPS.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "this host cannot show which libraries are loaded (/proc/self/maps)"
    for line in maps.splitlines():
        path = line.split(maxsplit=5)[5] if len(line.split(maxsplit=5)) == 6 else ""
        if Path(path).name.startswith("libnvidia-ml.so"):
            return ""
    return "libnvidia-ml is not loaded in this process"


__all__ = [
    "POWER_PMU",
    "nvml_library_loaded",
    "nvml_module",
    "parse_config",
    "power_pmu_event",
    "powercap_energy_file",
    "sysfs_device",
]
