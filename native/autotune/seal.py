"""Sealing tuning profiles with Ed25519 (``cryptography``).

The signature covers the canonical JSON of the profile without its ``signature`` field
(sorted keys, no whitespace). The public key travels in the file, so ``eoc verify`` checks
integrity on its own, and checks identity too when given the expected public key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from eoc.errors import BadReceipt, ReceiptMismatch
from native import require


def canonical(doc: Mapping[str, Any]) -> bytes:
    body = {k: v for k, v in doc.items() if k != "signature"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _private_key(pem: bytes) -> Any:
    serialization = require("cryptography.hazmat.primitives.serialization", package="cryptography")
    ed = require("cryptography.hazmat.primitives.asymmetric.ed25519", package="cryptography")
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise BadReceipt(
            f"not an unencrypted PEM private key ({exc}): make one with "
            "`openssl genpkey -algorithm ed25519 -out eoc-signing.pem`"
        ) from None
    if not isinstance(key, ed.Ed25519PrivateKey):
        raise BadReceipt("the signing key must be Ed25519: `openssl genpkey -algorithm ed25519`")
    return key


def public_key_hex(pem: bytes) -> str:
    serialization = require("cryptography.hazmat.primitives.serialization", package="cryptography")
    raw = (
        _private_key(pem)
        .public_key()
        .public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    )
    return str(raw.hex())


def sign(doc: Mapping[str, Any], pem: bytes) -> dict[str, Any]:
    """``doc`` with an Ed25519 ``signature`` field."""
    key = _private_key(pem)
    return {
        **{k: v for k, v in doc.items() if k != "signature"},
        "signature": {
            "alg": "ed25519",
            "public_key": public_key_hex(pem),
            "value": key.sign(canonical(doc)).hex(),
        },
    }


def verify(doc: Mapping[str, Any], public_key: str | None = None) -> str:
    """Check the signature; returns the signer's public key (hex).

    Raises:
        BadReceipt: the signature field is malformed.
        ReceiptMismatch: the signature does not match, or the signer is not ``public_key``.
    """
    ed = require("cryptography.hazmat.primitives.asymmetric.ed25519", package="cryptography")
    exceptions = require("cryptography.exceptions", package="cryptography")
    sig = doc.get("signature")
    if not isinstance(sig, Mapping) or sig.get("alg") != "ed25519":
        raise BadReceipt("the profile's signature is not an ed25519 signature")
    try:
        key_hex, value = str(sig["public_key"]), bytes.fromhex(str(sig["value"]))
        key = ed.Ed25519PublicKey.from_public_bytes(bytes.fromhex(key_hex))
    except (KeyError, ValueError) as exc:
        raise BadReceipt(f"malformed signature: {exc}") from None
    if public_key is not None and public_key.lower() != key_hex.lower():
        raise ReceiptMismatch("signed by another key than the one expected")
    try:
        key.verify(value, canonical(doc))
    except exceptions.InvalidSignature:
        raise ReceiptMismatch("the signature does not match: this profile was altered") from None
    return key_hex


__all__ = ["canonical", "public_key_hex", "sign", "verify"]
