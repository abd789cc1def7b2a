"""``eoc serve-key NAME``: make an API key for ``eoc serve``."""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from eoc_native.serve.keys import new_key


def cmd_serve_key(args: argparse.Namespace, out: TextIO) -> int:
    key, line = new_key(args.name, admin=args.admin)
    print(f"secret key (shown once; give it to the client): {key}", file=sys.stderr)
    print(line, file=out)
    return 0


def register(sub: object, add: Any) -> None:
    """Add ``serve-key`` to the eoc command line (the ``eoc.commands`` entry point)."""
    k = add(
        "serve-key",
        "make an API key for eoc serve: prints the secret once and the keys-file line",
        cmd_serve_key,
    )
    k.add_argument("name", help="the key's name (1-64 letters, digits, _ . @ -)")
    k.add_argument(
        "--admin",
        action="store_true",
        help="an admin key: it may also forget remembered answers (POST /v1/eoc/forget)",
    )


__all__ = ["cmd_serve_key", "register"]
