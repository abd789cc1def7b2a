"""``eoc serve``: build the server from the command line and run it (``eoc serve-key``: keycmd.py)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from typing import Any, TextIO

from eoc.assemble import default_backend, signer
from eoc.cascade import Cascade
from eoc.chat.request import MAX_OUTPUT_TOKENS, ChatDefaults
from eoc.cli.options import add_model, add_reuse, add_sign_key, add_store
from eoc.cli.userstore import assemble_remembering
from eoc.errors import ConfigError, MissingExtra
from eoc.query import Stage
from eoc.stages.neural import DEFAULT_MAX_TOKENS, TakesMaxTokens
from eoc_native import require
from eoc_native.serve.app import EocServer, ServeConfig, create_app
from eoc_native.serve.breaker import CircuitBreaker, GuardedBackend
from eoc_native.serve.budget import Budgets
from eoc_native.serve.connections import (
    DEFAULT_HEADER_TIMEOUT_S,
    DEFAULT_KEEP_ALIVE_S,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_REQUESTS,
    guarded_protocol,
)
from eoc_native.serve.embeddings import Embeddings
from eoc_native.serve.keys import ApiKeys

WARN_EXPOSED = (
    "WARNING: eoc serve is listening on {host}, beyond this machine, and takes no API keys: "
    "anyone who can reach it can spend its joules and read its cache. Pass --api-keys FILE "
    "(make keys with `eoc serve-key NAME`), or bind 127.0.0.1."
)


OLD_KEY_VARIABLE = "EOC_UPSTREAM_API_KEY"
"""The upstream key's former name, still read (with a note) when EOC_OPENAI_API_KEY is unset."""


def _upstream_key(err: TextIO) -> str | None:
    """The upstream's API key from a deprecated variable (``None``: the backend reads
    ``EOC_OPENAI_API_KEY``, else ``OPENAI_API_KEY``, itself)."""
    old = os.environ.get(OLD_KEY_VARIABLE)
    if not old or os.environ.get("EOC_OPENAI_API_KEY"):
        return None
    print(
        f"eoc serve: note: {OLD_KEY_VARIABLE} is deprecated; name the upstream's key "
        "EOC_OPENAI_API_KEY, as eoc's other OpenAI-server variables are (read as before for now)",
        file=err,
        flush=True,
    )
    return old


def aliases_of(given: list[str] | None, upstream: bool) -> dict[str, str]:
    """``--model-alias NAME=UPSTREAM_ID`` options as a table (name -> the upstream's id).

    Raises:
        ConfigError: a malformed or repeated alias, or aliases without ``--upstream``.
    """
    if not given:
        return {}
    if not upstream:
        raise ConfigError(
            "--model-alias names a model of the upstream server: pass --upstream URL too "
            "(the model run here is named with --model-id)"
        )
    table: dict[str, str] = {}
    for item in given:
        name, sep, target = item.partition("=")
        name, target = name.strip(), target.strip()
        if not sep or not name or not target or len(name) > 256 or len(target) > 256:
            raise ConfigError(
                f"--model-alias {item[:80]!r}: write NAME=UPSTREAM_ID, e.g. smol=/models/smol.gguf"
            )
        if name in table:
            raise ConfigError(f"--model-alias names {name!r} twice")
        table[name] = target
    return table


def _backend(args: argparse.Namespace, err: TextIO) -> tuple[Any, str]:
    """The neural backend and the model name clients send."""
    if args.model and args.upstream:
        raise ConfigError("pass --model (a model run here) or --upstream (a server), not both")
    aliases = aliases_of(getattr(args, "model_alias", None), bool(args.upstream))
    if args.upstream:
        from eoc_native.remote import OpenAIBackend

        remote = OpenAIBackend(
            args.upstream,
            model=args.upstream_model,
            max_tokens=args.max_tokens or DEFAULT_MAX_TOKENS,
            api_key=_upstream_key(err),
            total_timeout=args.request_timeout,
            joules_per_token=_joules(args.upstream_joules),
        )
        remote.aliases = aliases
        name = args.model_id or remote.model
        if name in aliases:
            raise ConfigError(f"--model-alias {name!r} is the served model's own name")
        return remote, name
    backend = default_backend(model=args.model)
    if args.max_tokens is not None and isinstance(backend, TakesMaxTokens):
        backend.max_tokens = args.max_tokens  # a server without a model still serves its stores
    path = getattr(backend, "path", None)
    name = args.model_id or (path.stem if path is not None else backend.name)
    return backend, name


