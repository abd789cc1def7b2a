"""Which files eoc may load code or mapped data from: only files no one else could have written.

eoc loads compiled code (its C kernels) and maps or loads cached data (tiled weights, the
embedding cache, the graph store, the tuning profile, the user's key) from files it finds by a
computable name. Where someone else can write such a file, or a folder on its way, they choose
what eoc runs: a library planted in a shared ``$EOC_CACHE_DIR`` ran its constructor as the user
who ran ``eoc query`` (issue 35). The rule, checked before every such load:

* the file is a regular file owned by the running user or by root, not writable by its group
  or by others (:func:`check_file`; with ``private=True``, as for a secret key, not readable by
  them either: ``mode & 0o077 == 0``);
* every folder from the file's parent up to ``/`` is owned by the running user or root and not
  writable by group or others, except that a folder writable by others *with the sticky bit*
  (``/tmp``, mode 1777) is accepted on the way when the entry below it on the path belongs to
  the user or root: with the sticky bit no one else may rename or delete that entry. The folder
  a file is looked up in, as :func:`check_folder` checks it, is never excepted: others could
  create names in it;
* symbolic links are resolved first (:func:`os.path.realpath`), and the real file and every
  folder on its real path are checked: a link in eoc's cache to another user's file is refused
  as that file would be. (A link's own folder needs no check beyond that: whatever it points to
  when eoc opens it is what is checked.)

A refusal raises :class:`~eoc.errors.UntrustedFile` naming the path, why, and what to do.

:func:`open_checked` opens the file first and checks what it opened (``fstat`` of the open
descriptor), so no one can swap the file between the check and the load; callers that map a
file, or load a library through ``/proc/self/fd/N``, use it.

On platforms with no other users to fear the checks pass trivially: in the browser (Pyodide,
``sys.platform == "emscripten"``, where the file system is the page's own, in memory) and where
the platform has no user ids (``os.geteuid`` missing, as on Windows).
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path

from eoc.errors import UntrustedFile

_FIX = "remove it or set EOC_CACHE_DIR to a folder only you can write to"
"""What to do, by default (the caller names something better where it knows one)."""
_WHY = "eoc loads compiled code and mapped data only from files no one else can change"


def _trivial() -> bool:
    """True where there are no other users: the browser, or no user ids at all."""
    return sys.platform == "emscripten" or not hasattr(os, "geteuid")


def _trusted_owner(uid: int) -> bool:
    return uid in (os.geteuid(), 0)


def _owner_text(subject: str, uid: int) -> str:
    return f"{subject} is owned by uid {uid}, not by you (uid {os.geteuid()}) or root"


def _refuse(reason: str, fix: str | None, *, loosen: str | None = None) -> UntrustedFile:
    """The refusal; ``loosen`` names a path of the user's own that is only too open (its mode),
    for which ``chmod`` is the first advice."""
    if fix is None and loosen is not None and os.stat(loosen).st_uid == os.geteuid():
        fix = f"run chmod go-w {loosen}, or set EOC_CACHE_DIR to a folder only you can write to"
    return UntrustedFile(f"{reason}: {_WHY}; {fix or _FIX}")


def _check_ancestors(real: str, entry_uid: int, *, what: str, fix: str | None) -> None:
    """Every folder above ``real`` (a resolved path) up to ``/``: owned by the user or root,
    and not writable by group or others unless sticky with the entry below it ours or root's."""
    below_uid = entry_uid
    child = real
    while True:
        parent = os.path.dirname(child)
        if parent == child:
            return
        st = os.lstat(parent)
        if not _trusted_owner(st.st_uid):
            raise _refuse(_owner_text(f"the folder {parent} holding {what}", st.st_uid), fix)
        if st.st_mode & 0o022 and not (st.st_mode & stat.S_ISVTX and _trusted_owner(below_uid)):
            who = "others" if st.st_mode & 0o002 else "its group"
            sticky = "" if st.st_mode & stat.S_ISVTX else ", no sticky bit"
            raise _refuse(
                f"the folder {parent} holding {what} can be written by {who} "
                f"(mode {stat.S_IMODE(st.st_mode):o}{sticky})",
                fix,
                loosen=parent,
            )
        below_uid = st.st_uid
        child = parent


