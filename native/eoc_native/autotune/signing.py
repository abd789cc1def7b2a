"""Sealing with Ed25519 (``cryptography``), and saying who sealed: tuning profiles (here, for
:mod:`eoc_native.autotune.profile`) and receipts (the host keys of :mod:`eoc_native.receipts`).

The signature covers the canonical JSON of the profile without its ``signature`` field
(sorted keys, no whitespace). The public key travels in the file, so a valid signature proves
only that the file is as *some* key signed it: anyone can alter a profile and sign it again
with their own key. Origin is checked only against *trusted keys* (Ed25519 public keys, hex),
given as an argument or in ``$EOC_TRUSTED_KEYS`` (comma-separated):

* trusted keys configured: an unsigned profile, or one signed by any other key, is refused
  (:class:`~eoc.errors.ReceiptMismatch`, naming the signer);
* none configured: a profile is accepted, and reported as "signed by K (not checked against a
  trusted key)" or "unsigned". Nothing here ever calls such a profile trusted.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eoc.errors import BadReceipt, ConfigError, ReceiptMismatch
from eoc_native import require

TRUSTED_KEYS_ENV = "EOC_TRUSTED_KEYS"
_KEY_HEX = re.compile(r"[0-9a-f]{64}")


def canonical(doc: Mapping[str, Any]) -> bytes:
    """The bytes a signature covers: ``doc`` without ``signature``, sorted, compact."""
    body = {k: v for k, v in doc.items() if k != "signature"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def private_key(pem: bytes) -> Any:
    """The Ed25519 private key in ``pem`` (an unencrypted PEM file's bytes)."""
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
    """The Ed25519 public key (hex) of a PEM private key."""
    serialization = require("cryptography.hazmat.primitives.serialization", package="cryptography")
    raw = (
        private_key(pem)
        .public_key()
        .public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    )
    return str(raw.hex())


def sign(doc: Mapping[str, Any], pem: bytes) -> dict[str, Any]:
    """``doc`` with an Ed25519 ``signature`` field."""
    key = private_key(pem)
    return {
        **{k: v for k, v in doc.items() if k != "signature"},
        "signature": {
            "alg": "ed25519",
            "public_key": public_key_hex(pem),
            "value": key.sign(canonical(doc)).hex(),
        },
    }


def verify(doc: Mapping[str, Any], public_key: str | None = None) -> str:
    """Check the signature; returns the signer's public key (hex, lower case).

    Raises:
        BadReceipt: the signature field is malformed.
        ReceiptMismatch: the signature does not match, or the signer is not ``public_key``.
    """
    ed = require("cryptography.hazmat.primitives.asymmetric.ed25519", package="cryptography")
    exceptions = require("cryptography.exceptions", package="cryptography")
    sig = doc.get("signature")
    if not isinstance(sig, Mapping) or sig.get("alg") != "ed25519":
        raise BadReceipt("the profile's signature is not an ed25519 signature")
    key_hex, value_hex = sig.get("public_key"), sig.get("value")
    if not isinstance(key_hex, str) or not isinstance(value_hex, str):
        raise BadReceipt("malformed signature: public_key and value must be hex strings")
    try:
        key = ed.Ed25519PublicKey.from_public_bytes(bytes.fromhex(key_hex))
        value = bytes.fromhex(value_hex)
    except ValueError as exc:
        raise BadReceipt(f"malformed signature: {exc}") from None
    key_hex = key_hex.lower()
    if public_key is not None and public_key.strip().lower() != key_hex:
        raise ReceiptMismatch(
            f"signed by another key than the one expected: by {key_hex}, not {public_key}"
        )
    try:
        key.verify(value, canonical(doc))
    except exceptions.InvalidSignature:
        raise ReceiptMismatch("the signature does not match: this profile was altered") from None
    return key_hex


@dataclass(frozen=True)
class SignatureCheck:
    """Who signed a document, and whether that key is trusted.

    ``signer`` is the public key (hex) whose valid signature the document carries, ``None``
    when it is unsigned. ``trusted`` is ``None`` when no trusted keys were configured (so the
    signer was not checked against any), else whether the signer is one of them
    (:func:`check_signature` refuses rather than return ``False``).
    """

    signer: str | None
    trusted: bool | None

    def describe(self) -> str:
        """One honest line: which key signed it and whether that was checked."""
        if self.signer is None:
            return "unsigned: nothing vouches for who wrote it"
        head = f"signature valid, signed by key {self.signer}"
        if self.trusted is None:
            return f"{head} — not checked against a trusted key (set {TRUSTED_KEYS_ENV})"
        if self.trusted:
            return f"{head} — trusted (matches a configured key)"
        return f"{head} — NOT a trusted key"


def configured_trusted_keys(keys: Sequence[str] | None = None) -> tuple[str, ...]:
    """The configured trusted keys: ``keys`` when given, else ``$EOC_TRUSTED_KEYS`` when set.

    Raises:
        ConfigError: a key is not 64 hex digits, or keys were given (or the variable is set) but
            hold none: a misspelt key, ``--public-key ""`` or ``EOC_TRUSTED_KEYS=","`` (an unset
            shell variable, most often) must not switch checking off.
    """
    source = "the trusted keys given"
    if keys is None:
        if TRUSTED_KEYS_ENV not in os.environ:
            return ()
        keys = os.environ[TRUSTED_KEYS_ENV].split(",")
        source = f"${TRUSTED_KEYS_ENV}"
    if isinstance(keys, str):  # one key passed bare would otherwise split into characters
        keys = [keys]
    out: list[str] = []
    for raw in keys:
        if not isinstance(raw, str):
            raise ConfigError(f"{source}: a trusted key must be hex text, got {raw!r:.40}")
        key = raw.strip().lower()
        if not key:
            continue
        if not _KEY_HEX.fullmatch(key):
            raise ConfigError(
                f"{source}: {raw.strip()!r:.80} is not an Ed25519 public key (64 hex digits)"
            )
        out.append(key)
    if not out and (keys or source != "the trusted keys given"):
        raise ConfigError(
            f"{source} holds no key ({', '.join(repr(k) for k in keys)[:80] or 'empty'}): an empty "
            "key would switch checking off. Pass the signer's public key (64 hex digits), or "
            f"unset {TRUSTED_KEYS_ENV} and pass no --public-key to check consistency only"
        )
    return tuple(out)


def check_signature(
    doc: Mapping[str, Any], trusted_keys: Sequence[str] | None = None
) -> SignatureCheck:
    """Check ``doc``'s signature against the trusted keys (argument, else the environment).

    Raises:
        BadReceipt: the signature field is malformed.
        ReceiptMismatch: the signature does not match; or trusted keys are configured and the
            document is unsigned or signed by another key (the error names that key).
    """
    keys = configured_trusted_keys(trusted_keys)
    if not isinstance(doc, Mapping):
        raise BadReceipt("not a signed document: the document is not a JSON object")
    if "signature" not in doc:
        if keys:
            # ReceiptMismatch, not NotMeasured: nothing is being persisted; what fails is the
            # proof of origin the configured keys demand.
            raise ReceiptMismatch(
                "this tuning profile is unsigned, and trusted keys are configured: only a "
                "profile signed by one of them is accepted (`eoc autotune --sign-key`)"
            )
        return SignatureCheck(None, None)
    signer = verify(doc)
    if not keys:
        return SignatureCheck(signer, None)
    if signer not in keys:
        raise ReceiptMismatch(
            f"this tuning profile is signed by key {signer}, which is not a trusted key "
            f"({len(keys)} configured): refused"
        )
    return SignatureCheck(signer, True)


__all__ = [
    "TRUSTED_KEYS_ENV",
    "SignatureCheck",
    "canonical",
    "check_signature",
    "configured_trusted_keys",
    "private_key",
    "public_key_hex",
    "sign",
    "verify",
]