def _joules(given: str | None) -> tuple[float, float] | None:
    """``--upstream-joules IN,OUT`` as two numbers (checked by the backend)."""
    if given is None:
        return None
    try:
        a, b = (float(x) for x in given.split(","))
    except ValueError:
        raise ConfigError(
            "--upstream-joules is two numbers, joules per token read and written: e.g. 0.05,0.5"
        ) from None
    return a, b


def build(args: argparse.Namespace, err: TextIO) -> EocServer:
    """Everything ``eoc serve`` runs, built and checked before it listens."""
    sign = signer(args.sign_key)
    keys = ApiKeys.load(args.api_keys) if args.api_keys else None
    budgets = Budgets(
        global_j=args.budget_joules,
        per_key_j=args.key_budget_joules,
        window_s=args.budget_window,
    )
    backend, model_id = _backend(args, err)
    breaker = CircuitBreaker(args.breaker_failures, args.breaker_backoff)
    guarded = GuardedBackend(backend, breaker)
    load = getattr(backend, "load", None)
    if callable(load):
        print(f"eoc serve: loading {backend.name} ...", file=err, flush=True)
        load()
    built = assemble_remembering(guarded, args, err, "eoc serve")
    note = built.store.note() if built.store is not None and built.store.note else ""
    if note:
        print(f"eoc serve: {note}", file=err, flush=True)
    # a kv with an embedding model remembers a model's answer after the reply (eoc.behind): the
    # embedding (MiniLM: about 1 ms of a core in int8, 13 in float32) is not the client's wait
    dense = any(getattr(s, "dense", False) for s in built.stages if s.stage is Stage.KV)
    cascade = Cascade(
        built.stages, signer=sign, reuse=args.reuse or "paraphrase", kv_after_reply=dense
    )
    defaults = ChatDefaults(
        model_id,
        max_tokens=getattr(backend, "max_tokens", args.max_tokens or DEFAULT_MAX_TOKENS),
        temperature=float(getattr(backend, "temperature", 0.0) or 0.0),
        cache_sampled=args.cache_sampled,
        facts_under_system_prompts=args.facts_under_system_prompts,
        partitions=not getattr(args, "no_partitions", False),
    )
    config = ServeConfig(
        model_id=model_id,
        defaults=defaults,
        max_body_bytes=args.max_body_bytes,
        request_timeout_s=args.request_timeout,
        max_pending=args.max_pending,
        workers=args.workers,
        public_key=None if sign is None else sign.public_key,
        store=_shown(built.location),
        forwards=bool(args.upstream),
        aliases=tuple(getattr(backend, "aliases", {})),
        access_log="off" if args.quiet else args.log_format,
        cors_origins=tuple(args.allow_origin or ()),
        allowed_hosts=tuple(args.allow_host or ()),
        store_health=None if built.store is None else built.health,
        store_pending=None if built.store is None else built.pending,
        store_unconfirmed=None if built.store is None else built.unconfirmed,
    )
    return create_app(
        cascade,
        config,
        keys=keys,
        budgets=budgets,
        breaker=breaker,
        embeddings=_embeddings(built.stages[0], cascade, err),
    )


def _embeddings(cache: Any, cascade: Cascade, err: TextIO) -> Embeddings | None:
    """The native embeddings (``POST /v1/embeddings``), where the MiniLM files are installed
    (its weights load on the first text to embed); else ``None``, said once."""
    from eoc_native.semantic.minilm import MiniLMEmbedder

    try:
        embedder = MiniLMEmbedder()
    except MissingExtra as exc:
        print(f"eoc serve: note: no native embeddings: {exc.reason}", file=err, flush=True)
        return None
    return Embeddings(cache, cascade, embedder)


