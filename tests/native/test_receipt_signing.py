"""Signed receipts: a host key says who issued an answer; `eoc verify` says what it checked."""

from __future__ import annotations

import dataclasses
import io
import json
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from eoc import Cascade, Receipt
from eoc.cli.main import main
from eoc.errors import ConfigError, ReceiptMismatch
from eoc_native.receipts import HostSigner, check_receipt_signature, verify_signature
from tests.helpers import cli_in_capped_process, small_stages


def _key(tmp_path: Path, name: str) -> tuple[Path, str]:
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path = tmp_path / f"{name}.pem"
    path.write_bytes(pem)
    public = key.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    return path, public.hex()


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out=out), out.getvalue()


def test_a_cascade_with_a_signer_signs_every_receipt_and_the_signature_checks(tmp_path) -> None:
    path, public = _key(tmp_path, "host")
    cascade = Cascade(small_stages(), signer=HostSigner.from_file(path))
    for prompt in ("what is 2+2", "what is 2+2", "capital of France", "why is the sky blue"):
        r = cascade.resolve(prompt)
        assert r.receipt.verify() and verify_signature(r.receipt) == public
        again = Receipt.from_dict(r.to_dict())
        assert check_receipt_signature(again, [public]) == (public, True)


def test_verify_says_consistent_or_signed_by_whom_and_whether_trusted(tmp_path) -> None:
    key, public = _key(tmp_path, "host")
    code, text = run("query", "--json", "--sign-key", str(key), "what is 2+2")
    assert code == 0
    f = tmp_path / "r.json"
    f.write_text(text)
    code, out = run("verify", str(f))
    assert code == 0 and f"signed by key {public} — not checked against a trusted key" in out
    code, out = run("verify", "--public-key", public, str(f))
    assert code == 0 and f"signed by key {public} — trusted" in out
    doc = json.loads(run("verify", "--json", "--public-key", public, str(f))[1])
    assert doc["signed_by"] == public and doc["trusted"] is True


def test_an_altered_receipt_re_signed_with_another_key_is_refused_by_a_trusted_key(
    tmp_path,
) -> None:
    key, public = _key(tmp_path, "host")
    other, other_public = _key(tmp_path, "attacker")
    _, text = run("query", "--json", "--sign-key", str(key), "what is 2+2")
    doc = json.loads(text)
    receipt = Receipt.from_dict(doc)
    receipt = dataclasses.replace(receipt, payload="5")
    doc["payload"] = "5"
    receipt = dataclasses.replace(receipt, digest=receipt.expected_digest())
    forged = receipt.signed(HostSigner.from_file(other)).to_dict()
    doc["receipt"] = forged
    f = tmp_path / "forged.json"
    f.write_text(json.dumps(doc))
    code, out = run("verify", str(f))  # consistent, signed, but by whom? it says so
    assert code == 0 and other_public in out and "not checked against a trusted key" in out
    out_err = io.StringIO()
    sys_stderr, sys.stderr = sys.stderr, out_err
    try:
        code, _ = run("verify", "--public-key", public, str(f))
    finally:
        sys.stderr = sys_stderr
    assert code == 1 and other_public in out_err.getvalue()
    with pytest.raises(ReceiptMismatch):
        check_receipt_signature(Receipt.from_dict(forged), [public])


def test_a_signature_that_does_not_match_the_digest_is_refused(tmp_path) -> None:
    key, _ = _key(tmp_path, "host")
    r = Cascade(small_stages(), signer=HostSigner.from_file(key)).resolve("what is 2+2")
    doc = r.receipt.to_dict()
    doc["signature"]["value"] = ("0" if doc["signature"]["value"][0] != "0" else "1") + doc[
        "signature"
    ]["value"][1:]
    with pytest.raises(ReceiptMismatch):
        verify_signature(Receipt.from_dict(doc))


def test_an_unsigned_receipt_is_refused_when_a_trusted_key_is_given(tmp_path) -> None:
    _, public = _key(tmp_path, "host")
    _, text = run("query", "--json", "what is 2+2")
    f = tmp_path / "r.json"
    f.write_text(text)
    assert run("verify", "--public-key", public, str(f))[0] == 1


@pytest.mark.parametrize(
    "args,env",
    [
        (["--public-key", ""], None),
        (["--public-key", "  "], None),
        ([], ","),
        ([], ""),
        ([], " , "),
    ],
)
def test_an_empty_trusted_key_list_is_an_error_not_checking_switched_off(
    tmp_path, monkeypatch, capsys, args: list[str], env: str | None
) -> None:
    """`--public-key "$KEY"` with $KEY unset, or EOC_TRUSTED_KEYS=",", accepted an unsigned
    forged receipt (exit 0, "origin : unsigned")."""
    _, text = run("query", "--json", "what is 2+2")
    f = tmp_path / "r.json"
    f.write_text(text)
    if env is not None:
        monkeypatch.setenv("EOC_TRUSTED_KEYS", env)
    assert run("verify", *args, str(f))[0] == 2
    assert "holds no key" in capsys.readouterr().err
    monkeypatch.delenv("EOC_TRUSTED_KEYS", raising=False)
    assert run("verify", str(f))[0] == 0  # no keys asked for: consistency only


def test_a_bad_signing_key_file_is_a_config_error(tmp_path) -> None:
    bad = tmp_path / "bad.pem"
    bad.write_text("not a key")
    with pytest.raises(ConfigError):
        HostSigner.from_file(bad)
    with pytest.raises(ConfigError):
        HostSigner.from_file("/dev/zero")  # bounded: refused, not read forever
    assert run("query", "--sign-key", str(bad), "what is 2+2")[0] == 2


@pytest.mark.parametrize(
    "content",
    ["[" * 100_000, '{"version": ' + "9" * 5000 + "}", '{"version": 2, "version": 1}', "NaN"],
)
def test_hostile_json_is_a_usage_error_not_a_traceback(tmp_path, content: str) -> None:
    f = tmp_path / "r.json"
    f.write_text(content)
    assert run("verify", str(f))[0] == 2


def test_verify_dev_zero_is_refused_with_bounded_memory() -> None:
    """Issue: `eoc verify /dev/zero` ate memory until the kernel killed it."""
    done = cli_in_capped_process("verify", "/dev/zero")
    assert done.returncode == 2 and "larger than" in done.stderr
