"""Where a native counter's readings really come from, checked by eoc, never taken from a name.

A counter may say ``hardware`` only when eoc has checked the source itself: a RAPL file must be
a regular file on the sysfs mounted at ``/sys`` whose real location is a powercap ``energy_uj``;
a perf event must be the power PMU's, with the type, config, scale and unit that
``/sys/bus/event_source/devices/power`` gives; NVML must be the ``pynvml`` file its distribution
installed, untouched (its hash as recorded, its functions that file's own code), with NVIDIA's
library really loaded in this process (a mapped ``libnvidia-ml`` exporting NVML's functions). A path string, an event or a
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


NVML_CALLS = (
    "nvmlInit",
    "nvmlDeviceGetCount",
    "nvmlDeviceGetHandleByIndex",
    "nvmlDeviceGetEnforcedPowerLimit",
    "nvmlDeviceGetName",
    "nvmlDeviceGetTotalEnergyConsumption",
)
"""The pynvml functions eoc calls: each must be the installed file's own."""
NVML_SYMBOLS = (
    "nvmlInit_v2",
    "nvmlDeviceGetTotalEnergyConsumption",
    "nvmlDeviceGetHandleByIndex_v2",
)
"""Functions NVIDIA's management library exports (a library merely named libnvidia-ml does not)."""


def nvml_module(module: ModuleType | Any) -> str:
    """``""`` when ``module`` is the ``pynvml`` that its distribution installed, untouched, else
    why not: the file must hash as the distribution's record says, and each function eoc calls
    (:data:`NVML_CALLS`) must be that file's own code, so a stand-in, a module given the real
    file's ``__file__``, or the real module with a function replaced, is not it."""
    try:
        installed = importlib.import_module("pynvml")
    except ImportError:
        return "no pynvml is installed (nvidia-ml-py)"
    if module is not installed:
        return f"{type(module).__name__} is not the installed pynvml module"
    file = getattr(module, "__file__", None)
    if not isinstance(file, str) or not file:
        return "the pynvml module in use has no file: a stand-in"
    here = Path(file).resolve()
    reference = _installed_pynvml(str(here))
    if isinstance(reference, str):
        return reference
    for name in NVML_CALLS:
        if not _own_code(getattr(module, name, None), name, vars(module), here, reference):
            return f"pynvml.{name} is not the installed pynvml.py's own function: a stand-in"
    return ""


def _own_code(fn: Any, name: str, namespace: Any, here: Path, reference: dict[Any, Any]) -> bool:
    """Whether ``fn`` and each function it wraps (a decorator's wrapper over the function) are
    code compiled from the file at ``here`` (``reference``: its code objects by name and first
    line), run in the module's own namespace, the innermost being the function ``name``."""
    layer, depth = fn, 0
    while layer is not None and depth < 4:
        code = getattr(layer, "__code__", None)
        if code is None or getattr(layer, "__globals__", None) is not namespace:
            return False
        ref = reference.get((code.co_name, code.co_firstlineno))
        if (
            ref is None
            or code.co_code != ref.co_code
            or code.co_names != ref.co_names
            or Path(code.co_filename).resolve() != here
        ):
            return False
        inner = getattr(layer, "__wrapped__", None)
        if inner is None:
            return bool(code.co_name == name)
        layer, depth = inner, depth + 1
    return False


@functools.lru_cache(maxsize=4)
def _installed_pynvml(path: str) -> dict[str, Any] | str:
    """The code of every function of the pynvml.py at ``path`` (by name and first line),
    compiled from the file, when a distribution installed that file and it hashes as recorded;
    else why not."""
    import base64
    import hashlib
    from importlib import metadata

    here = Path(path)
    for dist_name in metadata.packages_distributions().get("pynvml", []):
        try:
            dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError:
            continue
        for f in dist.files or ():
            if f.name != "pynvml.py" or Path(str(dist.locate_file(f))).resolve() != here:
                continue
            try:
                data = here.read_bytes()
            except OSError as exc:
                return f"{here} cannot be read: {exc.strerror}"
            if f.hash is None or f.hash.mode != "sha256":
                return f"{dist_name} records no SHA-256 of {here.name}"
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            if digest.decode() != f.hash.value:
                return f"{here} is not the file {dist_name} installed (its hash differs)"
            codes: dict[Any, Any] = {}
            pending = [compile(data, str(here), "exec")]
            while pending:  # every function of the file, nested ones (a decorator's) too
                code = pending.pop()
                codes[(code.co_name, code.co_firstlineno)] = code
                pending += [c for c in code.co_consts if hasattr(c, "co_code")]
            return codes
    return f"{here} is not the pynvml.py a distribution installed"


def nvml_library_loaded(module: ModuleType | Any | None = None) -> str:
    """``""`` when NVIDIA's management library is loaded in this process (a mapped
    ``libnvidia-ml.so*`` exporting NVML's functions, :data:`NVML_SYMBOLS`) and, given the pynvml
    ``module``, it is the library that module loaded; else why not."""
    import ctypes

    try:
        maps = MAPS.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "this host cannot show which libraries are loaded (/proc/self/maps)"
    mapped = set()
    for line in maps.splitlines():
        parts = line.split(maxsplit=5)
        if len(parts) == 6 and Path(parts[5]).name.startswith("libnvidia-ml.so"):
            mapped.add(parts[5])
    if not mapped:
        return "libnvidia-ml is not loaded in this process"
    loaded_only = getattr(os, "RTLD_NOLOAD", 0) | getattr(os, "RTLD_LAZY", 1)
    for path in sorted(mapped):
        try:
            lib = ctypes.CDLL(path, mode=loaded_only)  # the mapped copy, not a new load
        except OSError as exc:
            return f"{path} cannot be checked: {exc}"
        missing = [sym for sym in NVML_SYMBOLS if not hasattr(lib, sym)]
        if missing:
            return f"{path} exports no {missing[0]}: not NVIDIA's management library"
    if module is not None:
        name = getattr(getattr(module, "nvmlLib", None), "_name", None)
        if not isinstance(name, str) or Path(name).name not in {Path(p).name for p in mapped}:
            return "the pynvml module did not load the mapped libnvidia-ml"
    return ""


__all__ = [
    "NVML_CALLS",
    "NVML_SYMBOLS",
    "POWER_PMU",
    "nvml_library_loaded",
    "nvml_module",
    "parse_config",
    "power_pmu_event",
    "powercap_energy_file",
    "sysfs_device",
]
