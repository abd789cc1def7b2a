"""What every ``eoc`` command shares: printing a result, loading the native extra's pieces."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TextIO

from eoc import plugins
from eoc.errors import MissingExtra

Command = Callable[[argparse.Namespace, TextIO], int]


class Add(Protocol):
    """``add(name, help, fn, aliases=())``: a subcommand with ``--json``, run by ``fn``."""

    def __call__(
        self, name: str, help_: str, fn: Command, aliases: Sequence[str] = ()
    ) -> argparse.ArgumentParser: ...


def emit(out: TextIO, as_json: bool, doc: dict[str, Any], lines: Sequence[str]) -> None:
    """Print ``doc`` as JSON with ``--json``, else ``lines``."""
    if as_json:
        out.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    else:
        out.write("\n".join(lines) + "\n")


def plugin(group: str, name: str, what: str) -> Any:
    """Entry point ``name`` of ``group`` (the native extra's), or an error saying what to install."""
    try:
        return plugins.load(group, name)
    except ImportError as exc:
        raise MissingExtra(
            f"{what} needs packages not installed ({exc}): {plugins.NATIVE_HINT}"
        ) from None
    except LookupError:
        raise MissingExtra(f"{what} needs the native extra: {plugins.NATIVE_HINT}") from None


__all__ = ["Add", "Command", "emit", "plugin"]
