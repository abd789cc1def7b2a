"""Costs and receipts."""

from __future__ import annotations

import dataclasses

import pytest

from eoc import JouleCost, Provenance, Receipt, Stage, worst_of
from eoc.cost import CounterKind
from eoc.errors import BadReceipt, ConfigError, ReceiptMismatch
from eoc.receipt import receipt_digest, receipt_digest_v2
from tests.helpers import native_only

QID = "a" * 64


def test_measured_zero_cannot_be_built() -> None:
    with pytest.raises(ConfigError):
        JouleCost(0, Provenance.MEASURED, "x", counter="rapl", counter_kind=CounterKind.HARDWARE)


def test_no_cost_below_one_microjoule_and_only_ints() -> None:
    for bad in (0, -1):
        with pytest.raises(ConfigError):
            JouleCost.estimated(bad, "x")
    for bad in (1.5, True, "3"):
        with pytest.raises(ConfigError):
            JouleCost.estimated(bad, "x")  # type: ignore[arg-type]


@native_only
def test_measured_needs_a_live_counter_name_and_kind() -> None:
    with pytest.raises(ConfigError):
        JouleCost(5, Provenance.MEASURED, "x")
    with pytest.raises(ConfigError):
        JouleCost(5, Provenance.MEASURED, "x", counter="stub", counter_kind=CounterKind.NONE)
    cost = JouleCost(
        5, Provenance.MEASURED, "x", counter="ioreport", counter_kind=CounterKind.VENDOR_MODEL
    )
    assert cost.measured and cost.counter_kind is CounterKind.VENDOR_MODEL


def test_worst_of_takes_the_worst_provenance() -> None:
    M, E = Provenance.MEASURED, Provenance.ESTIMATED
    assert worst_of([M, M]) is M
    assert worst_of([M, E, M]) is E
    assert worst_of([]) is E


def est(uj: int = 1000, basis: str = "kv estimate") -> JouleCost:
    return JouleCost.estimated(uj, basis)


def fake_measured(uj: int = 700) -> JouleCost:
    return JouleCost(
        uj, Provenance.MEASURED, "neural span", counter="fake", counter_kind=CounterKind.FAKE
    )


def test_receipt_verifies_and_round_trips() -> None:
    r = Receipt.issue(QID, Stage.KV, est(), "4")
    assert len(r.digest) == 64 and r.verify() and r.version == 2
    again = Receipt.from_dict(r.to_dict())
    assert again == r and again.verify()


@pytest.mark.parametrize(
    "field,value",
    [
        ("query_id", "b" * 64),
        ("stage", "cache"),
        ("cost_uj", 1001),
        ("provenance", "measured"),
        ("payload", "5"),
        ("digest", "0" * 64),
        ("basis", "measured on rapl:psys"),
        ("counter", "rapl:psys"),
        ("counter_kind", "hardware"),
        ("eoc_version", "9.9.9"),
    ],
)
def test_changing_any_field_fails_verification(field: str, value: object) -> None:
    """Issue: v1 ignored basis, counter and counter kind, so relabelling a figure verified."""
    r = Receipt.issue(QID, Stage.KV, est(), "4")
    r = dataclasses.replace(r, **{field: value})
    assert not r.verify()


@native_only
def test_relabelling_a_fake_counter_as_hardware_fails_verification() -> None:
    r = Receipt.issue(QID, Stage.NEURAL, fake_measured(), "answer")
    assert r.verify()
    r = dataclasses.replace(r, counter_kind="hardware")
    assert not r.verify()


def test_every_single_bit_flip_of_a_receipt_document_is_detected() -> None:
    """Issue: 771 of 5,112 single-bit flips of a v1 receipt file went undetected."""
    import json

    from eoc.errors import BadJson
    from eoc.files.bounded import loads_strict

    text = json.dumps(
        Receipt.issue(QID, Stage.GRAPH, est(500, "graph estimate"), "Tokyo").to_dict()
    )
    data = text.encode()
    undetected = 0
    for i in range(len(data)):
        for bit in range(8):
            flipped = bytearray(data)
            flipped[i] ^= 1 << bit
            try:
                doc = loads_strict(bytes(flipped))
                ok = Receipt.from_dict(doc).verify()
            except (BadReceipt, BadJson):
                continue
            undetected += ok
    assert undetected == 0


