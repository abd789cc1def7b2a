"""``eoc graph load FILE``: load facts into the Oxigraph store the native graph stage answers from.

The store is a folder of Oxigraph's (RocksDB's) files, mapped and read as the graph stage's
answers, so it is used only where no one but the user or root could have written it (issue 35,
:mod:`eoc.files.trust`): ``eoc graph load`` makes a missing folder with mode 700 and checks it
(:func:`~eoc.files.trust.private_folder`), and the graph stage checks the folder before opening it
(:func:`~eoc.files.trust.check_folder`: owned by the user or root, writable by no one else, in
folders no one else can write to). A folder that fails *raises*
:class:`~eoc.errors.UntrustedFile` naming it: the store holds the answers eoc gives, not a cache
that only saves time, so it is never silently dropped or rebuilt.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from eoc.errors import StoreUnusable
from eoc.files.trust import check_folder, private_folder
from eoc_native import cache_dir

GRAPH_STORE_ENV = "EOC_GRAPH_STORE"
_FIX = f"remove it, or set {GRAPH_STORE_ENV} (or EOC_CACHE_DIR) to a folder only you can write to"


def default_store_path() -> Path:
    """``$EOC_GRAPH_STORE``, else ``graph`` under eoc's cache folder (``$EOC_CACHE_DIR``,
    default ``~/.cache/eoc``)."""
    given = os.environ.get(GRAPH_STORE_ENV)
    if given:
        return Path(given).expanduser()
    return cache_dir() / "graph"


def open_seeded(path: Path) -> Any:
    """The Oxigraph store at ``path``, made and given the knowledge pack if it is new."""
    from eoc.knowledge import triples
    from eoc_native.graph.oxigraph import OxigraphStore

    if path.exists() and not path.is_dir():
        raise StoreUnusable(f"{path} is a file, not an Oxigraph store folder")
    private_folder(path, what="the graph store", fix=_FIX)
    store = OxigraphStore(path)
    if len(store) == 0:
        store.add_all(triples())
    return store


def open_for_answers() -> Any | None:
    """The store ``eoc graph load`` filled, opened read-only (many eoc processes may read it at
    once), or ``None`` when there is none. ``$EOC_GRAPH_STORE`` naming a missing or empty
    folder is an error; the default folder missing is not."""
    path = default_store_path()
    filled = path.is_dir() and any(path.iterdir())
    if not filled:
        if os.environ.get(GRAPH_STORE_ENV):
            raise StoreUnusable(
                f"${GRAPH_STORE_ENV} names {path}, which holds no graph store: "
                "run eoc graph load FILE to make one, or unset it"
            )
        return None  # no store: Oxigraph is not even imported
    check_folder(path, what="the graph store", fix=_FIX)
    from eoc_native.graph.oxigraph import OxigraphStore

    return OxigraphStore(path, read_only=True)


def cmd_graph_load(args: argparse.Namespace, out: TextIO) -> int:
    path = Path(args.store).expanduser() if args.store else default_store_path()
    store = open_seeded(path)
    try:
        t0 = time.perf_counter()
        last = [t0]

        def progress(n: int) -> None:
            now = time.perf_counter()
            if now - last[0] >= 2:
                print(f"  {n:,} triples stored ...", file=sys.stderr, flush=True)
                last[0] = now

        added = store.load(args.file, progress=progress)
        seconds = time.perf_counter() - t0
        total = len(store)
    finally:
        store.close()
    if args.json:
        import json

        doc = {"file": str(args.file), "added": added, "seconds": round(seconds, 3)}
        out.write(json.dumps({**doc, "store": str(path), "triples": total}) + "\n")
    else:
        out.write(
            f"loaded {added:,} new triples from {args.file} in {seconds:.1f} s\n"
            f"the store at {path} holds {total:,} triples; eoc query answers from it\n"
        )
    return 0


def register(sub: Any, add: Any) -> None:
    """Add ``graph load`` to the eoc command line (the ``eoc.commands`` entry point)."""
    p: argparse.ArgumentParser = add(
        "graph", "the native graph store (Oxigraph on disk): load facts into it", _usage
    )
    inner = p.add_subparsers(dest="graph_command", metavar="{load}")
    load = inner.add_parser(
        "load",
        help="load an .nt, .ttl, .nq or .tsv file (streaming)",
        description="Load an N-Triples, Turtle, N-Quads or TSV file into the Oxigraph store "
        f"(${GRAPH_STORE_ENV}, default ~/.cache/eoc/graph), checked whole before it is stored; "
        "made with the knowledge pack if new.",
    )
    load.add_argument("file", help="the file to load")
    load.add_argument(
        "--store", default=None, help=f"the store folder (default ${GRAPH_STORE_ENV})"
    )
    load.add_argument("--json", action="store_true", help="print JSON instead of text")
    load.set_defaults(fn=cmd_graph_load)


def _usage(args: argparse.Namespace, out: TextIO) -> int:
    out.write("usage: eoc graph load FILE [--store DIR]\n")
    return 2


__all__ = [
    "GRAPH_STORE_ENV",
    "cmd_graph_load",
    "default_store_path",
    "open_for_answers",
    "open_seeded",
    "register",
]
