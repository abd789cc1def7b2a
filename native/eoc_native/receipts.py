"""Signing and checking receipts with Ed25519 (``cryptography``): who issued an answer.

A receipt's digest proves only that its fields agree; anyone can compute one. A signature by a
host key proves which key issued it. The key is an unencrypted Ed25519 PEM file, made once::

    openssl genpkey -algorithm ed25519 -out ~/.config/eoc/host-key.pem

``eoc query --sign-key FILE`` (or ``$EOC_SIGNING_KEY``) signs every receipt it prints, and
``eoc verify --public-key HEX`` (or ``$EOC_TRUSTED_KEYS``) refuses a receipt not signed by one of
the trusted keys. The signature covers :data:`eoc.receipt.SIGNATURE_PREFIX` + the digest, and
the digest covers every field shown (receipt version 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eoc.errors import BadReceipt, ConfigError, ReceiptMismatch
from eoc.files.bounded import read_bounded
from eoc.receipt import SIGNATURE_PREFIX, Receipt
from eoc_native import require
from eoc_native.autotune.signing import configured_trusted_keys, private_key, public_key_hex

MAX_KEY_BYTES = 16 << 10
SIGNING_KEY_ENV = "EOC_SIGNING_KEY"


class HostSigner:
    """Signs receipts with one Ed25519 private key (see :class:`eoc.receipt.Signer`)."""

    def __init__(self, pem: bytes) -> None:
        self._key: Any = private_key(pem)
        self.public_key: str = public_key_hex(pem)

    @classmethod
    def from_file(cls, path: str | Path) -> HostSigner:
        """Load the key from a PEM file (read with a bound; errors say how to make one)."""
        data = read_bounded(
            Path(path).expanduser(),
            MAX_KEY_BYTES,
            what="signing key",
            error=ConfigError,
            stdin_ok=False,
        )
        try:
            return cls(data)
        except BadReceipt as exc:
            raise ConfigError(f"{path}: {exc.reason}") from None

    def sign(self, message: bytes) -> str:
        return str(self._key.sign(message).hex())

    def __repr__(self) -> str:
        return f"HostSigner(public_key={self.public_key[:16]}...)"


def verify_signature(receipt: Receipt) -> str:
    """Check a signed receipt's signature over its digest; returns the signer's key (hex).

    Raises:
        ReceiptMismatch: unsigned, or the signature does not match the digest.
    """
    ed = require("cryptography.hazmat.primitives.asymmetric.ed25519", package="cryptography")
    exceptions = require("cryptography.exceptions", package="cryptography")
    sig = receipt.signature
    if sig is None:
        raise ReceiptMismatch("this receipt is not signed: nothing vouches for who issued it")
    key = ed.Ed25519PublicKey.from_public_bytes(bytes.fromhex(sig["public_key"]))
    try:
        key.verify(bytes.fromhex(sig["value"]), SIGNATURE_PREFIX + receipt.digest.encode("ascii"))
    except exceptions.InvalidSignature:
        raise ReceiptMismatch(
            "the receipt's signature does not match its digest: it was altered or forged"
        ) from None
    return str(sig["public_key"])


def check_receipt_signature(
    receipt: Receipt, trusted_keys: list[str] | None = None
) -> tuple[str | None, bool | None]:
    """``(signer, trusted)``: the signer's key or ``None`` when unsigned; ``trusted`` is ``None``
    when no trusted key is configured (argument, else ``$EOC_TRUSTED_KEYS``).

    Raises:
        ReceiptMismatch: a bad signature; or trusted keys are configured and the receipt is
            unsigned or signed by another key (named).
    """
    keys = configured_trusted_keys(trusted_keys)
    if receipt.signature is None:
        if keys:
            raise ReceiptMismatch(
                "this receipt is unsigned, and trusted keys are configured: only a receipt "
                "signed by one of them is accepted (`eoc query --sign-key`)"
            )
        return None, None
    signer = verify_signature(receipt)
    if not keys:
        return signer, None
    if signer not in keys:
        raise ReceiptMismatch(
            f"this receipt is signed by key {signer}, which is not a trusted key "
            f"({len(keys)} configured): refused"
        )
    return signer, True


__all__ = [
    "SIGNING_KEY_ENV",
    "HostSigner",
    "check_receipt_signature",
    "verify_signature",
]
