"""The ``eoc`` command: each subcommand lives in its own module and registers itself the same
way, ``register(sub, add)``: eoc's own (query, meter, hit-cost, verify, bench, store) from
this package, the native extra's and a third party's (serve, graph, autotune) through the
``eoc.commands`` entry point.

Exit codes: 0 ok, 1 refusal (a figure or receipt eoc will not vouch for),
2 usage (bad arguments or bad input).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from eoc import plugins
from eoc._compat import IN_PYODIDE
from eoc._version import __version__
from eoc.cli.common import Add, Command, emit
from eoc.errors import EocError, MissingExtra

CORE_COMMANDS = {
    "query": "eoc.cli.query",
    "meter": "eoc.cli.meter",
    "hit-cost": "eoc.cli.hitcost",
    "calibrate": "eoc.cli.hitcost",
    "verify": "eoc.cli.verify",
    "bench": "eoc.cli.bench",
    "store": "eoc.cli.store",
}
"""eoc's own commands, by name (and alias), and the module that registers each."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser. Commands other packages add (``eoc serve``, ``eoc graph``) are loaded
    only when ``command`` is none of eoc's own (or is ``None``: help lists them all), so a
    ``eoc query`` does not import the server."""
    parser = argparse.ArgumentParser(
        prog="eoc",
        description="Answer queries through cache -> kv -> graph -> neural and charge each in joules.",
    )
    parser.add_argument("--version", action="version", version=f"eoc {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(
        name: str, help_: str, fn: Command, aliases: Sequence[str] = ()
    ) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_, aliases=list(aliases))
        p.add_argument("--json", action="store_true", help="print JSON instead of text")
        p.set_defaults(fn=fn)
        return p

    for module in dict.fromkeys(CORE_COMMANDS.values()):
        importlib.import_module(module).register(sub, add)
    if command is None or command not in CORE_COMMANDS:
        _plugin_commands(sub, add)
    return parser


def _plugin_commands(sub: Any, add: Add) -> None:
    """Commands other packages add through the ``eoc.commands`` entry point.

    Each entry point names ``register(sub, add)``. One that cannot load (its extra is not
    installed) still gets a command, which says what to install.
    """
    if IN_PYODIDE:
        return
    for name, register in plugins.load_all(plugins.COMMANDS):
        if isinstance(register, ImportError):
            why = f"eoc {name} needs packages not installed ({register}): {plugins.NATIVE_HINT}"

            def missing(_args: argparse.Namespace, _out: TextIO, why: str = why) -> int:
                raise MissingExtra(why)

            add(name, f"(not installed: {register})", missing)
            continue
        register(sub, add)


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the CLI; returns the exit code (the console script exits with it)."""
    stdout = out if out is not None else sys.stdout
    given = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(next((a for a in given if not a.startswith("-")), None))
    try:
        args = parser.parse_args(given)
    except SystemExit as exc:  # argparse: --help, --version (0) or usage errors (2)
        return int(exc.code or 0)
    try:
        code: int = args.fn(args, stdout)
        return code
    except EocError as exc:
        if getattr(args, "json", False):
            emit(stdout, True, {"error": type(exc).__name__, "reason": exc.reason}, [])
        else:
            print(f"eoc {args.command}: {type(exc).__name__}: {exc.reason}", file=sys.stderr)
        return exc.exit_code


__all__ = ["CORE_COMMANDS", "build_parser", "main"]


QUICK_EXIT = frozenset({"query"})
"""Commands whose process ends without tearing down the interpreter's objects once its work is
done: ``eoc query`` has closed its stores and written its answer by then, and the teardown of a
model answer's objects (the tokenizer's 100,000 strings, the pack, the indexes) took about
60 ms of a 0.85 s process on the development VM."""


def run() -> None:
    """The ``eoc`` console script: :func:`main`, then the process ends with its code. After a
    :data:`QUICK_EXIT` command, once the exit handlers have run (the embedding cache's flush
    among them) and standard output and error are flushed, it ends at once; where a thread other
    than the main one still runs, or a stream cannot be flushed, it exits the usual way."""
    code = main()
    command = next((a for a in sys.argv[1:] if not a.startswith("-")), None)
    if command in QUICK_EXIT:
        _quick_exit(code)
    sys.exit(code)


def _quick_exit(code: int) -> None:
    """End the process with ``code`` now (see :func:`run`), or return to exit the usual way."""
    import atexit
    import os
    import threading

    main_thread = threading.main_thread()
    if any(t is not main_thread and not t.daemon for t in threading.enumerate()):
        return  # a thread still working (or an executor's idle one): the usual exit joins it
    try:
        atexit._run_exitfuncs()  # what a usual exit runs before it tears the objects down
        sys.stdout.flush()  # a pipe's buffer, which the teardown would have written
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # a closed or broken stream: the usual exit reports it as it always has
    os._exit(code)