def _shown(location: str | None) -> str:
    """A store's location as the banner shows it: a server's without its password."""
    if location is None:
        return "memory"
    if "://" in location and "@" in location:
        scheme, _, rest = location.partition("://")
        return f"{scheme}://{rest.rpartition('@')[2]}"
    return location


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def banner(host: str, port: int, app: Any) -> str:
    """The line ``eoc serve`` prints once it is ready: where, the model, the store, the meter and
    whether its figures can be measured, how many API keys it takes."""
    meter = app.cascade.meter
    n_keys = len(app.keys) if app.keys else 0
    return (
        f"eoc serve: http://{host}:{port}/v1  model {app.config.model_id!r}"
        + (f" (or {', '.join(map(repr, app.config.aliases))})" if app.config.aliases else "")
        + ", "
        f"store {app.config.store}, meter {meter.name} "
        f"({'live' if app.cascade.live else 'not live: every figure is estimated'}), "
        f"{n_keys or 'no'} API key{'' if n_keys == 1 else 's'}"
    )


def exposure_warning(host: str, keys: object | None) -> str | None:
    """The warning printed when the server listens beyond this machine and takes no keys."""
    if keys is None and not _loopback(host):
        return WARN_EXPOSED.format(host=host)
    return None


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    uvicorn: Any = require("uvicorn", why="eoc serve")
    for name in (
        "max_body_bytes",
        "max_pending",
        "workers",
        "port",
        "max_connections",
        "keep_alive",
        "max_requests_per_connection",
    ):
        if getattr(args, name) < (0 if name == "port" else 1):
            raise ConfigError(f"--{name.replace('_', '-')} must be at least 1")
    if not 0 < args.header_timeout <= 3600:
        raise ConfigError("--header-timeout must be a positive number of seconds (at most 3600)")
    if args.max_tokens is not None and not 1 <= args.max_tokens <= MAX_OUTPUT_TOKENS:
        raise ConfigError(f"--max-tokens must be from 1 to {MAX_OUTPUT_TOKENS}")
    if not 0 < args.request_timeout <= 86_400:
        raise ConfigError("--request-timeout must be a positive number of seconds (at most a day)")
    app = build(args, sys.stderr)
    warning = exposure_warning(args.host, app.keys)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    print(banner(args.host, args.port, app), file=sys.stderr, flush=True)
    import gc

    gc.collect()
    gc.freeze()  # what start-up loaded (the pack, the model) is never traversed again by the GC
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level="warning",
        http=guarded_protocol(
            header_timeout_s=args.header_timeout,
            max_connections=args.max_connections,
            max_requests=args.max_requests_per_connection,
        ),
        timeout_keep_alive=args.keep_alive,
        lifespan="on",
        access_log=False,  # uvicorn formats each access line even when the level drops it
    )
    return 0