def test_payload_boundaries_do_not_collide() -> None:
    """Length-prefixing keeps a '|' in the payload or basis from shifting fields."""
    a = Receipt.issue(QID, Stage.KV, est(1, "b"), "x|y")
    b = Receipt.issue(QID, Stage.KV, est(1, "b"), "x|y ")
    c = Receipt.issue(QID, Stage.KV, est(1, "b|x"), "y")
    assert len({a.digest, b.digest, c.digest}) == 3


def test_receipt_digest_is_pinned() -> None:
    """The canonical encoding is versioned; a change to it must be deliberate."""
    import hashlib

    r = Receipt.issue(QID, Stage.GRAPH, est(500, "graph estimate"), "Tokyo")
    fields = [
        r.eoc_version or "",
        QID,
        "graph",
        "500",
        "estimated",
        None,
        None,
        "graph estimate",
        "Tokyo",
    ]
    h = hashlib.sha256(b"eoc-receipt-v2")
    for f in fields:
        h.update(b"|~" if f is None else b"|%d:" % len(f.encode()) + f.encode())
    assert r.digest == h.hexdigest()


def test_version_1_receipts_still_verify_and_say_they_are_v1() -> None:
    import hashlib

    body = b"eoc-receipt-v1|" + f"{QID}|graph|500|estimated|5|".encode() + b"Tokyo"
    doc = {
        "version": 1,
        "query_id": QID,
        "stage": "graph",
        "cost_uj": 500,
        "provenance": "estimated",
        "payload": "Tokyo",
        "digest": hashlib.sha256(body).hexdigest(),
    }
    r = Receipt.from_dict(doc)
    assert r.version == 1 and r.verify() and r.basis is None


V2 = {
    "version": 2,
    "query_id": QID,
    "stage": "kv",
    "cost_uj": 1,
    "provenance": "estimated",
    "counter": None,
    "counter_kind": None,
    "basis": "b",
    "eoc_version": "0.2.0",
    "payload": "4",
    "digest": "0" * 64,
}


@pytest.mark.parametrize(
    "doc",
    [
        [],
        {},
        {"query_id": QID},
        {
            "query_id": QID,
            "stage": "kv",
            "cost_uj": "1",
            "provenance": "estimated",
            "payload": "4",
            "digest": "0" * 64,
        },
        {
            "query_id": QID,
            "stage": "disk",
            "cost_uj": 1,
            "provenance": "estimated",
            "payload": "4",
            "digest": "0" * 64,
        },
        {
            "query_id": QID,
            "stage": "kv",
            "cost_uj": 1,
            "provenance": "guessed",
            "payload": "4",
            "digest": "0" * 64,
        },
        {
            "query_id": QID,
            "stage": "kv",
            "cost_uj": 1,
            "provenance": "estimated",
            "payload": "4",
            "digest": "XYZ",
        },
        {
            "query_id": "short",
            "stage": "kv",
            "cost_uj": 1,
            "provenance": "estimated",
            "payload": "4",
            "digest": "0" * 64,
        },
        {
            "version": 3,
            "query_id": QID,
            "stage": "kv",
            "cost_uj": 1,
            "provenance": "estimated",
            "payload": "4",
            "digest": "0" * 64,
        },
        {k: v for k, v in V2.items() if k != "version"},  # no version: refused, not assumed
        {**V2, "version": True},
        {**V2, "version": 2.0},
        {**V2, "cost_uj": True},
        {**V2, "cost_uj": 500.0},
        {**V2, "cost_uj": 0},
        {**V2, "extra": "field"},
        {**V2, "counter_kind": "psychic"},
        {**V2, "basis": None},
        {**V2, "signature": {"alg": "rsa", "public_key": "0" * 64, "value": "0" * 128}},
        {**V2, "signature": {"alg": "ed25519", "public_key": "0" * 63, "value": "0" * 128}},
    ],
)
def test_malformed_receipt_documents_are_bad_receipts(doc: object) -> None:
    with pytest.raises(BadReceipt):
        Receipt.from_dict(doc)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "changes",
    [
        {"provenance": "measured"},
        {"provenance": "measured", "counter": "rapl", "counter_kind": "none"},
        {"provenance": "measured", "counter": None, "counter_kind": "hardware"},
    ],
)
def test_a_measured_receipt_without_a_counter_of_a_metering_kind_is_refused(changes) -> None:
    with pytest.raises(ReceiptMismatch, match="must name the live counter"):
        Receipt.from_dict({**V2, "stage": "neural", **changes})


