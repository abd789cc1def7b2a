"""``eoc query``: answer one prompt and print stage, payload, cost and receipt."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, TextIO

from eoc.assemble import model_backend, signer
from eoc.cascade import Cascade
from eoc.cli.common import Add, emit
from eoc.cli.options import add_model, add_reuse, add_sign_key, add_store
from eoc.cli.userstore import assemble_remembering
from eoc.meter.counter import Counter
from eoc.meter.trust import effective_kind
from eoc.query import Query, Stage
from eoc.response import Response
from eoc.stages.kv import EXPLAIN_FLOOR, KVStage
from eoc.stages.neural import LoadsWithProgress


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
    gen = r.generation
    if gen is not None and r.replayed:
        if gen.known:
            counts = (
                "" if gen.tokens is None else f", {gen.tokens[0]} tokens in, {gen.tokens[1]} out"
            )
            took = "" if gen.seconds is None else f", {gen.seconds:.2f} s"
            lines.append(
                f"replay : finish {gen.finish_reason}{counts}{took} (when the model made it)"
            )
        elif gen.seconds is None:
            lines.append(
                "replay : finish reason and usage unknown (remembered before eoc kept them)"
            )
        else:
            lines.append(
                "replay : finish reason and usage unknown (the model's server did not say them)"
            )
        if gen.receipt is not None:
            lines.append(f"made : {gen.receipt} (the answer's receipt when the model made it)")
    if r.stage is not Stage.NEURAL:  # a model's own answer avoided nothing
        lines.insert(4, f"avoided : {avoided_line(r)}")
    if r.receipt.signature is not None:
        lines.append(f"signed : ed25519 key {r.receipt.signature['public_key']}")
    return lines


NO_AVOIDED_FIGURE = (
    "no figure: no language model is configured, so nothing says what one would have spent"
)


def avoided_line(r: Response) -> str:
    """What an answer given without the model avoided (:mod:`eoc.ledger`), in one line."""
    a = r.avoided
    if a is None:
        return NO_AVOIDED_FIGURE
    return f"{a} ({a.net_uj:,} µJ net of this answer's cost): {a.basis}"


class _ModelWork:
    """Progress on ``err`` while a local model loads, then its answer as it is produced."""

    def __init__(self, err: TextIO) -> None:
        self.err = err
        self.tty = bool(getattr(err, "isatty", lambda: False)())
        self._step = -1
        self._started = False

    def progress(self, what: str, fraction: float) -> None:
        step = int(fraction * 10)  # a line per 10 % off a terminal, a redrawn one on it
        shown = what if fraction <= 0 else f"{what} ({fraction:.0%})"  # 0: a step that starts
        if self.tty:
            self.err.write(f"\r\x1b[2K{shown}")
        elif step != self._step:
            self.err.write(f"{shown}\n")
        self._step = step
        if fraction >= 1.0 and self.tty:
            self.err.write("\n")
        self.err.flush()

    def piece(self, text: str) -> None:
        if not self._started:
            if self.tty and self._step == 0:  # a step that started is still on the line
                self.err.write("\n")
            self.err.write("neural : ")
            self._started = True
        self.err.write(text)
        self.err.flush()

    def done(self) -> None:
        if self._started:
            self.err.write("\n")
            self.err.flush()


def cmd_query(args: argparse.Namespace, out: TextIO) -> int:
    err: Any = _Marked(sys.stderr) if args.meter == "fake" else sys.stderr
    show = None if args.json else _ModelWork(err)
    # built once, and a bad prompt refused before any store is opened
    query = Query(args.prompt, on_piece=None if show is None else show.piece, reuse=args.reuse)
    sign = signer(args.sign_key)
    backend = model_backend(args.model, args.max_tokens)
    if show is not None and isinstance(backend, LoadsWithProgress):
        backend.progress = show.progress
    built = assemble_remembering(backend, args, err, "eoc query")
    meter = fake_meter() if args.meter == "fake" else None
    with Cascade(built.stages, meter, signer=sign) as cascade:
        try:
            response = cascade.resolve(query)
        finally:
            if show is not None:
                show.done()
        kv = next((s for s in built.stages if s.stage is Stage.KV), None)
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
    emit(out, args.json, doc, lines)
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


def register(sub: object, add: Add) -> None:
    """``eoc query``."""
    query = add("query", "answer one prompt and print stage, payload, cost and receipt", cmd_query)
    query.add_argument("prompt", help="the question")
    query.add_argument(
        "--explain",
        action="store_true",
        help="also show the kv stage's nearest stored questions and why each was served or refused",
    )
    add_sign_key(query)
    add_model(query)
    add_store(query, per_user=True)
    add_reuse(query, of="this question's policy")
    query.add_argument(
        "--meter",
        choices=("auto", "fake"),
        default="auto",
        help="auto: the live energy counter here, if any; fake: a simulated "
        f"{FAKE_METER_WATTS:g} W counter, to see the measured path on a host without one "
        "(every line, JSON field and receipt says fake)",
    )


__all__ = [
    "FAKE_MARK",
    "FAKE_METER_NOTE",
    "NO_AVOIDED_FIGURE",
    "avoided_line",
    "cmd_query",
    "fake_meter",
    "format_response",
    "register",
]
