"""Receipts: a SHA-256 digest that binds an answer to its cost.

The digest covers a canonical, versioned encoding of five fields::

    eoc-receipt-v1 | query id | stage | cost µJ | provenance | payload length | payload

(``|`` is a literal separator; the payload, the only free-form field, is last
and length-prefixed, so no two field tuples encode alike). Change any field and
:meth:`Receipt.verify` fails. The encoding is pure Python and identical in the
browser, so a receipt computed under Pyodide verifies natively.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from typing import Any

from eoc.cost import Provenance
from eoc.errors import BadReceipt
from eoc.query import Stage

RECEIPT_VERSION = 1
_PREFIX = b"eoc-receipt-v1|"
_HEX64 = re.compile(r"[0-9a-f]{64}")
_sha256 = hashlib.sha256


def receipt_digest(query_id: str, stage: str, cost_uj: int, provenance: str, payload: str) -> str:
    """SHA-256 hex over the canonical encoding of the five receipt fields."""
    body = payload.encode("utf-8")
    head = f"{query_id}|{stage}|{cost_uj}|{provenance}|{len(body)}|".encode("ascii")
    return _sha256(_PREFIX + head + body).hexdigest()


class Receipt:
    """A digest over (query id, stage, cost µJ, provenance, payload).

    Build one with :meth:`issue`; rebuild one from JSON with :meth:`from_dict`.
    """

    __slots__ = ("cost_uj", "digest", "payload", "provenance", "query_id", "stage")

    query_id: str
    stage: str
    cost_uj: int
    provenance: str
    payload: str
    digest: str

    def __init__(
        self,
        query_id: str,
        stage: str,
        cost_uj: int,
        provenance: str,
        payload: str,
        digest: str,
    ) -> None:
        self.query_id = query_id
        self.stage = stage
        self.cost_uj = cost_uj
        self.provenance = provenance
        self.payload = payload
        self.digest = digest

    @classmethod
    def issue(
        cls, query_id: str, stage: Stage, cost_uj: int, provenance: Provenance, payload: str
    ) -> Receipt:
        """Compute a fresh receipt for these fields."""
        s, p = stage.value, provenance.value
        return cls(
            query_id, s, cost_uj, p, payload, receipt_digest(query_id, s, cost_uj, p, payload)
        )

    def verify(self) -> bool:
        """True when the digest matches the fields (constant-time compare)."""
        try:
            expected = receipt_digest(
                self.query_id, self.stage, self.cost_uj, self.provenance, self.payload
            )
        except (AttributeError, TypeError, UnicodeError):
            return False
        return isinstance(self.digest, str) and hmac.compare_digest(expected, self.digest)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": RECEIPT_VERSION,
            "query_id": self.query_id,
            "stage": self.stage,
            "cost_uj": self.cost_uj,
            "provenance": self.provenance,
            "payload": self.payload,
            "digest": self.digest,
        }

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> Receipt:
        """Read a receipt from :meth:`to_dict` output or from ``eoc query --json`` output.

        Raises:
            BadReceipt: a field is missing or of the wrong type or form.
        """
        if not isinstance(doc, Mapping):
            raise BadReceipt("a receipt document is a JSON object: pass `eoc query --json` output")
        if "receipt" in doc and isinstance(doc["receipt"], Mapping):
            doc = doc["receipt"]
        version = doc.get("version", RECEIPT_VERSION)
        if version != RECEIPT_VERSION:
            raise BadReceipt(f"receipt version {version!r} is not known; this eoc reads version 1")
        fields: dict[str, Any] = {}
        for name, kind in (
            ("query_id", str),
            ("stage", str),
            ("cost_uj", int),
            ("provenance", str),
            ("payload", str),
            ("digest", str),
        ):
            if name not in doc:
                raise BadReceipt(
                    f"receipt has no {name!r} field: pass the whole `eoc query --json` output"
                )
            value = doc[name]
            if isinstance(value, bool) or not isinstance(value, kind):
                raise BadReceipt(
                    f"receipt field {name!r} must be {kind.__name__}, got {value!r:.40}"
                )
            fields[name] = value
        if not _HEX64.fullmatch(fields["digest"]):
            raise BadReceipt("receipt digest must be 64 lowercase hex characters")
        if not _HEX64.fullmatch(fields["query_id"]):
            raise BadReceipt("receipt query_id must be 64 lowercase hex characters")
        if fields["stage"] not in {s.value for s in Stage}:
            raise BadReceipt(
                f"receipt stage {fields['stage']!r} is not one of cache, kv, graph, neural"
            )
        if fields["provenance"] not in {p.value for p in Provenance}:
            raise BadReceipt(
                f"receipt provenance {fields['provenance']!r} is not measured or estimated"
            )
        return cls(**fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Receipt) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(self.digest)

    def __str__(self) -> str:
        return self.digest

    def __repr__(self) -> str:
        return f"Receipt({self.digest[:16]}..., stage={self.stage}, {self.cost_uj} µJ {self.provenance})"


__all__ = ["RECEIPT_VERSION", "Receipt", "receipt_digest"]