def register(sub: Any, add: Any) -> None:
    """Add ``serve`` to the eoc command line (the ``eoc.commands`` entry point)."""
    p = add("serve", "run an OpenAI-compatible, energy-metered answer server (native)", cmd_serve)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    add_model(p)
    p.add_argument(
        "--upstream",
        default=None,
        help="an OpenAI-compatible server to ask instead, e.g. http://127.0.0.1:8081/v1 (its key "
        "in $EOC_OPENAI_API_KEY); requests eoc does not answer itself (tools, JSON mode, n, "
        "logprobs, other fields) are forwarded to it as sent",
    )
    p.add_argument(
        "--model-alias",
        action="append",
        metavar="NAME=UPSTREAM_ID",
        help="a stable name clients may send as model for one of the upstream's models "
        "(repeatable), e.g. smol=/models/SmolLM2.gguf",
    )
    p.add_argument(
        "--upstream-model", default=None, help="the upstream's model (default: the first it lists)"
    )
    p.add_argument(
        "--upstream-joules",
        default=None,
        metavar="IN,OUT",
        help="the upstream model's joules per token read and written, as you know them "
        "(declared, never measured: the answers' estimates and the kv judge's energy rule read "
        "them; default: $EOC_OPENAI_JOULES_PER_TOKEN, else eoc's small-model figures)",
    )
    p.add_argument(
        "--model-id",
        default=None,
        help="the model name clients send (default: the model file's name, or the upstream's)",
    )
    add_store(p, per_user=True)
    add_sign_key(p)
    p.add_argument(
        "--quiet", action="store_true", help="no access-log line per request on standard error"
    )
    p.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="the access log's lines: text (default) or one JSON object each",
    )
    p.add_argument(
        "--api-keys",
        default=os.environ.get("EOC_API_KEYS"),
        help="file of hashed API keys (`eoc serve-key NAME` makes lines); none: no keys asked",
    )
    p.add_argument(
        "--budget-joules", type=float, default=None, help="global joule budget per window"
    )
    p.add_argument(
        "--key-budget-joules", type=float, default=None, help="joule budget per API key per window"
    )
    p.add_argument(
        "--budget-window",
        type=float,
        default=3600.0,
        help="budget window in seconds (default 3600)",
    )
    p.add_argument(
        "--allow-origin",
        action="append",
        help="a web origin whose pages may call the server (CORS; repeatable), e.g. the "
        "demo's http://127.0.0.1:8000",
    )
    p.add_argument(
        "--cache-sampled", action="store_true", help="also cache sampled answers without a seed"
    )
    p.add_argument(
        "--facts-under-system-prompts",
        action="store_true",
        help="let kv and graph answer a fact (an answer no model made) under a system prompt: "
        "say so only when your clients' system prompts never ask for another language or "
        "format (off: a request with a system prompt gets facts from the model)",
    )
    add_reuse(p, of="the store's policy (a request may ask for stricter with x-eoc-reuse)")
    p.add_argument(
        "--no-partitions",
        action="store_true",
        help="serve a model's answer to a request with a system prompt or its own parameters "
        "only to that exact request again, never to a paraphrase in its partition (eoc before "
        "partitions; bench/replay.py --before compares)",
    )
    p.add_argument(
        "--max-body-bytes", type=int, default=1 << 20, help="largest request body (default 1 MiB)"
    )
    p.add_argument(
        "--request-timeout",
        type=float,
        default=600.0,
        help="longest wait for an answer, s (default 600)",
    )
    p.add_argument(
        "--max-pending",
        type=int,
        default=64,
        help="answers worked on at once before 503 (default 64)",
    )
    p.add_argument("--workers", type=int, default=4, help="threads resolving queries (default 4)")
    p.add_argument(
        "--header-timeout",
        type=float,
        default=DEFAULT_HEADER_TIMEOUT_S,
        help="seconds a request's headers may take to arrive whole, then 408 "
        f"(default {DEFAULT_HEADER_TIMEOUT_S:g})",
    )
    p.add_argument(
        "--max-connections",
        type=int,
        default=DEFAULT_MAX_CONNECTIONS,
        help="open connections kept; past it the slowest to send its headers is closed, or the "
        f"new one refused with 503 (default {DEFAULT_MAX_CONNECTIONS})",
    )
    p.add_argument(
        "--keep-alive",
        type=int,
        default=DEFAULT_KEEP_ALIVE_S,
        help=f"seconds an idle connection is kept (default {DEFAULT_KEEP_ALIVE_S})",
    )
    p.add_argument(
        "--max-requests-per-connection",
        type=int,
        default=DEFAULT_MAX_REQUESTS,
        help=f"requests one connection may make before it is closed (default {DEFAULT_MAX_REQUESTS})",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        help="a name clients reach this server by (repeatable): requests whose Host header "
        "names anything but an IP address, localhost or these are refused, so a web page "
        "cannot reach a local server through DNS rebinding",
    )
    p.add_argument(
        "--breaker-failures",
        type=int,
        default=5,
        help="backend failures in a row that open the breaker (default 5)",
    )
    p.add_argument(
        "--breaker-backoff",
        type=float,
        default=1.0,
        help="first breaker backoff, s (doubles to 60; default 1)",
    )


__all__ = ["build", "cmd_serve", "register"]
