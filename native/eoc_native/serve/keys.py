"""API keys, kept only as SHA-256 hashes.

A keys file holds one key per line, ``NAME sha256:HEX``, or ``NAME sha256:HEX admin`` for a key
that may also administer the server (``POST /v1/eoc/forget``); ``#`` starts a comment. Make a
line with ``eoc serve-key NAME`` (``--admin`` for an admin key), which prints the secret key once and the line to add. The server
never sees a key in the clear except in a request, where it hashes it and looks the hash up. Keys are 32 random bytes, so a plain SHA-256 is enough (there is nothing to
guess that a slow hash would protect).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from pathlib import Path

from eoc.errors import ConfigError
from eoc.files.bounded import read_bounded

MAX_KEYS_FILE_BYTES = 1 << 20
_LINE = re.compile(r"^([A-Za-z0-9_.@-]{1,64})\s+sha256:([0-9a-f]{64})(\s+admin)?$")
KEY_PREFIX = "eoc-"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key(name: str, *, admin: bool = False) -> tuple[str, str]:
    """A fresh secret key for ``name`` and the keys-file line that admits it (as an admin key,
    which may also forget remembered answers, when ``admin``)."""
    if not re.fullmatch(r"[A-Za-z0-9_.@-]{1,64}", name):
        raise ConfigError("a key's name is 1 to 64 letters, digits or _ . @ -")
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    return key, f"{name} sha256:{hash_key(key)}" + (" admin" if admin else "")


class ApiKeys:
    """The hashed keys a server admits, by name."""

    def __init__(self, hashed: dict[str, str], admins: frozenset[str] = frozenset()) -> None:
        self._by_hash = {h: name for name, h in hashed.items()}
        self.admins = frozenset(admins) & set(hashed)

    def is_admin(self, name: str | None) -> bool:
        """Whether the key named ``name`` is marked ``admin`` in the keys file."""
        return name is not None and name in self.admins

    def __len__(self) -> int:
        return len(self._by_hash)

    @classmethod
    def load(cls, path: str | Path) -> ApiKeys:
        """Read a keys file; a malformed line is refused with its number."""
        data = read_bounded(
            Path(path).expanduser(),
            MAX_KEYS_FILE_BYTES,
            what="API keys file",
            error=ConfigError,
            stdin_ok=False,
        )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ConfigError(f"{path}: the keys file is not UTF-8 text") from None
        hashed: dict[str, str] = {}
        admins: set[str] = set()
        for n, raw in enumerate(text.splitlines(), 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            m = _LINE.match(line)
            if m is None:
                raise ConfigError(
                    f"{path}:{n}: not a key line; each is `NAME sha256:HEX` or "
                    "`NAME sha256:HEX admin` "
                    "(make one with `eoc serve-key NAME`)"
                )
            if m.group(1) in hashed:
                raise ConfigError(f"{path}:{n}: the key name {m.group(1)!r} appears twice")
            hashed[m.group(1)] = m.group(2)
            if m.group(3):
                admins.add(m.group(1))
        if not hashed:
            raise ConfigError(
                f"{path}: the keys file holds no key (make one with `eoc serve-key NAME`)"
            )
        return cls(hashed, frozenset(admins))

    def name_of(self, key: str) -> str | None:
        """The name a presented key belongs to, or ``None``."""
        # a dict lookup by hash: timing can tell at most which hashes are near the presented
        # key's hash, and that says nothing of any key (SHA-256 is preimage resistant)
        return self._by_hash.get(hash_key(key))


__all__ = ["KEY_PREFIX", "ApiKeys", "hash_key", "new_key"]
