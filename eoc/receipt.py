"""Receipts: a SHA-256 digest that binds an answer to everything shown about its cost.

Version 2 (issued now) covers every field a user is shown, each length-prefixed in a fixed
order, so no two field tuples encode alike::

    "eoc-receipt-v2" then, for each of eoc version, query id, stage, cost µJ, provenance,
    counter, counter kind, basis, payload:  "|" + len(UTF-8 bytes) + ":" + bytes
    (an absent counter or counter kind is written "|~")

Change any field — the basis, the counter, its kind — and :meth:`Receipt.verify` fails.
Version 1 (eoc 0.1) covered only query id, stage, µJ, provenance and payload; such receipts
still verify, and say they are v1 (their counter, kind and basis were never bound).

A digest proves *consistency*, not origin: anyone can compute one. Origin needs a signature:
:meth:`Receipt.signed` adds an Ed25519 signature over the digest made by a :class:`Signer`
(natively, a host key); checking it needs the native extra (``eoc verify --public-key``).

The encoding is pure Python and identical in the browser, so a receipt computed under
Pyodide verifies natively.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from eoc._version import __version__
from eoc.cost import METERING_KINDS, CounterKind, JouleCost, Provenance
from eoc.errors import BadReceipt, ConfigError, ReceiptMismatch
from eoc.query import Stage

RECEIPT_VERSION = 2
KNOWN_VERSIONS = (1, 2)
SIGNATURE_PREFIX = b"eoc-receipt-signature-v1|"
"""What a receipt signature signs: this prefix, then the digest (64 ASCII hex characters)."""

_V1_PREFIX = b"eoc-receipt-v1|"
_V2_PREFIX = b"eoc-receipt-v2"
_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX128 = re.compile(r"[0-9a-f]{128}")
_STAGES = frozenset(s.value for s in Stage)
_PROVENANCES = frozenset(p.value for p in Provenance)
_KINDS = frozenset(k.value for k in CounterKind)
_METERING = frozenset(k.value for k in METERING_KINDS)
_MAX_FIELD = 1 << 21  # no receipt field is longer than 2 MiB (payloads are at most 1 MiB)
_sha256 = hashlib.sha256


@runtime_checkable
class Signer(Protocol):
    """Signs receipts: ``public_key`` is the Ed25519 public key (hex); ``sign`` returns hex."""

    public_key: str

    def sign(self, message: bytes) -> str: ...


def checked_signer(signer: object) -> None:
    """Check that ``signer`` can sign receipts.

    Raises:
        ConfigError: it has no ``sign(message: bytes)``.
    """
    if not callable(getattr(signer, "sign", None)):
        raise ConfigError("signer must have sign(message: bytes) -> signature (hex)")


def receipt_digest(query_id: str, stage: str, cost_uj: int, provenance: str, payload: str) -> str:
    """The version 1 digest: SHA-256 hex over query id, stage, µJ, provenance and payload."""
    body = payload.encode("utf-8")
    head = f"{query_id}|{stage}|{cost_uj}|{provenance}|{len(body)}|".encode("ascii")
    return _sha256(_V1_PREFIX + head + body).hexdigest()


def receipt_digest_v2(
    *,
    eoc_version: str,
    query_id: str,
    stage: str,
    cost_uj: int,
    provenance: str,
    counter: str | None,
    counter_kind: str | None,
    basis: str,
    payload: str,
) -> str:
    """The version 2 digest: SHA-256 hex over every field shown (see the module docstring)."""
    h = _sha256(_V2_PREFIX)
    for value in (
        eoc_version,
        query_id,
        stage,
        str(cost_uj),
        provenance,
        counter,
        counter_kind,
        basis,
        payload,
    ):
        if value is None:
            h.update(b"|~")
        else:
            data = value.encode("utf-8")
            h.update(b"|%d:" % len(data))
            h.update(data)
    return h.hexdigest()


@dataclass(frozen=True, slots=True, init=False, eq=False, repr=False)
class Receipt:
    """A digest over an answer and its cost, optionally signed.

    Build one with :meth:`issue`; rebuild one from JSON with :meth:`from_dict`.
    """

    version: int
    query_id: str
    stage: str
    cost_uj: int
    provenance: str
    counter: str | None
    counter_kind: str | None
    basis: str | None
    eoc_version: str | None
    payload: str
    digest: str
    signature: Mapping[str, str] | None

    def __init__(
        self,
        query_id: str,
        stage: str,
        cost_uj: int,
        provenance: str,
        payload: str,
        digest: str,
        *,
        version: int = RECEIPT_VERSION,
        counter: str | None = None,
        counter_kind: str | None = None,
        basis: str | None = None,
        eoc_version: str | None = None,
        signature: Mapping[str, str] | None = None,
    ) -> None:
        _set = object.__setattr__  # frozen: set once, here
        _set(self, "version", version)
        _set(self, "query_id", query_id)
        _set(self, "stage", stage)
        _set(self, "cost_uj", cost_uj)
        _set(self, "provenance", provenance)
        _set(self, "counter", counter)
        _set(self, "counter_kind", counter_kind)
        _set(self, "basis", basis)
        _set(self, "eoc_version", eoc_version)
        _set(self, "payload", payload)
        _set(self, "digest", digest)
        _set(self, "signature", signature)

    @classmethod
    def issue(cls, query_id: str, stage: Stage, cost: JouleCost, payload: str) -> Receipt:
        """A fresh version 2 receipt for an answer and its cost."""
        if not isinstance(cost, JouleCost):
            raise BadReceipt("a receipt is issued for a JouleCost (with its provenance and basis)")
        impossible = _impossible(stage.value, cost.provenance.value)
        if impossible:
            raise BadReceipt(impossible.replace("this receipt says", "a receipt would say"))
        kind = None if cost.counter_kind is None else cost.counter_kind.value
        fields: dict[str, Any] = {
            "eoc_version": __version__,
            "query_id": query_id,
            "stage": stage.value,
            "cost_uj": cost.uj,
            "provenance": cost.provenance.value,
            "counter": cost.counter,
            "counter_kind": kind,
            "basis": cost.basis,
            "payload": payload,
        }
        return cls(
            query_id,
            stage.value,
            cost.uj,
            cost.provenance.value,
            payload,
            receipt_digest_v2(**fields),
            version=2,
            counter=cost.counter,
            counter_kind=kind,
            basis=cost.basis,
            eoc_version=__version__,
        )

    def expected_digest(self) -> str:
        """The digest these fields should have (raises on fields of the wrong type)."""
        if self.version == 1:
            return receipt_digest(
                self.query_id, self.stage, self.cost_uj, self.provenance, self.payload
            )
        return receipt_digest_v2(
            eoc_version=self.eoc_version or "",
            query_id=self.query_id,
            stage=self.stage,
            cost_uj=self.cost_uj,
            provenance=self.provenance,
            counter=self.counter,
            counter_kind=self.counter_kind,
            basis=self.basis or "",
            payload=self.payload,
        )

    def verify(self) -> bool:
        """True when the digest matches the fields (constant-time compare) and a MEASURED v2
        receipt names a counter of a metering kind. Says nothing of who issued it."""
        try:
            expected = self.expected_digest()
        except (AttributeError, TypeError, UnicodeError, ValueError):
            return False
        if _impossible(self.stage, self.provenance):
            return False
        if self.version == 2 and self.provenance == Provenance.MEASURED.value:
            if not self.counter or self.counter_kind not in _METERING:
                return False
        return isinstance(self.digest, str) and hmac.compare_digest(expected, self.digest)

    def signed(self, signer: Signer) -> Receipt:
        """A copy carrying ``signer``'s Ed25519 signature over the digest."""
        value = signer.sign(SIGNATURE_PREFIX + self.digest.encode("ascii"))
        signature = {"alg": "ed25519", "public_key": str(signer.public_key), "value": value}
        return dataclasses.replace(self, signature=signature)

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "version": self.version,
            "query_id": self.query_id,
            "stage": self.stage,
            "cost_uj": self.cost_uj,
            "provenance": self.provenance,
        }
        if self.version >= 2:
            doc.update(
                counter=self.counter,
                counter_kind=self.counter_kind,
                basis=self.basis,
                eoc_version=self.eoc_version,
            )
        doc["payload"] = self.payload
        doc["digest"] = self.digest
        if self.signature is not None:
            doc["signature"] = dict(self.signature)
        return doc

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> Receipt:
        """Read a receipt from :meth:`to_dict` output or from ``eoc query --json`` output.

        Strict: the version is required (1 or 2, an integer), every field has exactly its
        type (``true`` is not a number, ``500.0`` is not whole µJ), unknown fields are
        refused, and a MEASURED v2 receipt must name its counter and a metering kind.

        Raises:
            BadReceipt: a field is missing, unknown, or of the wrong type or form.
        """
        if not isinstance(doc, Mapping):
            raise BadReceipt("a receipt document is a JSON object: pass `eoc query --json` output")
        if "receipt" in doc:
            doc = doc["receipt"]
            if not isinstance(doc, Mapping):
                raise BadReceipt("the 'receipt' field must be an object")
        if "version" not in doc:
            raise BadReceipt(
                "receipt has no 'version' field: pass the whole `eoc query --json` output"
            )
        version = doc["version"]
        if type(version) is not int or version not in KNOWN_VERSIONS:
            raise BadReceipt(
                f"receipt version {version!r} is not known; this eoc reads versions 1 and 2"
            )
        spec: list[tuple[str, type, bool]] = [
            ("query_id", str, False),
            ("stage", str, False),
            ("cost_uj", int, False),
            ("provenance", str, False),
            ("payload", str, False),
            ("digest", str, False),
        ]
        if version == 2:
            spec += [
                ("counter", str, True),
                ("counter_kind", str, True),
                ("basis", str, False),
                ("eoc_version", str, False),
            ]
        allowed = {name for name, _, _ in spec} | {"version", "signature"}
        unknown = sorted(str(k) for k in doc if k not in allowed)
        if unknown:
            raise BadReceipt(f"receipt v{version} has unknown fields {unknown[:5]}: it was altered")
        fields: dict[str, Any] = {}
        for name, kind, nullable in spec:
            if name not in doc:
                raise BadReceipt(
                    f"receipt has no {name!r} field: pass the whole `eoc query --json` output"
                )
            value = doc[name]
            if value is None and nullable:
                fields[name] = None
                continue
            if type(value) is not kind:
                raise BadReceipt(
                    f"receipt field {name!r} must be {kind.__name__}, got {value!r:.40}"
                )
            if isinstance(value, str) and len(value) > _MAX_FIELD:
                raise BadReceipt(f"receipt field {name!r} is longer than any receipt holds")
            fields[name] = value
        _check_forms(fields, version)
        signature = _check_signature(doc.get("signature"))
        extra = {
            k: fields.pop(k)
            for k in ("counter", "counter_kind", "basis", "eoc_version")
            if k in fields
        }
        return cls(**fields, version=version, signature=signature, **extra)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Receipt) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(self.digest)

    def __str__(self) -> str:
        return self.digest

    def __repr__(self) -> str:
        return (
            f"Receipt(v{self.version} {self.digest[:16]}..., stage={self.stage}, "
            f"{self.cost_uj} µJ {self.provenance})"
        )


