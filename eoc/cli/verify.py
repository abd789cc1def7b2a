"""``eoc verify``: check an answer's receipt, or a signed tuning profile."""

from __future__ import annotations

import argparse
import os
from typing import Any, TextIO

from eoc import plugins
from eoc._compat import IN_PYODIDE
from eoc.answerdoc import check_answer_document, parse_answer_text
from eoc.cli.common import Add, emit, plugin
from eoc.errors import BadJson, BadReceipt, MissingExtra, ReceiptMismatch
from eoc.files.bounded import decode_utf8, read_bounded
from eoc.receipt import Receipt

MAX_RECEIPT_BYTES = 4 << 20


def _read_doc(source: str) -> Any:
    """The document in ``source`` (JSON, or a stream's server-sent events): read with a bound,
    parsed strictly."""
    try:
        text = decode_utf8(read_bounded(source, MAX_RECEIPT_BYTES, what="receipt"), what="receipt")
    except BadJson as exc:
        raise BadReceipt(f"{exc.reason}: pass `eoc query --json` output") from None
    return parse_answer_text(text)


def check_document(doc: Any) -> Receipt:
    """Verify an answer's receipt in any shape eoc writes it (:mod:`eoc.answerdoc`).

    Raises:
        BadReceipt: the document cannot be read as an answer or receipt.
        ReceiptMismatch: the digest, a field the answer repeats or the text shown does not match.
    """
    return check_answer_document(doc)


def _native_verify(what: str) -> Any:
    if IN_PYODIDE:
        raise MissingExtra(f"checking {what} needs the native extra, which the browser lacks")
    seal = plugin(plugins.VERIFIERS, "profile", f"checking {what}")
    receipts = plugin(plugins.VERIFIERS, "receipts", f"checking {what}")
    return seal, receipts


def _verify_profile(doc: dict[str, Any], args: argparse.Namespace, out: TextIO) -> int:
    seal, _ = _native_verify("a tuning profile")
    lines, report = seal.describe_profile(doc, args.public_key or None)
    if not report.get("signed") and not args.allow_unsigned:
        raise ReceiptMismatch(
            "this tuning profile is not signed: make one with `eoc autotune --sign-key` "
            "(or pass --allow-unsigned to check its consistency only)"
        )
    emit(out, args.json, {"ok": True, "kind": "tuning-profile", **report}, lines)
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
    emit(
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


def register(sub: object, add: Add) -> None:
    """``eoc verify``."""
    verify = add(
        "verify",
        "check an answer's receipt (from `eoc query --json`, or eoc serve's answer, stream or "
        "`eoc` object), or a signed tuning profile",
        cmd_verify,
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


__all__ = ["MAX_RECEIPT_BYTES", "check_document", "cmd_verify", "register"]