def test_a_hand_built_measured_receipt_needs_a_counter() -> None:
    """Issue: Receipt.issue(..., MEASURED, ...) with no counter verified, natively and in Pyodide."""
    with pytest.raises(ConfigError):
        Receipt.issue(QID, Stage.KV, JouleCost(5, Provenance.MEASURED, "claimed"), "4")
    with pytest.raises(BadReceipt):
        Receipt.issue(QID, Stage.KV, 5, "4")  # type: ignore[arg-type]
    forged = Receipt.issue(QID, Stage.NEURAL, est(5), "4")
    forged = dataclasses.replace(forged, provenance="measured")
    assert not forged.verify()
    with pytest.raises(ReceiptMismatch, match="must name the live counter"):
        Receipt.from_dict({**forged.to_dict(), "digest": forged.expected_digest()})


def test_in_the_browser_no_measured_cost_can_be_built(monkeypatch: pytest.MonkeyPatch) -> None:
    import eoc.cost

    monkeypatch.setattr(eoc.cost, "IN_PYODIDE", True)
    with pytest.raises(ConfigError, match="browser"):
        JouleCost(5, Provenance.MEASURED, "x", counter="rapl", counter_kind=CounterKind.HARDWARE)
    assert JouleCost(5, Provenance.ESTIMATED, "x").uj == 5


def test_verify_refuses_a_measured_v2_receipt_without_a_counter_even_with_a_matching_digest() -> (
    None
):
    r = Receipt.issue(QID, Stage.NEURAL, est(5), "4")
    r = dataclasses.replace(r, provenance="measured")
    r = dataclasses.replace(r, digest=r.expected_digest())
    assert not r.verify()


@pytest.mark.parametrize("stage", ["cache", "kv", "graph"])
@pytest.mark.parametrize("version", [1, 2])
def test_a_cheap_tier_answer_said_to_be_measured_is_refused_even_when_consistent(
    stage: str, version: int
) -> None:
    """Cache, kv and graph answers are never bracketed: "graph, 412 µJ measured on rapl:package
    (hardware)" cannot be true, however self-consistent its digest (it verified before)."""
    fields = dict(query_id=QID, stage=stage, cost_uj=412, provenance="measured", payload="4")
    more = dict(counter="rapl:package", counter_kind="hardware", basis="span", eoc_version="0.2.0")
    if version == 1:
        doc = {"version": 1, **fields, "digest": receipt_digest(**fields)}
    else:
        doc = {"version": 2, **fields, **more, "digest": receipt_digest_v2(**fields, **more)}
    with pytest.raises(ReceiptMismatch, match=f"a {stage} answer was MEASURED"):
        Receipt.from_dict(doc)
    built = Receipt.__new__(Receipt)  # past every check __init__ or from_dict makes
    for name in Receipt.__slots__:
        object.__setattr__(built, name, doc.get(name))
    assert not built.verify()
    neural = {**doc, "stage": "neural"}
    neural["digest"] = (
        receipt_digest(**{**fields, "stage": "neural"})
        if version == 1
        else receipt_digest_v2(**{**fields, "stage": "neural"}, **more)
    )
    assert Receipt.from_dict(neural).verify()  # a measured model answer can be true


@native_only  # no MEASURED cost can be built in the browser
def test_no_receipt_is_issued_for_a_measured_cheap_tier_answer() -> None:
    cost = JouleCost(5, Provenance.MEASURED, "span", counter="rapl", counter_kind=CounterKind.FAKE)
    with pytest.raises(BadReceipt, match="never"):
        Receipt.issue(QID, Stage.GRAPH, cost, "4")
    assert Receipt.issue(QID, Stage.NEURAL, cost, "4").verify()


def test_a_cost_a_receipt_and_an_answer_cannot_be_changed_once_made() -> None:
    """A figure relabelled after its checks ran (cost.provenance = MEASURED) would carry a
    forged 'measured' past them: the value types are frozen."""
    from eoc import Cascade
    from tests.helpers import small_stages

    cost = est(5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cost.provenance = Provenance.MEASURED  # type: ignore[misc]
    r = Receipt.issue(QID, Stage.NEURAL, cost, "4")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.provenance = "measured"  # type: ignore[misc]
    with Cascade(small_stages()) as c:
        answer = c.resolve("what is the capital of France")
    with pytest.raises(dataclasses.FrozenInstanceError):
        answer.payload = "London"  # type: ignore[misc]
