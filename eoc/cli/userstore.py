"""The per-user store ``eoc query`` remembers answers in when no other is named.

Where it is (the XDG Base Directory rules, the same on macOS):

* ``$XDG_DATA_HOME/eoc/store.sqlite`` when ``XDG_DATA_HOME`` is set to an absolute path (a
  relative or empty one is ignored, as the specification says);
* else ``~/.local/share/eoc/store.sqlite``;
* none when neither is an absolute path (``HOME`` unset: a service account's password-file
  home is not guessed), and none in the browser (Pyodide keeps its files in memory: there is nothing to remember across runs).

It keeps what ``eoc query`` remembers, the cache and kv; the knowledge pack stays in memory as
without a store (an exact hit on a first run embeds nothing), and the graph answers from the
Oxigraph store ``eoc graph load`` made, else the pack, so loading facts still reaches
``eoc query``. Which store a command uses, first match wins: ``--no-store`` (memory), ``--store PATH``,
``$EOC_STORE``, this per-user store. Only the per-user store is a default, so only it falls back:
when its folder cannot be made (a read-only home, no home at all) or the file cannot be opened
for writing, ``eoc query`` answers from memory and says so on standard error, once; nothing was
stored there, so nothing is lost. A per-user store that exists but is damaged or of another schema
version is *not* skipped: that is a :class:`~eoc.errors.StoreError` as for any named store
(``eoc store check`` / ``eoc store recover`` repair it), because answering from memory would hide
it. This is a command-line default: the Python API (``Cascade()``, :func:`eoc.assemble.assemble`)
keeps memory unless a store is named.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from eoc._compat import IN_PYODIDE
from eoc.errors import StoreError, StoreUnusable
from eoc.store.entry import checked_ttl

if TYPE_CHECKING:
    from eoc.assemble import Assembly

STORE_FILE = "store.sqlite"
"""The per-user store's file name, in ``eoc/`` under the user's data folder."""


def user_store_path(environ: Mapping[str, str] | None = None) -> tuple[Path | None, str]:
    """The per-user store's path and ``""``, or ``None`` and why there is none here."""
    env = os.environ if environ is None else environ
    if IN_PYODIDE:
        return None, "the browser keeps no files across runs"
    xdg = env.get("XDG_DATA_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "eoc" / STORE_FILE, ""
    home = env.get("HOME", "")
    if not home or not os.path.isabs(home):  # HOME only: no guess from the password database
        return None, "neither XDG_DATA_HOME nor HOME names an absolute folder"
    return Path(home) / ".local" / "share" / "eoc" / STORE_FILE, ""


@dataclass(frozen=True)
class StoreChoice:
    """Which store a command opens: ``location`` (``None``: memory), whether it is the per-user
    default (``per_user``: it may fall back to memory), and ``note``, said on standard error when
    a default store could not be used."""

    location: str | None
    per_user: bool = False
    note: str = ""


def choose_store(
    store: str | None, no_store: bool, environ: Mapping[str, str] | None = None
) -> StoreChoice:
    """The store a command that remembers by default opens (see the module).

    ``store`` is ``--store`` (its default is ``$EOC_STORE``); ``no_store`` is ``--no-store``.
    The per-user store's folder is made here (mode 0700: the questions asked are private); when
    that fails, the choice is memory with a note.
    """
    if no_store or store == ":memory:":
        return StoreChoice(None)
    if store:
        return StoreChoice(store)
    if IN_PYODIDE:  # memory is the browser's only store: nothing to say each time
        return StoreChoice(None)
    path, why = user_store_path(environ)
    if path is None:
        return StoreChoice(None, note=memory_note("there is no per-user data folder", why))
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return StoreChoice(None, note=memory_note(f"cannot make {path.parent}", reason, path=path))
    return StoreChoice(str(path), per_user=True)


def memory_note(what: str, why: str, *, path: Path | str | None = None) -> str:
    """The line said when the per-user store cannot be used and answers stay in memory."""
    where = f"the per-user store {path}" if path is not None else "a per-user store"
    return (
        f"note: answers are kept in memory only, not in {where}: {what} ({why}); "
        "set XDG_DATA_HOME, pass --store FILE, or --no-store to silence this"
    )


def assemble_remembering(backend: Any, args: Any, err: TextIO, command: str) -> Assembly:
    """The stages in the store a command that remembers by default uses (``eoc query``,
    ``eoc serve``: ``args.store``, ``args.no_store``, ``args.ttl``): a per-user store that
    cannot be opened for writing falls back to memory, with a note on ``err``; a named one, or
    one that is damaged or of another version, is an error."""
    from eoc.assemble import assemble  # the stages, loaded only by a command that runs them

    ttl = getattr(args, "ttl", None)
    checked_ttl(ttl, "the store's TTL (--ttl)")  # a usage error before any folder is made
    choice = choose_store(args.store, args.no_store)
    note = choice.note
    try:
        # the per-user store remembers answers; the pack and graph stay as without a store
        built = assemble(backend, store=choice.location, ttl=ttl, pack_in_store=not choice.per_user)
    except StoreUnusable as exc:
        if not choice.per_user:
            raise
        note = memory_note("it cannot be opened", exc.reason, path=choice.location)
        built = assemble(backend, store=None, ttl=ttl)
    except StoreError as exc:  # damaged, or not eoc's: never skipped, so never hidden
        if not choice.per_user:
            raise
        raise type(exc)(
            f"{exc.reason} (it is the per-user store {command} remembers in by default: eoc "
            f"store check {choice.location} says what is wrong; --no-store answers without it)"
        ) from None
    if note:
        err.write(f"{command}: {note}\n")
        err.flush()
    return built


__all__ = [
    "STORE_FILE",
    "StoreChoice",
    "assemble_remembering",
    "choose_store",
    "memory_note",
    "user_store_path",
]
