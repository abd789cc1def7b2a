"""What installed packages add to eoc, found through entry points, never a package name.

eoc's core imports no other package. The native extra (the ``eoc_native`` package in the same
wheel) and any third party plug in by declaring entry points in their ``pyproject.toml``::

    [project.entry-points."eoc.counter_sources"]
    mine = "my_package.energy:survey"

The groups, and what each entry point names:

=====================  ===========================================================================
``eoc.counters``       a counter class eoc trusts to report its own kind (:mod:`eoc.meter.trust`)
``eoc.counter_sources``  ``survey(*, telemetry=True)`` returning an object with ``whole_work``,
                       ``other`` and ``telemetry`` (lists of counters) and ``notes`` (why some
                       are missing); the meter is chosen among every source's ``whole_work``
``eoc.embedders``      ``options()`` returning keyword arguments for a :class:`~eoc.stages.KVStage`
                       (its embedder, threshold, index); ``EOC_EMBEDDER=NAME`` picks one by name
``eoc.models``         a neural backend class built as ``Class(model_path_or_None)``
``eoc.graph_stores``   ``open_for_answers()`` returning a triple source, or ``None`` if none exists
``eoc.signers``        a receipt signer class with ``from_file(path)``
``eoc.verifiers``      a module that checks signed receipts (``receipts``) or profiles (``profile``)
``eoc.stores``         ``open_store(location)`` returning :class:`~eoc.store.parts.StoreParts` (a
                       cache's, a kv's and a graph's store: :mod:`eoc.store`) for
                       ``--store NAME://...`` (:mod:`eoc.assemble`)
``eoc.commands``       ``register(sub, add)`` adding a CLI command (``eoc serve``, ``eoc graph``,
                       ``eoc autotune``)
=====================  ===========================================================================

Entry points are read once per process (:func:`refresh` reads them again); in Pyodide nothing
installed declares any.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import sys
from typing import Any

COUNTERS = "eoc.counters"
COUNTER_SOURCES = "eoc.counter_sources"
EMBEDDERS = "eoc.embedders"
MODELS = "eoc.models"
GRAPH_STORES = "eoc.graph_stores"
SIGNERS = "eoc.signers"
VERIFIERS = "eoc.verifiers"
STORES = "eoc.stores"
COMMANDS = "eoc.commands"

NATIVE_HINT = (
    'pip install ".[native]" in eoc\'s checkout, or pip install "eoc-VERSION-py3-none-any.whl[native]"'
    " from the wheel make wheel builds (eoc is on no package index)"
)
"""What to install when an entry point of eoc's own native extra is missing or cannot load."""


@functools.cache
def _every() -> tuple[Any, ...]:
    """Every ``eoc.*`` entry point installed, in ``sys.path`` order, read in one pass over the
    installed distributions: by :func:`_scan` where every distribution is a plain folder (about
    1 ms), else by ``importlib.metadata`` (about 25 ms with its import, the same answer)."""
    fast = _scan()
    if fast is not None:
        return fast
    from importlib import metadata  # here, not at `import eoc`: only a caller that needs one pays

    try:
        found: Any = metadata.entry_points()
        # Python 3.11 returns them grouped in a dict whose own methods warn; 3.12 a flat list
        every = (
            itertools.chain.from_iterable(dict.values(found)) if isinstance(found, dict) else found
        )
        return tuple(ep for ep in every if ep.group.startswith("eoc."))
    except Exception:  # broken metadata of some other distribution: nothing is offered
        return ()


class EntryPoint:
    """An entry point :func:`_scan` read: ``name``, ``value`` (``"module:attr"``), ``group``;
    :meth:`load` as ``importlib.metadata.EntryPoint.load`` does it."""

    __slots__ = ("group", "name", "value")
    _VALUE = r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$"

    def __init__(self, name: str, value: str, group: str) -> None:
        self.name, self.value, self.group = name, value, group

    def load(self) -> Any:
        """The object the value names (its module imported)."""
        import importlib

        match = re.match(self._VALUE, self.value)  # compiled on the first load, not at import
        if match is None:
            raise ImportError(f"entry point {self.name!r} names no module: {self.value!r}")
        found: Any = importlib.import_module(match.group("module"))
        for attr in filter(None, (match.group("attr") or "").split(".")):
            found = getattr(found, attr)
        return found

    def __repr__(self) -> str:
        return f"EntryPoint(name={self.name!r}, value={self.value!r}, group={self.group!r})"


