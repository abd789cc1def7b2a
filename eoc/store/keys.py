"""The user's secret key, for keyed MACs over what eoc keeps on disk (store rows, cache files).

A CRC or a plain digest only says a file is whole: whoever can write the file can recompute
it (issue 35: a layout file edited with its CRC recomputed silently changed a model's output).
A MAC keyed with a secret that lives outside the store or cache, readable only by its owner,
says the file was written by this user's eoc.

* The key file: ``$EOC_KEY_FILE``, else ``$XDG_CONFIG_HOME/eoc/key`` (an absolute
  ``XDG_CONFIG_HOME`` only), else ``~/.config/eoc/key``. One line of 64 hex digits (32 random
  bytes from :mod:`secrets`), mode 600 in a folder made with mode 700.
* :func:`load_key` makes it on first use (``O_CREAT | O_EXCL``: where another process made it
  first, theirs is read), checks it with :func:`eoc.files.trust.check_file` (``private=True``:
  owned by the user or root, not readable or writable by group or others, in folders no one
  else can write to), reads at most 256 bytes, and keeps it per path for the process.
* A key file that is not one line of 64 hex digits is an :class:`~eoc.errors.UntrustedFile`
  as well (it is not a key eoc made; the message says to remove it so a new one is made: what
  was signed with the old key is then rebuilt or refused by its owner, never trusted).
* :func:`derive` gives each purpose its own key, :func:`key_id` names a key without revealing
  it (so a file can record which key signed it), and :func:`mac` is HMAC-SHA256 with the
  purpose's key over length-prefixed parts (``a`` + ``bc`` never MACs as ``ab`` + ``c``).

In the browser (Pyodide) the key lives on the page's in-memory file system like any other file,
and :mod:`eoc.files.trust`'s checks pass trivially there.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
from collections.abc import Mapping
from pathlib import Path

from eoc.errors import UntrustedFile
from eoc.files.trust import check_file, private_folder

KEY_ENV = "EOC_KEY_FILE"
KEY_BYTES = 32
MAX_KEY_FILE_BYTES = 256
"""The most of a key file read (the key is 65 bytes with its newline)."""

_cache: dict[str, bytes] = {}
_lock = threading.Lock()


def key_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the user's key is: ``$EOC_KEY_FILE``, else ``$XDG_CONFIG_HOME/eoc/key`` (absolute
    only), else ``~/.config/eoc/key``."""
    env = os.environ if environ is None else environ
    named = env.get(KEY_ENV, "").strip()
    if named:
        return Path(named).expanduser()
    xdg = env.get("XDG_CONFIG_HOME", "").strip()
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "eoc" / "key"
    return Path("~/.config/eoc/key").expanduser()


def _fix(path: Path) -> str:
    return (
        f"remove {path} (eoc makes a new key: caches the old one signed are rebuilt, stores it "
        "signed refused) "
        f"or set {KEY_ENV} to a key file only you can read"
    )


def _create(path: Path) -> None:
    """Write a new key at ``path`` unless a file is there already (another process's)."""
    private_folder(path.parent, what="the folder of eoc's key", fix=_fix(path))
    try:
        fd = os.open(
            path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o600
        )
    except FileExistsError:
        return
    try:
        os.write(fd, (secrets.token_hex(KEY_BYTES) + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)


def _read(path: Path) -> bytes:
    check_file(path, what="eoc's key file", private=True, fix=_fix(path))
    with open(path, "rb") as f:
        raw = f.read(MAX_KEY_FILE_BYTES + 1)
    text = raw.strip()
    if len(raw) > MAX_KEY_FILE_BYTES or len(text) != 2 * KEY_BYTES:
        raise UntrustedFile(
            f"eoc's key file {path} does not hold one key of 64 hex digits: {_fix(path)}"
        )
    try:
        return bytes.fromhex(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise UntrustedFile(
            f"eoc's key file {path} does not hold one key of 64 hex digits: {_fix(path)}"
        ) from None


def load_key(path: str | os.PathLike[str] | None = None, *, create: bool = True) -> bytes:
    """The user's key (32 bytes), from ``path`` (default :func:`key_path`), made first when
    missing and ``create``; read once per path in a process.

    Raises:
        UntrustedFile: the key file or its folder fails :mod:`eoc.files.trust`'s rule
            (``private``), or the file holds no key.
        FileNotFoundError: it is missing and ``create`` is false.
        OSError: it cannot be made or read.
    """
    p = Path(path).expanduser() if path is not None else key_path()
    name = os.path.abspath(p)
    with _lock:
        key = _cache.get(name)
        if key is not None:
            return key
        if create and not p.exists():
            _create(p)
        key = _read(p)
        _cache[name] = key
        return key


def forget_keys() -> None:
    """Drop the keys this process read (a test that changes the key file calls it)."""
    with _lock:
        _cache.clear()


def derive(key: bytes, purpose: str) -> bytes:
    """The key for one purpose: HMAC-SHA256(key, ``b"eoc key/" + purpose``)."""
    return hmac.new(key, b"eoc key/" + purpose.encode("utf-8"), hashlib.sha256).digest()


def key_id(key: bytes) -> str:
    """A name for ``key`` that does not reveal it: the first 16 hex digits of
    ``derive(key, "id")``."""
    return derive(key, "id").hex()[:16]


def mac(key: bytes, purpose: str, *parts: bytes) -> str:
    """HMAC-SHA256 (hex) with :func:`derive`'s key for ``purpose`` over ``parts``, each
    prefixed with its length (8 bytes, big-endian)."""
    h = hmac.new(derive(key, purpose), digestmod=hashlib.sha256)
    for part in parts:
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.hexdigest()


__all__ = ["KEY_ENV", "derive", "forget_keys", "key_id", "key_path", "load_key", "mac"]