def _check_stat(
    st: os.stat_result, shown: str, *, what: str, private: bool, fix: str | None
) -> None:
    """The file's own checks, on its stat: ours or root's, not writable (with ``private``, not
    readable either) by group or others, and a regular file (else an ``OSError``: a folder or a
    FIFO of the user's own is no file to load, but nothing anyone else placed)."""
    if not _trusted_owner(st.st_uid):
        raise _refuse(_owner_text(f"{what} {shown}", st.st_uid), fix)
    if not stat.S_ISREG(st.st_mode):  # a device or FIFO of root's (/dev/zero) is no file either
        kind = IsADirectoryError if stat.S_ISDIR(st.st_mode) else OSError
        raise kind(errno.EINVAL, f"{what} is not a regular file", shown)
    mode = stat.S_IMODE(st.st_mode)
    if private and mode & 0o077:
        raise _refuse(
            f"{what} {shown} can be read or written by others (mode {mode:o}, not 600)", fix
        )
    if mode & 0o022:
        who = "others" if mode & 0o002 else "its group"
        raise _refuse(f"{what} {shown} can be written by {who} (mode {mode:o})", fix)


def _shown(path: str | os.PathLike[str], real: str) -> str:
    given = os.fspath(path)
    return given if os.path.abspath(given) == real else f"{given} (a link to {real})"


def check_file(
    path: str | os.PathLike[str], *, what: str, private: bool = False, fix: str | None = None
) -> None:
    """Raise :class:`~eoc.errors.UntrustedFile` unless ``path`` (its links resolved) is a
    regular file only the running user or root could have written, in folders the same holds
    for (the module's rule). ``what`` names it in the message ("eoc's C kernels"); ``fix`` says
    what to do instead of the default advice.

    Raises:
        UntrustedFile: the file or a folder above it fails the rule.
        OSError: it cannot be looked at (``FileNotFoundError`` when missing), or it is the
            user's (or root's) but no regular file (``IsADirectoryError`` for a folder).
    """
    if _trivial():
        return
    real = os.path.realpath(path)
    st = os.stat(real)
    _check_stat(st, _shown(path, real), what=what, private=private, fix=fix)
    _check_ancestors(real, st.st_uid, what=what, fix=fix)


def open_checked(
    path: str | os.PathLike[str], *, what: str, private: bool = False, fix: str | None = None
) -> int:
    """A read-only descriptor of ``path``, after checking what was opened (its ``fstat``, so
    the file cannot be swapped between the check and its use) and the folders on its real path
    as :func:`check_file` does. The caller closes it.

    Raises:
        UntrustedFile: as :func:`check_file`.
        OSError: it cannot be opened.
    """
    real = os.path.realpath(path)
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_NONBLOCK", 0)  # a FIFO planted under the name never blocks the open
    fd = os.open(real, flags)
    try:
        if not _trivial():
            st = os.fstat(fd)
            _check_stat(st, _shown(path, real), what=what, private=private, fix=fix)
            _check_ancestors(real, st.st_uid, what=what, fix=fix)
        if flags & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def check_folder(path: str | os.PathLike[str], *, what: str, fix: str | None = None) -> None:
    """Raise :class:`~eoc.errors.UntrustedFile` unless the folder ``path`` (its links resolved)
    is owned by the running user or root and writable by no one else (a sticky folder writable
    by others is refused here: others could create names in it), and every folder above it
    passes the module's rule.

    Raises:
        UntrustedFile: it, or a folder above it, fails the rule.
        OSError: it cannot be looked at (``FileNotFoundError`` when missing), or it is the
            user's (or root's) but no folder (``NotADirectoryError``).
    """
    if _trivial():
        return
    real = os.path.realpath(path)
    st = os.stat(real)
    shown = _shown(path, real)
    if not _trusted_owner(st.st_uid):
        raise _refuse(_owner_text(f"{what} {shown}", st.st_uid), fix)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, f"{what} is not a folder", shown)
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o022:
        who = "others" if mode & 0o002 else "its group"
        raise _refuse(f"{what} {shown} can be written by {who} (mode {mode:o})", fix)
    _check_ancestors(real, st.st_uid, what=what, fix=fix)


def private_folder(path: str | os.PathLike[str], *, what: str, fix: str | None = None) -> Path:
    """The folder ``path``, made (with any missing parents) with mode 700 where missing, then
    checked as :func:`check_folder` does; used before eoc writes into a cache folder. A folder
    already there keeps its mode (700 or 755 both pass; one others can write to is refused).

    Raises:
        UntrustedFile: as :func:`check_folder`.
        OSError: it cannot be made.
    """
    p = Path(path)
    missing = []
    at = p
    while not at.exists() and not at.is_symlink() and at.parent != at:
        missing.append(at)
        at = at.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:  # another process made it first: checked below as any other
            pass
    check_folder(p, what=what, fix=fix)
    return p


__all__ = ["check_file", "check_folder", "open_checked", "private_folder"]