def _scan() -> tuple[EntryPoint, ...] | None:
    """The ``eoc.*`` entry points of the ``*.dist-info`` and ``*.egg-info`` folders on
    ``sys.path``, the first distribution of a name winning as ``importlib.metadata`` has it;
    ``None`` where that reader could find distributions this does not read (a zip or an egg on
    the path, a finder of its own on ``sys.meta_path``), which then decides."""
    if any(
        getattr(finder, "find_distributions", None) is not None
        and getattr(finder, "__name__", "") != "PathFinder"
        for finder in sys.meta_path
    ):
        return None
    seen: set[str] = set()
    out: list[EntryPoint] = []
    for entry in sys.path:
        root = entry or "."
        if not isinstance(root, str) or os.path.isfile(root):
            return None  # a zip (or something else) on the path: importlib.metadata reads it
        try:
            children = os.listdir(root)
        except OSError:
            continue  # no folder there: nothing installed
        infos: dict[str, list[str]] = {}
        eggs: dict[str, list[str]] = {}
        for child in children:
            low = child.lower()
            if low.endswith(".egg"):
                return None
            stem, ext = os.path.splitext(low)
            if ext in (".dist-info", ".egg-info"):
                name = re.sub(r"[-_.]+", "_", stem.partition("-")[0])
                (infos if ext == ".dist-info" else eggs).setdefault(name, []).append(child)
        for name, folder in itertools.chain(
            ((n, f) for n, fs in infos.items() for f in fs),
            ((n, f) for n, fs in eggs.items() for f in fs),
        ):
            if name in seen:
                continue
            seen.add(name)
            out.extend(_declared(os.path.join(root, folder, "entry_points.txt")))
    return tuple(out)


def _declared(path: str) -> list[EntryPoint]:
    """The ``eoc.*`` entry points an ``entry_points.txt`` declares (none where it is absent)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(1 << 20)
    except (OSError, ValueError):
        return []
    out, group = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):  # as importlib.metadata reads the file
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line.strip("[]")
        elif group.startswith("eoc.") and "=" in line:
            name, value = (part.strip() for part in line.split("=", 1))
            out.append(EntryPoint(name, value, group))
    return out


@functools.cache
def _installed() -> dict[str, dict[str, Any]]:
    """The entry points by group and name (the first found of a name wins)."""
    out: dict[str, dict[str, Any]] = {}
    for ep in _every():
        out.setdefault(ep.group, {}).setdefault(ep.name, ep)
    return out


def names(group: str) -> tuple[str, ...]:
    """The names installed under ``group``, sorted (empty when nothing declares the group)."""
    return tuple(sorted(_installed().get(group, {})))


def values(group: str) -> frozenset[str]:
    """What every entry point of ``group`` names (``"module:attr"``, spaces removed), a name
    declared twice included: a counter class stays trusted whoever else uses its name."""
    return frozenset(ep.value.replace(" ", "") for ep in _every() if ep.group == group)


def refresh() -> None:
    """Read the installed entry points again (after installing a package into this process)."""
    _every.cache_clear()
    _installed.cache_clear()


def load(group: str, name: str) -> Any:
    """The object entry point ``name`` of ``group`` names.

    Raises:
        LookupError: nothing by that name is installed in the group.
        ImportError: it is installed but cannot load (a package it needs is missing).
    """
    ep = _installed().get(group, {}).get(name)
    if ep is None:
        raise LookupError(f"no {group} entry point named {name!r} is installed")
    return ep.load()


def load_all(group: str) -> list[tuple[str, Any]]:
    """Every entry point of ``group`` that loads, by name, and the reasons of those that do not
    (as ``(name, ImportError)``)."""
    out: list[tuple[str, Any]] = []
    for name in names(group):
        try:
            out.append((name, load(group, name)))
        except ImportError as exc:
            out.append((name, exc))
    return out
