"""``eoc serve`` and ``eoc serve-key``: build the server from the command line and run it."""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from typing import Any, TextIO

from eoc.cascade import Cascade
from eoc.chat import MAX_OUTPUT_TOKENS, ChatDefaults
from eoc.errors import ConfigError
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
from eoc_native.serve.keys import ApiKeys, new_key

WARN_EXPOSED = (
    "WARNING: eoc serve is listening on {host}, beyond this machine, and takes no API keys: "
    "anyone who can reach it can spend its joules and read its cache. Pass --api-keys FILE "
    "(make keys with `eoc serve-key NAME`), or bind 127.0.0.1."
)


def _backend(args: argparse.Namespace) -> tuple[Any, str]:
    """The neural backend and the model name clients send."""
    if args.model and args.upstream:
        raise ConfigError("pass --model (a model run here) or --upstream (a server), not both")
    if args.upstream:
        from eoc_native.remote import OpenAIBackend

        remote = OpenAIBackend(
            args.upstream,
            model=args.upstream_model,
            max_tokens=args.max_tokens,
            api_key=os.environ.get("EOC_UPSTREAM_API_KEY"),
            total_timeout=args.request_timeout,
        )
        return remote, args.model_id or remote.model
    from eoc.knowledge import default_backend

    backend = default_backend(model=args.model)
    if hasattr(backend, "max_tokens"):
        backend.max_tokens = args.max_tokens
    path = getattr(backend, "path", None)
    name = args.model_id or (path.stem if path is not None else backend.name)
    return backend, name


def _stages(backend: Any, store: str | None, model_id: str) -> list[Any]:
    """Cache, kv, graph and neural: in memory, in a SQLite file, or in PostgreSQL."""
    from eoc_native.store.postgres import is_postgres_url, pg_stages

    if is_postgres_url(store):
        assert store is not None
        return pg_stages(backend, store, model=model_id)
    from eoc.knowledge import default_stages

    return default_stages(backend, store=store)


def _store_health(stages: list[Any]) -> Any:
    """A function saying why the shared store is down ("" when up), for a PostgreSQL store."""
    pg = getattr(stages[0], "store", None)
    if pg is None or not hasattr(pg, "healthy"):
        return None
    return lambda: "" if pg.healthy else (pg.last_error or "PostgreSQL is unreachable")


def _store_pending(stages: list[Any]) -> Any:
    """A function counting the writes held until a PostgreSQL store is back (or None)."""
    pg = getattr(stages[0], "store", None)
    if pg is None or not hasattr(pg, "pending_writes"):
        return None
    return lambda: pg.pending_writes


def build(args: argparse.Namespace, err: TextIO) -> EocServer:
    """Everything ``eoc serve`` runs, built and checked before it listens."""
    signer = None
    if args.sign_key:
        from eoc_native.receipts import HostSigner

        signer = HostSigner.from_file(args.sign_key)
    keys = ApiKeys.load(args.api_keys) if args.api_keys else None
    budgets = Budgets(
        global_j=args.budget_joules,
        per_key_j=args.key_budget_joules,
        window_s=args.budget_window,
    )
    backend, model_id = _backend(args)
    breaker = CircuitBreaker(args.breaker_failures, args.breaker_backoff)
    guarded = GuardedBackend(backend, breaker)
    load = getattr(backend, "load", None)
    if callable(load):
        print(f"eoc serve: loading {backend.name} ...", file=err, flush=True)
        load()
    stages = _stages(guarded, args.store, model_id)
    cascade = Cascade(stages, signer=signer)
    defaults = ChatDefaults(
        model_id,
        max_tokens=getattr(backend, "max_tokens", args.max_tokens),
        temperature=float(getattr(backend, "temperature", 0.0) or 0.0),
        cache_sampled=args.cache_sampled,
    )
    config = ServeConfig(
        model_id=model_id,
        defaults=defaults,
        max_body_bytes=args.max_body_bytes,
        request_timeout_s=args.request_timeout,
        max_pending=args.max_pending,
        workers=args.workers,
        public_key=None if signer is None else signer.public_key,
        store=args.store or "memory",
        cors_origins=tuple(args.allow_origin or ()),
        allowed_hosts=tuple(args.allow_host or ()),
        store_health=_store_health(stages),
        store_pending=_store_pending(stages),
    )
    return create_app(cascade, config, keys=keys, budgets=budgets, breaker=breaker)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
    if not 1 <= args.max_tokens <= MAX_OUTPUT_TOKENS:
        raise ConfigError(f"--max-tokens must be from 1 to {MAX_OUTPUT_TOKENS}")
    if not 0 < args.request_timeout <= 86_400:
        raise ConfigError("--request-timeout must be a positive number of seconds (at most a day)")
    app = build(args, sys.stderr)
    warning = exposure_warning(args.host, app.keys)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    meter = app.cascade.meter
    print(
        f"eoc serve: http://{args.host}:{args.port}/v1  model {app.config.model_id!r}, "
        f"store {app.config.store}, meter {meter.name} "
        f"({'live' if app.cascade.live else 'not live: every figure is estimated'}), "
        f"{len(app.keys) if app.keys else 'no'} API keys",
        file=sys.stderr,
        flush=True,
    )
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


def cmd_serve_key(args: argparse.Namespace, out: TextIO) -> int:
    key, line = new_key(args.name)
    print(f"secret key (shown once; give it to the client): {key}", file=sys.stderr)
    print(line, file=out)
    return 0


def register(sub: Any, add: Any) -> None:
    """Add ``serve`` and ``serve-key`` to the eoc command line (the ``eoc.commands`` entry point)."""
    p = add("serve", "run an OpenAI-compatible, energy-metered answer server (native)", cmd_serve)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    p.add_argument(
        "--model",
        default=None,
        help="a GGUF model run in this process (default $EOC_MODEL or SmolLM2)",
    )
    p.add_argument(
        "--upstream",
        default=None,
        help="an OpenAI-compatible server to ask instead, e.g. http://127.0.0.1:8081/v1 (key in $EOC_UPSTREAM_API_KEY)",
    )
    p.add_argument(
        "--upstream-model", default=None, help="the upstream's model (default: the first it lists)"
    )
    p.add_argument(
        "--model-id",
        default=None,
        help="the model name clients send (default: the model file's name, or the upstream's)",
    )
    p.add_argument(
        "--max-tokens", type=int, default=256, help="default most tokens per answer (default 256)"
    )
    p.add_argument(
        "--store",
        default=os.environ.get("EOC_STORE"),
        help="SQLite file for cache, kv and graph (default $EOC_STORE; none: in memory)",
    )
    p.add_argument(
        "--sign-key",
        default=os.environ.get("EOC_SIGNING_KEY"),
        help="Ed25519 key (PEM) that signs every receipt; its public key is served",
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
    k = add(
        "serve-key",
        "make an API key for eoc serve: prints the secret once and the keys-file line",
        cmd_serve_key,
    )
    k.add_argument("name", help="the key's name (1-64 letters, digits, _ . @ -)")


__all__ = ["build", "cmd_serve", "cmd_serve_key", "register"]