def _check_forms(fields: Mapping[str, Any], version: int) -> None:
    if not _HEX64.fullmatch(fields["digest"]):
        raise BadReceipt("receipt digest must be 64 lowercase hex characters")
    if not _HEX64.fullmatch(fields["query_id"]):
        raise BadReceipt("receipt query_id must be 64 lowercase hex characters")
    if fields["stage"] not in _STAGES:
        raise BadReceipt(
            f"receipt stage {fields['stage']!r:.40} is not one of cache, kv, graph, neural"
        )
    if fields["provenance"] not in _PROVENANCES:
        raise BadReceipt(
            f"receipt provenance {fields['provenance']!r:.40} is not measured or estimated"
        )
    if not 1 <= fields["cost_uj"] < 1 << 63:
        raise BadReceipt(f"receipt cost_uj {fields['cost_uj']} is not a cost (1 µJ or more)")
    impossible = _impossible(fields["stage"], fields["provenance"])
    if impossible:
        raise ReceiptMismatch(impossible)
    if version < 2:
        return
    kind = fields["counter_kind"]
    if kind is not None and kind not in _KINDS:
        raise BadReceipt(f"receipt counter_kind {kind!r:.40} is not a known kind")
    if fields["provenance"] == Provenance.MEASURED.value and (
        not fields["counter"] or kind not in _METERING
    ):
        # well-formed, but it cannot be true: a refusal (exit 1) like any receipt that fails
        raise ReceiptMismatch(
            "a MEASURED receipt must name the live counter it was read from and its kind: "
            "this one does not, so it was altered or forged"
        )


