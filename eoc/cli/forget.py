"""``eoc store forget``: forget remembered answers by question, stage and age, or one answer by
the receipt it was made with (:mod:`eoc.store.forget`).

It opens the store as ``eoc query`` does (``--store``: a SQLite file or ``postgresql://...``;
default ``$EOC_STORE``, else the per-user store ``eoc query`` remembers in, if there is one),
deletes the entries every criterion picks, and says how many it removed from each stage (the
kv's split into the shared partition and requests' own), and how the other processes or
replicas sharing the store learn of it.
"""

from __future__ import annotations

import argparse
import os
from typing import Any, TextIO

from eoc.cli.common import emit
from eoc.cli.userstore import user_store_path
from eoc.errors import ConfigError
from eoc.store.forget import STAGES, forget_in, forget_of


def cmd_store_forget(args: argparse.Namespace, out: TextIO) -> int:
    from eoc.assemble import kv_options, open_stages
    from eoc.store.sqlite import LISTEN_EVERY_S

    named = args.receipt if args.receipt is not None else args.response_id
    if args.receipt is not None and args.response_id is not None:
        raise ConfigError("name the answer once: --receipt or --response-id, not both")
    what = forget_of(args.question, args.stage, args.older_than, answer=named)  # before opening
    store = args.store or _per_user_store()
    parts = open_stages(store, kv_options())
    where: dict[str, dict[str, int]] = {}
    try:
        counts = forget_in(parts.cache, parts.kv, what, where=where)
    finally:
        parts.close()
    said = ", ".join(
        f"{n} {stage} {'entry' if n == 1 else 'entries'}"
        + (
            f" ({', '.join(f'{k} {v}' for k, v in where[stage].items())})"
            if stage in where and n
            else ""
        )
        for stage, n in counts.items()
    )
    others = (
        "every replica drops them from memory at once (told through PostgreSQL)"
        if store.startswith(("postgresql://", "postgres://"))
        else "every process sharing the file drops them from memory within "
        f"{LISTEN_EVERY_S:g} s of its next lookup"
    )
    doc = {"store": store, "forgot": counts, "where": where, "what": what.describe()}
    lines = [f"forgot : {said} ({what.describe()})", f"store : {store}"]
    if any(counts.values()):
        lines.append(f"others : {others}")
    if what.answer is not None and not any(counts.values()):
        lines.append(
            "note : no answer is kept under that name: give the receipt the answer was made with "
            "(eoc query prints it as 'made', eoc serve as eoc.generation.receipt), or its question"
        )
    emit(out, args.json, doc, lines)
    return 0


def _per_user_store() -> str:
    """The per-user store ``eoc query`` remembers in (:mod:`eoc.cli.userstore`), if it exists:
    forgetting never makes one."""
    path, why = user_store_path()
    if path is None:
        raise ConfigError(
            f"name the store to forget from: --store FILE or postgresql://... (no per-user "
            f"store: {why})"
        )
    if not path.is_file():
        raise ConfigError(
            f"name the store to forget from: --store FILE or postgresql://... (the per-user "
            f"store {path} does not exist: eoc query has remembered nothing there)"
        )
    return str(path)


def add_forget(store_sub: Any) -> None:
    """Add ``forget`` to ``eoc store``'s subcommands."""
    forget = store_sub.add_parser(
        "forget",
        help="forget remembered answers by question, stage and age, or one answer by its receipt "
        "(criteria combine: all must hold); prints how many it removed from each stage",
    )
    forget.add_argument("--question", help="the exact text of a question whose answers to forget")
    forget.add_argument(
        "--receipt",
        metavar="DIGEST",
        help="forget the one model answer made with this receipt (64 hex digits, or the first 32 "
        "or more): the receipt eoc query printed when the model answered, or its 'made' line on "
        "a replay",
    )
    forget.add_argument(
        "--response-id",
        metavar="ID",
        help="forget the one model answer an eoc serve response gave (chatcmpl-...-a<32 hex>)",
    )
    forget.add_argument("--stage", choices=STAGES, help="forget from this stage only")
    forget.add_argument(
        "--older-than",
        metavar="DURATION",
        help="forget entries stored at least this long ago (30d, 12h, 90m, 45s); entries "
        "stored before eoc recorded their age are never matched by age",
    )
    forget.add_argument(
        "--store",
        default=os.environ.get("EOC_STORE") or None,
        help="the store to forget from: a SQLite file, or postgresql://... with the native extra "
        "(default $EOC_STORE, else the per-user store eoc query remembers in)",
    )
    forget.add_argument("--json", action="store_true", help="print JSON instead of text")
    forget.set_defaults(fn=cmd_store_forget)


__all__ = ["add_forget", "cmd_store_forget"]
