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
``eoc.tools``          a command's implementation the core's CLI defines (``autotune``)
``eoc.commands``       ``register(sub, add)`` adding a CLI command (``eoc serve``, ``eoc graph``)
=====================  ===========================================================================

Entry points are read once per process; in Pyodide nothing is installed that declares any.
"""

from __future__ import annotations

import functools
from typing import Any

COUNTER_SOURCES = "eoc.counter_sources"
EMBEDDERS = "eoc.embedders"
MODELS = "eoc.models"
GRAPH_STORES = "eoc.graph_stores"
SIGNERS = "eoc.signers"
VERIFIERS = "eoc.verifiers"
TOOLS = "eoc.tools"
COMMANDS = "eoc.commands"

NATIVE_HINT = 'pip install "eoc[native]" (from a checkout: pip install ".[native]")'
"""What to install when an entry point of eoc's own native extra is missing or cannot load."""


@functools.cache
def names(group: str) -> tuple[str, ...]:
    """The names installed under ``group``, sorted (empty when nothing declares the group)."""
    from importlib import metadata  # here, not at `import eoc`: only a caller that needs one pays

    try:
        return tuple(sorted({ep.name for ep in metadata.entry_points(group=group)}))
    except Exception:  # broken metadata of some other distribution: nothing is offered
        return ()


def load(group: str, name: str) -> Any:
    """The object entry point ``name`` of ``group`` names.

    Raises:
        LookupError: nothing by that name is installed in the group.
        ImportError: it is installed but cannot load (a package it needs is missing).
    """
    from importlib import metadata

    for ep in metadata.entry_points(group=group):
        if ep.name == name:
            return ep.load()
    raise LookupError(f"no {group} entry point named {name!r} is installed")


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