def _impossible(stage: object, provenance: object) -> str:
    """Why a receipt's stage and provenance cannot both be true ("" when they can): cache, kv
    and graph answers are never bracketed by the meter, so never MEASURED (docs/design.md §4)."""
    if provenance == Provenance.MEASURED.value and stage != Stage.NEURAL.value:
        return (
            f"this receipt says a {stage} answer was MEASURED, which eoc never does (cache, kv "
            "and graph answers are never bracketed by a counter): it was altered or forged"
        )
    return ""


def _check_signature(sig: object) -> Mapping[str, str] | None:
    if sig is None:
        return None
    if not isinstance(sig, Mapping) or set(sig) != {"alg", "public_key", "value"}:
        raise BadReceipt("a receipt signature is an object with alg, public_key and value")
    if sig["alg"] != "ed25519":
        raise BadReceipt(f"receipt signature algorithm {sig['alg']!r:.20} is not ed25519")
    key, value = sig["public_key"], sig["value"]
    if not (isinstance(key, str) and _HEX64.fullmatch(key)):
        raise BadReceipt("a receipt signature's public_key is 64 lowercase hex characters")
    if not (isinstance(value, str) and _HEX128.fullmatch(value)):
        raise BadReceipt("a receipt signature's value is 128 lowercase hex characters")
    return {"alg": "ed25519", "public_key": key, "value": value}


__all__ = [
    "KNOWN_VERSIONS",
    "RECEIPT_VERSION",
    "SIGNATURE_PREFIX",
    "Receipt",
    "Signer",
    "receipt_digest",
    "receipt_digest_v2",
]
