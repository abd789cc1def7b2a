"""Which kind of counter a figure is shown as coming from: never just the counter's own word.

A counter object says what it is (``kind``), but any class can say ``hardware``. The kind shown
with a figure, in every printed line, JSON field and receipt, is the *effective* kind:

* ``fake`` for test and demonstration counters (:class:`eoc.testing.FakeCounter`, and native
  readers fed a fake source: a powercap tree outside ``/sys``, replayed IOReport samples, a
  stand-in ``pynvml``), which report it themselves;
* the declared ``hardware`` or ``vendor-model`` only for a class installed under the
  ``eoc.counters`` entry-point group (eoc's own native readers, or a third party's installed
  the same way), which is answerable for reporting ``fake`` when its source is not real;
* ``unverified`` for any other live counter: its readings can be MEASURED (the cascade probed
  it and bounds every span by its maximum power), but nothing vouches for what it reads.
"""

from __future__ import annotations

from eoc.cost import CounterKind

COUNTER_GROUP = "eoc.counters"
"""Entry-point group of installed counter classes (``name = "module:Class"``)."""


def registered_counter_classes() -> frozenset[str]:
    """``module:QualName`` of every counter class installed under :data:`COUNTER_GROUP` (read
    once per process; broken metadata of another distribution trusts nothing)."""
    from eoc import plugins  # not at `import eoc`: only a cascade over a live counter asks

    return plugins.values(COUNTER_GROUP)


def class_path(obj: object) -> str:
    cls = type(obj)
    return f"{cls.__module__}:{cls.__qualname__}"


def effective_kind(counter: object) -> tuple[CounterKind, str]:
    """The kind to show for ``counter``'s figures, and why it differs from its claim ("" if not)."""
    claimed = getattr(counter, "kind", None)
    if claimed is CounterKind.NONE:
        return CounterKind.NONE, ""
    if claimed is CounterKind.FAKE:
        return CounterKind.FAKE, ""
    if claimed is CounterKind.UNVERIFIED:  # an installed reader that could not check its source
        return CounterKind.UNVERIFIED, str(getattr(counter, "kind_reason", "") or "unverified")
    path = class_path(counter)
    if claimed in (CounterKind.HARDWARE, CounterKind.VENDOR_MODEL):
        if path in registered_counter_classes():
            return claimed, ""
        return CounterKind.UNVERIFIED, (
            f"{path} says {claimed.value}, but it is not a counter installed under the "
            f"{COUNTER_GROUP} entry points, so nothing vouches for what it reads"
        )
    return CounterKind.UNVERIFIED, f"{path} declares no known counter kind ({claimed!r})"


__all__ = ["COUNTER_GROUP", "class_path", "effective_kind", "registered_counter_classes"]
